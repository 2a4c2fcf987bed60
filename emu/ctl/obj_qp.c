/*
 * obj_qp.c - queue pairs: CREATE_QP / MODIFY_QP / QUERY_QP / DESTROY_QP
 * (include/uroce/abi.h). The state machine and attribute checks are in
 * qp_state.c; this file owns QPN allocation, the per-device QPN table the
 * data path demultiplexes on, and the stored attributes.
 */
#include "config.h"
#include "emu/ctl/client.h"
#include "emu/nic/datapath.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/ctl/objects.h"
#include "emu/ctl/quota.h"
#include "emu/ctl/qp_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const char *qp_type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_UD ? "UD" : "?";
}

int op_create_qp(struct client *c, struct ctl_call *call)
{
	const struct uroce_create_qp_req *req = call->req;
	struct uroce_create_qp_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct pd *pd;
	struct cq *scq, *rcq;
	struct ibv_qp_cap cap = req->cap;
	struct uroce_qp_ring_layout lay;
	struct qp *qp;
	int rc;

	if (req->qp_type != IBV_QPT_RC && req->qp_type != IBV_QPT_UC && req->qp_type != IBV_QPT_UD)
		return EOPNOTSUPP;
	if (req->sq_sig_all > 1 || req->reserved)
		return EINVAL;
	pd = objtab_get(&c->pds, req->pd_handle);
	scq = objtab_get(&c->cqs, req->send_cq_handle);
	rcq = objtab_get(&c->cqs, req->recv_cq_handle);
	if (!pd || !scq || !rcq)
		return EINVAL;
	if (req->srq_handle)
		return EOPNOTSUPP;
	if (cap.max_send_wr > DEV_MAX_QP_WR || cap.max_recv_wr > DEV_MAX_QP_WR ||
	    cap.max_send_sge > DEV_MAX_SGE || cap.max_recv_sge > DEV_MAX_SGE ||
	    cap.max_inline_data > DEV_MAX_INLINE)
		return EINVAL;
	if (d->counts.qp >= DEV_MAX_QP || quota_check(c, QUOTA_QP))
		return ENOMEM;
	uroce_qp_caps_round(&cap);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return ENOMEM;
	if (call->nfds > 0) {
		uroce_qp_ring_layout(&cap, &lay);
		qp->ring_size = lay.size;
		qp->ring = map_client_ring(call->fds[0], lay.size, &rc);
		if (!qp->ring)
			goto fail;
	}
	rc = id_alloc_get(&d->qpns, &qp->qpn);
	if (rc)
		goto fail_unmap;
	rc = objtab_add(&c->qps, qp, &qp->handle);
	if (rc) {
		id_alloc_put(&d->qpns, qp->qpn);
		goto fail_unmap;
	}
	qp->user_handle = req->user_handle;
	qp->type = req->qp_type;
	qp->sq_sig_all = req->sq_sig_all;
	qp->pd = pd;
	qp->send_cq = scq;
	qp->recv_cq = rcq;
	qp->cap = cap;
	qp->attr.qp_state = IBV_QPS_RESET;
	qp->owner = c;
	rc = datapath_qp_create(qp);
	if (rc) {
		objtab_del(&c->qps, qp->handle);
		id_alloc_put(&d->qpns, qp->qpn);
		goto fail_unmap;
	}
	d->qp_by_qpn[qp->qpn - DEV_QPN_FIRST] = qp;
	pd->users++;
	scq->users++;
	rcq->users++;
	d->counts.qp++;
	resp->handle = qp->handle;
	resp->qpn = qp->qpn;
	resp->cap = cap;
	ulog(ULOG_INFO, "client#%u created %s qpn 0x%x (sq %u x %u sge, rq %u x %u sge, inline %u)",
	     c->id, qp_type_name(qp->type), qp->qpn, cap.max_send_wr, cap.max_send_sge,
	     cap.max_recv_wr, cap.max_recv_sge, cap.max_inline_data);
	return 0;
fail_unmap:
	if (qp->ring)
		munmap(qp->ring, qp->ring_size);
fail:
	free(qp);
	return rc;
}

void qp_free(struct client *c, struct qp *qp)
{
	struct uroce_dev *d = c->dev;

	datapath_qp_destroy(qp);
	d->qp_by_qpn[qp->qpn - DEV_QPN_FIRST] = NULL;
	id_alloc_put(&d->qpns, qp->qpn);
	objtab_del(&c->qps, qp->handle);
	qp->pd->users--;
	qp->send_cq->users--;
	qp->recv_cq->users--;
	if (qp->ring)
		munmap(qp->ring, qp->ring_size);
	d->counts.qp--;
	free(qp);
}

