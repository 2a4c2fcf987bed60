/*
 * cq_poll.c - reading completions straight from the CQ ring.
 *
 * The daemon writes struct mlx5_cqe64 entries exactly as a ConnectX does
 * (docs/cqe-format.md §3): CQE n sits in slot n & (nent-1) and belongs to software
 * when its opcode is not INVALID and its owner bit equals !!(n & nent). After
 * that check an acquire load orders the reads of the other fields. The
 * consumer index goes back to the daemon in dbrec[0] (big-endian) so it can
 * detect overrun. As in mlx5, wr_id is not in the CQE: requester CQEs carry
 * the SQ WQE number (wqe_counter) that indexes the QP's sq_wrid array (one
 * signalled CQE retires all earlier unsignalled WQEs), responder CQEs take
 * the RQ's next wr_id in order, or, when they name an SRQ (srqn), the wr_id
 * of the SRQ tag in wqe_counter.
 *
 * Two ways in: ibv_poll_cq (uroce_poll_cq, fills struct ibv_wc) and the
 * extended iterator (start_poll / next_poll / end_poll + ibv_wc_read_*),
 * whose functions are chosen once at CQ creation: locked or lock-free
 * (SINGLE_THREADED), and only the accessors whose wc_flag was requested.
 * Accessors read the current CQE lazily (only wr_id and status are parsed
 * eagerly, as the man page makes them plain fields).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "liveness.h"
#include "uroce.h"

/* CQE at the consumer index if software owns it, else NULL. */
static inline struct mlx5_cqe64 *sw_cqe(struct uroce_cq *cq)
{
	struct mlx5_cqe64 *cqe = &cq->cqes[cq->cons_index & (cq->nent - 1)];
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	if ((op_own >> 4) == MLX5_CQE_INVALID ||
	    (op_own & MLX5_CQE_OWNER_MASK) != !!(cq->cons_index & cq->nent))
		return NULL;
	return cqe;
}

bool uroce_cq_has_cqe(struct uroce_cq *cq)
{
	return sw_cqe(cq) != NULL;
}

/*
 * The next completion to return: the ring's CQE, else (the daemon gone) a
 * software flush CQE of an outstanding WQE (flush.c) in cq->soft.
 */
static inline struct mlx5_cqe64 *next_cqe(struct uroce_cq *cq)
{
	struct mlx5_cqe64 *cqe = sw_cqe(cq);

	if (cqe || !uroce_ctx_gone(to_uctx(cq->vcq.cq.context)))
		return cqe;
	if (!uroce_flush_next_cqe(cq, &cq->soft))
		return NULL;
	cq->soft_cur = true;
	return &cq->soft;
}

/* Consumes the completion next_cqe returned. */
static inline void consume(struct uroce_cq *cq)
{
	if (cq->soft_cur)
		cq->soft_cur = false;
	else
		cq->cons_index++;
}

static inline void update_ci(struct uroce_cq *cq)
{
	__atomic_store_n(&cq->hdr->dbrec[0], htobe32(cq->cons_index & UROCE_CQ_CI_MASK),
			 __ATOMIC_RELEASE);
}

/* mlx5 error syndrome → ibv_wc_status (docs/cqe-format.md §2). */
static enum ibv_wc_status syndrome_status(uint8_t syndrome)
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
static enum ibv_wc_opcode req_opcode(uint8_t wqe_op)
{
	switch (wqe_op) {
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM: return IBV_WC_RDMA_WRITE;
	case MLX5_OPCODE_RDMA_READ: return IBV_WC_RDMA_READ;
	case MLX5_OPCODE_ATOMIC_CS: return IBV_WC_COMP_SWAP;
	case MLX5_OPCODE_ATOMIC_FA: return IBV_WC_FETCH_ADD;
	case MLX5_OPCODE_UMR: return IBV_WC_BIND_MW;
	case MLX5_OPCODE_LOCAL_INVAL: return IBV_WC_LOCAL_INV;
	default: return IBV_WC_SEND; /* SEND, SEND_IMM, SEND_INVAL */
	}
}

