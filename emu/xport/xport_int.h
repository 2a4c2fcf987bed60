/*
 * xport_int.h: the transport engine's private state, shared by its files.
 * Entry points (qp.c: create/modify/post; recv.c: received packets; run.c:
 * timer expiry and the run function) mark work and call xport_run once;
 * the workers (req.c requester, resp.c responder, comp.c completer; comp
 * may rewind the requester) do it; below them common.c (completions,
 * flush, gather/scatter, packet transmission) and timer.c (deadlines)
 * call nothing above. Not part of the daemon's interface.
 */
#ifndef UROCE_EMU_XPORT_INT_H
#define UROCE_EMU_XPORT_INT_H

#include "emu/xport/xport.h"
#include "netstack/packet.h"
#include "netstack/psn.h"
#include "netstack/udp_sport.h"

/* Largest UDP payload the engine builds: BTH + RETH + ImmDt + DETH + 4096
 * payload + 3 pad + ICRC, rounded up. */
#define XPORT_PKT_MAX 4224

/* Where a send WQE is in its life (requester/completer view). */
enum xport_swqe_state {
	SWQE_POSTED,	/* not yet (fully) transmitted */
	SWQE_PENDING,	/* all packets sent; RC: waiting for ACK / READ data */
};

/* A posted send WQE plus what the requester computed for it. PSNs are
 * assigned when its first packet is sent and are stable across
 * retransmissions (go-back-N resends the same PSNs). */
struct xport_swqe {
	struct xport_send_wqe wr;
	uint32_t length;	/* message length, bytes */
	uint32_t first_psn, last_psn;
	uint32_t npkts;		/* packets (READ: response packets = PSNs used) */
	enum xport_swqe_state state;
	bool psn_assigned;
	enum ibv_wc_status err_status;	/* != SUCCESS: local error found while
					 * sending; reported when flushed */
	uint64_t tag;		/* its read-ahead tag (xport_read_ahead) */
	bool prefetched;	/* payload in wr.inline_data (xport_prefetch) */
};

/* Send queue: ring of depth slots; free-running indices, slot = i % depth.
 * comp <= req <= head: [comp, req) sent and awaiting completion, [req,
 * head) not yet sent. */
struct xport_sq {
	struct xport_swqe *ring;
	uint32_t depth;
	uint32_t head;		/* next free slot (producer) */
	uint32_t req;		/* WQE the requester sends next / is sending */
	uint32_t comp;		/* oldest WQE not yet completed */
};

/* A posted receive WQE; err_status != SUCCESS: refused by the daemon
 * (xport_post_refused), reported in its turn when the QP flushes. */
struct xport_rwqe {
	struct xport_recv_wqe wr;
	enum ibv_wc_status err_status;
};

/* Receive queue: [tail, head) posted and unused. */
struct xport_rq {
	struct xport_rwqe *ring;
	uint32_t depth;
	uint32_t head, tail;
};

/* Requester state (req.c). */
struct xport_req {
	uint32_t psn;		/* PSN of the next packet to send */
	uint32_t psn_max;	/* first PSN never sent yet (responses to
				 * PSNs at or after it are forged/stale) */
	uint32_t offset;	/* bytes of WQE sq.req already sent */
	uint32_t noack;		/* packets sent since the last AckReq */
	bool ackreq_next;	/* AckReq on the next packet: the device window
				 * stops the QP after it (dev_window.c) */
	uint32_t resent_ackreq;	/* AckReqs left for packets resent after a rewind */
	bool timeout_copy;	/* send the next packet twice: the first resent
				 * after a Local ACK Timeout (req.c req_send) */
	uint32_t rd_outstanding; /* READ and atomic WQEs sent and not
				  * completed (at most max_rd_atomic) */
	uint64_t rnr_deadline;	/* ns; != 0: paused until then (RNR NAK) */
};

/* Completer state (comp.c). */
struct xport_comp {
	uint32_t psn;		/* oldest PSN not yet acknowledged */
	uint8_t retry_left;	/* transport retries left (retry_cnt) */
	uint8_t rnr_left;	/* RNR retries left (rnr_retry, 7 = infinite) */
	bool read_started;	/* READ_RESP FIRST seen for the READ at comp.psn */
	bool rewound;		/* a rewind to comp.psn is outstanding: ignore
				 * further gaps until data at comp.psn arrives */
	uint64_t retrans_deadline; /* ns; 0 = not armed */
};

