/*
 * obj_ah.c - address handles: CREATE_AH / DESTROY_AH (include/uroce/abi.h).
 * On RoCE the destination is the GRH's DGID, so an AH without a GRH is
 * rejected (EINVAL, as the kernel does for RoCE ports).
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/nic/doorbell.h"
#include "emu/ctl/quota.h"

#include <errno.h>
#include <stdlib.h>

int op_create_ah(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_ah_req *req = call->req;
	struct uroce_handle_resp *resp = call->resp;
	struct ctl_pd *pd = objtab_get(&c->pds, req->pd_handle);
	struct ctl_ah *ah;
	int rc;

	if (!pd || req->reserved)
		return EINVAL;
	if (!req->attr.is_global || req->attr.port_num != 1 ||
	    req->attr.grh.sgid_index >= c->dev->gid_tbl_len)
		return EINVAL;
	/* only GID 0 is populated; an empty entry has no source address
	 * (the kernel's rdma_get_gid_attr fails for it) */
	if (req->attr.grh.sgid_index != 0)
		return EINVAL;
	if (c->dev->counts.ah >= DEV_MAX_AH)
		return ENOMEM;
	if ((rc = quota_check(c, QUOTA_AH)))
		return rc;
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return ENOMEM;
	rc = objtab_add(&c->ahs, ah, &ah->handle);
	if (rc) {
		free(ah);
		return rc;
	}
	ah->pd = pd;
	ah->attr = req->attr;
	pd->users++;
	c->dev->counts.ah++;
	resp->handle = ah->handle;
	return 0;
}

void ah_free(struct ctl_client *c, struct ctl_ah *ah)
{
	objtab_del(&c->ahs, ah->handle);
	ah->pd->users--;
	c->dev->counts.ah--;
	free(ah);
}

int op_destroy_ah(struct ctl_client *c, struct ctl_call *call)
{
	struct ctl_ah *ah = objtab_get(&c->ahs, req_handle(call));

	if (!ah)
		return EINVAL;
	/* mlx5 copies the address vector into the UD WQE at post time, so a
	 * send posted before ibv_destroy_ah still goes out (mckey destroys its
	 * AH right after posting): the client's posted WQEs are taken first. */
	doorbell_take_posted(c);
	ah_free(c, ah);
	return 0;
}
