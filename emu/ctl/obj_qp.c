/*
 * obj_qp.c - queue pairs: CREATE_QP / MODIFY_QP / QUERY_QP / DESTROY_QP
 * (include/uroce/abi.h). The state machine and attribute checks are in
 * qp_state.c; the QP's state and transport attributes live in the engine
 * (emu/xport/xport.h), which applies each modify; this file owns QPN
 * allocation and the few attributes only ibv_query_qp needs.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/mem_window.h"
#include "emu/nic/doorbell.h"
#include "emu/nic/engine_glue.h"
#include "emu/mcast/mcast.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/quota.h"
#include "emu/ctl/qp_state.h"
#include "emu/xport/xport.h"
#include "emu/eth/eth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const char *qp_type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_UD ? "UD" :
	       t == IBV_QPT_RAW_PACKET ? "RAW_PACKET" : t == IBV_QPT_XRC_SEND ? "XRC_SEND" :
	       t == IBV_QPT_XRC_RECV ? "XRC_RECV" : "?";
}

int qp_obj_new(struct ctl_client *c, int fd, uint64_t ring_size, struct ctl_qp **out)
{
	struct ctl_qp *qp = calloc(1, sizeof(*qp));
	int rc;

	if (!qp)
		return ENOMEM;
	if (fd >= 0) {
		qp->ring_size = ring_size;
		qp->ring = map_client_ring(fd, ring_size, &rc);
		if (!qp->ring)
			goto fail;
	}
	rc = objtab_add_numbered(&c->qps, &c->dev->qpns, qp, &qp->qpn, &qp->handle);
	if (rc)
		goto fail;
	qp->owner = c;
	*out = qp;
	return 0;
fail:
	if (qp->ring)
		munmap(qp->ring, qp->ring_size);
	free(qp);
	return rc;
}

void qp_obj_drop(struct ctl_client *c, struct ctl_qp *qp)
{
	objtab_del(&c->qps, qp->handle);
	id_alloc_put(&c->dev->qpns, qp->qpn);
	if (qp->ring)
		munmap(qp->ring, qp->ring_size);
	free(qp);
}

int op_create_qp(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_qp_req *req = call->req;
	struct uroce_create_qp_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct ctl_pd *pd;
	struct ctl_cq *scq, *rcq;
	struct ctl_srq *srq = NULL;
	struct ibv_qp_cap cap = req->cap;
	struct uroce_qp_ring_layout lay;
	struct ctl_qp *qp;
	int rc;

	if (req->qp_type != IBV_QPT_RC && req->qp_type != IBV_QPT_UC && req->qp_type != IBV_QPT_UD &&
	    req->qp_type != IBV_QPT_RAW_PACKET && req->qp_type != IBV_QPT_XRC_SEND)
		return EOPNOTSUPP;
	/* an XRC send QP has no receive side (abi_xrc.h) */
	if (req->qp_type == IBV_QPT_XRC_SEND &&
	    (req->srq_handle || cap.max_recv_wr))
		return EINVAL;
	/* a raw packet QP receives into its own RQ only */
	if (req->qp_type == IBV_QPT_RAW_PACKET && req->srq_handle)
		return EINVAL;
	if (req->sq_sig_all > 1)
		return EINVAL;
	/* a TSO header rides in every SQ slot: raw packet QPs only, and the
	 * slot must stay within the largest WQE (mlx5_calc_send_wqe) */
	if (req->max_tso_header && (req->qp_type != IBV_QPT_RAW_PACKET ||
				    uroce_sq_stride_tso(cap.max_send_sge ? cap.max_send_sge : 1, cap.max_inline_data,
							req->max_tso_header) > UROCE_SQ_DESC_MAX))
		return EINVAL;
	pd = objtab_get(&c->pds, req->pd_handle);
	scq = objtab_get(&c->cqs, req->send_cq_handle);
	rcq = objtab_get(&c->cqs, req->recv_cq_handle);
	if (!pd || !scq || !rcq)
		return EINVAL;
	if (req->srq_handle) {
		srq = objtab_get(&c->srqs, req->srq_handle);
		/* no RQ of its own: the ring holds none */
		if (!srq || cap.max_recv_wr || cap.max_recv_sge)
			return EINVAL;
	}
	if (cap.max_send_wr > DEV_MAX_QP_WR || cap.max_recv_wr > DEV_MAX_QP_WR ||
	    cap.max_send_sge > DEV_MAX_SGE || cap.max_recv_sge > DEV_MAX_SGE ||
	    cap.max_inline_data > DEV_MAX_INLINE)
		return EINVAL;
	if (d->counts.qp >= DEV_MAX_QP || quota_check(c, QUOTA_QP))
		return ENOMEM;
	uroce_qp_caps_round(&cap);
	if (srq)
		cap.max_recv_sge = 0;
	if (call->nfds > 0)
		uroce_qp_ring_layout_tso(&cap, req->max_tso_header, &lay);
	rc = qp_obj_new(c, call->nfds > 0 ? call->fds[0] : -1, call->nfds > 0 ? lay.size : 0, &qp);
	if (rc)
		return rc;
	qp->user_handle = req->user_handle;
	qp->type = req->qp_type;
	qp->sq_sig_all = req->sq_sig_all;
	qp->pd = pd;
	qp->send_cq = scq;
	qp->recv_cq = rcq;
	qp->srq = srq;
	qp->cap = cap;
	qp->max_tso_header = req->max_tso_header;
	rc = qp->type == IBV_QPT_RAW_PACKET ? raw_qp_create(qp) : engine_qp_create(qp);
	if (rc) {
		qp_obj_drop(c, qp);
		return rc;
	}
	pd->users++;
	scq->users++;
	rcq->users++;
	if (srq)
		srq->users++;
	d->counts.qp++;
	resp->handle = qp->handle;
	resp->qpn = qp->qpn;
	resp->cap = cap;
	ulog_object("client#%u created %s qpn 0x%x (sq %u x %u sge, rq %u x %u sge, inline %u, srqn 0x%x)",
		    c->id, qp_type_name(qp->type), qp->qpn, cap.max_send_wr, cap.max_send_sge,
		    cap.max_recv_wr, cap.max_recv_sge, cap.max_inline_data, srq ? srq->srqn : 0);
	return 0;
}

