/*
 * mcast.c - ibv_attach_mcast / ibv_detach_mcast (ibv_attach_mcast(3)):
 * the daemon keeps the groups and delivers a datagram sent to one to every
 * attached QP (docs/multicast.md).
 */
#include "config.h"

#include <string.h>

#include "uroce.h"

static int mcast_call(struct ibv_qp *qp, unsigned int op, const union ibv_gid *gid, uint16_t lid)
{
	struct uroce_mcast_req req = { .qp_handle = to_uqp(qp)->handle, .lid = lid };
	struct uroce_hdr resp;

	memcpy(req.gid, gid->raw, 16);
	return uroce_ctl_call(to_uctx(qp->context), op, &req, sizeof(req), NULL, 0, &resp,
			      sizeof(resp), NULL, NULL);
}

/* ibv_attach_mcast. Returns 0 or EINVAL (not a UD QP, not a multicast
 * GID), ENOMEM (a device limit of ibv_query_device's max_mcast_*). */
int uroce_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast_call(qp, UROCE_OP_ATTACH_MCAST, gid, lid);
}

/* ibv_detach_mcast. Returns 0 or EINVAL (also: the QP is not attached). */
int uroce_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast_call(qp, UROCE_OP_DETACH_MCAST, gid, lid);
}
