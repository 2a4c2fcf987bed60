/*
 * obj_wq.c - CREATE_WQ, DESTROY_WQ and CREATE_RSS_QP (uroce/abi_flow.h;
 * ibv_create_wq(3), ibv_create_qp_ex(3) rx_hash_conf): the QP objects of a
 * receive WQ and of an RSS QP, numbered from the device's QPN space and
 * charged to the client's QP quota. What makes them raw (the WQ's flags and
 * strides, the RSS hash and its table) is emu/eth/rss.c's.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/quota.h"
#include "emu/eth/eth.h"
#include "emu/log.h"
#include "emu/nic/device.h"

#include <errno.h>
#include <stdlib.h>

/* A new raw QP object of C numbered from the QPN space: in C's QP table,
 * with PD and CQ (NULL for an RSS QP), the ring of FD (or none). */
static int wq_obj_new(struct ctl_client *c, uint64_t user_handle, struct ctl_pd *pd, struct ctl_cq *cq,
		      const struct ibv_qp_cap *cap, int fd, struct ctl_qp **out)
{
	struct uroce_dev *d = c->dev;
	struct uroce_qp_ring_layout lay;
	struct ctl_qp *qp;
	int rc;

	if (d->counts.qp >= DEV_MAX_QP || quota_check(c, QUOTA_QP))
		return ENOMEM;
	uroce_qp_ring_layout(cap, &lay);
	rc = qp_obj_new(c, fd, lay.size, &qp);
	if (rc)
		return rc;
	qp->cap = *cap;
	qp->user_handle = user_handle;
	qp->type = IBV_QPT_RAW_PACKET;
	qp->pd = pd;
	qp->send_cq = qp->recv_cq = cq;
	rc = raw_qp_create(qp);
	if (rc) {
		qp_obj_drop(c, qp);
		return rc;
	}
	pd->users++;
	if (cq)
		cq->users += 2; /* as send and receive CQ: qp_free drops both */
	d->counts.qp++;
	*out = qp;
	return 0;
}

int op_create_wq(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_wq_req *req = call->req;
	struct uroce_create_wq_resp *resp = call->resp;
	struct ctl_pd *pd = objtab_get(&c->pds, req->pd_handle);
	struct ctl_cq *cq = objtab_get(&c->cqs, req->cq_handle);
	struct ibv_qp_cap cap = { .max_send_wr = 1, .max_send_sge = 1, .max_recv_wr = req->max_wr,
				  .max_recv_sge = req->max_sge };
	struct ctl_qp *qp;
	int rc;

	if (!pd || !cq)
		return EINVAL;
	rc = raw_wq_check(c, req);
	if (rc)
		return rc;
	uroce_qp_caps_round(&cap);
	rc = wq_obj_new(c, req->user_handle, pd, cq, &cap, call->fds[0], &qp);
	if (rc)
		return rc;
	raw_wq_init(qp, req);
	resp->handle = qp->handle;
	resp->wq_num = qp->qpn;
	resp->max_wr = cap.max_recv_wr;
	resp->max_sge = cap.max_recv_sge;
	ulog_object("client#%u created WQ 0x%x (rq %u x %u sge, cqn 0x%x, flags 0x%x, strides 2^%u x 2^%u B)",
		    c->id, qp->qpn, cap.max_recv_wr, cap.max_recv_sge, cq->cqn, req->create_flags, req->log_num_strides,
		    req->log_stride_bytes);
	return 0;
}

int op_destroy_wq(struct ctl_client *c, struct ctl_call *call)
{
	struct ctl_qp *qp = raw_wq_get(c, req_handle(call));

	if (!qp)
		return EINVAL;
	if (raw_wq_in_table(qp))
		return EBUSY;
	qp_free(c, qp);
	return 0;
}

int op_create_rss_qp(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_rss_qp_req *req = call->req;
	struct uroce_create_qp_resp *resp = call->resp;
	struct ctl_pd *pd = objtab_get(&c->pds, req->pd_handle);
	struct ibv_qp_cap cap = { 0 };
	struct raw_rss *rss;
	struct ctl_qp *qp;
	int rc;

	if (!pd)
		return EINVAL;
	rc = raw_rss_prepare(c, req, &rss);
	if (rc)
		return rc;
	rc = wq_obj_new(c, req->user_handle, pd, NULL, &cap, -1, &qp);
	if (rc) {
		free(rss);
		return rc;
	}
	raw_rss_attach(qp, rss);
	resp->handle = qp->handle;
	resp->qpn = qp->qpn;
	return 0;
}