static inline bool is_req(uint8_t op)
{
	return op == MLX5_CQE_REQ || op == MLX5_CQE_REQ_ERR;
}

/*
 * wr_id and status of the CQE (and retires the WQEs it completes). A CQE
 * whose QPN names no QP of this context (destroyed meanwhile) gets wr_id 0.
 */
static void parse_cqe(struct uroce_cq *cq, struct mlx5_cqe64 *cqe, uint64_t *wr_id,
		      enum ibv_wc_status *status)
{
	uint8_t op = cqe->op_own >> 4;
	uint32_t qpn = be32toh(cqe->sop_drop_qpn) & 0xFFFFFF;
	struct uroce_qp *qp = uroce_find_qp(to_uctx(cq->vcq.cq.context), qpn);

	*status = IBV_WC_SUCCESS;
	if (op == MLX5_CQE_REQ_ERR || op == MLX5_CQE_RESP_ERR)
		*status = syndrome_status(((struct mlx5_err_cqe *)cqe)->syndrome);
	*wr_id = 0;
	if (!is_req(op) && (be32toh(cqe->srqn_uidx) & 0xFFFFFF)) {
		/* by the SRQN, as mlx5: the QP may be gone, the tag is still freed */
		struct uroce_srq *srq = uroce_find_srq(to_uctx(cq->vcq.cq.context),
						       be32toh(cqe->srqn_uidx) & 0xFFFFFF);

		if (srq)
			*wr_id = uroce_srq_complete(srq, be16toh(cqe->wqe_counter));
		return;
	}
	if (!qp)
		return;
	if (is_req(op)) {
		uint32_t idx = be16toh(cqe->wqe_counter) & (qp->cap.max_send_wr - 1);

		*wr_id = qp->sq_wrid[idx];
		/* post.c may reuse the slots up to here (read under another lock) */
		__atomic_store_n(&qp->sq_tail, qp->sq_wqe_head[idx] + 1, __ATOMIC_RELEASE);
	} else if (qp->cap.max_recv_wr) {
		*wr_id = qp->rq_wrid[qp->rq_tail & (qp->cap.max_recv_wr - 1)];
		__atomic_store_n(&qp->rq_tail, qp->rq_tail + 1, __ATOMIC_RELEASE);
	}
}

static enum ibv_wc_opcode cqe_opcode(const struct mlx5_cqe64 *cqe)
{
	switch (cqe->op_own >> 4) {
	case MLX5_CQE_REQ:
	case MLX5_CQE_REQ_ERR:
		return req_opcode((uint8_t)(be32toh(cqe->sop_drop_qpn) >> 24));
	case MLX5_CQE_RESP_WR_IMM:
		return IBV_WC_RECV_RDMA_WITH_IMM;
	default:
		return IBV_WC_RECV;
	}
}

static unsigned int cqe_wc_flags(const struct mlx5_cqe64 *cqe)
{
	unsigned int f = 0;

	switch (cqe->op_own >> 4) {
	case MLX5_CQE_REQ: {
		uint8_t w = (uint8_t)(be32toh(cqe->sop_drop_qpn) >> 24);
		if (w == MLX5_OPCODE_RDMA_WRITE_IMM || w == MLX5_OPCODE_SEND_IMM)
			f |= IBV_WC_WITH_IMM;
		return f;
	}
	case MLX5_CQE_RESP_WR_IMM:
	case MLX5_CQE_RESP_SEND_IMM:
		f |= IBV_WC_WITH_IMM;
		break;
	case MLX5_CQE_RESP_SEND_INV:
		f |= IBV_WC_WITH_INV;
		break;
	default:
		break;
	}
	if ((be32toh(cqe->flags_rqpn) >> 28) & 3)
		f |= IBV_WC_GRH;
	return f;
}

static uint32_t cqe_byte_len(const struct mlx5_cqe64 *cqe)
{
	if ((cqe->op_own >> 4) == MLX5_CQE_REQ) {
		uint8_t w = (uint8_t)(be32toh(cqe->sop_drop_qpn) >> 24);
		if (w == MLX5_OPCODE_ATOMIC_CS || w == MLX5_OPCODE_ATOMIC_FA)
			return 8;
	}
	return be32toh(cqe->byte_cnt);
}

