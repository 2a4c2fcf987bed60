/*
 * srq.c: shared receive queues (IBTA 10.2.9, 11.2.3): the SRQ object and
 * its entry points, and below the responder the one place a message takes
 * its receive WQE (the QP's RQ or its SRQ), with the SRQ limit event.
 * Nothing here calls back into req.c, resp.c or comp.c.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/xport/xport_int.h"

struct xport_srq *xport_srq_create(struct xport_dev *dev, uint32_t depth,
				   void *user)
{
	struct xport_srq *srq;

	if (!dev || !depth || depth > 65536) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	srq->ring = calloc(depth, sizeof(*srq->ring));
	if (!srq->ring) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	srq->dev = dev;
	srq->user = user;
	srq->depth = depth;
	return srq;
}

/* An XRC SRQ going away: off the device's list, and off every XRC_RECV
 * QP that took its last message's WQE from it (the WQE being filled is
 * dropped with the SRQ; the message's next packet meets no SRQ). */
static void xrc_srq_unlink(struct xport_srq *srq)
{
	struct xport_dev *dev = srq->dev;
	struct xport_srq **pp;

	for (pp = &dev->xrc_srqs; *pp; pp = &(*pp)->xrc_next) {
		if (*pp == srq) {
			*pp = srq->xrc_next;
			break;
		}
	}
	for (unsigned int i = 0; i < XPORT_QP_HASH; i++) {
		for (struct xport_qp *qp = dev->hash[i]; qp; qp = qp->hash_next) {
			if (qp->srq != srq)
				continue;
			qp->srq = NULL;
			qp->resp.have_rwqe = false;
			qp->resp.in_msg = RESP_MSG_NONE;
		}
	}
}

void xport_srq_destroy(struct xport_srq *srq)
{
	if (!srq)
		return;
	if (srq->xrc)
		xrc_srq_unlink(srq);
	xport_tm_free(srq);
	free(srq->ring);
	free(srq);
}

void *xport_srq_user(const struct xport_srq *srq)
{
	return srq->user;
}

int xport_srq_post(struct xport_srq *srq, const struct xport_recv_wqe *wqe)
{
	if (!srq || !wqe || wqe->num_sge > XPORT_MAX_SGE)
		return EINVAL;
	if (srq->head - srq->tail >= srq->depth)
		return ENOMEM;
	srq->ring[srq->head++ % srq->depth] = *wqe;
	return 0;
}

uint32_t xport_srq_count(const struct xport_srq *srq)
{
	return srq->head - srq->tail;
}

int xport_srq_arm(struct xport_srq *srq, uint32_t limit)
{
	if (!srq || limit > srq->depth)
		return EINVAL;
	srq->limit = limit;
	return 0;
}

uint32_t xport_srq_limit(const struct xport_srq *srq)
{
	return srq->limit;
}

int xport_srq_set_xrc(struct xport_srq *srq, uint32_t srqn, uint32_t xrcd, uint32_t pd)
{
	if (!srq || srq->xrc || srq->qps || srqn > ROCE_QPN_MASK)
		return EINVAL;
	if (xport_xrc_srq_lookup(srq->dev, srqn))
		return EEXIST;
	srq->xrc = true;
	srq->srqn = srqn;
	srq->xrcd = xrcd;
	srq->pd = pd;
	srq->xrc_next = srq->dev->xrc_srqs;
	srq->dev->xrc_srqs = srq;
	return 0;
}

struct xport_srq *xport_xrc_srq_lookup(struct xport_dev *dev, uint32_t srqn)
{
	for (struct xport_srq *s = dev->xrc_srqs; s; s = s->xrc_next)
		if (s->srqn == srqn)
			return s;
	return NULL;
}

/* The XRCETH names the message's SRQ, whose WQEs receive, whose PD checks
 * memory and whose CQ completes; a message keeps the SRQ of its first
 * packet. */
bool xport_xrc_choose(struct xport_qp *qp, const struct roce_pkt *pkt)
{
	uint32_t srqn = pkt->h.xrc_srqn;
	struct xport_srq *srq = xport_xrc_srq_lookup(qp->dev, srqn);

	if (!srq || srq->xrcd != qp->xrcd ||
	    (qp->resp.in_msg != RESP_MSG_NONE && srq != qp->srq)) {
		xport_log(qp, XPORT_LOG_ERR, "PSN 0x%06x %s: XRC SRQ 0x%06x %s", pkt->h.psn,
			  pkt->op->name, srqn,
			  !srq ? "does not exist" : srq->xrcd != qp->xrcd ?
			  "is of another XRC domain" : "is not the message's");
		return false;
	}
	qp->srq = srq;
	qp->pd = srq->pd;
	return true;
}

int xport_qp_set_xrcd(struct xport_qp *qp, uint32_t xrcd)
{
	if (!qp || qp->xrc != XPORT_XRC_RECV || qp->state != IBV_QPS_RESET)
		return EINVAL;
	qp->xrcd = xrcd;
	return 0;
}

struct xport_srq *xport_qp_srq(const struct xport_qp *qp)
{
	return qp->srq;
}

int xport_qp_set_srq(struct xport_qp *qp, struct xport_srq *srq)
{
	int err;

	if (!qp || !srq || qp->srq || qp->dev != srq->dev || srq->xrc || qp->xrc ||
	    qp->state != IBV_QPS_RESET || qp->rq.head)
		return EINVAL;
	qp->srq = srq;
	err = xport_tm_qp_attach(qp);
	if (err) {
		qp->srq = NULL;
		return err;
	}
	srq->qps++;
	return 0;
}

bool xport_rq_take(struct xport_qp *qp, struct xport_recv_wqe *out)
{
	struct xport_srq *srq = qp->srq;
	bool empty = srq ? srq->tail == srq->head : qp->rq.tail == qp->rq.head;

	if (empty && qp->dev->ops.rq_refill)
		qp->dev->ops.rq_refill(qp->dev->ctx, qp);
	if (!srq) {
		if (qp->rq.tail == qp->rq.head)
			return false;
		*out = qp->rq.ring[qp->rq.tail++ % qp->rq.depth].wr;
		return true;
	}
	if (srq->tail == srq->head)
		return false;
	*out = srq->ring[srq->tail++ % srq->depth];
	/* IBTA 11.6.3.3 / ibv_modify_srq(3): one event, then disarmed */
	if (srq->limit && srq->head - srq->tail < srq->limit) {
		srq->limit = 0;
		if (srq->dev->ops.srq_event)
			srq->dev->ops.srq_event(srq->dev->ctx, srq,
						IBV_EVENT_SRQ_LIMIT_REACHED);
	}
	return true;
}

void xport_srq_give_back(struct xport_qp *qp)
{
	struct xport_srq *srq = qp->srq;

	if (!srq || !qp->resp.have_rwqe)
		return;
	qp->resp.have_rwqe = false;
	/* a matched tag goes back on its list, not into the ring */
	if (xport_tm_give_back(qp))
		return;
	if (srq->head - srq->tail >= srq->depth)
		return;
	srq->ring[--srq->tail % srq->depth] = qp->resp.rwqe;
}

void xport_srq_last_wqe(struct xport_qp *qp)
{
	if (qp->srq && qp->dev->ops.qp_event)
		qp->dev->ops.qp_event(qp->dev->ctx, qp,
				      IBV_EVENT_QP_LAST_WQE_REACHED);
}
