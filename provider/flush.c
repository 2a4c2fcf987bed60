/*
 * flush.c - flushing the work a gone daemon will never complete (liveness.h).
 *
 * Once the daemon is gone, each CQ returns a software WR_FLUSH_ERR completion for every
 * WQE posted to its QPs and not yet completed to the application, as mlx5's
 * reset flow does for a device in internal-error state: send queues before
 * receive queues, each oldest first. The CQEs use the mlx5 error layout
 * (docs/cqe-format.md), vendor syndrome 0xf9 as the daemon's own flushes.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "liveness.h"

/* The vendor syndrome the daemon writes with WR_FLUSH_ERR (emu/nic/cq_ring.c). */
#define FLUSH_VENDOR_ERR 0xf9

/* Fills cqe as a flush of WQE number wqe of qp (requester side if sq). */
static void flush_cqe(struct mlx5_cqe64 *cqe, uint32_t qpn, uint32_t wqe, bool sq)
{
	struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)cqe;

	memset(cqe, 0, sizeof(*cqe));
	e->syndrome = MLX5_CQE_SYNDROME_WR_FLUSH_ERR;
	e->vendor_err_synd = FLUSH_VENDOR_ERR;
	e->s_wqe_opcode_qpn = htobe32(qpn & 0xFFFFFF);
	e->wqe_counter = htobe16((uint16_t)wqe);
	e->op_own = (uint8_t)((sq ? MLX5_CQE_REQ_ERR : MLX5_CQE_RESP_ERR) << 4);
}

/* Whether qp has an outstanding WQE completing on cq; fills cqe for it. */
static bool qp_flush_one(struct uroce_qp *qp, struct uroce_cq *cq, struct mlx5_cqe64 *cqe)
{
	struct ibv_qp *q = &qp->vqp.qp;
	uint32_t tail;
	bool found = false;

	if (q->send_cq == &cq->vcq.cq && qp->cap.max_send_wr) {
		pthread_spin_lock(&qp->sq_lock);
		tail = __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE);
		if (tail != qp->sq_head) {
			flush_cqe(cqe, q->qp_num, tail, true);
			found = true;
		}
		pthread_spin_unlock(&qp->sq_lock);
		if (found)
			return true;
	}
	if (q->recv_cq == &cq->vcq.cq && qp->cap.max_recv_wr) {
		pthread_spin_lock(&qp->rq_lock);
		tail = __atomic_load_n(&qp->rq_tail, __ATOMIC_ACQUIRE);
		if (tail != qp->rq_head) {
			flush_cqe(cqe, q->qp_num, tail, false);
			found = true;
		}
		pthread_spin_unlock(&qp->rq_lock);
	}
	return found;
}

bool uroce_flush_next_cqe(struct uroce_cq *cq, struct mlx5_cqe64 *cqe)
{
	struct uroce_context *ctx = to_uctx(cq->vcq.cq.context);
	struct uroce_qp *qp;

	/* the QP of the previous flush first: its queue is likely not empty yet */
	qp = cq->flush_qpn ? uroce_find_qp(ctx, cq->flush_qpn) : NULL;
	if (qp && qp_flush_one(qp, cq, cqe))
		return true;
	for (uint32_t top = 0; top < UROCE_QPT_TOP; top++) {
		struct uroce_qp **lvl = __atomic_load_n(&ctx->qp_table[top], __ATOMIC_ACQUIRE);

		for (uint32_t s = 0; lvl && s < UROCE_QPT_SLOTS; s++) {
			qp = __atomic_load_n(&lvl[s], __ATOMIC_ACQUIRE);
			if (qp && qp_flush_one(qp, cq, cqe)) {
				cq->flush_qpn = qp->vqp.qp.qp_num;
				return true;
			}
		}
	}
	cq->flush_qpn = 0;
	return false;
}