/* A READ or atomic request the responder has executed, kept for duplicate
 * replay (IBTA 9.7.5.1.3 "responder resources"): a READ is answered again
 * from memory, an atomic from its saved original value (never executed
 * twice, IBTA 9.7.5.2.x, atomic.c). */
struct xport_rd_res {
	bool valid;
	bool atomic;		/* CMP_SWAP / FETCH_ADD: orig is the reply */
	uint64_t orig;		/* atomic: the original remote value */
	uint32_t first_psn, last_psn;
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
};

/* READ responses still to send for one request (new or replayed): packets
 * i..n-1 of [va, va+len) from PSN psn + i. */
struct xport_rd_job {
	uint32_t psn;
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
	uint32_t i, n;
	bool replay;		/* answers a duplicate (holds no new resource) */
	uint64_t tag;		/* its read-ahead tag (xport_read_ahead) */
};

#define XPORT_RD_JOBS XPORT_RD_RESOURCES

/* A request packet that arrived while READ responses were still being
 * sent: it waits its turn (responses leave in PSN order, IBTA 9.5). */
struct xport_queued_pkt {
	struct xport_queued_pkt *next;
	uint32_t rd_held;	/* responder resources in use when it arrived */
	bool rd_new;		/* a new READ/atomic: takes a resource */
	struct roce_l3 l3;
	size_t len;
	uint8_t data[];
};

#define XPORT_RESP_QUEUE 64	/* request packets waiting, per QP */

/* Which multi-packet message the responder is in the middle of. */
enum xport_resp_msg {
	RESP_MSG_NONE,
	RESP_MSG_SEND,
	RESP_MSG_WRITE,
};

/* Responder state (resp.c). */
/*
 * What tag matching (tm.c) decided for the message being received on a
 * tag-matching SRQ: app_op 0 for none (not a TM SRQ, or a message whose
 * TMH is malformed: an ordinary receive), else the CQE's
 * UROCE_TM_APP_OP_*; index the list entry of a matched tag (the CQE's
 * app_info); skip the message bytes not placed (the TMH of a matched EAGER
 * message); tmh the header as received, which the CQE carries on a match.
 */
struct xport_tm_rx {
	uint8_t app_op;
	uint16_t index;
	uint32_t skip;
	uint8_t tmh[16];
	uint8_t rvh[16];	/* a matched rendezvous: its RVH (va, rkey, len) */
	struct ibv_sge sge;	/* ... and the tag's buffer */
};

/* send_flags bit of the SQ WQEs the device posts itself for a rendezvous
 * (tm.c): never an IBV_SEND_* bit. */
#define XPORT_SEND_TM (1u << 31)

struct xport_resp {
	uint32_t epsn;		/* expected PSN */
	uint32_t msn;		/* message sequence number, 24 bits */
	bool nak_sent;		/* a PSN-sequence or RNR NAK was sent for epsn */
	enum xport_resp_msg in_msg;
	bool uc_drop;		/* UC: drop until the next FIRST/ONLY */
	/* receive WQE being filled by a multi-packet SEND */
	bool have_rwqe;
	struct xport_recv_wqe rwqe;
	uint32_t recv_len;	/* bytes placed so far (UD: incl. GRH area) */
	/* RDMA WRITE in progress */
	uint64_t va;
	uint32_t rkey;
	uint32_t resid;		/* bytes still expected */
	uint32_t write_len;	/* RETH DMA length */
	struct xport_rd_res rd[XPORT_RD_RESOURCES];
	uint32_t rd_next;
	struct xport_rd_job job[XPORT_RD_JOBS];	/* [job_head, job_tail) */
	uint32_t job_head, job_tail;
	uint32_t rd_held;	/* resources in use when the packet being
				 * processed arrived (atomic.c) */
	uint32_t rx_next;	/* while requests are queued: the PSN after
				 * the last one received (atomic.c) */
	bool ack_held;		/* an ACK waits for xport_ack_flush (ack.c) */
	uint32_t ack_psn, ack_msn;	/* ... its PSN and MSN */
	struct xport_tm_rx *tm;	/* the message's tag-matching outcome (tm.c); made
				 * at the QP's first message on a TM SRQ */
};

