/*
 * qp.c: the engine's device object and QPN table, and the QP entry points:
 * create/modify/query/destroy (applying the attributes the daemon's state
 * machine validated) and posting into the send and receive queues. Each
 * entry point marks work and ends with one xport_run.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/xport/xport_int.h"
#include "uroce/abi.h"

struct xport_dev *xport_dev_new(const struct xport_ops *ops, void *ctx,
				const union ibv_gid *local_gid,
				uint16_t udp_port, uint32_t port_mtu)
{
	struct xport_dev *dev;

	if (!ops || !ops->now_ns || !ops->mem || !ops->xmit || !ops->complete ||
	    !ops->timer_arm || !local_gid || port_mtu < 256 || port_mtu > 4096 ||
	    (port_mtu & (port_mtu - 1))) {
		errno = EINVAL;
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->ops = *ops;
	dev->ctx = ctx;
	dev->gid = *local_gid;
	dev->udp_port = udp_port;
	dev->port_mtu = port_mtu;
	return dev;
}

void xport_dev_free(struct xport_dev *dev)
{
	free(dev);
}

const struct xport_dev_stats *xport_dev_stats(const struct xport_dev *dev)
{
	return &dev->stats;
}

static struct xport_qp **hash_slot(struct xport_dev *dev, uint32_t qpn)
{
	return &dev->hash[qpn % XPORT_QP_HASH];
}

/* The QP with number QPN on DEV, or NULL. Used by xport_input. */
struct xport_qp *xport_qp_lookup(struct xport_dev *dev, uint32_t qpn)
{
	struct xport_qp *qp;

	for (qp = *hash_slot(dev, qpn); qp; qp = qp->hash_next)
		if (qp->qpn == qpn)
			return qp;
	return NULL;
}

/* Back to the RESET state: nothing outstanding, all sequence state zero. */
static void qp_reset(struct xport_qp *qp)
{
	xport_ack_send_held(qp); /* while the path and PSNs are still those it answers */
	xport_srq_give_back(qp);
	qp->sq.head = qp->sq.req = qp->sq.comp = 0;
	qp->rq.head = qp->rq.tail = 0;
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	xport_resp_clear(qp);
	free(qp->resp.tm);
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->sqd_notify = false;
	qp->comm_est = false;
	qp->work = 0;
	qp->state = IBV_QPS_RESET;
	xport_timer_update(qp);
	xport_req_account(qp, false); /* a modify to RESET runs nothing after */
}

struct xport_qp *xport_qp_create(struct xport_dev *dev, enum ibv_qp_type type,
				 uint32_t qpn, uint32_t pd, uint32_t sq_depth,
				 uint32_t rq_depth, bool sq_sig_all, void *user)
{
	struct xport_qp *qp;
	enum xport_xrc xrc = type == IBV_QPT_XRC_SEND ? XPORT_XRC_SEND :
			     type == IBV_QPT_XRC_RECV ? XPORT_XRC_RECV : XPORT_XRC_NONE;

	if (xrc != XPORT_XRC_NONE)
		type = IBV_QPT_RC;
	if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* A queue of depth 0 (a receive-only or send-only QP) gets one
	 * slot; the provider refuses posts beyond the capacity it asked for. */
	if (!sq_depth)
		sq_depth = 1;
	if (!rq_depth)
		rq_depth = 1;
	if (!dev || qpn > ROCE_QPN_MASK || sq_depth > 65536 || rq_depth > 65536) {
		errno = EINVAL;
		return NULL;
	}
	if (xport_qp_lookup(dev, qpn)) {
		errno = EEXIST;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->sq.ring = calloc(sq_depth, sizeof(*qp->sq.ring));
	qp->rq.ring = calloc(rq_depth, sizeof(*qp->rq.ring));
	if (!qp->sq.ring || !qp->rq.ring) {
		free(qp->sq.ring);
		free(qp->rq.ring);
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	qp->dev = dev;
	qp->user = user;
	qp->type = type;
	qp->xrc = xrc;
	qp->qpn = qpn;
	qp->pd = pd;
	qp->sq_sig_all = sq_sig_all;
	qp->sq.depth = sq_depth;
	qp->rq.depth = rq_depth;
	/* rxe's default until modify_qp sets IBV_QP_PATH_MTU; UD: port MTU. */
	qp->mtu = type == IBV_QPT_UD ? dev->port_mtu : 256;
	qp->sport = roce_qpn_udp_sport(qpn);
	qp->state = IBV_QPS_RESET;
	qp->hash_next = *hash_slot(dev, qpn);
	*hash_slot(dev, qpn) = qp;
	return qp;
}

void xport_qp_destroy(struct xport_qp *qp)
{
	struct xport_qp **pp;

	if (!qp)
		return;
	if (qp->timer_armed)
		qp->dev->ops.timer_arm(qp->dev->ctx, qp, 0);
	xport_req_account(qp, true);
	xport_resp_clear(qp);
	xport_srq_give_back(qp);
	if (qp->srq && qp->xrc != XPORT_XRC_RECV)
		qp->srq->qps--;
	for (pp = hash_slot(qp->dev, qp->qpn); *pp; pp = &(*pp)->hash_next) {
		if (*pp == qp) {
			*pp = qp->hash_next;
			break;
		}
	}
	free(qp->sq.ring);
	free(qp->rq.ring);
	free(qp->resp.tm);
	free(qp);
}

int xport_qp_attr_check(const struct xport_qp_attr *a, int mask)
{
	if (!a)
		return EINVAL;
	if (((mask & IBV_QP_PATH_MTU) && !xport_mtu_bytes(a->path_mtu)) ||
	    ((mask & IBV_QP_TIMEOUT) && a->timeout > 31) ||
	    ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7) ||
	    ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7) ||
	    ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31) ||
	    ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > ROCE_QPN_MASK) ||
	    ((mask & IBV_QP_RQ_PSN) && a->rq_psn > ROCE_PSN_MASK) ||
	    ((mask & IBV_QP_SQ_PSN) && a->sq_psn > ROCE_PSN_MASK))
		return EINVAL;
	return 0;
}

