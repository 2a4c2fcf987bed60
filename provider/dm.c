/*
 * dm.c - device memory (ibv_alloc_dm(3), ibv_reg_dm_mr; uroce/abi_dm.h,
 * docs/device-memory.md). The daemon owns the memory (a memfd it maps) and
 * hands this process the descriptor; the provider maps it and copies in and
 * out with 4-byte stores and loads, as mlx5 does over its MEMIC BAR. MRs
 * over it are zero-based: an SGE's or a remote VA's address is the offset
 * into the MR.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uroce.h"

struct uroce_dm {
	struct verbs_dm vdm;
	void *mem;          /* our mapping of the daemon's memfd */
	uint64_t map_size;  /* bytes mapped */
	uint64_t length;    /* bytes asked for: what copies may reach */
	uint32_t import_handle; /* ibv_import_dm: the importer's handle, else 0 */
};

static struct uroce_dm *to_udm(struct ibv_dm *dm)
{
	return uroce_container_of(dm, struct uroce_dm, vdm.dm);
}

/* One copy between host memory and the DM; READ selects the direction.
 * As mlx5's access_dm: EFAULT when [off, off+len) leaves the DM, EINVAL
 * when off or len is not a multiple of 4 (the DM is reached in 4-byte
 * words). */
static int dm_copy(struct ibv_dm *ibdm, uint64_t off, void *host, size_t len, bool read)
{
	struct uroce_dm *dm = to_udm(ibdm);
	_Atomic uint32_t *w;
	uint32_t *h = host;
	size_t i;

	if (off > dm->length || len > dm->length - off)
		return EFAULT;
	if ((len & 3) || (off & 3))
		return EINVAL;
	w = (_Atomic uint32_t *)((char *)dm->mem + off);
	for (i = 0; i < len / 4; i++) {
		if (read)
			h[i] = atomic_load_explicit(&w[i], memory_order_relaxed);
		else
			atomic_store_explicit(&w[i], h[i], memory_order_relaxed);
	}
	return 0;
}

/* ibv_memcpy_to_dm(3): 0, EFAULT or EINVAL (dm_copy). */
static int uroce_memcpy_to_dm(struct ibv_dm *dm, uint64_t dm_offset, const void *host_addr, size_t length)
{
	return dm_copy(dm, dm_offset, (void *)host_addr, length, false);
}

/* ibv_memcpy_from_dm(3): 0, EFAULT or EINVAL (dm_copy). */
static int uroce_memcpy_from_dm(void *host_addr, struct ibv_dm *dm, uint64_t dm_offset, size_t length)
{
	return dm_copy(dm, dm_offset, host_addr, length, true);
}

/*
 * ibv_alloc_dm(3). attr->length bytes (1 .. max_dm_size), log_align_req
 * 0..12, comp_mask 0. Errors (errno): EINVAL (length, alignment,
 * comp_mask), ENOMEM (the device's or the uid's device memory is used up,
 * or no memory here).
 */
struct ibv_dm *uroce_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	struct uroce_alloc_dm_req req = {
		.length = attr->length,
		.log_align_req = attr->log_align_req,
		.comp_mask = attr->comp_mask,
	};
	struct uroce_alloc_dm_resp resp;
	struct uroce_dm *dm;
	int rfd[1], nrfd = 1, ret;

	/* mlx5's alloc_dm_memic answers these before asking the kernel */
	if (attr->comp_mask || attr->length > UROCE_DM_MAX_SIZE)
		return uroce_fail_null(EINVAL);
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return uroce_fail_null(ENOMEM);
	ret = uroce_ctl_call(to_uctx(context), UROCE_OP_ALLOC_DM, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), rfd, &nrfd);
	if (!ret && nrfd != 1) {
		/* the handle is ours; nothing to map it with */
		uroce_ctl_destroy(to_uctx(context), UROCE_OP_FREE_DM, resp.handle);
		ret = EPROTO;
	}
	if (ret) {
		free(dm);
		return uroce_fail_null(ret);
	}
	dm->mem = mmap(NULL, resp.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, rfd[0], 0);
	close(rfd[0]);
	if (dm->mem == MAP_FAILED || resp.map_size < attr->length) {
		if (dm->mem != MAP_FAILED)
			munmap(dm->mem, resp.map_size);
		uroce_ctl_destroy(to_uctx(context), UROCE_OP_FREE_DM, resp.handle);
		free(dm);
		return uroce_fail_null(ENOMEM);
	}
	dm->map_size = resp.map_size;
	dm->length = attr->length;
	dm->vdm.handle = resp.handle;
	dm->vdm.dm.handle = resp.handle; /* as libibverbs' ibv_cmd_alloc_dm */
	dm->vdm.dm.context = context;
	dm->vdm.dm.memcpy_to_dm = uroce_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = uroce_memcpy_from_dm;
	return &dm->vdm.dm;
}

