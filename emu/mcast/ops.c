/*
 * ops.c - ATTACH_MCAST / DETACH_MCAST (include/uroce/abi.h): the checks
 * of the kernel's ib_attach_mcast / ib_detach_mcast and uverbs, then the
 * group table (table.c).
 */
#include "config.h"
#include "emu/mcast/mcast.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"

#include <errno.h>

/* The request's UD QP, or NULL (EINVAL): a reserved field set, not a UD
 * QP of this client, or a GID that is not multicast. */
static struct ctl_qp *check(struct ctl_client *c, const struct uroce_mcast_req *req)
{
	struct ctl_qp *qp = objtab_get(&c->qps, req->qp_handle);

	if (!qp || req->reserved || qp->type != IBV_QPT_UD || !mcast_gid_is_multicast(req->gid))
		return NULL;
	return qp;
}

int op_attach_mcast(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_mcast_req *req = call->req;
	struct ctl_qp *qp = check(c, req);
	int rc;

	if (!qp)
		return EINVAL;
	if ((rc = mcast_dev_init(c->dev)))
		return rc;
	return mcast_attach(c->dev->mcast, req->gid, req->lid, qp->qpn);
}

int op_detach_mcast(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_mcast_req *req = call->req;
	struct ctl_qp *qp = check(c, req);

	if (!qp)
		return EINVAL;
	return mcast_detach(c->dev->mcast, req->gid, qp->qpn);
}