/* Work an entry point marked for xport_run (run.c). */
enum {
	XPORT_WORK_REQ = 1 << 0,	/* the requester may be able to send */
	XPORT_WORK_RESP = 1 << 1,	/* READ responses or queued requests */
};


/* Shared receive queue (srq.c): [tail, head) posted and untaken. */
struct xport_srq {
	struct xport_dev *dev;
	void *user;
	struct xport_recv_wqe *ring;
	uint32_t depth;
	uint32_t head, tail;
	uint32_t limit;			/* armed limit, 0 = disarmed */
	uint32_t qps;			/* QPs attached */
	/* XRC SRQ (xport_srq_set_xrc): on dev->xrc_srqs */
	bool xrc;
	uint32_t srqn, xrcd, pd;
	struct xport_srq *xrc_next;
	struct xport_tm *tm;		/* tag-matching SRQ (tm.c), else NULL */
};

/* What an XRC QP is (its type is IBV_QPT_RC inside the engine). */
enum xport_xrc {
	XPORT_XRC_NONE,
	XPORT_XRC_SEND,		/* requester only; requests carry XRCETH */
	XPORT_XRC_RECV,		/* responder only; SRQ chosen per message */
};

struct xport_qp {
	struct xport_dev *dev;
	struct xport_srq *srq;		/* receive WQEs come from here, or NULL */
	struct xport_qp *hash_next;
	void *user;
	enum ibv_qp_type type;
	enum xport_xrc xrc;
	uint32_t xrcd;			/* XRC_RECV: its domain */
	enum ibv_qp_state state;
	uint32_t qpn;
	uint32_t pd;
	bool sq_sig_all;
	bool sqd_notify;		/* SQ_DRAINED owed once the SQ drains */
	bool comm_est;			/* COMM_EST raised since the last RESET */
	struct xport_qp_attr attr;	/* last applied values; the state is
					 * in `state` only */
	uint32_t mtu;			/* path MTU in bytes (UD: port MTU) */
	uint16_t sport;			/* UDP source port */
	struct xport_sq sq;
	struct xport_rq rq;
	struct xport_req req;
	struct xport_comp comp;
	struct xport_resp resp;
	struct xport_qp *ack_next;	/* on dev->ack_list */
	uint64_t timer_armed;		/* deadline last passed to timer_arm */
	unsigned int work;		/* XPORT_WORK_* marked, not yet done */
	bool post_held;			/* xport_post_hold: posts only queue */
	uint32_t unacked_counted;	/* its share of dev->unacked (dev_window.c) */
	struct xport_queued_pkt *rxq, **rxq_tail;
	uint32_t rxq_len;
	struct xport_qp_stats stats;
};

#define XPORT_QP_HASH 4096

/* Bytes read in one ops->mem call once a source is read in order (one
 * message of ib_write_bw -s 65536). */
#define XPORT_READ_AHEAD 65536

/*
 * The device's read-ahead: bytes of one source (a send WQE's SGE payload,
 * a READ response job's range) read past the packet being built, so that
 * the packets after it are copied from here instead of costing one ops->mem
 * call (a pread of the client's memory) each. A source is named by a tag
 * from dev->read_tag, never reused: a WQE posted later, or the same range
 * read again for a later request, is read afresh. A send WQE's bytes may
 * not change before its completion (ibv_post_send(3)); a READ's range is
 * read when its first response leaves, as a NIC's DMA would.
 */
struct xport_read_ahead {
	uint64_t tag;		/* source whose bytes are held; 0: none */
	uint32_t off, len;	/* source bytes [off, off+len) held in buf */
	uint32_t next;		/* offset after the last read of tag;
				 * UINT32_MAX: no read-ahead for this tag */
	uint8_t buf[XPORT_READ_AHEAD];
};

/* The most bytes one prefetch reads, and the most WQEs it serves. */
#define XPORT_PREFETCH_SPAN 4096
#define XPORT_PREFETCH_WQES 64

