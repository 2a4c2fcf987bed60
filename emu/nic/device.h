/*
 * device.h - one emulated RoCE device (the NIC uroced is): its identity and
 * port, its limits, the resources it shares between clients (memory keys,
 * QPNs, CQNs, the UDP socket, the HCA clock, the capture file) and its list of
 * connected clients.
 */
#ifndef UROCE_EMU_DEVICE_H
#define UROCE_EMU_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <ev.h>
#include <infiniband/verbs.h>

#include "emu/nic/hca_clock.h"
#include "emu/nic/nic_time.h"
#include "emu/nic/poll_window.h"
#include "emu/obj/id_alloc.h"
#include "emu/obj/keytab.h"
#include "emu/obj/limits.h"
#include "emu/nic/udp_port.h"

struct ctl_client;
struct ctl_qp;
struct fault_dev;
struct mem_wb;
struct pcapw;
struct xport_dev;
struct cm_dev;
struct mcast_dev;

/* Limits the device reports (ibv_query_device) and enforces. */
#define DEV_MAX_QP 65536u
#define DEV_MAX_QP_WR 4096u
#define DEV_MAX_SGE 16u
#define DEV_MAX_CQ 4096u
#define DEV_MAX_CQE 4194303u       /* mlx5 (log_max_cq_sz 22); ring of 2^22 CQEs = 256 MiB */
#define DEV_MAX_MR 65535u
#define DEV_MAX_MW 65535u         /* memory windows; keys share the MR key table */
#define DEV_MAX_PD 4096u
#define DEV_MAX_AH 65535u
#define DEV_MAX_QP_RD_ATOM 16u
#define DEV_MAX_INLINE 256u        /* bytes of inline data per send WQE */
#define DEV_MAX_MR_SIZE (1ull << 40)
#define DEV_MAX_SRQ 1024u
#define DEV_MAX_SRQ_WR 16384u      /* receive WQEs one SRQ holds (a power of two) */
#define DEV_MAX_SRQ_SGE DEV_MAX_SGE
#define DEV_QPN_FIRST 0x11u        /* QPNs 0 and 1 are the special QPs; start above */

/* Per-device object totals (all clients). */
struct dev_counts {
	uint32_t pd, mr, mw, cq, qp, ah, srq;
};

/* Transport counters of the QPs already destroyed (live QPs are summed when
 * read, sysfs_stats.c). */
struct dev_qp_totals {
	uint64_t dup_requests, seq_naks_rx, timeouts, rnr_naks_rx;
};

struct sysfs_stats;
struct capture_stream;

struct uroce_dev {
	char name[64];
	struct sockaddr_storage addr;   /* address:port the UDP socket is bound to */
	socklen_t addr_len;
	char addr_str[64];              /* printable address (no port) */
	uint16_t port;                  /* UDP port, host order */
	uint32_t mtu;                   /* active MTU in bytes (256..4096) */
	enum ibv_mtu active_mtu;
	uint32_t gid_tbl_len;
	enum ibv_port_state port_state;

	struct ibv_device_attr attr;    /* what query_device returns */
	uint64_t node_guid;             /* host order */

