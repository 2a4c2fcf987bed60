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
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/nic/mem_access.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/quota.h"

#include <errno.h>
#include <stdlib.h>

/* Access bits uroce implements; the optional range (RELAXED_ORDERING, ...)
 * is a hint a device may ignore. */
#define MR_ACCESS_OK (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		      IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND)
#define MR_ACCESS_UNSUPPORTED IBV_ACCESS_ZERO_BASED
/* FLUSH targets (rdma-core >= 45's verbs.h: IBV_ACCESS_FLUSH_GLOBAL 1 << 8,
 * IBV_ACCESS_FLUSH_PERSISTENT 1 << 9; older headers lack them). uroce
 * flushes to global visibility (docs/transport.md, "ATOMIC WRITE and
 * FLUSH"); it has no persistent memory, so PERSISTENT gets EOPNOTSUPP after
 * the EINVAL checks, as the kernel's ib_check_mr_access
 * (include/rdma/ib_verbs.h) answers for a device without
 * IB_DEVICE_FLUSH_PERSISTENT. */
#define MR_ACCESS_FLUSH_GLOBAL (1u << 8)
#define MR_ACCESS_FLUSH_PERSISTENT (1u << 9)
#define MR_ACCESS_FLUSH (MR_ACCESS_FLUSH_GLOBAL | MR_ACCESS_FLUSH_PERSISTENT)

#define MR_ACCESS_WRITES (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)

/* ibv_reg_mr(3): addr 0, length SIZE_MAX and ON_DEMAND register the whole
 * address space (implicit ODP). */
static bool mr_is_implicit(uint64_t addr, uint64_t length, uint32_t acc)
{
	return (acc & IBV_ACCESS_ON_DEMAND) && addr == 0 && length == UINT64_MAX;
}

/* REG_MR's checks of a range and access flags: 0, EINVAL or EOPNOTSUPP. */
static int mr_args_check(uint64_t addr, uint64_t length, uint32_t acc)
{
	bool implicit = mr_is_implicit(addr, length, acc);

	if (!implicit && (length == 0 || length > DEV_MAX_MR_SIZE || addr + length < addr))
		return EINVAL;
	if (acc & MR_ACCESS_UNSUPPORTED)
		return EOPNOTSUPP;
	/* HUGETLB is the application's promise about an explicit ODP range */
	if ((acc & IBV_ACCESS_HUGETLB) && (!(acc & IBV_ACCESS_ON_DEMAND) || implicit))
		return EOPNOTSUPP;
	if (acc & ~(MR_ACCESS_OK | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | MR_ACCESS_FLUSH |
		    IBV_ACCESS_OPTIONAL_RANGE))
		return EINVAL;
	/* IBTA §10.6.3.1: remote write or atomic access requires local write. */
	if ((acc & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(acc & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (acc & MR_ACCESS_FLUSH_PERSISTENT)
		return EOPNOTSUPP;
	return 0;
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
	if ((rc = mr_args_check(req->addr, req->length, acc)))
		return rc;
	if (d->counts.mr >= DEV_MAX_MR)
		return ENOMEM;
	if ((rc = quota_check(c, QUOTA_MR)))
		return rc;
	/* as the kernel's ib_umem_get: the range mapped, and writable if the
	 * MR may be written (writes through the mem descriptor would pass a
	 * read-only mapping: FOLL_FORCE) */
	if (!(acc & IBV_ACCESS_ON_DEMAND)) {
		rc = mem_range_check(c, req->addr, req->length, acc & MR_ACCESS_WRITES);
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
	mr->access = acc & (MR_ACCESS_OK | MR_ACCESS_FLUSH_GLOBAL);
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
	if (mr->dm)
		mr->dm->mrs--;
	c->dev->counts.mr--;
	free(mr);
}

int op_dereg_mr(struct ctl_client *c, struct ctl_call *call)
{
	struct ctl_mr *mr = objtab_get(&c->mrs, req_handle(call));

	if (!mr)
		return EINVAL;
	/* ibv_dereg_mr(3): fails while memory windows are bound to it */
	if (mr->mw_bound || mr->imported)
		return EBUSY;
	mr_free(c, mr);
	return 0;
}

#define REREG_FLAGS (IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS)

/* REREG_MR (uroce/abi_cq_mr.h): all checks first, then the change in one
 * step; the data path looks the key up per access, so the next packet sees
 * the new range, PD and rights. */
int op_rereg_mr(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_rereg_mr_req *req = call->req;
	struct uroce_reg_mr_resp *resp = call->resp;
	struct ctl_mr *mr = objtab_get(&c->mrs, req->handle);
	uint32_t fl = req->flags, acc;
	struct ctl_pd *pd;
	uint64_t addr, len;
	int rc;

	if (!mr || !fl || (fl & ~(uint32_t)REREG_FLAGS))
		return EINVAL;
	/* the kernel's uverbs rereg refuses MRs over device memory */
	if (mr->dm)
		return EINVAL;
	if (mr->imported)
		return EBUSY;
	if ((!(fl & IBV_REREG_MR_CHANGE_PD) && req->pd_handle) ||
	    (!(fl & IBV_REREG_MR_CHANGE_ACCESS) && req->access) ||
	    (!(fl & IBV_REREG_MR_CHANGE_TRANSLATION) && (req->addr || req->length)))
		return EINVAL;
	pd = fl & IBV_REREG_MR_CHANGE_PD ? objtab_get(&c->pds, req->pd_handle) : mr->pd;
	if (!pd)
		return EINVAL;
	/* an MR does not turn on-demand or back: the bit must stay as it is */
	if ((fl & IBV_REREG_MR_CHANGE_ACCESS) && !(req->access & IBV_ACCESS_ON_DEMAND) != !mr->odp)
		return EOPNOTSUPP;
	acc = fl & IBV_REREG_MR_CHANGE_ACCESS ? req->access :
	      mr->access | (mr->odp ? IBV_ACCESS_ON_DEMAND : 0);
	addr = fl & IBV_REREG_MR_CHANGE_TRANSLATION ? req->addr : mr->addr;
	len = fl & IBV_REREG_MR_CHANGE_TRANSLATION ? req->length : mr->length;
	if ((rc = mr_args_check(addr, len, acc)))
		return rc;
	/* a new range, or new rights over the old one: mapped and writable as needed */
	if ((fl & (IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS)) &&
	    !(acc & IBV_ACCESS_ON_DEMAND) &&
	    (rc = mem_range_check(c, addr, len, acc & MR_ACCESS_WRITES)))
		return rc;
	mr->pd->users--;
	pd->users++;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = len;
	mr->access = acc & (MR_ACCESS_OK | MR_ACCESS_FLUSH_GLOBAL);
	mr->odp = acc & IBV_ACCESS_ON_DEMAND;
	resp->handle = mr->handle;
	resp->lkey = mr->key;
	resp->rkey = mr->key;
	ulog(ULOG_DEBUG, "client#%u rereg_mr flags 0x%x 0x%llx+%llu access 0x%x key 0x%x", c->id, fl,
	     (unsigned long long)addr, (unsigned long long)len, mr->access, mr->key);
	return 0;
}
