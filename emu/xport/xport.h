/*
 * xport.h: the RoCE transport engine's interface (requester, responder,
 * completer for RC, UC and UD), as the daemon drives it.
 *
 * The engine is a library with no I/O of its own. It talks to the outside
 * ONLY through the callbacks in struct xport_ops: memory access by lkey/rkey,
 * packet transmission, completion emission, timer arming, and "now". The
 * daemon feeds it work (xport_post_send / xport_post_recv), packets
 * (xport_input) and timer expiries (xport_timer_expired). Everything runs
 * synchronously in the caller's thread; one device is not thread-safe.
 *
 * Callbacks must not re-enter the engine of the same device (xmit queues or
 * sends the datagram; it never delivers it to an engine synchronously).
 *
 * Sources: IBTA Vol 1 ch. 9 (transport), ch. 10/11 (verbs semantics);
 * docs/netstack.md (wire formats) and docs/transport.md for the rules and state
 * machines as this engine applies them.
 */
#ifndef UROCE_EMU_XPORT_H
#define UROCE_EMU_XPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Engine limits. The daemon must advertise max_sge / max_inline_data no
 * larger than these (the engine copies each WQE when it is posted), and
 * max_qp_rd_atom / max_qp_init_rd_atom no larger than XPORT_RD_RESOURCES
 * (the responder keeps that many executed READs for duplicate replay). */
#define XPORT_MAX_SGE		16	/* scatter/gather entries per WQE */
#define XPORT_MAX_INLINE	256	/* bytes of inline data per send WQE */
#define XPORT_MAX_TSO_HEADER	432	/* TSO header bytes (UROCE_MAX_TSO_HEADER) */
#define XPORT_UD_GRH_BYTES	40	/* GRH area at the start of a UD recv buffer */
#define XPORT_MAX_UNACKED_PSNS	128	/* requester window: PSNs sent, not yet acked */
/* The device window: request PSNs in flight over all of a device's RC QPs.
 * Past it a QP sends only while it has fewer than XPORT_FAIR_UNACKED_PSNS
 * in flight, so every QP keeps moving and the ACKs of its own packets wake
 * it; with N QPs sending and half the window taken, none takes more than
 * XPORT_DEV_UNACKED_PSNS / N (dev_window.c). The peer's receive socket
 * holds what is in flight: 64 QPs of 128 PSNs at MTU 4096 are 32 MiB, more
 * than its buffer (udp_port.h). */
#define XPORT_DEV_UNACKED_PSNS	1024
#define XPORT_FAIR_UNACKED_PSNS	16
#define XPORT_ACKREQ_EVERY	64	/* AckReq on at least every 64th packet (rxe) */
#define XPORT_ACKREQ_RESENT	4	/* AckReq on the first packets resent after a loss */
#define XPORT_RD_RESOURCES	16	/* saved READ and atomic requests for
					 * duplicate replay (the replay cache) */
#define XPORT_RNR_RETRY_INFINITE 7	/* rnr_retry 7 = retry forever (IBTA 9.7.5.2.8) */
#define XPORT_RUN_BUDGET	32	/* READ response packets one xport_run sends
					 * per QP (below the daemon's receive batch
					 * of 64, so a READ between two QPs of one
					 * daemon cannot overflow its socket) */
#define XPORT_REQ_BUDGET	XPORT_MAX_UNACKED_PSNS /* request packets per
					 * xport_run: one RC window at once, so a
					 * go-back-N resend is not spread over turns */

struct xport_dev;
struct xport_qp;
struct xport_srq;

/*
 * One send work request as the engine keeps it (copied at post time).
 * opcode/send_flags/imm_data have exactly the ibv_send_wr meanings
 * (imm_data in network byte order). remote_addr/rkey: RDMA WRITE/READ.
 * UD only: dgid (destination address, IPv4-mapped for IPv4), remote_qpn,
 * remote_qkey (bit 31 set: use the QP's Q_Key, IBTA 10.2.4).
 * Atomics (IBV_WR_ATOMIC_CMP_AND_SWP / FETCH_AND_ADD, RC only): remote_addr
 * and rkey name the 8-byte target, compare_add and swap are the
 * ibv_send_wr.wr.atomic operands (host order); the original value is
 * written to the one SGE, which must be exactly 8 bytes: any other local
 * buffer (num_sge 0 or 2, a length other than 8) completes with
 * IBV_WC_LOC_LEN_ERR in SQ order, the QP to ERR, and nothing is sent
 * (docs/transport.md "Atomics").
 * SEND_WITH_INV (RC): a SEND whose last packet carries IETH =
 * invalidate_rkey (host order). LOCAL_INV and BIND_MW (RC, UC) are local
 * operations with no payload and no packets: the requester executes them
 * through ops->local_op when it reaches them in SQ order, and they
 * complete in that order (IBTA 10.8.3.2).
 * With IBV_SEND_INLINE the payload is inline_data[0..inline_len) and sg_list
 * is ignored; otherwise the payload is the concatenation of sg_list
 * (lengths in bytes, read through the lkey). wr_index is the daemon's ring
 * index for this WQE, echoed in its completion (mlx5 wqe_counter).
 */
