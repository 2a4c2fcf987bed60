/*
 * cqe_decode.h - reading one mlx5 CQE of a uroce CQ ring: ownership, the
 * consumer index, wr_id retirement and the field decoders shared by the
 * three polls (ibv_poll_cq and the iterator in cq_poll.c, urocedv's custom
 * WC in dv_wc.c). All inline: each poll loop is compiled with them.
 *
 * The daemon writes struct mlx5_cqe64 entries exactly as a ConnectX does
 * (docs/cqe-format.md §3): CQE n sits in slot n & (nent-1) and belongs to
 * software when its opcode is not INVALID and its owner bit equals
 * !!(n & nent). After that check an acquire load orders the reads of the
 * other fields. The consumer index goes back to the daemon in dbrec[0]
 * (big-endian) so it can detect overrun. As in mlx5, wr_id is not in the
 * CQE: requester CQEs carry the SQ WQE number (wqe_counter) that indexes the
 * QP's sq_wrid array (one signalled CQE retires all earlier unsignalled
 * WQEs), responder CQEs take the RQ's next wr_id in order, or, when they
 * name an SRQ (srqn), the wr_id of the SRQ tag in wqe_counter.
 */
#ifndef UROCE_PROVIDER_CQE_DECODE_H
#define UROCE_PROVIDER_CQE_DECODE_H

#include <endian.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "poll_yield.h"
#include "uroce.h"

#define UROCE_LIKELY(x) __builtin_expect(!!(x), 1)
#define UROCE_UNLIKELY(x) __builtin_expect(!!(x), 0)

/*
 * sop_drop_qpn of a CQE as the decoders use it (host order): the QPN in bits
 * 23:0 and, on requester CQEs, the WQE opcode in 31:24. A raw packet
 * receive that carries a flow tag has the tag there instead and its QPN in
 * srqn_uidx (UROCE_CQE_UIDX_QP, uroce/abi_flow.h): that QPN is returned.
 */
static inline uint32_t uroce_cqe_sop(const struct mlx5_cqe64 *cqe)
{
	uint32_t uidx = cqe->srqn_uidx;

	if (UROCE_UNLIKELY(uidx & htobe32(UROCE_CQE_UIDX_QP)))
		return be32toh(uidx) & 0xFFFFFF;
	return be32toh(cqe->sop_drop_qpn);
}

/* The flow tag of a raw packet receive (ibv_wc_read_flow_tag): sop_drop_qpn
 * bits 23:0 as mlx5 reads them when a rule's FLOW_TAG action tagged the
 * frame, else 0 (a ConnectX's default flow tag). */
static inline uint32_t uroce_cqe_flow_tag(const struct mlx5_cqe64 *cqe)
{
	if (cqe->srqn_uidx & htobe32(UROCE_CQE_UIDX_QP))
		return be32toh(cqe->sop_drop_qpn) & 0xFFFFFF;
	return 0;
}

/*
 * Striding RQ CQEs (docs/cqe-format.md §7): byte_cnt bits 15:0 the bytes,
 * 29:16 the strides used, 31 a filler; wqe_counter the first stride. The
 * WQE retires with the CQE that uses its last stride (or an error CQE).
 */
#define UROCE_MPRQ_LEN_MASK 0xFFFFu
#define UROCE_MPRQ_STRIDES(bc) (((bc) >> 16) & 0x3FFFu)
#define UROCE_MPRQ_FILLER 0x80000000u

/* Whether a receive CQE of Q gives its RQ WQE back (always, except on a
 * striding RQ before the WQE's last stride). */
static inline bool uroce_cqe_rq_retires(const struct uroce_qp *q, const struct mlx5_cqe64 *cqe, uint8_t op)
{
	if (UROCE_LIKELY(!q->log_num_strides) || op == MLX5_CQE_RESP_ERR)
		return true;
	return be16toh(cqe->wqe_counter) + UROCE_MPRQ_STRIDES(be32toh(cqe->byte_cnt)) >=
	       (1u << q->log_num_strides);
}

