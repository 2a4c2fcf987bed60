/*
 * cq_poll.c - ibv_poll_cq and the extended-CQ iterator over the CQ ring
 * (the ring and the CQE decoding: cqe_decode.h).
 *
 * Two ways in: ibv_poll_cq (uroce_poll_cq, fills struct ibv_wc) and the
 * extended iterator (start_poll / next_poll / end_poll + ibv_wc_read_*),
 * whose functions are chosen once at CQ creation: locked or lock-free
 * (SINGLE_THREADED), and only the accessors whose wc_flag was requested.
 * Accessors read the current CQE lazily (only wr_id and status are parsed
 * eagerly, as the man page makes them plain fields). Like mlx5, the CQ
 * remembers the QP of the last CQE (qpc) and looks the QPN up only when
 * it changes. Each poll takes a success CQE of that QP inline and leaves
 * everything else to one out-of-line function that starts over.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "cqe_decode.h"
#include "liveness.h"

bool uroce_cq_has_cqe(struct uroce_cq *cq)
{
	return uroce_sw_cqe(cq) != NULL;
}

/* The ring is empty: NULL, or when the daemon is gone a software flush CQE
 * of an outstanding WQE (flush.c), written into the ring slot at the
 * consumer index with that lap's owner bit, where the device would have
 * written it: the polls consume it like any other CQE. */
__attribute__((noinline, cold)) struct mlx5_cqe64 *uroce_next_cqe_slow(struct uroce_cq *cq)
{
	uint32_t ci = cq->cons_index;
	struct mlx5_cqe64 *slot = &cq->cqes[ci & (cq->nent - 1)];

	if (!uroce_ctx_gone(to_uctx(cq->vcq.cq.context)))
		return NULL;
	if (!uroce_flush_next_cqe(cq, slot))
		return NULL;
	slot->op_own |= !!(ci & cq->nent);
	return slot;
}

/* cqe_decode.h: every CQE (error CQEs, SRQs, another QP than the cached one). */
__attribute__((noinline)) uint64_t uroce_cqe_retire_slow(struct uroce_cq *cq,
							 const struct mlx5_cqe64 *cqe, uint8_t op,
							 uint32_t sop, struct uroce_qp_cache *c,
							 enum ibv_wc_status *status)
{
	struct uroce_context *ctx = to_uctx(cq->vcq.cq.context);
	uint32_t qpn = sop & 0xFFFFFF;
	struct uroce_qp *q = c->qp;
	uint64_t wr_id;

	*status = IBV_WC_SUCCESS;
	if (uroce_cqe_is_err(op))
		*status = uroce_syndrome_status(((const struct mlx5_err_cqe *)cqe)->syndrome);
	if (!uroce_cqe_is_req(op) && (cqe->srqn_uidx & htobe32(0xFFFFFF)) &&
	    !(cqe->srqn_uidx & htobe32(UROCE_CQE_UIDX_QP))) {
		/* by the SRQN, as mlx5: the QP may be gone, the tag is still freed */
		struct uroce_srq *srq = uroce_find_srq(ctx, be32toh(cqe->srqn_uidx) & 0xFFFFFF);

		if (UROCE_UNLIKELY(cqe->app == UROCE_CQE_APP_TAG_MATCHING))
			return srq ? uroce_tm_retire(srq, cqe, status, &cq->tm_sync_req) : 0;
		return srq ? uroce_srq_complete(srq, be16toh(cqe->wqe_counter)) : 0;
	}
	if (c->sq_qpn != qpn) {
		q = uroce_find_qp(ctx, qpn);
		if (!q)
			return 0;
		c->qp = q;
		c->sq_qpn = qpn;
		c->rq_qpn = q->cap.max_recv_wr ? qpn : UROCE_NO_QPN;
	}
	if (uroce_cqe_is_req(op)) {
		uint32_t idx = be16toh(cqe->wqe_counter) & (q->cap.max_send_wr - 1);

		wr_id = q->sq_wrid[idx];
		/* post.c may reuse the slots up to here (read under another lock) */
		__atomic_store_n(&q->sq_tail, q->sq_wqe_head[idx] + 1, __ATOMIC_RELEASE);
		return wr_id;
	}
	if (!q->cap.max_recv_wr)
		return 0;
	wr_id = q->rq_wrid[q->rq_tail & (q->cap.max_recv_wr - 1)];
	if (uroce_cqe_rq_retires(q, cqe, op))
		__atomic_store_n(&q->rq_tail, q->rq_tail + 1, __ATOMIC_RELEASE);
	return wr_id;
}