/*
 * A memory-window bind (IBV_WR_BIND_MW, IBTA 10.6.7.2; ibv_bind_mw(3)):
 * window mw_handle (the daemon's handle) gets the new rkey (send WQE's
 * rkey) over [addr, addr+length) of the MR named by mr_lkey with access
 * (IBV_ACCESS_* bits); length 0 unbinds. type1: posted by the bind_mw verb
 * (only type 1 windows), else by ibv_post_send (only type 2).
 */
struct xport_mw_bind {
	uint32_t mw_handle;
	uint32_t mr_lkey;
	uint64_t addr;
	uint64_t length;
	unsigned int access;
	bool type1;
};

struct xport_send_wqe {
	uint64_t wr_id;
	uint32_t wr_index;
	enum ibv_wr_opcode opcode;
	unsigned int send_flags;
	uint32_t imm_data;
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add;
	uint64_t swap;
	union ibv_gid dgid;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t remote_srqn;		/* XRC_SEND: the XRCETH's XRC SRQ number */
	uint32_t invalidate_rkey;	/* SEND_WITH_INV (IETH) and LOCAL_INV */
	struct xport_mw_bind bind;	/* BIND_MW */
	uint32_t num_sge;
	struct ibv_sge sg_list[XPORT_MAX_SGE];
	uint32_t inline_len;
	uint8_t inline_data[XPORT_MAX_INLINE];
	/* IBV_WR_TSO (raw packet QPs): the header replicated per segment and
	 * the payload bytes per segment (docs/raw-packet.md §3) */
	uint16_t mss;
	uint16_t tso_hdr_sz;
	uint8_t tso_hdr[XPORT_MAX_TSO_HEADER];
};

/* One receive work request (ibv_recv_wr): buffers written through the lkey
 * with IBV_ACCESS_LOCAL_WRITE. wr_index as for send WQEs. */
struct xport_recv_wqe {
	uint64_t wr_id;
	uint32_t wr_index;
	uint32_t num_sge;
	struct ibv_sge sg_list[XPORT_MAX_SGE];
};

/*
 * One completion, handed to ops->complete; the daemon turns it into an mlx5
 * CQE (docs/daemon.md). is_recv selects the CQ (send vs recv).
 * - opcode: ibv_wc_opcode (IBV_WC_SEND, RDMA_WRITE, RDMA_READ, RECV,
 *   RECV_RDMA_WITH_IMM); for errors it is still filled (mlx5 leaves
 *   wc.opcode undefined for error CQEs).
 * - wr_opcode: the send WQE's opcode (requester only), so the CQE writer can
 *   pick the MLX5_OPCODE_* for sop_drop_qpn (WRITE vs WRITE_IMM ...).
 * - byte_len: bytes received (responder; UD includes the 40-byte GRH
 *   area; RECV_RDMA_WITH_IMM: the RDMA WRITE length); for RDMA_READ the
 *   bytes read; otherwise the message length.
 * - imm_data: network order (IBV_WC_WITH_IMM set in wc_flags); with
 *   IBV_WC_WITH_INV the invalidated R_Key in host order.
 * - src_qp: the peer's QPN (UD: from DETH; RC/UC: the connected dest QPN).
 * - wc_flags: IBV_WC_WITH_IMM, IBV_WC_WITH_INV, IBV_WC_GRH (UD receives).
 * - solicited: the request carried SE (for solicited-only CQ arming).
 * - signaled: false only for successful send completions of unsignaled
 *   WQEs; the daemon writes no CQE for those (mlx5 retires them with the
 *   next signaled CQE) but may use wr_index to free ring slots.
 * - srq: receive completions of an SRQ's WQE: that SRQ (for an XRC_RECV
 *   QP the one the request's XRCETH named, whose CQ takes the CQE, as
 *   mlx5 does); NULL for the QP's own RQ and for send completions.
 */