/* CQE at the consumer index if software owns it, else NULL. */
static inline struct mlx5_cqe64 *uroce_sw_cqe(struct uroce_cq *cq)
{
	/* read before the acquire load, which the compiler may not move them across */
	uint32_t ci = cq->cons_index, nent = cq->nent;
	struct mlx5_cqe64 *cqe = &cq->cqes[ci & (nent - 1)];
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	if ((op_own >> 4) == MLX5_CQE_INVALID || (op_own & MLX5_CQE_OWNER_MASK) != !!(ci & nent))
		return NULL;
	return cqe;
}

/*
 * Whether the CQE at the consumer index (*cqe) is owned by software and a
 * success CQE (opcode REQ or RESP_*: 0..4), its opcode in *op: the common
 * case in one test, as INVALID (15) fails it too. False for anything else
 * (empty ring, error CQE): then uroce_next_cqe looks again.
 */
static inline __attribute__((always_inline)) bool uroce_ok_cqe(struct uroce_cq *cq,
							       struct mlx5_cqe64 **cqe, uint8_t *op)
{
	uint32_t ci = cq->cons_index, nent = cq->nent;
	uint8_t op_own;

	*cqe = &cq->cqes[ci & (nent - 1)];
	op_own = __atomic_load_n(&(*cqe)->op_own, __ATOMIC_ACQUIRE);
	*op = op_own >> 4;
	return *op <= MLX5_CQE_RESP_SEND_INV && (op_own & MLX5_CQE_OWNER_MASK) == !!(ci & nent);
}

/*
 * The next completion to return: the ring's CQE, else (the daemon gone) a
 * software flush CQE of an outstanding WQE (flush.c) written into the ring.
 */
struct mlx5_cqe64 *uroce_next_cqe_slow(struct uroce_cq *cq); /* the empty ring (cq_poll.c) */

static inline struct mlx5_cqe64 *uroce_next_cqe(struct uroce_cq *cq)
{
	struct mlx5_cqe64 *cqe = uroce_sw_cqe(cq);

	if (UROCE_LIKELY(cqe != NULL))
		return cqe;
	return uroce_next_cqe_slow(cq);
}

/* Consumes the completion uroce_next_cqe returned. */
static inline void uroce_consume(struct uroce_cq *cq)
{
	cq->cons_index++;
}

/* Publishes the consumer index to the daemon (dbrec[0], big-endian, release). */
static inline void uroce_update_ci(struct uroce_cq *cq)
{
	__atomic_store_n(&cq->hdr->dbrec[0], htobe32(cq->cons_index & UROCE_CQ_CI_MASK),
			 __ATOMIC_RELEASE);
}

/* The end of a poll call that took N completions: the consumer index
 * published if it moved, the CQ lock released (when the CQ has one), and
 * an empty poll counted, with a sched_yield after the unlock when it
 * completes a run of poll_yield (poll_yield.h). Also the end of an empty
 * start_poll. */
static inline int uroce_poll_done(struct uroce_cq *cq, int n)
{
	bool yield = uroce_poll_count(&cq->empty_polls, cq->poll_yield, n > 0);

	if (n)
		uroce_update_ci(cq);
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
	if (UROCE_UNLIKELY(yield))
		sched_yield();
	return n;
}

static inline bool uroce_cqe_is_req(uint8_t op)
{
	return op == MLX5_CQE_REQ || op == MLX5_CQE_REQ_ERR;
}

static inline bool uroce_cqe_is_err(uint8_t op)
{
	return op == MLX5_CQE_REQ_ERR || op == MLX5_CQE_RESP_ERR;
}

/* A successful responder CQE (RESP_WR_IMM, RESP_SEND, RESP_SEND_IMM, RESP_SEND_INV). */
static inline bool uroce_cqe_is_recv_ok(uint8_t op)
{
	return op >= MLX5_CQE_RESP_WR_IMM && op <= MLX5_CQE_RESP_SEND_INV;
}

