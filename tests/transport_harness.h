/*
 * transport_harness.h: two transport engines wired back to back, in
 * process, for the transport tests. Every packet goes through the real
 * codec (the engine builds it with the netstack, ICRC included, and the
 * peer parses and checks it). Time is simulated: "now" only moves when the
 * wire is idle and a timer is due, so runs are fast and deterministic. The
 * wire can drop, duplicate and reorder packets from a seeded generator.
 * Memory regions are plain buffers with keys, PD and access flags, checked
 * like the daemon will (key, PD, bounds, access).
 */
#ifndef UROCE_TESTS_TRANSPORT_HARNESS_H
#define UROCE_TESTS_TRANSPORT_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "emu/xport/xport.h"
#include "netstack/packet.h"

#define TH_MAX_MR 8
#define TH_MAX_QP 16

struct th_mr {
	uint32_t key;		/* lkey == rkey */
	uint32_t pd;
	uint64_t addr;		/* the "virtual address" peers use */
	uint8_t *buf;
	uint32_t len;
	unsigned int access;	/* IBV_ACCESS_* */
};

/* One packet seen on the wire (when logging is on). */
struct th_pkt {
	int from;		/* node index 0/1 */
	uint8_t opcode;
	uint32_t psn, dqpn;
	uint8_t pad;
	bool ackreq, se;
	uint8_t syndrome;	/* AETH, if any */
	uint32_t msn;
	uint32_t payload_len;
	uint32_t dma_len;	/* RETH */
	uint32_t ieth;		/* IETH R_Key, if any */
};

struct th_cqe_log {
	struct xport_cqe *v;
	unsigned n, cap;
};

struct th_world;

struct th_node {
	struct th_world *world;
	struct xport_dev *dev;
	union ibv_gid gid;
	struct th_mr mr[TH_MAX_MR];
	unsigned nmr;
	unsigned mem_reads, mem_writes;	/* ops->mem calls that copied bytes */
	struct th_cqe_log cqes;
	struct xport_qp *timer_qp[TH_MAX_QP];
	uint64_t timer_when[TH_MAX_QP];
	unsigned events;	/* qp_event callbacks */
	int last_event;
	struct xport_qp *last_event_qp;
	/* ops->local_op: counted, answered with local_status; ops->invalidate:
	 * true only for inv_rkey (each invalidation counted) */
	unsigned local_ops;
	enum ibv_wc_status local_status;
	uint32_t inv_rkey;
	unsigned invalidations;
	char logtext[16384];	/* ops->log lines, newline-separated (first 16 KiB) */
	size_t loglen;
};

struct th_wire_pkt {
	int from, to;
	uint16_t sport;
	uint32_t len;
	uint8_t *data;
};

struct th_world {
	struct th_node node[2];
	uint64_t now;
	/* wire: FIFO with random reordering */
	struct th_wire_pkt *q;
	unsigned qhead, qlen, qcap;
	/* packet log */
	bool log_on;
	struct th_pkt *log;
	unsigned nlog, logcap;
	/* faults, in parts per 10000 */
	unsigned drop_ppm, dup_ppm, reorder_ppm;
	uint64_t rng;
	/* from node `drop_from` (-1: none): let drop_skip packets pass, then
	 * drop the next drop_next packets */
	int drop_from;
	unsigned drop_skip, drop_next;
	/* from node `drop_from`: drop the nth (1-based) transmission of PSN
	 * psn, for each rule (needs log_on) */
	struct { uint32_t psn; unsigned nth; } drop_rule[16];
	unsigned ndrop_rule;
	/* != 0: every xmit fails with this errno (nothing is sent) */
	int xmit_errno;
	uint64_t delivered, dropped, duplicated, reordered;
	/* QPs that asked for another xport_run (ops->schedule), run by
	 * th_run before the next delivery */
	struct xport_qp *sched[2 * TH_MAX_QP];
	unsigned nsched;
	uint64_t sched_runs;
};

/* Create a world: node 0 = ::ffff:10.0.0.1, node 1 = ::ffff:10.0.0.2,
 * both with port_mtu. */
struct th_world *th_world_new(uint32_t port_mtu);
void th_world_free(struct th_world *w);

/* Register [addr, addr+len) on node N with KEY/PD/ACCESS; the buffer is
 * allocated and filled with FILL. Returns the buffer. */
uint8_t *th_reg_mr(struct th_world *w, int n, uint32_t key, uint32_t pd,
		   uint64_t addr, uint32_t len, unsigned int access,
		   uint8_t fill);

/* Create a QP of TYPE on node N (pd 1). */
struct xport_qp *th_qp(struct th_world *w, int n, enum ibv_qp_type type,
		       uint32_t qpn, uint32_t depth);
/* Destroy QP of node N before the world (th_world_free destroys the rest). */
void th_qp_destroy(struct th_world *w, int n, struct xport_qp *qp);
/* Connect two QPs (RC/UC: RESET->INIT->RTR->RTS with the given path MTU,
 * PSNs, timeout, retry counts; UD: to RTS with Q_Key 0x11111111). */
void th_connect(struct th_world *w, struct xport_qp *a, struct xport_qp *b,
		enum ibv_mtu mtu, uint32_t psn_a, uint32_t psn_b,
		uint8_t timeout, uint8_t retry_cnt, uint8_t rnr_retry,
		uint8_t min_rnr_timer);

/* Deliver packets and fire timers until the wire is empty and no timer is
 * armed, or MAX_STEPS deliveries+expiries happened. Returns the steps. */
unsigned long th_run(struct th_world *w, unsigned long max_steps);

/* Append COPIES copies of the packet at wire position I (0: the next to
 * be delivered), as a peer resending a request would. */
void th_wire_repeat(struct th_world *w, unsigned i, unsigned copies);

/* Post helpers: one SGE from node memory (addr, len, lkey). */
int th_post_send(struct xport_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
		 uint64_t laddr, uint32_t len, uint32_t lkey, uint64_t raddr,
		 uint32_t rkey, uint32_t imm_be, unsigned int flags);
int th_post_recv(struct xport_qp *qp, uint64_t wr_id, uint64_t laddr,
		 uint32_t len, uint32_t lkey);

/* The callbacks the harness gives each device (for tests that re-create
 * a node's device, e.g. with another address). ctx = &w->node[i]. */
extern const struct xport_ops th_ops_for_tests;

/* Pseudo-random numbers (xorshift64*), seeded by w->rng. */
uint64_t th_rand(struct th_world *w);

#endif