struct xport_cqe {
	uint64_t wr_id;
	uint32_t wr_index;
	uint32_t qpn;
	uint32_t src_qp;
	uint32_t byte_len;
	uint32_t imm_data;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	enum ibv_wr_opcode wr_opcode;
	unsigned int wc_flags;
	bool is_recv;
	bool solicited;
	bool signaled;
	struct xport_srq *srq;
	/* tag matching (docs/tag-matching.md): tm_app_op 0 or the CQE's
	 * UROCE_TM_APP_OP_* (uroce/abi_tm.h), tm_app_info the list entry,
	 * tmh the header a matched message carried (zeros otherwise) */
	uint8_t tm_app_op;
	uint16_t tm_app_info;
	uint8_t tmh[16];
};

/* What a memory callback is asked to do with [addr, addr+len). */
enum xport_mem_op {
	XPORT_MEM_CHECK,	/* only validate key, PD, bounds, access; buf unused */
	XPORT_MEM_READ,		/* validate, then copy memory -> buf */
	XPORT_MEM_WRITE,	/* validate, then copy buf -> memory */
};

/* Outcome of a memory access. The engine maps it: at the responder an
 * rkey failure becomes NAK Remote Access Error (requester: REM_ACCESS_ERR);
 * an lkey failure on a receive buffer becomes IBV_WC_LOC_PROT_ERR there
 * (NAK Remote Operational Error to the requester); at the requester an lkey
 * failure becomes IBV_WC_LOC_PROT_ERR. */
enum xport_mem_status {
	XPORT_MEM_OK = 0,
	XPORT_MEM_BAD_KEY,	/* no such lkey/rkey (or wrong variant) */
	XPORT_MEM_BAD_PD,	/* key belongs to another PD than the QP's */
	XPORT_MEM_BOUNDS,	/* range not inside the registered region */
	XPORT_MEM_ACCESS,	/* region lacks a required IBV_ACCESS_* flag */
	XPORT_MEM_FAULT,	/* the process's memory could not be read/written */
};

/*
 * The engine's window to the world. ctx is passed back unchanged.
 *
 * now_ns: current time in ns (monotonic; tests simulate it).
 * mem: access [addr, addr+len) of registered memory by key. is_rkey selects
 *   rkey (remote request) vs lkey (local SGE) namespace; pd is the QP's PD
 *   handle (xport_qp_create); access is the IBV_ACCESS_* flags required
 *   (IBV_ACCESS_REMOTE_WRITE / REMOTE_READ / REMOTE_ATOMIC / LOCAL_WRITE,
 *   0 for a local read). len may be 0 (then only the key is checked). Must be bounds-safe
 *   for any input: it sees values straight from the network.
 * xmit: send one RoCEv2 UDP payload (BTH .. ICRC, len bytes) to dgid at the
 *   device's UDP port from UDP source port sport. Returns 0 or an errno; a
 *   failed send is treated as a lost packet (the retry machinery recovers).
 * complete: one work completion (see struct xport_cqe).
 * timer_arm: ask to be called (xport_timer_expired(qp)) at time when_ns;
 *   when_ns == 0 cancels. One timer per QP; a new call replaces the old.
 * qp_event: an affiliated asynchronous event of the QP (ibv_get_async_event(3)):
 *   IBV_EVENT_QP_FATAL / QP_REQ_ERR / QP_ACCESS_ERR when the QP moved to ERR
 *   on its own, IBV_EVENT_SQ_DRAINED when a QP in SQD asked for it
 *   (en_sqd_async_notify) has completed every WQE it had started,
 *   IBV_EVENT_COMM_EST when an RC or UC QP in RTR accepts its first
 *   request packet (IBTA 11.6.3.1; once until the QP is reset, as mlx5's
 *   MLX5_EVENT_TYPE_COMM_EST); may be NULL.
 * schedule: QP has work left after xport_run spent its budget
 *   (XPORT_RUN_BUDGET response packets, XPORT_REQ_BUDGET request packets):
 *   call xport_run(qp) again soon, from the
 *   event loop, never from inside a callback. This is what keeps one long
 *   message (a 1 GiB READ response) from stalling other QPs and the
 *   daemon's control socket. May be NULL: xport_run then works until done.
 * srq_event: an affiliated asynchronous event of a shared receive queue:
 *   IBV_EVENT_SRQ_LIMIT_REACHED when an armed SRQ's WQE count dropped
 *   below its limit (ibv_modify_srq(3)); may be NULL.
 * local_op: execute the local operation of WQE (IBV_WR_BIND_MW or
 *   IBV_WR_LOCAL_INV) for QP of PD pd; returns IBV_WC_SUCCESS or the
 *   error status its completion gets (IBV_WC_MW_BIND_ERR,
 *   IBV_WC_LOC_QP_OP_ERR, ...). NULL: both fail with LOC_QP_OP_ERR.
 * invalidate: the responder received SEND with Invalidate of rkey on QP
 *   (IBTA 9.4.6.1, 10.6.7.2.5): invalidate it; false if rkey names no
 *   window or MR this QP may invalidate (NULL: always false).
 * rq_refill: a message needs a receive WQE and the QP's RQ (or its SRQ)
 *   holds none: post, through xport_post_recv / xport_srq_post, the receive
 *   WQEs the application wrote to the ring since its last doorbell was
 *   read, as a NIC reads its RQ from host memory when a packet arrives
 *   (the doorbell and the packet may be read in either order). May be NULL.
 * mem_sync: a memory callback may defer the copy of an XPORT_MEM_WRITE
 *   it accepted (write-behind); mem_sync puts every deferred write in
 *   memory and returns XPORT_MEM_FAULT if one of QP's failed since QP's
 *   last mem_sync (else XPORT_MEM_OK). The engine calls it before a
 *   message's data is announced: at the last or AckReq packet of a WRITE
 *   or SEND, after a UD receive's scatter, after a READ's last response
 *   and an ATOMIC's original value were written. May be NULL (writes are
 *   then synchronous).
 * qp_err: QP entered ERR, by xport_qp_modify or on its own (a fatal
 *   error, retry exhaustion, a refused WQE), after its queues were
 *   flushed. It runs inside the engine, so it must not call the engine
 *   for QP; work it starts waits for the event loop. May be NULL.
 * log: one line about a transport event, naming the QPN and PSN
 *   (retransmissions, NAKs sent and received, RNR waits, errors); level is
 *   XPORT_LOG_ERR / _WARN / _INFO; msg has no newline. May be NULL.
 */