/* ibv_import_dm(3): maps the imported DM's memfd as alloc_dm does;
 * dm.handle stays the original's. Errors (errno): EINVAL (context not
 * imported, no such DM in the imported context), EPROTO, ENOMEM. */
struct ibv_dm *uroce_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	struct uroce_import_obj_resp resp;
	struct uroce_dm *dm;
	int rfd[1], nrfd = 1, ret;

	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return uroce_fail_null(ENOMEM);
	ret = uroce_import_obj(context, UROCE_IMPORT_DM, dm_handle, &resp, rfd, &nrfd);
	if (!ret && nrfd != 1) {
		uroce_unimport_obj(context, UROCE_IMPORT_DM, resp.handle);
		ret = EPROTO;
	}
	if (ret) {
		free(dm);
		return uroce_fail_null(ret);
	}
	dm->mem = mmap(NULL, resp.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, rfd[0], 0);
	close(rfd[0]);
	if (dm->mem == MAP_FAILED || resp.map_size < resp.length) {
		if (dm->mem != MAP_FAILED)
			munmap(dm->mem, resp.map_size);
		uroce_unimport_obj(context, UROCE_IMPORT_DM, resp.handle);
		free(dm);
		return uroce_fail_null(ENOMEM);
	}
	dm->map_size = resp.map_size;
	dm->length = resp.length;
	dm->import_handle = resp.handle;
	dm->vdm.handle = resp.handle;
	dm->vdm.dm.handle = dm_handle;
	dm->vdm.dm.context = context;
	dm->vdm.dm.memcpy_to_dm = uroce_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = uroce_memcpy_from_dm;
	return &dm->vdm.dm;
}

/* ibv_unimport_dm(3): unmaps and forgets the import; the DM stays. */
void uroce_unimport_dm(struct ibv_dm *ibdm)
{
	struct uroce_dm *dm = to_udm(ibdm);

	uroce_unimport_obj(ibdm->context, UROCE_IMPORT_DM, dm->import_handle);
	munmap(dm->mem, dm->map_size);
	free(dm);
}

/* ibv_free_dm(3). Returns 0, EBUSY (an MR is registered on it) or EINVAL. */
int uroce_free_dm(struct ibv_dm *ibdm)
{
	struct uroce_dm *dm = to_udm(ibdm);
	int ret = uroce_ctl_destroy(to_uctx(ibdm->context), UROCE_OP_FREE_DM, dm->vdm.handle);

	if (ret)
		return ret;
	munmap(dm->mem, dm->map_size);
	free(dm);
	return 0;
}

/*
 * ibv_reg_dm_mr(3): an MR over [dm_offset, dm_offset+length) of DM,
 * zero-based (access must hold IBV_ACCESS_ZERO_BASED; mr->addr is NULL).
 * Errors (errno): EINVAL (no ZERO_BASED, other access bits than LOCAL_WRITE
 * and REMOTE_*, the range outside the DM, PD or DM not of this context),
 * ENOMEM (max_mr or the uid's MR quota).
 */
struct ibv_mr *uroce_reg_dm_mr(struct ibv_pd *ibpd, struct ibv_dm *ibdm, uint64_t dm_offset, size_t length,
			       unsigned int access)
{
	struct uroce_reg_dm_mr_req req = {
		.pd_handle = to_upd(ibpd)->handle,
		.dm_handle = to_udm(ibdm)->vdm.handle,
		.access = access,
		.dm_offset = dm_offset,
		.length = length,
	};
	struct uroce_reg_mr_resp resp;
	struct uroce_mr *mr;
	int ret;

	if (ibdm->context != ibpd->context)
		return uroce_fail_null(EINVAL);
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return uroce_fail_null(ENOMEM);
	ret = uroce_ctl_call(to_uctx(ibpd->context), UROCE_OP_REG_DM_MR, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret) {
		free(mr);
		return uroce_fail_null(ret);
	}
	mr->handle = resp.handle;
	mr->vmr.ibv_mr.handle = resp.handle;
	mr->vmr.ibv_mr.context = ibpd->context;
	mr->vmr.ibv_mr.pd = ibpd;
	mr->vmr.ibv_mr.addr = NULL;
	mr->vmr.ibv_mr.length = length;
	mr->vmr.ibv_mr.lkey = resp.lkey;
	mr->vmr.ibv_mr.rkey = resp.rkey;
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = (int)access;
	return &mr->vmr.ibv_mr;
}