/*
 * xport_prefetch - before the first packet of the send WQE at qp->sq.req:
 * if it and the WQEs queued behind it are small SENDs/WRITEs (one SGE, at
 * most XPORT_MAX_INLINE bytes, same lkey, no IBV_SEND_FENCE behind the
 * first) whose buffers lie within XPORT_PREFETCH_SPAN bytes, reads them
 * all with one ops->mem call into their WQEs (prefetched). Two WQEs at
 * least; on any error nothing is prefetched (prefetch.c).
 */
void xport_prefetch(struct xport_qp *qp);

/* Copies LEN bytes at OFFSET of source SRC into BUF (ops->mem underneath). */
typedef enum xport_mem_status (*xport_fetch_fn)(struct xport_qp *qp, const void *src,
						uint32_t offset, void *buf, uint32_t len);

/*
 * xport_read_ahead - LEN bytes at OFFSET of source SRC (TOTAL bytes long,
 * named TAG; 0: no read-ahead) into BUF. The first read of a tag fetches
 * LEN bytes; the next in-order one fetches up to XPORT_READ_AHEAD bytes
 * from its offset at once, which the following ones are copied from.
 * Returns XPORT_MEM_OK or FETCH's error for these LEN bytes (a read-ahead
 * that fails further on is not an error: reads go on one fetch each).
 */
enum xport_mem_status xport_read_ahead(struct xport_qp *qp, uint64_t tag, uint32_t total,
				       uint32_t offset, void *buf, uint32_t len,
				       xport_fetch_fn fetch, const void *src);

struct xport_dev {
	struct xport_ops ops;
	void *ctx;
	union ibv_gid gid;
	uint16_t udp_port;
	uint32_t port_mtu;
	struct xport_qp *hash[XPORT_QP_HASH];
	struct xport_dev_stats stats;
	uint64_t read_tag;	/* read-ahead tags handed out so far */
	struct xport_read_ahead ahead;
	bool ack_coalesce;	/* ACKs held until xport_ack_flush (ack.c) */
	struct xport_qp *ack_list;	/* QPs holding an ACK */
	struct xport_srq *xrc_srqs;	/* XRC SRQs (srq.c) */
	uint32_t unacked;	/* request PSNs in flight over all RC QPs, each
				 * QP's share as of its last xport_run (dev_window.c) */
	uint32_t active;	/* of those QPs, the ones with any in flight */
};

/* ---- helpers shared by the engine's files ---- */

/* Mark WORK (XPORT_WORK_*) for the run function. Entry points mark, and
 * call xport_run once at their end. */
static inline void xport_mark(struct xport_qp *qp, unsigned int work)
{
	qp->work |= work;
}

/* IBTA 1.5 ATOMIC WRITE and FLUSH: one PSN each, answered by an empty
 * RDMA READ Response Only (the kernel's rxe_resp.c, acknowledge()). */
#define XPORT_WR_FLUSH 14	 /* IBV_WR_FLUSH, rdma-core >= 45 */
#define XPORT_WR_ATOMIC_WRITE 15 /* IBV_WR_ATOMIC_WRITE, rdma-core >= 44 */
#define XPORT_WC_FLUSH 8	 /* IBV_WC_FLUSH */
#define XPORT_WC_ATOMIC_WRITE 9	 /* IBV_WC_ATOMIC_WRITE */
static inline bool xport_wr_is_flush_aw(enum ibv_wr_opcode op)
{
	return (int)op == XPORT_WR_FLUSH || (int)op == XPORT_WR_ATOMIC_WRITE;
}

/* READ, atomics, ATOMIC WRITE and FLUSH: the requests that take a
 * responder resource and count against max_rd_atomic (IBTA 9.7.5.1.3;
 * ibv_modify_qp(3); rxe counts ATOMIC WRITE and FLUSH the same way). */
static inline bool xport_wr_is_rd_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD || xport_wr_is_flush_aw(op);
}

static inline bool xport_wr_is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* Local operations: executed by the requester in SQ order, no packets
 * (IBTA 10.6.7.2 bind, 10.6.5 invalidate). */
static inline bool xport_wr_is_local(enum ibv_wr_opcode op)
{
	return op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV;
}