struct xport_ops {
	uint64_t (*now_ns)(void *ctx);
	enum xport_mem_status (*mem)(void *ctx, struct xport_qp *qp,
				     uint32_t pd, bool is_rkey, uint32_t key,
				     uint64_t addr, void *buf, uint32_t len,
				     unsigned int access, enum xport_mem_op op);
	int (*xmit)(void *ctx, struct xport_qp *qp, const union ibv_gid *dgid,
		    uint16_t sport, const void *pkt, size_t len);
	void (*complete)(void *ctx, struct xport_qp *qp,
			 const struct xport_cqe *cqe);
	void (*timer_arm)(void *ctx, struct xport_qp *qp, uint64_t when_ns);
	void (*qp_event)(void *ctx, struct xport_qp *qp,
			 enum ibv_event_type event);
	void (*schedule)(void *ctx, struct xport_qp *qp);
	void (*log)(void *ctx, struct xport_qp *qp, int level, const char *msg);
	void (*srq_event)(void *ctx, struct xport_srq *srq,
			  enum ibv_event_type event);
	enum ibv_wc_status (*local_op)(void *ctx, struct xport_qp *qp,
				       uint32_t pd,
				       const struct xport_send_wqe *wqe);
	bool (*invalidate)(void *ctx, struct xport_qp *qp, uint32_t pd,
			   uint32_t rkey);
	void (*rq_refill)(void *ctx, struct xport_qp *qp);
	enum xport_mem_status (*mem_sync)(void *ctx, struct xport_qp *qp);
	void (*qp_err)(void *ctx, struct xport_qp *qp);
};

/* Levels of ops->log. */
enum { XPORT_LOG_ERR = 0, XPORT_LOG_WARN = 1, XPORT_LOG_INFO = 2 };

