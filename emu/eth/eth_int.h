/*
 * eth_int.h - what the parts of emu/eth share: the port (segment socket,
 * learned peers, counters, rules) and the raw QP. Not for the rest of the
 * daemon (eth.h is).
 */
#ifndef UROCE_EMU_ETH_INT_H
#define UROCE_EMU_ETH_INT_H

#include "emu/eth/eth.h"
#include "emu/eth/frame.h"
#include "emu/xport/xport.h"
#include "uroce/abi.h"

#include <infiniband/mlx5dv.h>

#include <ev.h>

/* Learned MAC -> peer entries (Linux vxlan's FDB, flood and learn). */
#define ETH_FDB_SIZE 256
#define ETH_FDB_AGE_NS (300ull * 1000000000ull) /* as the Linux bridge's ageing time */
/* Largest frame the segment carries: 9000 + Ethernet header + one VLAN tag. */
#define ETH_FRAME_MAX (ETH_MTU_MAX + 14 + 4)
#define VXLAN_HLEN 8
#define ETH_FLOWS_MAX 4096

struct eth_fdb_entry {
	uint8_t mac[6];
	bool used;
	uint64_t seen_ns;
	struct sockaddr_storage addr;
	socklen_t addr_len;
};

struct steer_rule;

/* A counters object (counters.c): what the rules naming it took. */
struct eth_counters {
	uint64_t handle;
	struct ctl_client *owner;
	uint64_t packets, bytes;
	unsigned int users;                 /* rules naming it (DESTROY: EBUSY) */
	struct eth_counters *next;
};

struct eth_stats {
	uint64_t tx_frames, tx_bytes;       /* frames the raw QPs sent */
	uint64_t tx_vxlan;                  /* VXLAN datagrams sent (one per peer) */
	uint64_t tx_errors;                 /* sendto failures */
	uint64_t rx_vxlan, rx_frames;       /* datagrams read; frames offered to steering */
	uint64_t rx_bad_vxlan;              /* short, flags without I, reserved bits set */
	uint64_t rx_wrong_vni;
	uint64_t rx_no_rule;                /* no rule took the frame: dropped */
	uint64_t rx_rule_drop;              /* a DROP rule took it */
	uint64_t rx_no_wqe;                 /* the QP had no receive WQE (or was not in RTR/RTS) */
	uint64_t rx_delivered;              /* receive completions written */
};

struct eth_port {
	struct uroce_dev *dev;
	uint8_t mac[6];
	uint32_t mtu;
	uint32_t vni;
	uint16_t vxlan_port;
	int fd;                             /* the VXLAN socket, -1 = no segment */
	ev_io io;
	unsigned int n_peers;
	struct sockaddr_storage peers[ETH_PEERS_MAX];
	socklen_t peer_len[ETH_PEERS_MAX];
	struct eth_fdb_entry fdb[ETH_FDB_SIZE];
	struct steer_rule *rules;           /* every rule of the device */
	struct rwq_ind_table *tables;       /* every indirection table of the device */
	struct eth_counters *counters;      /* every counters object of the device */
	unsigned int n_counters;
	uint64_t next_counters_handle;
	uint32_t next_table_num;
	unsigned int n_rules;
	uint32_t next_rule_handle;
	struct eth_stats st;
	uint8_t buf[VXLAN_HLEN + ETH_FRAME_MAX]; /* one datagram/frame being handled */
};

/* A raw packet QP's receive queue: WQEs copied at the doorbell, taken in
 * order by frames. */
/* A receive WQ indirection table (ibv_create_rwq_ind_table(3)). */
struct rwq_ind_table {
	uint32_t handle;
	uint32_t num;
	struct ctl_client *owner;
	uint32_t size;              /* entries, a power of two */
	uint32_t users;             /* RSS QPs using it */
	struct ctl_qp **wqs;        /* NULL: the WQ went with its client */
	struct rwq_ind_table *next;
};

/* C's counters object HANDLE, or NULL; C's counters all freed (counters.c). */
struct eth_counters *counters_find(struct eth_port *p, const struct ctl_client *c, uint64_t handle);
void counters_client_gone(struct eth_port *p, const struct ctl_client *c);

/* Unlink and free *PP; its WQs are released (rss_table.c). */
void rss_table_free(struct rwq_ind_table **pp);