static inline struct xport_swqe *xport_sq_at(struct xport_qp *qp, uint32_t i)
{
	return &qp->sq.ring[i % qp->sq.depth];
}

/* Packets (= PSNs) a message of LEN bytes (at most 2 GiB) takes at path
 * MTU MTU bytes: at least one (IBTA 9.7.1: a zero-length message is one
 * ONLY packet). */
static inline uint32_t xport_npkts(uint32_t len, uint32_t mtu)
{
	return len ? (len + mtu - 1) / mtu : 1;
}

static inline uint64_t xport_now(struct xport_qp *qp)
{
	return qp->dev->ops.now_ns(qp->dev->ctx);
}

/* The QP with number QPN on DEV, or NULL (qp.c). */
struct xport_qp *xport_qp_lookup(struct xport_dev *dev, uint32_t qpn);

/* Bytes of an IBV_MTU_* value; 0 if invalid. */
uint32_t xport_mtu_bytes(enum ibv_mtu mtu);

/* Transmit a packet described by H with PAYLOAD[0..len) to DGID: builds it
 * with the netstack (ICRC included) and calls ops->xmit. Returns 0 or an
 * errno (EINVAL if the codec refused the headers). */
int xport_send_pkt(struct xport_qp *qp, const union ibv_gid *dgid,
		   struct roce_hdrs *h, const void *payload, uint32_t len);

/* Where the payload of an OPCODE packet starts in its packet buffer: the
 * bytes of the BTH and the ETHs the opcode carries (IBTA 9.2-9.4). A
 * requester or READ responder gathers the payload there, in the
 * XPORT_PKT_MAX-byte buffer it then hands to xport_send_in. */
size_t xport_hdr_len(uint8_t opcode);

/* xport_send_pkt with the LEN payload bytes already in place: at
 * PKT + xport_hdr_len(h->opcode) of the caller's XPORT_PKT_MAX-byte PKT,
 * where the headers are then written around them (one copy of the payload
 * less per packet). Same returns as xport_send_pkt. */
int xport_send_in(struct xport_qp *qp, const union ibv_gid *dgid,
		  struct roce_hdrs *h, uint8_t *pkt, uint32_t len);