/* mlx5 error syndrome → ibv_wc_status (docs/cqe-format.md §2). */
static inline enum ibv_wc_status uroce_syndrome_status(uint8_t syndrome)
{
	switch (syndrome) {
	case MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR: return IBV_WC_LOC_LEN_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR: return IBV_WC_LOC_QP_OP_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_PROT_ERR: return IBV_WC_LOC_PROT_ERR;
	case MLX5_CQE_SYNDROME_WR_FLUSH_ERR: return IBV_WC_WR_FLUSH_ERR;
	case MLX5_CQE_SYNDROME_MW_BIND_ERR: return IBV_WC_MW_BIND_ERR;
	case MLX5_CQE_SYNDROME_BAD_RESP_ERR: return IBV_WC_BAD_RESP_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR: return IBV_WC_LOC_ACCESS_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR: return IBV_WC_REM_INV_REQ_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR: return IBV_WC_REM_ACCESS_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_OP_ERR: return IBV_WC_REM_OP_ERR;
	case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR: return IBV_WC_RETRY_EXC_ERR;
	case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR: return IBV_WC_RNR_RETRY_EXC_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR: return IBV_WC_REM_ABORT_ERR;
	default: return IBV_WC_GENERAL_ERR;
	}
}

/* Send-WQE opcode (sop_drop_qpn >> 24) → ibv_wc_opcode. */
static inline enum ibv_wc_opcode uroce_req_opcode(uint8_t wqe_op)
{
	switch (wqe_op) {
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM: return IBV_WC_RDMA_WRITE;
	case MLX5_OPCODE_RDMA_READ: return IBV_WC_RDMA_READ;
	case MLX5_OPCODE_ATOMIC_CS: return IBV_WC_COMP_SWAP;
	case MLX5_OPCODE_ATOMIC_FA: return IBV_WC_FETCH_ADD;
	case MLX5_OPCODE_UMR: return IBV_WC_BIND_MW;
	case MLX5_OPCODE_LOCAL_INVAL: return IBV_WC_LOCAL_INV;
	case MLX5_OPCODE_TSO: return IBV_WC_TSO;
	case UROCE_CQE_OPCODE_FLUSH: return (enum ibv_wc_opcode)UROCE_IBV_WC_FLUSH;
	case UROCE_CQE_OPCODE_ATOMIC_WRITE: return (enum ibv_wc_opcode)UROCE_IBV_WC_ATOMIC_WRITE;
	default: return IBV_WC_SEND; /* SEND, SEND_IMM, SEND_INVAL */
	}
}

/*
 * The wr_id of a CQE with opcode op and sop_drop_qpn sop (host order), and
 * status into *status; retires the WQEs it completes and caches its QP in
 * *c. A CQE whose QPN names no QP of this context (destroyed meanwhile)
 * gets wr_id 0. Every case (cq_poll.c); uroce_cqe_retire_fast first.
 */
uint64_t uroce_cqe_retire_slow(struct uroce_cq *cq, const struct mlx5_cqe64 *cqe, uint8_t op,
			       uint32_t sop, struct uroce_qp_cache *c, enum ibv_wc_status *status);

/*
 * The common case inline: a successful CQE of the cached QP, a send
 * completion or a receive on its own RQ. True with *wr_id set (status
 * IBV_WC_SUCCESS) and the WQEs retired; false, with nothing changed, for
 * every other CQE (then uroce_cqe_retire_slow).
 */
static inline __attribute__((always_inline)) bool
uroce_cqe_retire_fast(const struct uroce_qp_cache *c, const struct mlx5_cqe64 *cqe, uint8_t op,
		      uint32_t sop, uint64_t *wr_id)
{
	uint32_t qpn = sop & 0xFFFFFF;
	struct uroce_qp *q = c->qp;

	if (op == MLX5_CQE_REQ) {
		if (UROCE_UNLIKELY(qpn != c->sq_qpn))
			return false;
		uint32_t idx = be16toh(cqe->wqe_counter) & (q->cap.max_send_wr - 1);

		*wr_id = q->sq_wrid[idx];
		/* post.c may reuse the slots up to here (read under another lock) */
		__atomic_store_n(&q->sq_tail, q->sq_wqe_head[idx] + 1, __ATOMIC_RELEASE);
		return true;
	}
	/* rq_qpn never matches a QP on an SRQ */
	if (UROCE_UNLIKELY(!uroce_cqe_is_recv_ok(op) || qpn != c->rq_qpn))
		return false;
	uint32_t rq_tail = q->rq_tail;

	*wr_id = q->rq_wrid[rq_tail & (q->cap.max_recv_wr - 1)];
	if (UROCE_LIKELY(uroce_cqe_rq_retires(q, cqe, op)))
		__atomic_store_n(&q->rq_tail, rq_tail + 1, __ATOMIC_RELEASE);
	return true;
}