/* An RSS QP's hash: Toeplitz with the user's key over FIELDS (IBV_RX_HASH_*),
 * the result indexing the table (rss.c). */
struct raw_rss {
	struct rwq_ind_table *table;
	uint64_t fields;
	uint32_t key_len;
	uint8_t key[UROCE_RSS_KEY_MAX];
};

struct raw_qp {
	enum ibv_qp_state state;
	bool is_wq;                         /* a receive WQ (ibv_create_wq): RDY = RTR */
	struct raw_rss *rss;                /* an RSS QP: frames go to a WQ of its table */
	unsigned int tables;                /* indirection tables holding this WQ */
	struct xport_recv_wqe *rq;          /* cap.max_recv_wr slots */
	uint32_t rq_head, rq_tail;          /* WQEs copied / consumed */
	uint32_t wq_flags;                  /* IBV_WQ_FLAGS_* of a WQ (UROCE_WQ_FLAGS) */
	/* Striding RQ (log_num_strides != 0): the WQE at rq_tail is filled
	 * stride by stride; stride_next is its first free stride. */
	uint8_t log_stride_bytes, log_num_strides;
	bool two_byte_shift;
	uint32_t stride_next;
	/* DELAY_DROP: frames that found no WQE, held until WQEs are posted */
	struct raw_held *held, **held_tail;
	unsigned int n_held;
	unsigned int n_rules;
	uint64_t tx_frames, rx_frames, rx_dropped;
};


/* A frame a DELAY_DROP WQ holds (raw_rx.c). */
#define RAW_HELD_MAX 64
struct raw_held {
	struct raw_held *next;
	bool has_tag;
	uint32_t tag;
	uint32_t len;
	uint8_t frame[];
};

/* Largest frame port P sends: its MTU + the Ethernet header, + 4 when
 * frame F (LEN bytes) carries an 802.1Q tag. */
static inline uint32_t eth_max_frame(const struct eth_port *p, const uint8_t *f, uint32_t len)
{
	bool vlan = len >= 14 && f[12] == 0x81 && f[13] == 0x00;

	return p->mtu + 14 + (vlan ? 4 : 0);
}

/* Send an IBV_WR_TSO WQE W of QP in RTS: its segments out, its completion
 * C (status, byte_len filled here) first; a header tso_hdr_check refuses
 * completes with IBV_WC_LOC_QP_OP_ERR, a segment over the MTU with
 * IBV_WC_LOC_LEN_ERR, and the QP goes to ERR (raw_tso.c). */
void raw_tso_send(struct ctl_qp *qp, const struct xport_send_wqe *w, struct xport_cqe *c);

/* Gathers send WQE W's bytes (inline, or its SGEs through the QP's PD) into
 * BUF (CAP bytes). Returns the length, or 0 with *st set: IBV_WC_LOC_LEN_ERR
 * (over CAP, or SGEs totalling under MIN), IBV_WC_LOC_PROT_ERR (an SGE the
 * lkey does not cover; raw_gather.c). */
uint32_t raw_gather(struct ctl_qp *qp, const struct xport_send_wqe *w, uint8_t *buf, uint32_t cap,
		    uint32_t min, enum ibv_wc_status *st);

/* Offer FRAME (LEN bytes) to the device's raw QPs through its rules.
 * FROM_QP: the raw QP that sent it (never given its own frame back), or
 * NULL for a frame from the segment. */
void eth_deliver(struct eth_port *p, const uint8_t *frame, size_t len, const struct ctl_qp *from_qp);

/* Send FRAME out on the segment (to the learned peer of its destination
 * MAC, else to every static peer). */
void eth_segment_xmit(struct eth_port *p, const uint8_t *frame, size_t len);

/* The QPs a frame goes to (steer.c). Fills OUT (at most MAX) and returns
 * how many, with the tag of each. SNIFFER rules included; *drop set if a
 * DROP rule decided. DEFAULTS: whether ALL_DEFAULT / MC_DEFAULT rules may
 * take it (not for a frame this device sends to another station's MAC).
 * The counters of the NORMAL rules that decided count the frame (LEN bytes). */
struct steer_hit {
	struct ctl_qp *qp;
	bool has_tag;
	uint32_t tag;
};
unsigned int steer_lookup(struct eth_port *p, const uint8_t *frame, size_t len, const struct frame_info *fi,
			  bool defaults, struct steer_hit *out, unsigned int max, bool *drop);