/* Copy the attributes named in MASK into the QP (values already checked). */
static void qp_apply(struct qp *qp, const struct ibv_qp_attr *a, uint32_t mask, enum ibv_qp_state next)
{
	struct ibv_qp_attr *q = &qp->attr;

	if (next == IBV_QPS_RESET) {
		/* RESET returns the QP to its just-created state (IBTA §10.3.1). */
		memset(q, 0, sizeof(*q));
		q->qp_state = IBV_QPS_RESET;
		return;
	}
	if (mask & IBV_QP_PKEY_INDEX)
		q->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		q->port_num = a->port_num;
	if (mask & IBV_QP_QKEY)
		q->qkey = a->qkey;
	if (mask & IBV_QP_ACCESS_FLAGS)
		q->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_AV) {
		q->ah_attr = a->ah_attr;
		if (!q->ah_attr.port_num)
			q->ah_attr.port_num = 1;
	}
	if (mask & IBV_QP_PATH_MTU)
		q->path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		q->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		q->rq_psn = a->rq_psn & 0xFFFFFF;
	if (mask & IBV_QP_SQ_PSN)
		q->sq_psn = a->sq_psn & 0xFFFFFF;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		q->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		q->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		q->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_PATH_MIG_STATE)
		q->path_mig_state = a->path_mig_state;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		q->en_sqd_async_notify = a->en_sqd_async_notify;
	q->qp_state = next;
}

int op_modify_qp(struct client *c, struct ctl_call *call)
{
	const struct uroce_modify_qp_req *req = call->req;
	struct uroce_modify_qp_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct qp *qp = objtab_get(&c->qps, req->handle);
	struct qp_limits lim = {
		.active_mtu = d->active_mtu,
		.gid_tbl_len = d->gid_tbl_len,
		.max_qp_rd_atom = d->attr.max_qp_rd_atom,
		.max_qp_init_rd_atom = d->attr.max_qp_init_rd_atom,
	};
	enum ibv_qp_state cur, next;
	int rc;

	if (!qp)
		return EINVAL;
	/* the engine may have moved the QP to ERR on its own */
	cur = qp->attr.qp_state = datapath_qp_state(qp);
	rc = qp_modify_check(qp->type, cur, &req->attr, req->attr_mask, &lim, &next);
	if (rc) {
		ulog(ULOG_DEBUG, "client#%u qpn 0x%x modify %s mask 0x%x refused: %s", c->id, qp->qpn,
		     qp_state_name(cur), req->attr_mask, strerror(rc));
		return rc;
	}
	rc = datapath_qp_modify(qp, &req->attr, req->attr_mask, next);
	if (rc)
		return rc;
	qp_apply(qp, &req->attr, req->attr_mask, next);
	if (next == IBV_QPS_RESET && qp->ring) {
		/* RESET empties both queues: whatever was posted is discarded
		 * and every slot is free again (indices keep running). */
		struct uroce_qp_ring_hdr *h = qp->ring;

		qp->sq_next = __atomic_load_n(&h->sq_pi, __ATOMIC_ACQUIRE);
		qp->rq_next = __atomic_load_n(&h->rq_pi, __ATOMIC_ACQUIRE);
		__atomic_store_n(&h->sq_ci, qp->sq_next, __ATOMIC_RELEASE);
		__atomic_store_n(&h->rq_ci, qp->rq_next, __ATOMIC_RELEASE);
	}
	if (cur != next)
		ulog(ULOG_INFO, "client#%u qpn 0x%x %s -> %s (dest qpn 0x%x)", c->id, qp->qpn,
		     qp_state_name(cur), qp_state_name(next), qp->attr.dest_qp_num);
	/* The SQ is always empty here, so SQD is reached at once (IBTA §10.3.1:
	 * the SQ drained event follows when asked for). */
	if (cur == IBV_QPS_RTS && next == IBV_QPS_SQD && qp->attr.en_sqd_async_notify) {
		if (!client_async_event(c, qp->user_handle, IBV_EVENT_SQ_DRAINED))
			qp->async_events++;
	}
	resp->qp_state = next;
	return 0;
}

int op_query_qp(struct client *c, struct ctl_call *call)
{
	const struct uroce_query_qp_req *req = call->req;
	struct uroce_query_qp_resp *resp = call->resp;
	struct qp *qp = objtab_get(&c->qps, req->handle);

	if (!qp)
		return EINVAL;
	if (req->attr_mask & ~QP_ATTR_MASK_ALL)
		return EINVAL;
	qp->attr.qp_state = datapath_qp_state(qp);
	resp->attr = qp->attr;
	resp->attr.cur_qp_state = qp->attr.qp_state;
	resp->attr.cap = qp->cap;
	resp->attr.sq_draining = 0;
	resp->qp_type = qp->type;
	resp->sq_sig_all = qp->sq_sig_all;
	return 0;
}

int op_destroy_qp(struct client *c, struct ctl_call *call)
{
	struct uroce_destroy_qp_resp *resp = call->resp;
	struct qp *qp = objtab_get(&c->qps, req_handle(call));

	if (!qp)
		return EINVAL;
	resp->async_events_reported = qp->async_events;
	ulog(ULOG_INFO, "client#%u destroyed qpn 0x%x", c->id, qp->qpn);
	qp_free(c, qp);
	return 0;
}