/* uroce_cqe_retire_slow with the common cases inline. */
static inline __attribute__((always_inline)) uint64_t
uroce_cqe_retire(struct uroce_cq *cq, const struct mlx5_cqe64 *cqe, uint8_t op, uint32_t sop,
		 struct uroce_qp_cache *c, enum ibv_wc_status *status)
{
	uint64_t wr_id;

	if (UROCE_LIKELY(uroce_cqe_retire_fast(c, cqe, op, sop, &wr_id))) {
		*status = IBV_WC_SUCCESS;
		return wr_id;
	}
	return uroce_cqe_retire_slow(cq, cqe, op, sop, c, status);
}

/* ibv_wc_opcode of a CQE (also of error CQEs, as the iterator's read_opcode):
 * one table read for responder CQEs; 0xff marks the requester opcodes,
 * whose WQE opcode says. */
static inline enum ibv_wc_opcode uroce_cqe_opcode(uint8_t op, uint32_t sop)
{
	enum { REQ = 0xff, R = IBV_WC_RECV, W = IBV_WC_RECV_RDMA_WITH_IMM };
	static const uint8_t by_op[16] = { /* MLX5_CQE_*: 0 REQ, 1 RESP_WR_IMM, 13 REQ_ERR */
		REQ, W, R, R, R, R, R, R, R, R, R, R, R, REQ, R, R,
	};
	uint8_t v = by_op[op & 0xF];

	if (v == 0xff)
		return uroce_req_opcode((uint8_t)(sop >> 24));
	return (enum ibv_wc_opcode)v;
}

/* ibv_wc_opcode of a tag-matching CQE (cqe->app TAG_MATCHING) with CQE
 * opcode OP, as rdma-core's mlx5 cq.c maps app_op (docs/cqe-format.md). */
static inline enum ibv_wc_opcode uroce_tm_opcode(const struct mlx5_cqe64 *cqe, uint8_t op)
{
	switch (cqe->app_op) {
	case UROCE_TM_APP_OP_APPEND: return IBV_WC_TM_ADD;
	case UROCE_TM_APP_OP_REMOVE: return IBV_WC_TM_DEL;
	case UROCE_TM_APP_OP_NOOP: return IBV_WC_TM_SYNC;
	case UROCE_TM_APP_OP_NO_TAG: return IBV_WC_TM_NO_TAG;
	case UROCE_TM_APP_OP_CONSUMED:
	case UROCE_TM_APP_OP_EXPECTED:
	case UROCE_TM_APP_OP_UNEXPECTED:
	case UROCE_TM_APP_OP_CONSUMED_MSG: return IBV_WC_TM_RECV;
	}
	return op == MLX5_CQE_NO_PACKET ? (enum ibv_wc_opcode)0 : IBV_WC_RECV;
}

/* The tag-matching wc_flags of such a CQE: MATCH on the first (or only)
 * completion of a matched message, DATA_VALID once its data is in place,
 * SYNC_REQ when the CQE asked for a SYNC (SYNC_REQ, tm.c). */
static inline unsigned int uroce_tm_wc_flags(const struct mlx5_cqe64 *cqe, bool sync_req)
{
	unsigned int f = sync_req ? IBV_WC_TM_SYNC_REQ : 0;

	switch (cqe->app_op) {
	case UROCE_TM_APP_OP_CONSUMED_MSG: return f | IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID;
	case UROCE_TM_APP_OP_CONSUMED: return f | IBV_WC_TM_MATCH;
	case UROCE_TM_APP_OP_EXPECTED: return f | IBV_WC_TM_DATA_VALID;
	}
	return f;
}