/*
 * Transport attributes of a QP, set by xport_qp_modify with the
 * IBV_QP_* mask bits of ibv_modify_qp(3). Values and units are those of
 * struct ibv_qp_attr: path_mtu is an enum ibv_mtu; timeout is the IBTA
 * code (4.096 us * 2^timeout; 0 = no retransmit timer); retry_cnt and
 * rnr_retry are 0..7 (rnr_retry 7 = infinite); min_rnr_timer is the RNR
 * NAK timer code (IBTA Table 45); qp_access_flags are the
 * IBV_ACCESS_REMOTE_* flags; dgid is the connected peer (RC/UC) from
 * ah_attr.grh.dgid; flow_label from ah_attr.grh.flow_label;
 * en_sqd_async_notify asks for IBV_EVENT_SQ_DRAINED on RTS->SQD. qp_state
 * is the requested state on input (IBV_QP_STATE) and the current one in
 * xport_qp_query's answer; the engine keeps the state only once.
 */
struct xport_qp_attr {
	enum ibv_qp_state qp_state;
	enum ibv_mtu path_mtu;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	unsigned int qp_access_flags;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	union ibv_gid dgid;
	uint32_t flow_label;
	bool en_sqd_async_notify;
};

/* Counters per QP (observability; tests read them). */
struct xport_qp_stats {
	uint64_t tx_pkts, rx_pkts;
	uint64_t retransmits;		/* go-back-N rewinds (timeout or NAK) */
	uint64_t timeout_copies;	/* first packets resent twice after a timeout (req.c) */
	uint64_t timeouts;		/* retransmit timer expiries that rewound */
	uint64_t rnr_naks_rx, rnr_naks_tx;
	uint64_t seq_naks_rx, seq_naks_tx;
	uint64_t dup_requests;		/* duplicate requests seen by the responder */
	uint64_t read_restarts;		/* duplicate READs that restarted a job in progress */
	uint64_t dropped;		/* packets dropped (bad state, UC gap, Q_Key ...) */
	uint64_t acks_tx;
	uint64_t acks_coalesced;	/* ACKs replaced by a later one of the same batch (ack.c) */
};

/*
 * Create a device engine. local_gid: this device's address (IPv4-mapped
 * for IPv4); udp_port: the RoCEv2 destination port both ends use (4791);
 * port_mtu: the port's active MTU in bytes (256..4096; UD messages are
 * bounded by it). Returns NULL with errno EINVAL (bad argument) or ENOMEM.
 */
struct xport_dev *xport_dev_new(const struct xport_ops *ops, void *ctx,
				const union ibv_gid *local_gid,
				uint16_t udp_port, uint32_t port_mtu);
/* Free the device. All its QPs must have been destroyed. */
void xport_dev_free(struct xport_dev *dev);

/*
 * Create a QP in RESET. type: IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
 * IBV_QPT_XRC_SEND or IBV_QPT_XRC_RECV (else NULL, errno EOPNOTSUPP);
 * XRC QPs (IBTA Annex A14, docs/xrc.md) are RC QPs whose packets carry the
 * XRC opcodes: an XRC_SEND QP only sends, each request with an XRCETH
 * naming its WQE's remote_srqn; an XRC_RECV QP only responds, taking
 * each message's receive WQE from the XRC SRQ its XRCETH names (which
 * must be registered with xport_srq_set_xrc in the QP's domain, set with
 * xport_qp_set_xrcd: else NAK Invalid Request) and checking memory
 * against that SRQ's PD; qpn: the daemon's QPN (24 bits, unique on this
 * device, else EEXIST / EINVAL); pd: opaque PD handle passed to ops->mem;
 * sq_depth / rq_depth: queue capacities in WQEs (0..65536; 0 is taken as
 * 1, for QPs created with max_send_wr or max_recv_wr 0); sq_sig_all:
 * every send WQE completes signaled; user: caller data (xport_qp_user).
 */
struct xport_qp *xport_qp_create(struct xport_dev *dev, enum ibv_qp_type type,
				 uint32_t qpn, uint32_t pd, uint32_t sq_depth,
				 uint32_t rq_depth, bool sq_sig_all, void *user);
/* Destroy a QP: outstanding WQEs are dropped without completions; its
 * timer is cancelled. */
void xport_qp_destroy(struct xport_qp *qp);

/*
 * The value ranges of the transport attributes named in MASK (IBV_QP_*
 * bits; ibv_modify_qp(3), IBTA 10.3.1 / 9.7.6): path_mtu one of
 * IBV_MTU_256..4096, timeout and min_rnr_timer 0..31, retry_cnt and
 * rnr_retry 0..7, dest_qp_num, rq_psn and sq_psn below 2^24. The one place
 * these ranges are checked: xport_qp_modify and the daemon's
 * qp_modify_check both call it. Returns 0 or EINVAL.
 */