/* ibv_poll_cq: up to num_entries completions; returns how many, or -1 (EINVAL). */
int uroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct uroce_cq *cq = to_ucq(ibcq);
	int n = 0;

	if (num_entries < 0)
		return -1;
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
	for (; n < num_entries; n++) {
		struct mlx5_cqe64 *cqe = next_cqe(cq);
		struct ibv_wc *w = &wc[n];
		uint32_t flags_rqpn;

		if (!cqe)
			break;
		memset(w, 0, sizeof(*w));
		parse_cqe(cq, cqe, &w->wr_id, &w->status);
		w->qp_num = be32toh(cqe->sop_drop_qpn) & 0xFFFFFF;
		if (w->status != IBV_WC_SUCCESS) {
			/* For error CQEs the opcode is undefined (docs/cqe-format.md §2). */
			w->vendor_err = ((struct mlx5_err_cqe *)cqe)->vendor_err_synd;
		} else {
			w->opcode = cqe_opcode(cqe);
			w->wc_flags = cqe_wc_flags(cqe);
			w->byte_len = cqe_byte_len(cqe);
			if (w->wc_flags & IBV_WC_WITH_INV)
				w->invalidated_rkey = be32toh(cqe->imm_inval_pkey);
			else if (w->wc_flags & IBV_WC_WITH_IMM)
				w->imm_data = cqe->imm_inval_pkey;
			if (!is_req(cqe->op_own >> 4)) {
				flags_rqpn = be32toh(cqe->flags_rqpn);
				w->src_qp = flags_rqpn & 0xFFFFFF;
				w->sl = (flags_rqpn >> 24) & 0xF;
				w->slid = be16toh(cqe->slid);
				w->dlid_path_bits = cqe->ml_path & 0x7F;
			}
		}
		consume(cq);
	}
	if (n)
		update_ci(cq);
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
	return n;
}

/* ---- extended CQ iterator (ibv_create_cq_ex(3)) ---- */

/* Makes the CQE at the consumer index current; cur = NULL when there is none. */
static inline int load_current(struct uroce_cq *cq)
{
	struct mlx5_cqe64 *cqe = next_cqe(cq);

	cq->cur = cqe;
	if (!cqe)
		return ENOENT;
	parse_cqe(cq, cqe, &cq->vcq.cq_ex.wr_id, &cq->vcq.cq_ex.status);
	return 0;
}

/* start_poll: 0 with the first completion loaded, ENOENT if none (lock released). */
static int start_poll_locked(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct uroce_cq *cq = to_ucq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	ret = load_current(cq);
	if (ret)
		pthread_spin_unlock(&cq->lock);
	return ret;
}

static int start_poll_unlocked(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	if (attr->comp_mask)
		return EINVAL;
	return load_current(to_ucq_ex(ibcq));
}

/* next_poll: consumes the current completion; 0 with the next one loaded, or ENOENT. */
static int next_poll(struct ibv_cq_ex *ibcq)
{
	struct uroce_cq *cq = to_ucq_ex(ibcq);

	consume(cq);
	return load_current(cq);
}

/* end_poll: consumes the current completion, if any (none after next_poll's ENOENT), and publishes ci. */
static void end_poll_locked(struct ibv_cq_ex *ibcq)
{
	struct uroce_cq *cq = to_ucq_ex(ibcq);

	if (cq->cur)
		consume(cq);
	cq->cur = NULL;
	update_ci(cq);
	pthread_spin_unlock(&cq->lock);
}

static void end_poll_unlocked(struct ibv_cq_ex *ibcq)
{
	struct uroce_cq *cq = to_ucq_ex(ibcq);

	if (cq->cur)
		consume(cq);
	cq->cur = NULL;
	update_ci(cq);
}