/* Fills *w from any CQE and retires it (ibv_poll_cq(3): only wr_id,
 * status, qp_num and vendor_err are set for an error completion; the rest
 * is zero). */
static __attribute__((noinline)) void fill_wc_any(struct uroce_cq *cq,
						  const struct mlx5_cqe64 *cqe, struct ibv_wc *w)
{
	uint8_t op = cqe->op_own >> 4;
	uint32_t sop = uroce_cqe_sop(cqe);
	enum ibv_wc_status status;
	unsigned int flags;

	memset(w, 0, sizeof(*w));
	w->wr_id = uroce_cqe_retire_slow(cq, cqe, op, sop, &cq->qpc, &status);
	w->status = status;
	w->qp_num = sop & 0xFFFFFF;
	if (UROCE_UNLIKELY(status != IBV_WC_SUCCESS)) {
		/* For error CQEs the opcode is undefined (docs/cqe-format.md §2). */
		w->vendor_err = ((const struct mlx5_err_cqe *)cqe)->vendor_err_synd;
		return;
	}
	w->opcode = uroce_cqe_opcode(op, sop);
	flags = uroce_cqe_wc_flags(cqe, op, sop);
	if (UROCE_UNLIKELY(cqe->app == UROCE_CQE_APP_TAG_MATCHING)) {
		w->opcode = uroce_tm_opcode(cqe, op);
		flags |= uroce_tm_wc_flags(cqe, cq->tm_sync_req);
	}
	w->wc_flags = flags;
	w->byte_len = uroce_cqe_byte_len(&cq->qpc, cqe, op, sop);
	if (flags & IBV_WC_WITH_INV)
		w->invalidated_rkey = be32toh(cqe->imm_inval_pkey);
	else if (flags & IBV_WC_WITH_IMM)
		w->imm_data = cqe->imm_inval_pkey;
	if (!uroce_cqe_is_req(op)) {
		uint32_t flags_rqpn = be32toh(cqe->flags_rqpn);

		w->src_qp = flags_rqpn & 0xFFFFFF;
		w->sl = (flags_rqpn >> 24) & 0xF;
		w->slid = be16toh(cqe->slid);
		w->dlid_path_bits = cqe->ml_path & 0x7F;
	}
}

/* fill_wc_any for a success CQE (uroce_ok_cqe) already retired: each field
 * written once, the same values. */
static inline __attribute__((always_inline)) void
fill_wc_ok(const struct uroce_qp_cache *c, const struct mlx5_cqe64 *cqe, uint8_t op, uint32_t sop, uint64_t wr_id,
	   struct ibv_wc *w)
{
	unsigned int flags = uroce_cqe_wc_flags(cqe, op, sop);

