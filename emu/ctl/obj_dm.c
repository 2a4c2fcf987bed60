/*
 * obj_dm.c - device memory: ALLOC_DM / FREE_DM / REG_DM_MR
 * (include/uroce/abi_dm.h, docs/device-memory.md). A DM is a sealed memfd
 * the daemon creates and maps; the owner gets the only other descriptor.
 * An MR over it is zero-based and the data path (mem_access.c) copies to
 * and from the daemon's mapping instead of the process's memory.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/quota.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Access bits an MR over device memory may ask for (mlx5 verbs.c
 * MLX5_DM_ALLOWED_ACCESS). */
#define DM_MR_ACCESS_OK (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/* A zero-filled memfd of SIZE bytes, sealed against resizing, and the
 * daemon's shared mapping of it; -1 with *err on failure. */
static int dm_memfd(uint64_t size, void **mem, int *err)
{
	int fd = memfd_create("uroce-dm", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0) {
		*err = ENOMEM;
		return -1;
	}
	if (ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		*err = ENOMEM;
		close(fd);
		return -1;
	}
	*mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*mem == MAP_FAILED) {
		*err = ENOMEM;
		close(fd);
		return -1;
	}
	return fd;
}

int op_alloc_dm(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_alloc_dm_req *req = call->req;
	struct uroce_alloc_dm_resp *resp = call->resp;
	long page = sysconf(_SC_PAGESIZE);
	struct ctl_dm *dm;
	uint64_t charged;
	int rc, fd;

	if (req->comp_mask || req->length == 0 || req->length > UROCE_DM_MAX_SIZE ||
	    req->log_align_req > UROCE_DM_MAX_LOG_ALIGN)
		return EINVAL;
	charged = round_up(req->length, UROCE_DM_GRANULE);
	if ((rc = quota_check_dm(c, charged)))
		return rc;
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return ENOMEM;
	dm->length = req->length;
	dm->charged = charged;
	dm->map_size = round_up(req->length, page > 0 ? (uint64_t)page : 4096);
	fd = dm_memfd(dm->map_size, &dm->mem, &rc);
	if (fd < 0)
		goto fail;
	rc = objtab_add(&c->dms, dm, &dm->handle);
	if (rc) {
		munmap(dm->mem, dm->map_size);
		close(fd);
		goto fail;
	}
	dm->owner = c;
	dm->memfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	resp->handle = dm->handle;
	resp->map_size = dm->map_size;
	call->out_fds[0] = fd;
	call->n_out = 1;
	call->close_out = true;
	ulog(ULOG_DEBUG, "client#%u alloc_dm %llu bytes (charged %llu) handle %u", c->id,
	     (unsigned long long)dm->length, (unsigned long long)charged, dm->handle);
	return 0;
fail:
	free(dm);
	return rc;
}

void dm_free(struct ctl_client *c, struct ctl_dm *dm)
{
	objtab_del(&c->dms, dm->handle);
	munmap(dm->mem, dm->map_size);
	if (dm->memfd >= 0)
		close(dm->memfd);
	free(dm);
}

int op_free_dm(struct ctl_client *c, struct ctl_call *call)
{
	struct ctl_dm *dm = objtab_get(&c->dms, req_handle(call));

	if (!dm)
		return EINVAL;
	if (dm->mrs || dm->imported)
		return EBUSY;
	dm_free(c, dm);
	return 0;
}

/* REG_DM_MR's checks of access flags and range (uroce/abi_dm.h): 0 or EINVAL. */
static int dm_mr_args_check(const struct ctl_dm *dm, uint64_t off, uint64_t len, uint32_t acc)
{
	if (!(acc & IBV_ACCESS_ZERO_BASED))
		return EINVAL;
	if (acc & ~(DM_MR_ACCESS_OK | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_OPTIONAL_RANGE))
		return EINVAL;
	/* IBTA §10.6.3.1: remote write or atomic access requires local write. */
	if ((acc & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(acc & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (off > dm->length || len > dm->length - off)
		return EINVAL;
	return 0;
}

int op_reg_dm_mr(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_reg_dm_mr_req *req = call->req;
	struct uroce_reg_mr_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct ctl_pd *pd = objtab_get(&c->pds, req->pd_handle);
	struct ctl_dm *dm = objtab_get(&c->dms, req->dm_handle);
	struct ctl_mr *mr;
	int rc;

	if (!pd || !dm || req->reserved)
		return EINVAL;
	if ((rc = dm_mr_args_check(dm, req->dm_offset, req->length, req->access)))
		return rc;
	if (d->counts.mr >= DEV_MAX_MR)
		return ENOMEM;
	if ((rc = quota_check(c, QUOTA_MR)))
		return rc;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return ENOMEM;
	rc = keytab_alloc(&d->keys, mr, &mr->key);
	if (rc)
		goto fail;
	rc = objtab_add(&c->mrs, mr, &mr->handle);
	if (rc) {
		keytab_free(&d->keys, mr->key);
		goto fail;
	}
	mr->pd = pd;
	mr->addr = 0; /* zero-based */
	mr->length = req->length;
	mr->access = req->access & DM_MR_ACCESS_OK;
	mr->owner = c;
	mr->dm = dm;
	mr->dm_offset = req->dm_offset;
	dm->mrs++;
	pd->users++;
	d->counts.mr++;
	resp->handle = mr->handle;
	resp->lkey = mr->key;
	resp->rkey = mr->key;
	ulog(ULOG_DEBUG, "client#%u reg_dm_mr dm %u +%llu len %llu access 0x%x key 0x%x", c->id, dm->handle,
	     (unsigned long long)mr->dm_offset, (unsigned long long)mr->length, mr->access, mr->key);
	return 0;
fail:
	free(mr);
	return rc;
}