void qp_free(struct ctl_client *c, struct ctl_qp *qp)
{
	struct uroce_dev *d = c->dev;

	if (qp->raw)
		raw_qp_destroy(qp);
	else
		engine_qp_destroy(qp);
	/* its type 2 windows are bound to it: they become free */
	mw_qp_gone(c, qp->qpn);
	mcast_qp_gone(d->mcast, qp->qpn);
	id_alloc_put(&d->qpns, qp->qpn);
	objtab_del(&c->qps, qp->handle);
	if (qp->pd)
		qp->pd->users--;
	if (qp->xrcd)
		qp->xrcd->users--;
	/* an RSS QP and an XRC_RECV QP have no CQs */
	if (qp->send_cq) {
		qp->send_cq->users--;
		qp->recv_cq->users--;
	}
	if (qp->srq)
		qp->srq->users--;
	if (qp->ring)
		munmap(qp->ring, qp->ring_size);
	d->counts.qp--;
	free(qp);
}

/* Keep the attributes in MASK that only ibv_query_qp needs (values already
 * checked); RESET forgets them (IBTA 10.3.1: back to the created state). */
static void qp_apply_query_attrs(struct ctl_qp *qp, const struct ibv_qp_attr *a, uint32_t mask,
				 enum ibv_qp_state next)
{
	if (next == IBV_QPS_RESET) {
		memset(&qp->ah_attr, 0, sizeof(qp->ah_attr));
		qp->pkey_index = 0;
		qp->port_num = 0;
		qp->path_mig_state = 0;
		return;
	}
	if (mask & IBV_QP_PKEY_INDEX)
		qp->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		qp->port_num = a->port_num;
	if (mask & IBV_QP_AV) {
		qp->ah_attr = a->ah_attr;
		if (!qp->ah_attr.port_num)
			qp->ah_attr.port_num = 1;
	}
	if (mask & IBV_QP_PATH_MIG_STATE)
		qp->path_mig_state = a->path_mig_state;
}