void xport_qp_attr_from_ibv(const struct ibv_qp_attr *in,
			    struct xport_qp_attr *out)
{
	memset(out, 0, sizeof(*out));
	out->qp_state = in->qp_state;
	out->path_mtu = in->path_mtu;
	out->qkey = in->qkey;
	out->rq_psn = in->rq_psn & ROCE_PSN_MASK;
	out->sq_psn = in->sq_psn & ROCE_PSN_MASK;
	out->dest_qp_num = in->dest_qp_num;
	out->qp_access_flags = in->qp_access_flags;
	out->max_rd_atomic = in->max_rd_atomic;
	out->max_dest_rd_atomic = in->max_dest_rd_atomic;
	out->min_rnr_timer = in->min_rnr_timer;
	out->timeout = in->timeout;
	out->retry_cnt = in->retry_cnt;
	out->rnr_retry = in->rnr_retry;
	out->dgid = in->ah_attr.grh.dgid;
	out->flow_label = in->ah_attr.grh.flow_label;
	out->en_sqd_async_notify = in->en_sqd_async_notify;
}

/* The state part of a modify: side effects of entering NEXT. */
static void qp_enter(struct xport_qp *qp, enum ibv_qp_state next)
{
	enum ibv_qp_state old = qp->state;

	if (next != IBV_QPS_SQD)
		qp->sqd_notify = false;
	switch (next) {
	case IBV_QPS_RESET:
		qp_reset(qp);
		break;
	case IBV_QPS_ERR:
		qp->state = IBV_QPS_ERR;
		if (old != IBV_QPS_ERR) {
			xport_flush(qp);
			xport_srq_last_wqe(qp);
		}
		xport_timer_update(qp);
		if (old != IBV_QPS_ERR && qp->dev->ops.qp_err)
			qp->dev->ops.qp_err(qp->dev->ctx, qp);
		break;
	case IBV_QPS_RTS:
		qp->state = IBV_QPS_RTS;
		if (old != IBV_QPS_RTS) {
			qp->comp.retry_left = qp->attr.retry_cnt;
			qp->comp.rnr_left = qp->attr.rnr_retry;
		}
		xport_mark(qp, XPORT_WORK_REQ);
		break;
	case IBV_QPS_SQD:
		/* xport_run's completer check raises SQ_DRAINED when due */
		qp->state = IBV_QPS_SQD;
		if (old == IBV_QPS_RTS && qp->attr.en_sqd_async_notify)
			qp->sqd_notify = true;
		break;
	default:
		qp->state = next;
		break;
	}
}

