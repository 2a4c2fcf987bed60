/*
 * obj_mw.c - memory windows: ALLOC_MW / DEALLOC_MW (include/uroce/abi.h).
 * A window takes a slot of the device's key table (keytab.c) at ALLOC_MW
 * and keeps it until DEALLOC_MW; binding and invalidation change its
 * state and key variant on the data path (emu/nic/mem_window.c).
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/obj/keytab.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/quota.h"
#include "emu/log.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_window.h"

#include <errno.h>
#include <stdlib.h>

int op_alloc_mw(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_alloc_mw_req *req = call->req;
	struct uroce_alloc_mw_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct ctl_pd *pd = objtab_get(&c->pds, req->pd_handle);
	struct ctl_mw *mw;
	int rc;

	if (!pd || req->reserved)
		return EINVAL;
	if (req->type != IBV_MW_TYPE_1 && req->type != IBV_MW_TYPE_2)
		return EINVAL;
	if (d->counts.mw >= DEV_MAX_MW)
		return ENOMEM;
	if ((rc = quota_check(c, QUOTA_MR)))
		return rc;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return ENOMEM;
	rc = keytab_alloc_kind(&d->keys, mw, KEYTAB_MW, &mw->rkey);
	if (rc)
		goto fail;
	rc = objtab_add(&c->mws, mw, &mw->handle);
	if (rc) {
		keytab_free(&d->keys, mw->rkey);
		goto fail;
	}
	mw->pd = pd;
	mw->type = (enum ibv_mw_type)req->type;
	mw->owner = c;
	pd->users++;
	d->counts.mw++;
	resp->handle = mw->handle;
	resp->rkey = mw->rkey;
	ulog(ULOG_DEBUG, "client#%u alloc_mw type %u rkey 0x%x", c->id, req->type, mw->rkey);
	return 0;
fail:
	free(mw);
	return rc;
}

void mw_free(struct ctl_client *c, struct ctl_mw *mw)
{
	mw_unbind(mw);
	keytab_free(&c->dev->keys, mw->rkey);
	objtab_del(&c->mws, mw->handle);
	mw->pd->users--;
	c->dev->counts.mw--;
	free(mw);
}

int op_dealloc_mw(struct ctl_client *c, struct ctl_call *call)
{
	struct ctl_mw *mw = objtab_get(&c->mws, req_handle(call));

	if (!mw)
		return EINVAL;
	/* ibv_alloc_mw(3): a bound window is unbound, then freed */
	mw_free(c, mw);
	return 0;
}