int xport_qp_attr_check(const struct xport_qp_attr *attr, int mask);

/* The transport attributes of an ibv_modify_qp(3) request (PSNs taken
 * modulo 2^24 as the verbs layer does; dgid and flow_label from
 * ah_attr.grh). */
void xport_qp_attr_from_ibv(const struct ibv_qp_attr *in,
			    struct xport_qp_attr *out);

/*
 * Apply attributes (mask: IBV_QP_* bits) in one walk. The daemon's QP state
 * machine has already validated the transition and mask; the engine checks
 * the values (xport_qp_attr_check), applies them and the side effects:
 * RESET clears all transport state and drops WQEs; ERR flushes every
 * outstanding WQE with IBV_WC_WR_FLUSH_ERR; RTS starts the requester;
 * RTS->SQD with en_sqd_async_notify raises IBV_EVENT_SQ_DRAINED once the
 * completer has finished every started WQE. Returns 0, or EINVAL for an
 * out-of-range value (nothing applied); qkey on a non-UD QP is ignored.
 */
int xport_qp_modify(struct xport_qp *qp, const struct xport_qp_attr *attr,
		    int mask);

/* The QP's attributes as ibv_query_qp(3) reports the transport part:
 * qp_state is the current state (the engine moves to ERR on its own), the
 * other fields the last applied values (zero after RESET). */
void xport_qp_query(const struct xport_qp *qp, struct xport_qp_attr *out);

/* Current state and the values the engine tracks (for ibv_query_qp). */
enum ibv_qp_state xport_qp_state(const struct xport_qp *qp);
uint32_t xport_qp_num(const struct xport_qp *qp);
uint32_t xport_qp_sq_psn(const struct xport_qp *qp);	/* next PSN to send */
uint32_t xport_qp_rq_psn(const struct xport_qp *qp);	/* expected PSN */
void *xport_qp_user(const struct xport_qp *qp);
const struct xport_qp_stats *xport_qp_stats(const struct xport_qp *qp);

/*
 * Post one send WQE (copied). Returns 0; ENOMEM if the SQ is full; EINVAL
 * for a malformed WQE (num_sge > XPORT_MAX_SGE, inline_len too big, opcode
 * unknown, atomics with IBV_SEND_INLINE, RDMA or
 * atomics on a QP type without them, LOCAL_INV or BIND_MW with SGEs or
 * inline data); EOPNOTSUPP for an opcode this engine does not do
 * (ATOMIC_WRITE, FLUSH, TSO).
 * A QP in RESET/INIT/RTR
 * gets EINVAL (ibv_post_send(3)); a QP in ERR accepts it and completes it
 * with IBV_WC_WR_FLUSH_ERR.
 */
int xport_post_send(struct xport_qp *qp, const struct xport_send_wqe *wqe);
/* HOLD true: the send WQEs posted from now on are queued, not started, so
 * that the requester sees them together (a doorbell's batch: their small
 * payloads are read in one ops->mem call, prefetch.c); false: start what
 * was queued. */
void xport_post_hold(struct xport_qp *qp, bool hold);
/* Post one receive WQE (copied). 0; ENOMEM if the RQ is full; EINVAL
 * (num_sge, or QP in RESET); in ERR it is flushed at once. */
int xport_post_recv(struct xport_qp *qp, const struct xport_recv_wqe *wqe);

/*
 * A WQE the daemon could not accept (unreadable or invalid ring entry, or
 * xport_post_send/recv refused it): it takes its place in the SQ (is_recv
 * false) or RQ and completes with IBV_WC_LOC_QP_OP_ERR after every older
 * WQE of that queue; the QP moves to ERR (flushing the rest) and raises
 * IBV_EVENT_QP_FATAL. A QP already in ERR executes nothing, so it refuses
 * nothing: the WQE completes with IBV_WC_WR_FLUSH_ERR, no event (IBTA
 * 10.3.1: in Error every WQE completes with a flush error). A QP in
 * RESET has nothing to order against and stays there: only the error
 * completion is written.
 */
void xport_post_refused(struct xport_qp *qp, bool is_recv, uint32_t wr_index);