int xport_qp_modify(struct xport_qp *qp, const struct xport_qp_attr *attr,
		    int mask)
{
	struct xport_qp_attr *q;

	if (!qp || xport_qp_attr_check(attr, mask))
		return EINVAL;
	q = &qp->attr;
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		/* RESET returns the QP to its just-created state (IBTA
		 * 10.3.1): no attribute survives. */
		memset(q, 0, sizeof(*q));
		qp_enter(qp, IBV_QPS_RESET);
		return 0;
	}
	if (mask & IBV_QP_PATH_MTU) {
		q->path_mtu = attr->path_mtu;
		if (qp->type != IBV_QPT_UD)
			qp->mtu = xport_mtu_bytes(attr->path_mtu);
	}
	if (mask & IBV_QP_QKEY)
		q->qkey = attr->qkey;
	if (mask & IBV_QP_ACCESS_FLAGS)
		q->qp_access_flags = attr->qp_access_flags;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		q->timeout = attr->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		q->retry_cnt = qp->comp.retry_left = attr->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		q->rnr_retry = qp->comp.rnr_left = attr->rnr_retry;
	if (mask & IBV_QP_DEST_QPN)
		q->dest_qp_num = attr->dest_qp_num;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		q->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IBV_QP_AV) {
		q->dgid = attr->dgid;
		q->flow_label = attr->flow_label;
	}
	if ((mask & (IBV_QP_AV | IBV_QP_DEST_QPN)) && qp->type != IBV_QPT_UD)
		qp->sport = roce_get_udp_sport(q->flow_label, qp->qpn,
					       q->dest_qp_num);
	if (mask & IBV_QP_RQ_PSN)
		q->rq_psn = qp->resp.epsn = attr->rq_psn;
	if (mask & IBV_QP_SQ_PSN) {
		q->sq_psn = attr->sq_psn;
		/* Only while nothing is outstanding (RTR->RTS, SQD->RTS). */
		if (qp->sq.comp == qp->sq.req)
			qp->req.psn = qp->req.psn_max = qp->comp.psn =
				attr->sq_psn;
	}
	if (mask & IBV_QP_STATE)
		qp_enter(qp, attr->qp_state);
	xport_run(qp);
	return 0;
}

void xport_qp_query(const struct xport_qp *qp, struct xport_qp_attr *out)
{
	*out = qp->attr;
	out->qp_state = qp->state;
}

enum ibv_qp_state xport_qp_state(const struct xport_qp *qp)
{
	return qp->state;
}

uint32_t xport_qp_num(const struct xport_qp *qp)
{
	return qp->qpn;
}

uint32_t xport_qp_sq_psn(const struct xport_qp *qp)
{
	return qp->req.psn;
}

uint32_t xport_qp_rq_psn(const struct xport_qp *qp)
{
	return qp->resp.epsn;
}

void *xport_qp_user(const struct xport_qp *qp)
{
	return qp->user;
}

const struct xport_qp_stats *xport_qp_stats(const struct xport_qp *qp)
{
	return &qp->stats;
}

int xport_post_send(struct xport_qp *qp, const struct xport_send_wqe *wqe)
{
	struct xport_swqe *w;
	uint64_t len;
	int err;

	if (!qp || !wqe)
		return EINVAL;
	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ||
	    qp->state == IBV_QPS_RTR)
		return EINVAL;
	err = uroce_send_opcode_check(qp->type, wqe->opcode);
	if (err)
		return err;
	if (xport_wr_is_local(wqe->opcode)) {
		if ((wqe->send_flags & IBV_SEND_INLINE) || wqe->num_sge)
			return EINVAL;
		len = 0;
	} else if (xport_wr_is_flush_aw(wqe->opcode)) {
		/* no local buffer: ATOMIC_WRITE's 8 bytes ride in compare_add,
		 * FLUSH's length in compare_add and its FETH byte in swap
		 * (abi_ring.h); FLUSH: a placement type, level RANGE or MR */
		if ((wqe->send_flags & IBV_SEND_INLINE) || wqe->num_sge)
			return EINVAL;
		if ((int)wqe->opcode == XPORT_WR_FLUSH &&
		    (wqe->compare_add > UINT32_MAX || (wqe->swap & ~0x13ull) || !(wqe->swap & 3)))
			return EINVAL;
		len = 0;
	} else if (xport_wr_is_atomic(wqe->opcode)) {
		/* Inline is for SEND and WRITE only (ibv_post_send(3)); a
		 * local buffer other than one 8-byte SGE fails in SQ order
		 * with LOC_LEN_ERR (req.c), as a NIC fails such a WQE. */
		if ((wqe->send_flags & IBV_SEND_INLINE) || wqe->num_sge > XPORT_MAX_SGE)
			return EINVAL;
		len = 8;
	} else if (wqe->send_flags & IBV_SEND_INLINE) {
		if (wqe->inline_len > XPORT_MAX_INLINE ||
		    wqe->opcode == IBV_WR_RDMA_READ)
			return EINVAL;
		len = wqe->inline_len;
	} else {
		if (wqe->num_sge > XPORT_MAX_SGE)
			return EINVAL;
		len = xport_sgl_len(wqe->sg_list, wqe->num_sge);
	}
	if (len > 0x80000000ull)	/* max_msg_sz 2 GiB, like rxe */
		return EINVAL;
	if (qp->sq.head - qp->sq.comp >= qp->sq.depth)
		return ENOMEM;

	w = xport_sq_at(qp, qp->sq.head);
	memset(w, 0, sizeof(*w));
	w->wr = *wqe;
	if (qp->sq_sig_all)
		w->wr.send_flags |= IBV_SEND_SIGNALED;
	w->length = (uint32_t)len;
	w->state = SWQE_POSTED;
	w->tag = ++qp->dev->read_tag;
	qp->sq.head++;

	if (qp->state == IBV_QPS_ERR) {
		xport_flush(qp);
		return 0;
	}
	if (qp->state == IBV_QPS_SQE) {	/* IBTA 10.3.1: flushed until RTS */
		xport_flush_sq(qp);
		return 0;
	}
	xport_mark(qp, XPORT_WORK_REQ);
	if (!qp->post_held)
		xport_run(qp);
	return 0;
}

