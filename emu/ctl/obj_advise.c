/*
 * obj_advise.c - ADVISE_MR (include/uroce/abi.h; ibv_advise_mr(3)): prefetch
 * advice for on-demand paging MRs. The data path reaches client memory at
 * access time through the client's mem descriptor and pins nothing, so a
 * prefetch has no pages to bring in: it checks what mlx5 checks and, when
 * synchronous (IBV_ADVISE_MR_FLAG_FLUSH), that the ranges are mapped now.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_access.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"

#include <errno.h>

/* The ODP MR of C and PD named by LKEY, usable for ADVICE, or NULL (mlx5
 * answers ENOENT for every such key). */
static const struct ctl_mr *advise_mr_get(struct ctl_client *c, const struct ctl_pd *pd,
					  uint32_t lkey, uint32_t advice)
{
	const struct ctl_mr *mr = keytab_lookup(&c->dev->keys, lkey);

	if (!mr || mr->owner != c || mr->pd != pd || !mr->odp)
		return NULL;
	if (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE && !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return NULL;
	return mr;
}

int op_advise_mr(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_advise_mr_req *req = call->req;
	const struct ctl_pd *pd = objtab_get(&c->pds, req->pd_handle);
	const struct ctl_mr *mr[UROCE_ADVISE_MR_MAX_SGE];
	bool sync = req->flags & IBV_ADVISE_MR_FLAG_FLUSH;

	if (!pd)
		return EINVAL;
	if (req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	    req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	if (req->flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH)
		return EINVAL;
	if (req->num_sge == 0 || req->num_sge > UROCE_ADVISE_MR_MAX_SGE)
		return EINVAL;
	for (uint32_t i = 0; i < req->num_sge; i++) {
		mr[i] = advise_mr_get(c, pd, req->sge[i].lkey, req->advice);
		if (!mr[i])
			return ENOENT;
	}
	if (!sync)
		return 0;
	for (uint32_t i = 0; i < req->num_sge; i++) {
		const struct uroce_advise_sge *s = &req->sge[i];

		if (!s->length)
			continue;
		if (s->addr < mr[i]->addr || s->length > mr[i]->length ||
		    s->addr - mr[i]->addr > mr[i]->length - s->length)
			return EFAULT;
		if (req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT &&
		    mem_range_check(c, s->addr, s->length,
				    req->advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE))
			return EFAULT;
	}
	return 0;
}