	struct ev_loop *loop;
	uint64_t mem_preads;            /* reads of a client's memory through its mem fd (mem_access.c) */
	uint64_t mem_pread_bytes;       /* the bytes they read */
	uint64_t doorbell_reads;        /* doorbell eventfd reads that drained a count (doorbell.c) */
	uint64_t doorbell_budget_stops; /* QP turns cut short by the client's budget (doorbell.c) */
	uint32_t doorbell_turn_max;     /* most send WQEs one client got in one loop turn */
	uint64_t doorbell_shared_stops; /* of those, cut at DOORBELL_SHARED_BUDGET */
	uint32_t doorbell_shared_max;   /* most one client got in a turn under that budget */
	uint64_t doorbell_pauses;       /* clients paused for the debt of their services (doorbell.c) */
	uint64_t doorbell_idle_reads;   /* of the doorbell reads, those whose service found no work */
	const void *doorbell_last;      /* the client that last took send WQEs */
	double doorbell_last_at;        /* when (ev_now) */
	double doorbell_shared_until;   /* the budget is shared until then (ev_now) */
	uint64_t doorbell_rings;        /* eventfd writes those reads drained: the clients'
					 * doorbells and the daemon's own re-rings */
	uint64_t rx_taken;              /* received datagrams a QP took: past the ICRC, QPN, source
					 * and state checks (port.c, mcast/rx.c; poll_window.c) */
	bool busy_poll;                 /* --busy-poll: the loop never sleeps (doorbell.c keeps
					 * its no_doorbell promises while a QP is active) */
	struct poll_window poll_window; /* --poll-window (poll_window.h) */
	struct hca_clock clock;
	ev_timer clock_timer;
	struct udp_port udp;
	struct pcapw *capture;          /* NULL when no capture runs */
	struct capture_stream *capture_stream; /* the capture's queue when it goes
					 * to a pipe or socket (capture_stream.h) */
	struct xport_dev *xdev;         /* the transport engine (engine_glue.c) */
	struct cm_dev *cm;              /* the connection manager (emu/cm/), or NULL */
	/* receives the packets for QP1 (cm_input), NULL = dropped; a pointer so
	 * the port does not call into emu/cm/, which transmits through it */
	void (*qp1_rx)(struct uroce_dev *d, const uint8_t *buf, size_t len, const union ibv_gid *sgid,
		       const union ibv_gid *dgid, uint16_t sport, bool verified);
	struct eth_port *eth;           /* raw packet QPs and their segment (emu/eth/eth.h) */
	struct mcast_dev *mcast;        /* multicast groups (emu/mcast/mcast.h), NULL until used */
	struct mem_wb *wb;              /* write-behind of memory writes (mem_wb.c), or NULL */
	int *sport_fd;                  /* send-only socket per UDP source port
					 * (port.c): 0 not tried, -1 unusable */
	unsigned int sport_open;        /* sockets in sport_fd (port.c bounds it) */
	char capture_path[256];

	uint64_t seed;                  /* --seed: fault injector, deterministic mode */
	struct fault_dev *fault;        /* fault injector (fault_queue.c) */
	struct nic_vtime vt;            /* deterministic mode (nic_time.c) */

	struct keytab keys;             /* MR lkeys/rkeys and MW rkeys */
	struct id_alloc qpns;
	struct id_alloc cqns;
	struct id_alloc pdns;
	struct id_alloc srqns;

	struct dev_counts counts;
	struct xrcd_dom *xrcds;         /* open XRC domains (emu/ctl/obj_xrcd.c) */
	uint32_t n_xrcds;
	struct dev_qp_totals retired;   /* of destroyed QPs */
	uint64_t link_downed;           /* PORT_ACTIVE -> PORT_DOWN transitions */
	struct sysfs_stats *sysfs;      /* --sysfs counter files (sysfs_stats.c), or NULL */
	struct quota quota;             /* per-uid limits (emu/obj/limits.h) */
	struct ctl_client *clients;         /* doubly linked list of connections */
	uint32_t n_clients;             /* verbs clients (after HELLO) */
	uint32_t next_client_id;

	int listen_fd;
	ev_io listen_io;
	ev_timer listen_pause;          /* accept paused after EMFILE */
	char sock_path[108];
	pid_t pid;
	uid_t uid;
	bool stopping;
};

/*
 * dev_init - fill the device's identity and limits from the options and set up
 * its tables, clock and UDP socket. ADDR carries the port. MTU in bytes must
 * be 256, 512, 1024, 2048 or 4096; gid_tbl_len 1..128.
 * Returns 0, EINVAL (a bad option; message logged), or the errno of the
 * socket or clock setup.
 */
int dev_init(struct uroce_dev *d, struct ev_loop *loop, const char *name,
	     const struct sockaddr *addr, socklen_t addr_len, uint32_t mtu, uint32_t gid_tbl_len,
	     uint64_t clock_khz, uint32_t clock_bits);

/* Release everything dev_init set up (clients must be gone). */
void dev_fini(struct uroce_dev *d);

/* Port 1 attributes as ibv_query_port reports them now. */
void dev_port_attr(const struct uroce_dev *d, struct ibv_port_attr *pa);

/* Set the port state (ADMIN_LINK): PORT_ACTIVE or PORT_DOWN, and send
 * IBV_EVENT_PORT_ACTIVE / IBV_EVENT_PORT_ERR to every client if it changed. */
void dev_set_link(struct uroce_dev *d, bool up);

/* enum ibv_mtu of a byte count (0 if not a valid MTU). */
enum ibv_mtu dev_mtu_enum(uint32_t bytes);

#endif