/* Drop every rule of QP. */
void steer_qp_gone(struct eth_port *p, struct ctl_qp *qp);

/* Completions (raw_cqe.c). raw_cqe: one CQE of QP for C (and for a
 * receive, the frame's fields in X: hds_ip_ext, l4_hdr_type_etc,
 * vlan_info, and sop_drop_qpn / srqn_uidx when tagged), the slot's ci
 * moved on first; an unsignalled success writes none. raw_flush_one: a
 * WR_FLUSH_ERR CQE for WQE N. raw_flush_rq: every held receive WQE
 * flushed. raw_qp_fatal: the QP's own move to ERR, IBV_EVENT_QP_FATAL. */
void raw_cqe(struct ctl_qp *qp, const struct xport_cqe *c, const struct mlx5_cqe64 *x);
/* raw_cqe for a striding RQ: RETIRE false leaves the WQE's ring slot (rq_ci)
 * with the daemon, and byte_cnt / wqe_counter / wqe_id come from X. */
void raw_cqe_stride(struct ctl_qp *qp, const struct xport_cqe *c, const struct mlx5_cqe64 *x, bool retire);
void raw_flush_one(struct ctl_qp *qp, bool is_recv, uint32_t n, enum ibv_wr_opcode op);
void raw_flush_rq(struct ctl_qp *qp);
void raw_qp_fatal(struct ctl_qp *qp);

/* Copy QP's new receive WQEs from its ring (raw_rq.c); in ERR they are
 * flushed, at most RAW_RQ_FLUSH_BATCH a call (each is a CQE). In RESET
 * they are kept (a WQ may be posted before it is RDY; a QP cannot be
 * posted in RESET, and the move to RESET skips what was posted before
 * it). A producer index further ahead than the ring's depth is a lie:
 * the WQE at the cursor is refused, the QP goes to ERR and the cursor
 * jumps to the index. Returns whether WQEs are left for the next
 * doorbell service (the flush batch ran out). */
#define RAW_RQ_FLUSH_BATCH 32
bool raw_rq_refill(struct ctl_qp *qp);

/* The WQ of RSS QP QP that FRAME goes to (rss.c), or NULL (an empty slot
 * of a table whose WQ was destroyed with its client). */
/* QP (a WQ or an RSS QP) is being destroyed: its table links go (rss.c). */
void rss_qp_gone(struct ctl_qp *qp);
struct ctl_qp *rss_pick(const struct ctl_qp *qp, const uint8_t *frame, const struct frame_info *fi);

/* Write one receive completion of QP for FRAME (raw_rx.c). */
void raw_qp_receive(struct ctl_qp *qp, const uint8_t *frame, size_t len, const struct frame_info *fi,
		    const struct steer_hit *hit);
/* One frame into QP, which is in RTR/RTS and has a WQE (raw_rx.c). */
void raw_rx_one(struct ctl_qp *qp, const uint8_t *frame, size_t len, const struct frame_info *fi,
		const struct steer_hit *hit);
/* The CQE's l4_hdr_type_etc bit 0 ("cv"): the C-VLAN tag was stripped. */
#define RAW_CQE_CV 0x01
/* Write LEN bytes of DATA to ADDR under LKEY for QP (raw_rx.c):
 * IBV_WC_SUCCESS or IBV_WC_LOC_PROT_ERR. */
enum ibv_wc_status raw_rx_write(struct ctl_qp *qp, uint32_t lkey, uint64_t addr, const uint8_t *data, size_t len);
/* A frame (already shaped by the WQ flags) into the strides of QP's
 * current WQE, X its CQE fields (raw_stride.c). */
void raw_stride_receive(struct ctl_qp *qp, const uint8_t *data, size_t len, struct mlx5_cqe64 *x);
/* QP in RTR/RTS has no WQE for a frame: a DELAY_DROP WQ keeps it (up to
 * RAW_HELD_MAX), anything else drops it (rx_no_wqe) (raw_held.c). */
void raw_held_add(struct ctl_qp *qp, const uint8_t *frame, size_t len, const struct steer_hit *hit);
/* Deliver the frames a DELAY_DROP WQ holds while it has WQEs (after a
 * doorbell); raw_held_drop: forget them (RESET, ERR, destroy, flag off). */
void raw_held_deliver(struct ctl_qp *qp);
void raw_held_drop(struct ctl_qp *qp);

#endif