/*
 * Hand a received RoCEv2 UDP payload (BTH .. ICRC) to the engine. sgid is
 * the sender's address, dgid the address it was sent to (both needed for
 * the ICRC pseudo header); sport/dport the UDP ports. Malformed packets,
 * bad ICRC, unknown QPN or wrong state: dropped and counted, never an
 * error for the caller. Returns 0 if the packet was accepted by a QP, or a
 * positive code saying why it was dropped (for logs): EBADMSG (parse/ICRC),
 * ENOENT (no such QP), EAGAIN (the QP dropped it: its state, its type, a
 * UD Q_Key, no receive WQE, out of sequence, counted in its `dropped`; or
 * its completer ignored it: a duplicate or stale response), EACCES (RC/UC:
 * sgid is not the QP's remote address).
 */
int xport_input(struct xport_dev *dev, const void *pkt, size_t len,
		const union ibv_gid *sgid, const union ibv_gid *dgid,
		uint16_t sport, uint16_t dport);

/*
 * xport_input_verified - xport_input for a payload whose ICRC the device
 * computed itself over these very bytes (its internal loopback, no fault
 * injected): parsed with roce_parse_udp_verified, the ICRC not computed
 * again (emu/nic/loopback.h). Same returns as xport_input.
 */
int xport_input_verified(struct xport_dev *dev, const void *pkt, size_t len,
			 const union ibv_gid *sgid, const union ibv_gid *dgid,
			 uint16_t sport, uint16_t dport);

/*
 * xport_input_mcast - a received RoCEv2 payload sent to a multicast group
 * (dgid, IBTA 10.5): parsed and checked once (as xport_input; VERIFIED as
 * xport_input_verified), then handed to each of the N QPs QPNS names (the
 * group's attached QPs; a QPN the engine does not know is skipped). The
 * packet must name destination QP 0xFFFFFF and be a UD request (IBTA
 * 10.5.2.2), else ENOENT. Returns 0 if at least one QP took it, EBADMSG,
 * ENOENT, or EAGAIN (no QP took it: state, Q_Key).
 */
int xport_input_mcast(struct xport_dev *dev, const void *pkt, size_t len,
		      const union ibv_gid *sgid, const union ibv_gid *dgid,
		      uint16_t sport, uint16_t dport, bool verified,
		      const uint32_t *qpns, unsigned int n);

/*
 * Coalesced ACKs (IBTA Vol 1 9.7.5.1; emu/xport/ack.c): with ON, the RC
 * responder holds the ACK a packet with AckReq earns, a newer one of the
 * same QP replacing it, until xport_ack_flush; the caller must then call
 * xport_ack_flush after each batch of xport_input calls and before it
 * waits for anything (the requester's retransmit timer runs meanwhile).
 * Off (the default): every ACK leaves at once. Turning it off flushes.
 */
void xport_ack_coalescing(struct xport_dev *dev, bool on);
/* Send every held ACK: one per QP, the last one earned. */
void xport_ack_flush(struct xport_dev *dev);

/* The timer armed through ops->timer_arm fired (at or after its time). */
void xport_timer_expired(struct xport_qp *qp);

/* Do the QP's pending work, at most XPORT_RUN_BUDGET response and
 * XPORT_REQ_BUDGET request packets (when ops->schedule is set), asking ops->schedule for another turn if work is
 * left. Every entry point above calls it once at its end; the daemon calls
 * it for a scheduled QP. */
void xport_run(struct xport_qp *qp);

/*
 * Shared receive queues (IBTA 10.2.9, 11.2.3; ibv_create_srq(3)). An SRQ
 * holds receive WQEs for any number of RC, UC and UD QPs of its device:
 * the first message that needs a receive WQE on any of them takes the
 * oldest one (IBTA 10.2.9.1), and the completion goes to that QP's receive
 * CQ with that QP's number. An empty SRQ answers as an empty RQ would
 * (RC: RNR NAK; UC/UD: the message is dropped). A QP in ERR flushes only
 * the WQE it was filling, never the SRQ's (IBTA 10.3.1), and raises
 * IBV_EVENT_QP_LAST_WQE_REACHED (IBTA 11.6.3.2, o11-5.2.2).
 *
 * xport_srq_create: DEPTH 1..65536 WQEs; USER as for QPs. NULL with errno
 * EINVAL or ENOMEM. xport_srq_destroy: no QP may use it any more; its WQEs
 * are dropped without completions.
 */
struct xport_srq *xport_srq_create(struct xport_dev *dev, uint32_t depth,
				   void *user);
void xport_srq_destroy(struct xport_srq *srq);
void *xport_srq_user(const struct xport_srq *srq);
/* Post one receive WQE (copied). 0; ENOMEM if DEPTH are posted and
 * untaken; EINVAL for num_sge > XPORT_MAX_SGE. */