#define CUR(ibcq) (to_ucq_ex(ibcq)->cur)

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *ibcq)
{
	return cqe_opcode(CUR(ibcq));
}
static uint32_t read_vendor_err(struct ibv_cq_ex *ibcq)
{
	uint8_t op = CUR(ibcq)->op_own >> 4;
	return op == MLX5_CQE_REQ_ERR || op == MLX5_CQE_RESP_ERR ?
		       ((struct mlx5_err_cqe *)CUR(ibcq))->vendor_err_synd : 0;
}
static unsigned int read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return cqe_wc_flags(CUR(ibcq));
}
static uint32_t read_byte_len(struct ibv_cq_ex *ibcq)
{
	return cqe_byte_len(CUR(ibcq));
}
static __be32 read_imm_data(struct ibv_cq_ex *ibcq)
{
	struct mlx5_cqe64 *cqe = CUR(ibcq);
	/* SEND_WITH_INV: the invalidated rkey, host order (as mlx5) */
	if ((cqe->op_own >> 4) == MLX5_CQE_RESP_SEND_INV)
		return be32toh(cqe->imm_inval_pkey);
	return cqe->imm_inval_pkey;
}
static uint32_t read_qp_num(struct ibv_cq_ex *ibcq)
{
	return be32toh(CUR(ibcq)->sop_drop_qpn) & 0xFFFFFF;
}
static uint32_t read_src_qp(struct ibv_cq_ex *ibcq)
{
	return be32toh(CUR(ibcq)->flags_rqpn) & 0xFFFFFF;
}
static uint32_t read_slid(struct ibv_cq_ex *ibcq)
{
	return be16toh(CUR(ibcq)->slid);
}
static uint8_t read_sl(struct ibv_cq_ex *ibcq)
{
	return (be32toh(CUR(ibcq)->flags_rqpn) >> 24) & 0xF;
}
static uint8_t read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return CUR(ibcq)->ml_path & 0x7F;
}
/* Raw HCA cycles (hca_core_clock kHz, completion_timestamp_mask bits). */
static uint64_t read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return be64toh(CUR(ibcq)->timestamp);
}
/* CLOCK_REALTIME ns of the CQE timestamp, through the clock page. */
static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	struct uroce_context *ctx = to_uctx(ibcq->context);
	struct uroce_clock_snap s;

	uroce_clock_snapshot(ctx->clock, &s);
	return uroce_clock_to_wall_ns(&s, be64toh(CUR(ibcq)->timestamp));
}

/* Picks the iterator and accessor functions once, from the CQ's flags. */
void uroce_cq_fill_ex_ops(struct uroce_cq *cq)
{
	struct ibv_cq_ex *ex = &cq->vcq.cq_ex;
	uint64_t f = cq->wc_flags;

	ex->start_poll = cq->single_threaded ? start_poll_unlocked : start_poll_locked;
	ex->next_poll = next_poll;
	ex->end_poll = cq->single_threaded ? end_poll_unlocked : end_poll_locked;
	ex->read_opcode = read_opcode;
	ex->read_vendor_err = read_vendor_err;
	ex->read_wc_flags = read_wc_flags;
	ex->read_byte_len = f & IBV_WC_EX_WITH_BYTE_LEN ? read_byte_len : NULL;
	ex->read_imm_data = f & IBV_WC_EX_WITH_IMM ? read_imm_data : NULL;
	ex->read_qp_num = f & IBV_WC_EX_WITH_QP_NUM ? read_qp_num : NULL;
	ex->read_src_qp = f & IBV_WC_EX_WITH_SRC_QP ? read_src_qp : NULL;
	ex->read_slid = f & IBV_WC_EX_WITH_SLID ? read_slid : NULL;
	ex->read_sl = f & IBV_WC_EX_WITH_SL ? read_sl : NULL;
	ex->read_dlid_path_bits = f & IBV_WC_EX_WITH_DLID_PATH_BITS ? read_dlid_path_bits : NULL;
	ex->read_completion_ts = f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP ? read_completion_ts : NULL;
	ex->read_completion_wallclock_ns =
		f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK ? read_completion_wallclock_ns : NULL;
}