/* Format one line (prefixed "qpn 0x..: ") for ops->log, if set. */
void xport_log(struct xport_qp *qp, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Short names for logs: "RDMA_WRITE", "REM_ACCESS_ERR", ... */
const char *xport_wr_opcode_name(enum ibv_wr_opcode op);
const char *xport_wc_status_name(enum ibv_wc_status st);

/* Emit a completion through ops->complete. */
void xport_emit(struct xport_qp *qp, const struct xport_cqe *cqe);

/* tm.c: the receive WQE of a message's first packet (into
 * qp->resp.rwqe): from the RQ or SRQ (xport_rq_take), but for a SEND
 * (IS_SEND) on a tag-matching SRQ the one its TMH chooses, the outcome in
 * qp->resp.tm. False when none is there. */
bool xport_rwqe_take(struct xport_qp *qp, const struct roce_pkt *pkt, bool is_send);
/* tm.c: of a SEND packet's N payload bytes, how many are not placed (the
 * matched EAGER message's TMH, a rendezvous request). */
uint32_t xport_tm_unplaced(const struct xport_qp *qp, uint32_t n);
/* tm.c: places a SEND packet's PAYLOAD of *N bytes into qp->resp.rwqe at
 * recv_len, less the bytes not placed (*N: the bytes placed). Returns
 * xport_scatter's status. */
enum xport_mem_status xport_recv_place(struct xport_qp *qp, const uint8_t *payload, uint32_t *n);
/* tm.c: emits the receive completion C of the message with its TM fields
 * (xport_emit), then starts a matched rendezvous's READ. */
void xport_tm_emit(struct xport_qp *qp, struct xport_cqe *c);
/* tm.c: a matched tag whose message was abandoned goes back on the list. */
bool xport_tm_give_back(struct xport_qp *qp);
/* tm.c: the SRQ's tag list freed with it. */
void xport_tm_free(struct xport_srq *srq);
/* tm.c: an XPORT_SEND_TM WQE completed (the READ: the second CQE and the
 * FIN; the FIN: nothing). */
void xport_tm_sq_done(struct xport_qp *qp, const struct xport_send_wqe *wqe, uint32_t byte_len,
		      enum ibv_wc_status status);
/* tm.c: a QP joining a tag-matching SRQ gets SQ slots for those WQEs
 * (0; EINVAL for a QP other than RC; ENOMEM). */
int xport_tm_qp_attach(struct xport_qp *qp);

/* Move the QP to ERR on its own (error found by the engine), report the
 * async event (an enum ibv_event_type; -1 = none) and flush everything outstanding (WR_FLUSH_ERR). */
void xport_qp_fatal(struct xport_qp *qp, int event);
/* A UD send error: move the QP from RTS/SQD to SQE (IBTA 10.3.1, Send Queue
 * Error) and flush the send queue only; the receive queue keeps working
 * and ibv_modify_qp(3) SQE -> RTS resumes sending. No async event: the
 * error completion is the report. */
void xport_qp_send_error(struct xport_qp *qp);
/* Flush all outstanding send and receive WQEs with IBV_WC_WR_FLUSH_ERR
 * (a WQE with an err_status completes with that instead). */
void xport_flush(struct xport_qp *qp);
/* The send-queue half of xport_flush. */
void xport_flush_sq(struct xport_qp *qp);

/* Gather LEN bytes of send WQE W's payload starting at message OFFSET into
 * BUF (inline data or SGEs through the lkey; in-order gathers of one WQE
 * are served by the device's read-ahead). XPORT_MEM_OK or the error. */
enum xport_mem_status xport_gather(struct xport_qp *qp,
				   const struct xport_swqe *w,
				   uint32_t offset, void *buf, uint32_t len);
/* Scatter LEN bytes from BUF into SGL at byte OFFSET of the list (lkey,
 * LOCAL_WRITE). XPORT_MEM_BOUNDS if the list is shorter. */
enum xport_mem_status xport_scatter(struct xport_qp *qp,
				    const struct ibv_sge *sgl, uint32_t num_sge,
				    uint32_t offset, const void *buf,
				    uint32_t len);
/* ops->mem_sync of QP (XPORT_MEM_OK without one). */
enum xport_mem_status xport_mem_sync(struct xport_qp *qp);
/* Total bytes of an SGE list. */
uint64_t xport_sgl_len(const struct ibv_sge *sgl, uint32_t num_sge);

/* Receive WQEs (srq.c): take the next one for a message arriving on QP,
 * from its SRQ if it has one, else from its RQ (false: none posted); an
 * armed SRQ whose count drops below its limit raises the limit event. */
bool xport_rq_take(struct xport_qp *qp, struct xport_recv_wqe *out);
/* A QP being destroyed or reset gives back the SRQ WQE it was
 * filling: it goes to the front again, as it was never completed. */
void xport_srq_give_back(struct xport_qp *qp);
/* QP on an SRQ entered ERR: raise IBV_EVENT_QP_LAST_WQE_REACHED (its WQE
 * in progress, if any, was flushed just before). */
void xport_srq_last_wqe(struct xport_qp *qp);

/* An XRC opcode (0xA0-0xB7) as the RC opcode of the same operation
 * (Annex A14: the same operations, the XRC transport prefix); other
 * opcodes unchanged. The engine works on RC opcodes inside. */
static inline uint8_t xport_rc_opcode(uint8_t opcode)
{
	return (opcode & ROCE_OP_TRANSPORT_MASK) == ROCE_TRANSPORT_XRC ?
		       (uint8_t)(opcode & ~ROCE_OP_TRANSPORT_MASK) : opcode;
}
/* A parsed XRC packet as the RC packet of the same operation (recv.c):
 * opcode and table row; offsets, payload and xrc_srqn stay as parsed. */
void xport_pkt_to_rc(struct roce_pkt *pkt);
/* A request queued behind READ responses, parsed again (it was checked,
 * ICRC included, when it arrived) and made RC as above: false if it does
 * not parse. */
bool xport_reparse(const uint8_t *buf, size_t len, const struct roce_l3 *l3,
		   struct roce_pkt *pkt);
/* XRC_RECV (Annex A14.4), a request at ePSN: take the SRQ its XRCETH
 * names as the QP's SRQ and PD (srq.c). False, with a log line, when that
 * is no XRC SRQ of the QP's domain, or not the SRQ of the message in
 * progress: the responder answers NAK Invalid Request. */
bool xport_xrc_choose(struct xport_qp *qp, const struct roce_pkt *pkt);
/* The XRC SRQ number SRQN of DEV, or NULL (srq.c). */
struct xport_srq *xport_xrc_srq_lookup(struct xport_dev *dev, uint32_t srqn);

/* Timers (timer.c): re-evaluate the QP's earliest deadline and
 * (re)arm or cancel ops->timer_arm. */
void xport_timer_update(struct xport_qp *qp);
/* Retransmit timeout of the QP in ns (IBTA: 4.096 us * 2^timeout), 0 if
 * the timer is disabled (timeout 0). */
uint64_t xport_timeout_ns(const struct xport_qp *qp);
/* RNR NAK timer code -> ns (IBTA Table 45). */
uint64_t xport_rnr_timer_ns(uint8_t code);

/* The device window (dev_window.c): bring QP's share of dev->unacked up to
 * date; called at the end of every xport_run, where the state changes with
 * no run after (RESET, xport_qp_fatal, SQE) and, with the QP gone, from
 * xport_qp_destroy (GONE: its share leaves the sum). */
void xport_req_account(struct xport_qp *qp, bool gone);
/* True when QP may send no new request PSN: it has XPORT_FAIR_UNACKED_PSNS
 * or more in flight and either the device has XPORT_DEV_UNACKED_PSNS (QP's
 * PSNs as they are now) or the device has half that and QP has
 * XPORT_DEV_UNACKED_PSNS / N, N the QPs with PSNs in flight counting QP. */
bool xport_dev_window_full(const struct xport_qp *qp);
/* Requester (req.c): send what state and windows allow, at most BUDGET
 * packets. Returns true if it stopped for the budget (more to send). */
bool xport_req_send(struct xport_qp *qp, uint32_t budget);
/* Go back to PSN (a PSN of a WQE in [sq.comp, sq.req]) and resend from
 * there (go-back-N). */
void xport_req_rewind(struct xport_qp *qp, uint32_t psn);

/* Responder (resp.c): one parsed request packet for this QP. */
void xport_resp_input(struct xport_qp *qp, const struct roce_pkt *pkt,
		      const struct roce_l3 *l3, const uint8_t *raw,
		      size_t raw_len);
/* Responder: queue a request packet behind READ responses still to send
 * (dropped and counted when XPORT_RESP_QUEUE are waiting). */
void xport_resp_enqueue(struct xport_qp *qp, const struct roce_l3 *l3,
			const uint8_t *raw, size_t raw_len);
/* Responder, on arrival while busy: a duplicate RC READ request whose
 * saved resource still has responses waiting restarts that job at its PSN
 * now (rather than queuing a second full replay behind it). Returns true
 * when PKT was taken so; false: queue or process it as usual. */
bool xport_resp_read_restart(struct xport_qp *qp, const struct roce_pkt *pkt);
/* Responder: whether requests must wait (READ responses or requests
 * queued). */
bool xport_resp_busy(const struct xport_qp *qp);
/* Responder: send READ responses and then take queued requests, at most
 * BUDGET packets. Returns true if work remains. */
bool xport_resp_run(struct xport_qp *qp, uint32_t budget);
/* Free the queued request packets (reset, ERR, destroy); a held ACK is
 * sent first (it answers requests already completed). */
void xport_resp_clear(struct xport_qp *qp);
/* Coalesced ACKs (ack.c): the ACK earned by PSN, sent now or held;
 * send QP's held ACK now (before another response); drop it. */
/* xport_send_aeth - send an ACK packet (BTH + AETH, IBTA 9.7.5.1) to the
 * QP's peer: PSN, the AETH SYNDROME (ACK, NAK or RNR NAK) and MSN; counted
 * in acks_tx. */
void xport_send_aeth(struct xport_qp *qp, uint32_t psn, uint8_t syndrome, uint32_t msn);
/* xport_send_atomic_ack - send the ATOMIC Acknowledge for PSN (BTH + AETH
 * ACK with the QP's MSN + AtomicAckETH carrying ORIG, docs/wire-format.md); counted
 * in acks_tx. */
void xport_send_atomic_ack(struct xport_qp *qp, uint32_t psn, uint64_t orig);
void xport_resp_ack(struct xport_qp *qp, uint32_t psn);
void xport_ack_send_held(struct xport_qp *qp);
void xport_ack_forget(struct xport_qp *qp);
/* Responder atomics and resources (atomic.c), called by resp.c. */
enum xport_atomic_status {
	XPORT_ATOMIC_OK,	/* executed, ATOMIC Acknowledge sent */
	XPORT_ATOMIC_INVALID,	/* misaligned VA: NAK Invalid Request */
	XPORT_ATOMIC_ACCESS,	/* R_Key, PD, bounds or REMOTE_ATOMIC: NAK
				 * Remote Access Error */
};
/* Execute a new CMP_SWAP / FETCH_ADD at ePSN (IBTA 9.4.5): check the
 * alignment and R_Key, read-modify-write the 8-byte word, save the
 * original value in the replay cache, advance ePSN and MSN, send the
 * ATOMIC Acknowledge. */
enum xport_atomic_status xport_atomic_execute(struct xport_qp *qp,
					      const struct roce_pkt *pkt);
/* A duplicate atomic: answer it again from the replay cache (true), or
 * false if no saved resource matches (the packet is dropped). */
bool xport_atomic_replay(struct xport_qp *qp, const struct roce_pkt *pkt);
/* IBTA 1.5 ATOMIC WRITE and FLUSH (flush_aw.c). xport_is_flush_aw_op: is
 * OPCODE one of them. xport_flush_aw_valid: may the QP's access flags take
 * PKT (RC; ATOMIC WRITE: REMOTE_WRITE; FLUSH: a known placement type and
 * level, the FLUSH_* bits it names). xport_flush_aw_execute: check the
 * R_Key, write or flush, save the replay resource, advance ePSN and MSN,
 * send the empty READ Response Only (INVALID: misaligned ATOMIC WRITE or
 * a DMA length other than 8; ACCESS: R_Key, PD, bounds, rights).
 * xport_flush_aw_replay: a duplicate answered again (true) or dropped. */
bool xport_is_flush_aw_op(uint8_t opcode);
bool xport_flush_aw_valid(const struct xport_qp *qp, const struct roce_pkt *pkt);
enum xport_atomic_status xport_flush_aw_execute(struct xport_qp *qp, const struct roce_pkt *pkt);
bool xport_flush_aw_replay(struct xport_qp *qp, const struct roce_pkt *pkt);
/* Responder resources in use now: READ responses still to send for new
 * requests, plus new READ/atomic requests queued behind them. */
uint32_t xport_rd_atomic_held(const struct xport_qp *qp);
/* May a new READ or atomic be accepted (fewer than max_dest_rd_atomic
 * resources were in use when it arrived)? */
bool xport_rd_atomic_room(const struct xport_qp *qp);
/* A request packet (raw, BTH first, already parsed) is being queued:
 * whether it is a READ or atomic never received before (it will take a
 * resource; a copy of one already received or queued will not). Tracks
 * the PSN after the last request received while the queue is not empty. */
bool xport_rd_atomic_arrival(struct xport_qp *qp, const uint8_t *raw,
			     size_t len);

/* Completer (comp.c): one parsed response packet (ACK, NAK, READ resp);
 * false when it was ignored (a duplicate or stale response, nothing
 * outstanding) or dropped (not RC, QP in ERR). */
bool xport_comp_input(struct xport_qp *qp, const struct roce_pkt *pkt);
/* Completer: the retransmit deadline passed. */
void xport_comp_timeout(struct xport_qp *qp);
/* Completer: raise IBV_EVENT_SQ_DRAINED if it is owed and every WQE the
 * requester started has completed. */
void xport_comp_check_drained(struct xport_qp *qp);
/* Completer: WQE completion (status, byte_len), advancing sq.comp; on
 * success, local operations (BIND_MW, LOCAL_INV) the requester has already
 * executed right behind it complete too, in order. */
void xport_comp_wqe(struct xport_qp *qp, struct xport_swqe *w,
		    enum ibv_wc_status status, uint32_t byte_len);

#endif
