/*
 * cq_clean.c - taking a QP's unpolled CQEs out of a CQ ring when the QP
 * moves to RESET, as mlx5's provider does (mlx5_cq_clean): the CQE format
 * and owner bit are those of docs/cqe-format.md, the ring that of
 * include/uroce/abi.h; and the QP out of the CQ's QP cache when it is
 * destroyed.
 */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <string.h>

#include "cqe_decode.h"
#include "uroce.h"

/* The CQE of free-running index N if software owns it (cq_poll.c's test at
 * any index), else NULL. */
static struct mlx5_cqe64 *cqe_at(struct uroce_cq *cq, uint32_t n)
{
	struct mlx5_cqe64 *cqe = &cq->cqes[n & (cq->nent - 1)];
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	if ((op_own >> 4) == MLX5_CQE_INVALID || (op_own & MLX5_CQE_OWNER_MASK) != !!(n & cq->nent))
		return NULL;
	return cqe;
}

/* Under the CQ lock, as the polls that read the cache (a single-threaded
 * CQ has none: like mlx5's destroy_qp, which cleans its CQs the same way). */
void uroce_cq_forget_qp(struct uroce_cq *cq, const struct uroce_qp *qp)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
	if (cq->qpc.qp == qp)
		uroce_qp_cache_reset(&cq->qpc);
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

/*
 * Removes the unpolled CQEs of QP number QPN from the CQ, as mlx5 does when
 * a QP moves to RESET (its work is discarded, so are its completions): the
 * CQEs of other QPs move up over the removed ones, order kept, and the
 * consumer index passes the freed slots. A removed receive CQE of an SRQ
 * frees its SRQ WQE. The daemon writes no CQE for the QP any more and
 * writes other CQEs only past the ones looked at here.
 */
void uroce_cq_clean(struct uroce_cq *cq, uint32_t qpn)
{
	uint32_t prod, ci, nfreed = 0;

	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
	ci = cq->cons_index;
	for (prod = ci; prod - ci < cq->nent && cqe_at(cq, prod); prod++)
		;
	while (prod-- != ci) {
		struct mlx5_cqe64 *cqe = &cq->cqes[prod & (cq->nent - 1)], *to;
		uint8_t op = cqe->op_own >> 4;
		uint32_t srqn = be32toh(cqe->srqn_uidx) & 0xFFFFFF;

		if ((uroce_cqe_sop(cqe) & 0xFFFFFF) == qpn) {
			struct uroce_srq *srq = op != MLX5_CQE_REQ && op != MLX5_CQE_REQ_ERR && srqn ?
				uroce_find_srq(to_uctx(cq->vcq.cq.context), srqn) : NULL;

			if (srq)
				uroce_srq_complete(srq, be16toh(cqe->wqe_counter));
			nfreed++;
		} else if (nfreed) {
			/* same lap as the slot it moves to: keep that slot's owner bit */
			to = &cq->cqes[(prod + nfreed) & (cq->nent - 1)];
			memcpy(to, cqe, offsetof(struct mlx5_cqe64, op_own));
			to->op_own = (uint8_t)((cqe->op_own & ~MLX5_CQE_OWNER_MASK) |
					       (to->op_own & MLX5_CQE_OWNER_MASK));
		}
	}
	if (nfreed) {
		cq->cons_index = ci + nfreed;
		__atomic_store_n(&cq->hdr->dbrec[0], htobe32(cq->cons_index & UROCE_CQ_CI_MASK),
				 __ATOMIC_RELEASE);
	}
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}