int op_modify_qp(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_modify_qp_req *req = call->req;
	struct uroce_modify_qp_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct ctl_qp *qp = objtab_get(&c->qps, req->handle);
	struct qp_limits lim = {
		.active_mtu = d->active_mtu,
		.gid_tbl_len = d->gid_tbl_len,
		.max_qp_rd_atom = d->attr.max_qp_rd_atom,
		.max_qp_init_rd_atom = d->attr.max_qp_init_rd_atom,
	};
	struct xport_qp_attr attr;
	enum ibv_qp_state cur, next;
	int rc;

	if (!qp)
		return EINVAL;
	rc = raw_qp_op_check(qp, UROCE_OP_MODIFY_QP);
	if (rc)
		return rc;
	/* the engine may have moved the QP to ERR on its own */
	cur = qp->raw ? raw_qp_state(qp) : xport_qp_state(qp->xqp);
	rc = qp_modify_check(qp->type, cur, &req->attr, req->attr_mask, &lim, &next);
	if (rc) {
		ulog(ULOG_DEBUG, "client#%u qpn 0x%x modify %s mask 0x%x refused: %s", c->id, qp->qpn,
		     qp_state_name(cur), req->attr_mask, strerror(rc));
		return rc;
	}
	if (qp->raw) {
		raw_qp_modify(qp, next);
	} else {
		xport_qp_attr_from_ibv(&req->attr, &attr);
		attr.qp_state = next;
		rc = xport_qp_modify(qp->xqp, &attr, (int)(req->attr_mask | IBV_QP_STATE));
		if (rc)
			return rc;
		/* before RESET reads rq_pi: the promise's withdrawal comes first */
		doorbell_rq_promise_update(qp);
	}
	if (next == IBV_QPS_RESET && qp->ring) {
		/* RESET empties both queues: whatever was posted is discarded
		 * and every slot is free again (indices keep running). */
		struct uroce_qp_ring_hdr *h = qp->ring;

		qp->sq_next = __atomic_load_n(&h->sq_pi, __ATOMIC_ACQUIRE);
		qp->rq_next = __atomic_load_n(&h->rq_pi, __ATOMIC_ACQUIRE);
		__atomic_store_n(&h->sq_ci, qp->sq_next, __ATOMIC_RELEASE);
		__atomic_store_n(&h->rq_ci, qp->rq_next, __ATOMIC_RELEASE);
	}
	if (cur != next && qp->raw) {
		ulog_object("client#%u raw qpn 0x%x %s -> %s", c->id, qp->qpn, qp_state_name(cur),
			    qp_state_name(next));
	} else if (cur != next) {
		xport_qp_query(qp->xqp, &attr);
		ulog_object("client#%u qpn 0x%x %s -> %s (dest qpn 0x%x)", c->id, qp->qpn,
			    qp_state_name(cur), qp_state_name(next), attr.dest_qp_num);
	}
	qp_apply_query_attrs(qp, &req->attr, req->attr_mask, next);
	resp->qp_state = next;
	return 0;
}

int op_query_qp(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_query_qp_req *req = call->req;
	struct uroce_query_qp_resp *resp = call->resp;
	struct ctl_qp *qp = objtab_get(&c->qps, req->handle);
	struct xport_qp_attr x;
	struct ibv_qp_attr *a;

	if (!qp)
		return EINVAL;
	if (req->attr_mask & ~QP_ATTR_MASK_ALL || raw_qp_op_check(qp, UROCE_OP_QUERY_QP))
		return EINVAL;
	if (qp->raw) {
		/* no transport: the state, the caps and the port */
		resp->attr.qp_state = resp->attr.cur_qp_state = raw_qp_state(qp);
		resp->attr.cap = qp->cap;
		resp->attr.port_num = qp->port_num;
		resp->qp_type = qp->type;
		resp->sq_sig_all = qp->sq_sig_all;
		return 0;
	}
	xport_qp_query(qp->xqp, &x);
	a = &resp->attr;
	a->qp_state = a->cur_qp_state = x.qp_state;
	a->path_mtu = x.path_mtu;
	a->path_mig_state = qp->path_mig_state;
	a->qkey = x.qkey;
	a->rq_psn = x.rq_psn;
	a->sq_psn = x.sq_psn;
	a->dest_qp_num = x.dest_qp_num;
	a->qp_access_flags = x.qp_access_flags;
	a->cap = qp->cap;
	a->ah_attr = qp->ah_attr;
	a->pkey_index = qp->pkey_index;
	a->en_sqd_async_notify = x.en_sqd_async_notify;
	a->sq_draining = 0;
	a->max_rd_atomic = x.max_rd_atomic;
	a->max_dest_rd_atomic = x.max_dest_rd_atomic;
	a->min_rnr_timer = x.min_rnr_timer;
	a->port_num = qp->port_num;
	a->timeout = x.timeout;
	a->retry_cnt = x.retry_cnt;
	a->rnr_retry = x.rnr_retry;
	resp->qp_type = qp->type;
	resp->sq_sig_all = qp->sq_sig_all;
	return 0;
}

int op_destroy_qp(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_destroy_qp_resp *resp = call->resp;
	struct ctl_qp *qp = objtab_get(&c->qps, req_handle(call));
	int rc;

	if (!qp)
		return EINVAL;
	rc = raw_qp_op_check(qp, UROCE_OP_DESTROY_QP);
	if (rc)
		return rc;
	/* the kernel's uverbs refuses it while the QP is attached to a group */
	if (mcast_qp_groups(c->dev->mcast, qp->qpn))
		return EBUSY;
	/* opened by OPEN_QP somewhere (obj_share.c), or an opened handle */
	if (qp->imported)
		return EBUSY;
	resp->async_events_reported = qp->async_events;
	ulog_object("client#%u destroyed qpn 0x%x", c->id, qp->qpn);
	qp_free(c, qp);
	return 0;
}
