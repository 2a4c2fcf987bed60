/*
 * pd_mr.c - protection domains and memory regions.
 *
 * The daemon owns both; the provider keeps only the handle. Keys are the
 * daemon's (index << 8 | variant, so lkey + 1 never names a live MR;
 * docs/clients.md §0 item 5). Registered memory stays where the application put
 * it: nothing is pinned or copied (docs/daemon.md "Limits").
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "uroce.h"

/* ibv_alloc_pd. Errors (errno): ENOMEM (no memory, or the daemon's max_pd). */
struct ibv_pd *uroce_alloc_pd(struct ibv_context *context)
{
	struct uroce_handle_req req = { .handle = 0 };
	struct uroce_handle_resp resp;
	struct uroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return uroce_fail_null(ENOMEM);
	ret = uroce_ctl_call(to_uctx(context), UROCE_OP_ALLOC_PD, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret) {
		free(pd);
		return uroce_fail_null(ret);
	}
	pd->handle = resp.handle;
	pd->ibv_pd.handle = resp.handle;
	return &pd->ibv_pd;
}

/* ibv_dealloc_pd. Returns 0 or EBUSY (MRs, QPs, AHs or parent domains still
 * use it), EINVAL. A parent domain goes to parent_domain.c. */
int uroce_dealloc_pd(struct ibv_pd *ibpd)
{
	struct uroce_pd *pd = to_upd(ibpd);
	int ret;

	if (pd->base)
		return uroce_dealloc_parent_domain(pd);
	if (__atomic_load_n(&pd->refs, __ATOMIC_ACQUIRE))
		return EBUSY;
	ret = uroce_ctl_destroy(to_uctx(ibpd->context), UROCE_OP_DEALLOC_PD, pd->handle);
	if (ret)
		return ret;
	free(pd);
	return 0;
}

/*
 * ibv_reg_mr (libibverbs sets mr->context/pd/addr/length afterwards).
 * addr/length in bytes of this process's address space; hca_va must equal
 * addr (no IOVA remapping: EOPNOTSUPP otherwise). Errors (errno): EINVAL
 * (bad access combination, zero length), EOPNOTSUPP (ZERO_BASED, HUGETLB
 * without ON_DEMAND), EFAULT (not mapped, unless ON_DEMAND), ENOMEM.
 * IBV_ACCESS_MW_BIND lets windows be bound. ON_DEMAND registers an
 * on-demand paging MR; with addr NULL and length SIZE_MAX an implicit one
 * over the whole address space (odp.c).
 */
struct ibv_mr *uroce_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	struct uroce_reg_mr_req req = {
		.pd_handle = to_upd(ibpd)->handle,
		.access = (uint32_t)access,
		.addr = (uint64_t)(uintptr_t)addr,
		.length = length,
	};
	struct uroce_reg_mr_resp resp;
	struct uroce_mr *mr;
	int ret;

	if (hca_va != (uint64_t)(uintptr_t)addr)
		return uroce_fail_null(EOPNOTSUPP);
	if (!length)
		return uroce_fail_null(EINVAL);
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return uroce_fail_null(ENOMEM);
	ret = uroce_ctl_call(to_uctx(ibpd->context), UROCE_OP_REG_MR, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret) {
		free(mr);
		return uroce_fail_null(ret);
	}
	mr->handle = resp.handle;
	mr->vmr.ibv_mr.handle = resp.handle;
	mr->vmr.ibv_mr.lkey = resp.lkey;
	mr->vmr.ibv_mr.rkey = resp.rkey;
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = access;
	return &mr->vmr.ibv_mr;
}

/* ibv_dereg_mr. Returns 0 or EINVAL. */
int uroce_dereg_mr(struct verbs_mr *vmr)
{
	struct uroce_mr *mr = uroce_container_of(vmr, struct uroce_mr, vmr);
	int ret = uroce_ctl_destroy(to_uctx(vmr->ibv_mr.context), UROCE_OP_DEREG_MR, mr->handle);

	if (ret)
		return ret;
	free(mr);
	return 0;
}

/*
 * ibv_rereg_mr(3) (libibverbs has checked flags, the range and that access
 * comes with CHANGE_ACCESS, and updates mr->pd/addr/length on success).
 * Keys are kept, as on mlx5; the daemon checks as REG_MR does (abi_cq_mr.h).
 * Returns 0 or an errno, also left in errno, which libibverbs turns into
 * IBV_REREG_MR_ERR_CMD: EINVAL (flags, PD, access combination, length),
 * EOPNOTSUPP (access bits uroce lacks), EFAULT (range not mapped or not
 * writable). On error the MR is unchanged.
 */
int uroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
		   size_t length, int access)
{
	struct uroce_mr *mr = uroce_container_of(vmr, struct uroce_mr, vmr);
	struct uroce_rereg_mr_req req = { .handle = mr->handle, .flags = (uint32_t)flags };
	struct uroce_reg_mr_resp resp;
	int ret;

	if (flags & IBV_REREG_MR_CHANGE_PD) {
		if (!pd || pd->context != vmr->ibv_mr.context)
			return errno = EINVAL;
		req.pd_handle = to_upd(pd)->handle;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		req.access = (uint32_t)access;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		req.addr = (uint64_t)(uintptr_t)addr;
		req.length = length;
	}
	ret = uroce_ctl_call(to_uctx(vmr->ibv_mr.context), UROCE_OP_REREG_MR, &req, sizeof(req),
			     NULL, 0, &resp, sizeof(resp), NULL, NULL);
	if (ret)
		return errno = ret;
	vmr->ibv_mr.lkey = resp.lkey;
	vmr->ibv_mr.rkey = resp.rkey;
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		vmr->access = access;
	return 0;
}
