/*
 * odp.c - on-demand paging: ibv_advise_mr.
 *
 * ODP MRs themselves are registered by uroce_reg_mr with
 * IBV_ACCESS_ON_DEMAND (the daemon then checks the mapping at each access
 * instead of at registration; implicit ODP is addr NULL, length SIZE_MAX,
 * ibv_reg_mr(3)). The daemon pins nothing for any MR, so a prefetch has
 * nothing to bring in: ADVISE_MR checks the keys, and the ranges when
 * synchronous (include/uroce/abi.h ADVISE_MR).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "uroce.h"

/*
 * ibv_advise_mr(3). advice: IBV_ADVISE_MR_ADVICE_PREFETCH, _PREFETCH_WRITE,
 * _PREFETCH_NO_FAULT; flags 0 (asynchronous) or IBV_ADVISE_MR_FLAG_FLUSH
 * (synchronous); sg_list of num_sge ranges of ODP MRs of PD (addr, length in
 * bytes, lkey). Returns 0 or an errno, as mlx5: EINVAL (num_sge 0, unknown
 * flags, bad PD), EOPNOTSUPP (other advice), ENOENT (an lkey that is not an
 * ODP MR of this PD, or PREFETCH_WRITE on an MR without LOCAL_WRITE),
 * EFAULT (synchronous only: a range outside its MR, or not mapped now).
 * Longer lists go to the daemon UROCE_ADVISE_MR_MAX_SGE at a time.
 */
int uroce_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		    struct ibv_sge *sg_list, uint32_t num_sge)
{
	struct uroce_context *ctx = to_uctx(pd->context);
	struct uroce_advise_mr_req req;
	struct uroce_hdr resp;
	uint32_t done = 0;

	if (!num_sge || !sg_list)
		return EINVAL;
	while (done < num_sge) {
		uint32_t n = num_sge - done;
		int ret;

		if (n > UROCE_ADVISE_MR_MAX_SGE)
			n = UROCE_ADVISE_MR_MAX_SGE;
		memset(&req, 0, sizeof(req));
		req.pd_handle = to_upd(pd)->handle;
		req.advice = (uint32_t)advice;
		req.flags = flags;
		req.num_sge = n;
		for (uint32_t i = 0; i < n; i++) {
			req.sge[i].addr = sg_list[done + i].addr;
			req.sge[i].length = sg_list[done + i].length;
			req.sge[i].lkey = sg_list[done + i].lkey;
		}
		ret = uroce_ctl_call(ctx, UROCE_OP_ADVISE_MR, &req, sizeof(req), NULL, 0,
				     &resp, sizeof(resp), NULL, NULL);
		if (ret)
			return ret;
		done += n;
	}
	return 0;
}