/* ibv_wc_flags of a CQE: WITH_IMM, WITH_INV, GRH (responder, RoCE packet type),
 * IP_CSUM_OK (responder: L3 and L4 OK and an IPv4 header, as mlx5's
 * get_csum_ok; only raw packet receives have those bits). */
static inline unsigned int uroce_cqe_wc_flags(const struct mlx5_cqe64 *cqe, uint8_t op,
					      uint32_t sop)
{
	static const uint8_t by_op[16] = {
		[MLX5_CQE_RESP_WR_IMM] = IBV_WC_WITH_IMM,
		[MLX5_CQE_RESP_SEND_IMM] = IBV_WC_WITH_IMM,
		[MLX5_CQE_RESP_SEND_INV] = IBV_WC_WITH_INV,
	};
	unsigned int f;

	if (op == MLX5_CQE_REQ) {
		uint8_t w = (uint8_t)(sop >> 24);
		return w == MLX5_OPCODE_RDMA_WRITE_IMM || w == MLX5_OPCODE_SEND_IMM ? IBV_WC_WITH_IMM : 0;
	}
	f = by_op[op & 0xF];
	if (cqe->flags_rqpn & htobe32(3u << 28)) /* RoCE packet type: the GRH area is filled */
		f |= IBV_WC_GRH;
	f |= (unsigned int)(((cqe->hds_ip_ext & (MLX5_CQE_L4_OK | MLX5_CQE_L3_OK)) ==
			     (MLX5_CQE_L4_OK | MLX5_CQE_L3_OK)) &
			    (((cqe->l4_hdr_type_etc >> 2) & 3) == MLX5_CQE_L3_HDR_TYPE_IPV4))
	     << IBV_WC_IP_CSUM_OK_SHIFT;
	return f;
}

/* byte_len: the CQE's byte count, 8 for a successful atomic, bits 15:0 on
 * a striding RQ (C: the QP cache, which the retire of this CQE set). */
static inline uint32_t uroce_cqe_byte_len(const struct uroce_qp_cache *c, const struct mlx5_cqe64 *cqe,
					  uint8_t op, uint32_t sop)
{
	if (op == MLX5_CQE_REQ) {
		uint8_t w = (uint8_t)(sop >> 24);
		if (w == MLX5_OPCODE_ATOMIC_CS || w == MLX5_OPCODE_ATOMIC_FA)
			return 8;
		return be32toh(cqe->byte_cnt);
	}
	if (UROCE_UNLIKELY(c->qp && c->qp->log_num_strides) && (sop & 0xFFFFFF) == c->rq_qpn)
		return be32toh(cqe->byte_cnt) & UROCE_MPRQ_LEN_MASK;
	return be32toh(cqe->byte_cnt);
}

/* imm_data as the accessor returns it: network order, or for SEND_WITH_INV
 * the invalidated rkey in host order (as mlx5). */
static inline uint32_t uroce_cqe_imm(const struct mlx5_cqe64 *cqe, uint8_t op)
{
	if (op == MLX5_CQE_RESP_SEND_INV)
		return be32toh(cqe->imm_inval_pkey);
	return cqe->imm_inval_pkey;
}

/* vendor_err: the error CQE's vendor syndrome, 0 for other CQEs. */
static inline uint32_t uroce_cqe_vendor_err(const struct mlx5_cqe64 *cqe, uint8_t op)
{
	return uroce_cqe_is_err(op) ? ((const struct mlx5_err_cqe *)cqe)->vendor_err_synd : 0;
}

/* CLOCK_REALTIME ns of a raw CQE timestamp, through the context's clock page. */
static inline uint64_t uroce_cqe_wallclock_ns(struct uroce_cq *cq, uint64_t ts)
{
	struct uroce_clock_snap s;

	uroce_clock_snapshot(to_uctx(cq->vcq.cq.context)->clock, &s);
	return uroce_clock_to_wall_ns(&s, ts);
}

#endif
