/*
 * obj_xrc.c - XRC SRQs and XRC receive QPs: CREATE_XRC_SRQ and
 * CREATE_XRC_QP (include/uroce/abi_xrc.h; ibv_create_srq_ex(3) with
 * IBV_SRQT_XRC, ibv_create_qp_ex(3) with IBV_QPT_XRC_RECV). Both belong to
 * an XRC domain through one of the client's handles (obj_xrcd.c), which
 * they keep busy; the engine matches a request's XRCETH against the
 * domain (emu/xport/resp.c). XRC send QPs are CREATE_QP's (obj_qp.c).
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/quota.h"
#include "emu/log.h"
#include "emu/nic/device.h"
#include "emu/nic/engine_glue.h"

#include <errno.h>

int op_create_xrc_srq(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_xrc_srq_req *req = call->req;
	struct uroce_create_srq_resp *resp = call->resp;
	struct ctl_xrcd *x = objtab_get(&c->xrcds, req->xrcd_handle);
	struct ctl_cq *cq = objtab_get(&c->cqs, req->cq_handle);
	struct ctl_pd *pd = objtab_get(&c->pds, req->pd_handle);
	struct ctl_srq *srq;
	int rc;

	if (!x || !cq || !pd || req->reserved)
		return EINVAL;
	rc = srq_new_on_cq(c, call, pd, cq, req->user_handle, req->max_wr, req->max_sge, &srq);
	if (rc)
		return rc;
	srq->xrcd = x;
	x->users++;
	rc = engine_srq_set_xrc(srq);
	if (rc) {
		srq_free(c, srq);
		return rc;
	}
	resp->handle = srq->handle;
	resp->srqn = srq->srqn;
	ulog_object("client#%u srqn 0x%x is an XRC SRQ of xrcd %u", c->id, srq->srqn,
		    x->dom->xrcdn);
	return 0;
}

int op_create_xrc_qp(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_xrc_qp_req *req = call->req;
	struct uroce_create_qp_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct ctl_xrcd *x = objtab_get(&c->xrcds, req->xrcd_handle);
	struct ctl_qp *qp;
	int rc;

	if (!x || req->reserved)
		return EINVAL;
	if (d->counts.qp >= DEV_MAX_QP || quota_check(c, QUOTA_QP))
		return ENOMEM;
	rc = qp_obj_new(c, -1, 0, &qp);
	if (rc)
		return rc;
	qp->user_handle = req->user_handle;
	qp->type = IBV_QPT_XRC_RECV;
	qp->xrcd = x;
	rc = engine_qp_create(qp);
	if (rc) {
		qp_obj_drop(c, qp);
		return rc;
	}
	x->users++;
	d->counts.qp++;
	resp->handle = qp->handle;
	resp->qpn = qp->qpn;
	ulog_object("client#%u created XRC_RECV qpn 0x%x in xrcd %u", c->id, qp->qpn,
		    x->dom->xrcdn);
	return 0;
}