	w->wr_id = wr_id;
	w->status = IBV_WC_SUCCESS;
	w->opcode = uroce_cqe_opcode(op, sop);
	w->vendor_err = 0;
	w->byte_len = uroce_cqe_byte_len(c, cqe, op, sop);
	w->imm_data = flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV) ? uroce_cqe_imm(cqe, op) : 0;
	w->qp_num = sop & 0xFFFFFF;
	w->wc_flags = flags;
	w->pkey_index = 0;
	if (op == MLX5_CQE_REQ) {
		w->src_qp = 0;
		w->slid = 0;
		w->sl = 0;
		w->dlid_path_bits = 0;
		return;
	}
	uint32_t flags_rqpn = be32toh(cqe->flags_rqpn);

	w->src_qp = flags_rqpn & 0xFFFFFF;
	w->slid = be16toh(cqe->slid);
	w->sl = (flags_rqpn >> 24) & 0xF;
	w->dlid_path_bits = cqe->ml_path & 0x7F;
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
		struct mlx5_cqe64 *cqe;
		uint64_t wr_id;
		uint32_t sop;
		uint8_t op;

		if (UROCE_LIKELY(uroce_ok_cqe(cq, &cqe, &op)) &&
		    UROCE_LIKELY(uroce_cqe_retire_fast(&cq->qpc, cqe, op,
						       sop = uroce_cqe_sop(cqe), &wr_id))) {
			fill_wc_ok(&cq->qpc, cqe, op, sop, wr_id, &wc[n]);
		} else {
			cqe = uroce_next_cqe(cq);
			if (!cqe)
				break;
			fill_wc_any(cq, cqe, &wc[n]);
		}
		uroce_consume(cq);
	}
	return uroce_poll_done(cq, n);
}

/* ---- extended CQ iterator (ibv_create_cq_ex(3)) ---- */

/* Makes the CQE at the consumer index current, any CQE (a software flush
 * CQE too); cur = NULL and ENOENT when there is none. */
static __attribute__((noinline)) int load_current_slow(struct uroce_cq *cq)
{
	struct mlx5_cqe64 *cqe = uroce_next_cqe(cq);
	uint32_t sop;
	uint8_t op;

	cq->cur = cqe;
	if (!cqe)
		return ENOENT;
	op = cqe->op_own >> 4;
	sop = uroce_cqe_sop(cqe);
	/* the accessors most programs call read these instead of the CQE */
	cq->cur_op = op;
	cq->cur_sop = sop;
	cq->vcq.cq_ex.wr_id = uroce_cqe_retire_slow(cq, cqe, op, sop, &cq->qpc,
						    &cq->vcq.cq_ex.status);
	return 0;
}

/* load_current_slow for the common CQE, inline: a success CQE
 * (uroce_ok_cqe) of the cached QP. Anything else goes to load_current_slow,
 * which looks again from the start. */
static inline __attribute__((always_inline)) int load_current(struct uroce_cq *cq)
{
	struct mlx5_cqe64 *cqe;
	uint64_t wr_id;
	uint32_t sop;
	uint8_t op;

	if (UROCE_UNLIKELY(!uroce_ok_cqe(cq, &cqe, &op)))
		return load_current_slow(cq);
	sop = uroce_cqe_sop(cqe);
	if (UROCE_UNLIKELY(!uroce_cqe_retire_fast(&cq->qpc, cqe, op, sop, &wr_id)))
		return load_current_slow(cq);
	cq->cur = cqe;
	cq->cur_op = op;
	cq->cur_sop = sop;
	cq->vcq.cq_ex.wr_id = wr_id;
	cq->vcq.cq_ex.status = IBV_WC_SUCCESS;
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
	if (ret) {
		uroce_poll_done(cq, 0); /* counts the empty poll, unlocks, may yield */
		return ret;
	}
	cq->empty_polls = 0;
	return 0;
}

static int start_poll_unlocked(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct uroce_cq *cq = to_ucq_ex(ibcq);

	if (attr->comp_mask)
		return EINVAL;
	if (load_current(cq)) {
		uroce_poll_done(cq, 0); /* counts the empty poll, may yield */
		return ENOENT;
	}
	cq->empty_polls = 0;
	return 0;
}

/* next_poll: consumes the current completion; 0 with the next one loaded, or ENOENT. */
static int next_poll(struct ibv_cq_ex *ibcq)
{
	struct uroce_cq *cq = to_ucq_ex(ibcq);

	uroce_consume(cq);
	return load_current(cq);
}

/* end_poll: consumes the current completion, if any (none after next_poll's ENOENT), and publishes ci. */
static void end_poll_locked(struct ibv_cq_ex *ibcq)
{
	struct uroce_cq *cq = to_ucq_ex(ibcq);

	if (cq->cur)
		uroce_consume(cq);
	cq->cur = NULL;
	uroce_update_ci(cq);
	pthread_spin_unlock(&cq->lock);
}