int xport_srq_post(struct xport_srq *srq, const struct xport_recv_wqe *wqe);
/* WQEs posted and not yet taken by a QP. */
uint32_t xport_srq_count(const struct xport_srq *srq);
/*
 * Tag matching (tm.c, docs/tag-matching.md). xport_srq_set_tm makes SRQ a
 * tag-matching SRQ with list entries 0..NENT-1 (0; EINVAL if set or NENT
 * 0; ENOMEM). xport_tm_op executes one list operation: OPCODE
 * IBV_WR_TAG_ADD (INDEX free, else EINVAL; TAG, MASK and the buffer SGE),
 * IBV_WR_TAG_DEL (*success false when INDEX is not in the list),
 * IBV_WR_TAG_SYNC; with SYNC set, SW_CNT is software's unexpected count
 * (EINVAL, nothing done, when ahead of the device's). *hw_cnt: the
 * device's unexpected count (16 bits, as mlx5's hw_phase_cnt).
 */
struct xport_tm_op {
	uint32_t opcode, index;
	bool sync;
	uint16_t sw_cnt;
	uint64_t tag, mask;
	struct ibv_sge sge;
};
int xport_srq_set_tm(struct xport_srq *srq, uint32_t nent);
int xport_tm_op(struct xport_srq *srq, const struct xport_tm_op *op, bool *success,
		uint16_t *hw_cnt);
/* Arm the limit (ibv_modify_srq(3) IBV_SRQ_LIMIT): once the count drops
 * below LIMIT, ops->srq_event gets IBV_EVENT_SRQ_LIMIT_REACHED once and
 * the limit goes back to 0 (disarmed). LIMIT 0 disarms. 0; EINVAL if
 * LIMIT > depth. xport_srq_limit: the armed limit, 0 when disarmed. */
int xport_srq_arm(struct xport_srq *srq, uint32_t limit);
uint32_t xport_srq_limit(const struct xport_srq *srq);
/*
 * XRC (docs/xrc.md): xport_srq_set_xrc makes SRQ an XRC SRQ of domain
 * XRCD (any number the caller gives; domains are compared, nothing else)
 * with number SRQN (24 bits, unique among the device's XRC SRQs: EEXIST)
 * and protection domain PD: XRC_RECV QPs of XRCD then find it by SRQN.
 * Once set it cannot change (EINVAL). Destroying it detaches it from the
 * XRC_RECV QPs using it (a message in progress is dropped; its next
 * packet is refused with NAK Invalid Request).
 * xport_qp_set_xrcd: the domain of an XRC_RECV QP in RESET (EINVAL for
 * another QP). xport_qp_srq: the SRQ a QP takes receive WQEs from now
 * (an XRC_RECV QP: the one its last request named), or NULL.
 */
int xport_srq_set_xrc(struct xport_srq *srq, uint32_t srqn, uint32_t xrcd, uint32_t pd);
int xport_qp_set_xrcd(struct xport_qp *qp, uint32_t xrcd);
struct xport_srq *xport_qp_srq(const struct xport_qp *qp);

/* Let QP (in RESET, never posted to) take its receive WQEs from SRQ;
 * its own receive queue is unused from then on (xport_post_recv:
 * EINVAL). 0 or EINVAL. */
int xport_qp_set_srq(struct xport_qp *qp, struct xport_srq *srq);

/* Device-wide packet counters: packets the device dropped before a QP saw
 * them (parse errors incl. ICRC, unknown QPN), of the parse errors those
 * whose ICRC does not match (rx_bad_icrc), and packets for an RC/UC QP
 * from an address other than its remote one (also in the QP's dropped). */
struct xport_dev_stats {
	uint64_t rx_bad, rx_no_qp, rx_bad_src, rx_bad_icrc;
	/* small send WQEs' payloads read together (prefetch.c): ops->mem
	 * calls, and the WQEs they served */
	uint64_t prefetch_reads, prefetch_wqes;
	/* the device window (dev_window.c): times it stopped a QP, and the
	 * most request PSNs in flight over all RC QPs */
	uint64_t window_stops;
	uint32_t window_max;
};
const struct xport_dev_stats *xport_dev_stats(const struct xport_dev *dev);
/* Request PSNs in flight now over all RC QPs (the device window's sum). */
uint32_t xport_dev_unacked(const struct xport_dev *dev);

#ifdef __cplusplus
}
#endif
#endif