void xport_post_hold(struct xport_qp *qp, bool hold)
{
	qp->post_held = hold;
	if (!hold && qp->work)
		xport_run(qp);
}

int xport_post_recv(struct xport_qp *qp, const struct xport_recv_wqe *wqe)
{
	if (!qp || !wqe || wqe->num_sge > XPORT_MAX_SGE ||
	    qp->state == IBV_QPS_RESET || qp->srq)
		return EINVAL;
	if (qp->rq.head - qp->rq.tail >= qp->rq.depth)
		return ENOMEM;
	qp->rq.ring[qp->rq.head % qp->rq.depth].wr = *wqe;
	qp->rq.ring[qp->rq.head % qp->rq.depth].err_status = IBV_WC_SUCCESS;
	qp->rq.head++;
	if (qp->state == IBV_QPS_ERR)
		xport_flush(qp);
	return 0;
}

void xport_post_refused(struct xport_qp *qp, bool is_recv, uint32_t wr_index)
{
	/* In ERR nothing is executed, so nothing is refused: the WQE is
	 * flushed like a well-formed one (IBTA 10.3.1), without another
	 * QP_FATAL. */
	enum ibv_wc_status st = qp->state == IBV_QPS_ERR ? IBV_WC_WR_FLUSH_ERR :
							   IBV_WC_LOC_QP_OP_ERR;
	struct xport_cqe c = {
		.wr_index = wr_index,
		.qpn = qp->qpn,
		.status = st,
		.opcode = is_recv ? IBV_WC_RECV : IBV_WC_SEND,
		.is_recv = is_recv,
		.signaled = true,
	};
	bool queued = false;

	if (qp->state != IBV_QPS_RESET) {
		if (!is_recv && qp->sq.head - qp->sq.comp < qp->sq.depth) {
			struct xport_swqe *w = xport_sq_at(qp, qp->sq.head++);

			memset(w, 0, sizeof(*w));
			w->wr.wr_index = wr_index;
			w->wr.send_flags = IBV_SEND_SIGNALED;
			w->err_status = st;
			queued = true;
		} else if (is_recv && qp->rq.head - qp->rq.tail < qp->rq.depth) {
			struct xport_rwqe *r = &qp->rq.ring[qp->rq.head++ % qp->rq.depth];

			memset(r, 0, sizeof(*r));
			r->wr.wr_index = wr_index;
			r->err_status = st;
			queued = true;
		}
		if (qp->state == IBV_QPS_ERR) {
			xport_flush(qp);
		} else {
			xport_log(qp, XPORT_LOG_ERR, "%s WQE %u refused: QP to ERR",
				  is_recv ? "receive" : "send", wr_index);
			xport_qp_fatal(qp, IBV_EVENT_QP_FATAL);
		}
	}
	/* Only a full queue (or RESET) leaves it unqueued: it still
	 * completes after everything older. */
	if (!queued)
		xport_emit(qp, &c);
}