static void end_poll_unlocked(struct ibv_cq_ex *ibcq)
{
	struct uroce_cq *cq = to_ucq_ex(ibcq);

	if (cq->cur)
		uroce_consume(cq);
	cq->cur = NULL;
	uroce_update_ci(cq);
}

#define CUR(ibcq) (to_ucq_ex(ibcq)->cur)
#define CUR_OP(ibcq) (to_ucq_ex(ibcq)->cur_op)
#define CUR_SOP(ibcq) (to_ucq_ex(ibcq)->cur_sop)

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *ibcq)
{
	if (UROCE_UNLIKELY(CUR(ibcq)->app == UROCE_CQE_APP_TAG_MATCHING))
		return uroce_tm_opcode(CUR(ibcq), CUR_OP(ibcq));
	return uroce_cqe_opcode(CUR_OP(ibcq), CUR_SOP(ibcq));
}
static uint32_t read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return uroce_cqe_vendor_err(CUR(ibcq), CUR_OP(ibcq));
}
static unsigned int read_wc_flags(struct ibv_cq_ex *ibcq)
{
	unsigned int flags = uroce_cqe_wc_flags(CUR(ibcq), CUR_OP(ibcq), CUR_SOP(ibcq));

	if (UROCE_UNLIKELY(CUR(ibcq)->app == UROCE_CQE_APP_TAG_MATCHING))
		flags |= uroce_tm_wc_flags(CUR(ibcq), to_ucq_ex(ibcq)->tm_sync_req);
	return flags;
}
/* The TMH the CQE carries (bytes 0-15; zeros unless a tag matched), as
 * mlx5's read_tm_info. */
static void read_tm_info(struct ibv_cq_ex *ibcq, struct ibv_wc_tm_info *tm_info)
{
	const struct ibv_tmh *tmh = (const struct ibv_tmh *)CUR(ibcq);

	tm_info->tag = be64toh(tmh->tag);
	tm_info->priv = be32toh(tmh->app_ctx);
}
static uint32_t read_byte_len(struct ibv_cq_ex *ibcq)
{
	return uroce_cqe_byte_len(&to_ucq_ex(ibcq)->qpc, CUR(ibcq), CUR_OP(ibcq), CUR_SOP(ibcq));
}
static __be32 read_imm_data(struct ibv_cq_ex *ibcq)
{
	return uroce_cqe_imm(CUR(ibcq), CUR_OP(ibcq));
}
static uint32_t read_qp_num(struct ibv_cq_ex *ibcq)
{
	return CUR_SOP(ibcq) & 0xFFFFFF;
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
/* The frame's 802.1Q TCI (raw packet receives; docs/cqe-format.md §6), as
 * mlx5 reads vlan_info. */
static uint16_t read_cvlan(struct ibv_cq_ex *ibcq)
{
	return be16toh(CUR(ibcq)->vlan_info);
}
static uint32_t read_flow_tag(struct ibv_cq_ex *ibcq)
{
	return uroce_cqe_flow_tag(CUR(ibcq));
}
/* Raw HCA cycles (hca_core_clock kHz, completion_timestamp_mask bits). */
static uint64_t read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return be64toh(CUR(ibcq)->timestamp);
}
/* CLOCK_REALTIME ns of the CQE timestamp, through the clock page. */
static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	return uroce_cqe_wallclock_ns(to_ucq_ex(ibcq), be64toh(CUR(ibcq)->timestamp));
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
	ex->read_cvlan = f & IBV_WC_EX_WITH_CVLAN ? read_cvlan : NULL;
	ex->read_flow_tag = f & IBV_WC_EX_WITH_FLOW_TAG ? read_flow_tag : NULL;
	ex->read_tm_info = f & IBV_WC_EX_WITH_TM_INFO ? read_tm_info : NULL;
	ex->read_completion_wallclock_ns =
		f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK ? read_completion_wallclock_ns : NULL;
}
