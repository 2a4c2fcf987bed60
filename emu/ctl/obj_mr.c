/*
 * obj_mr.c - memory regions: REG_MR / DEREG_MR (include/uroce/abi.h).
 * Registration records the range, access flags and a key from the device's
 * key table (keytab.c); an ODP MR (IBV_ACCESS_ON_DEMAND) also skips the
 * mapping check, which its accesses make instead; the memory itself is not
 * touched here (the data path
 * reads and writes it with pread/pwrite on the client's own /proc/self/mem
 * descriptor, mem_access.h, docs/security.md).
 */
#include "config.h"
#include "emu/ctl/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/nic/mem_access.h"
#include "emu/ctl/objects.h"
#include "emu/ctl/quota.h"

#include <errno.h>
#include <stdlib.h>

/* Access bits uroce implements; the optional range (RELAXED_ORDERING, ...)
 * is a hint a device may ignore. */
#define MR_ACCESS_OK (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		      IBV_ACCESS_REMOTE_ATOMIC)
#define MR_ACCESS_UNSUPPORTED (IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED)

/* ibv_reg_mr(3): addr 0, length SIZE_MAX and ON_DEMAND register the whole
 * address space (implicit ODP). */
static bool mr_is_implicit(const struct uroce_reg_mr_req *req)
{
	return (req->access & IBV_ACCESS_ON_DEMAND) && req->addr == 0 && req->length == UINT64_MAX;
}

int op_reg_mr(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_reg_mr_req *req = call->req;
	struct uroce_reg_mr_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct ctl_pd *pd = objtab_get(&c->pds, req->pd_handle);
	uint32_t acc = req->access;
	struct ctl_mr *mr;
	int rc;

	if (!pd)
		return EINVAL;
	if (!mr_is_implicit(req) &&
	    (req->length == 0 || req->length > DEV_MAX_MR_SIZE || req->addr + req->length < req->addr))
		return EINVAL;
	if (acc & MR_ACCESS_UNSUPPORTED)
		return EOPNOTSUPP;
	/* HUGETLB is the application's promise about an explicit ODP range */
	if ((acc & IBV_ACCESS_HUGETLB) && (!(acc & IBV_ACCESS_ON_DEMAND) || mr_is_implicit(req)))
		return EOPNOTSUPP;
	if (acc & ~(MR_ACCESS_OK | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | IBV_ACCESS_OPTIONAL_RANGE))
		return EINVAL;
	/* IBTA §10.6.3.1: remote write or atomic access requires local write. */
	if ((acc & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(acc & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (d->counts.mr >= DEV_MAX_MR)
		return ENOMEM;
	if ((rc = quota_check(c, QUOTA_MR)))
		return rc;
	/* as the kernel's ib_umem_get: the range mapped, and writable if the
	 * MR may be written (writes through the mem descriptor would pass a
	 * read-only mapping: FOLL_FORCE) */
	if (!(acc & IBV_ACCESS_ON_DEMAND)) {
		rc = mem_range_check(c, req->addr, req->length,
				     acc & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC));
		if (rc)
			return rc;
	}
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
	mr->addr = req->addr;
	mr->length = req->length;
	mr->access = acc & MR_ACCESS_OK;
	mr->odp = acc & IBV_ACCESS_ON_DEMAND;
	mr->owner = c;
	pd->users++;
	d->counts.mr++;
	resp->handle = mr->handle;
	resp->lkey = mr->key;
	resp->rkey = mr->key;
	ulog(ULOG_DEBUG, "client#%u reg_mr 0x%llx+%llu access 0x%x%s key 0x%x", c->id,
	     (unsigned long long)mr->addr, (unsigned long long)mr->length, mr->access,
	     mr->odp ? " (on demand)" : "", mr->key);
	return 0;
fail:
	free(mr);
	return rc;
}

void mr_free(struct ctl_client *c, struct ctl_mr *mr)
{
	keytab_free(&c->dev->keys, mr->key);
	objtab_del(&c->mrs, mr->handle);
	mr->pd->users--;
	c->dev->counts.mr--;
	free(mr);
}

int op_dereg_mr(struct ctl_client *c, struct ctl_call *call)
{
	struct ctl_mr *mr = objtab_get(&c->mrs, req_handle(call));

	if (!mr)
		return EINVAL;
	mr_free(c, mr);
	return 0;
}
