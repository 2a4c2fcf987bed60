/*
 * run.c: the engine's run function and its timer entry point. Entry points
 * (post, packet input, timer expiry, modify) only mark work on the QP
 * (XPORT_WORK_*); xport_run does it once at their end, as rxe's tasks do
 * without threads: the responder's READ responses and queued requests,
 * then the requester, then the completer's SQ_DRAINED check. Each call
 * sends at most XPORT_RUN_BUDGET response and XPORT_REQ_BUDGET request
 * packets and asks ops->schedule for another turn if work is left, so no single message or QP holds the
 * daemon's event loop.
 */
#include "config.h"

#include <stdint.h>

#include "emu/xport/xport_int.h"

static bool qp_active(const struct xport_qp *qp)
{
	return qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_ERR;
}

void xport_run(struct xport_qp *qp)
{
	bool bounded = qp->dev->ops.schedule != NULL;

	if ((qp->work & XPORT_WORK_RESP) && qp_active(qp) &&
	    !xport_resp_run(qp, bounded ? XPORT_RUN_BUDGET : UINT32_MAX))
		qp->work &= ~(unsigned int)XPORT_WORK_RESP;
	if ((qp->work & XPORT_WORK_REQ) && qp_active(qp) &&
	    !xport_req_send(qp, bounded ? XPORT_REQ_BUDGET : UINT32_MAX))
		qp->work &= ~(unsigned int)XPORT_WORK_REQ;
	xport_comp_check_drained(qp);
	if (!qp_active(qp))
		qp->work = 0;
	xport_req_account(qp, false);
	if (qp->work && qp->dev->ops.schedule)
		qp->dev->ops.schedule(qp->dev->ctx, qp);
}

void xport_timer_expired(struct xport_qp *qp)
{
	uint64_t now = xport_now(qp);

	qp->timer_armed = 0;
	if (qp->state != IBV_QPS_ERR) {
		if (qp->req.rnr_deadline && now >= qp->req.rnr_deadline) {
			/* RNR wait over: resend from the NAKed PSN (req.psn
			 * was rewound when the RNR NAK arrived). */
			qp->req.rnr_deadline = 0;
			xport_mark(qp, XPORT_WORK_REQ);
		}
		if (qp->comp.retrans_deadline && now >= qp->comp.retrans_deadline)
			xport_comp_timeout(qp);
	}
	xport_run(qp);
	xport_timer_update(qp);
}
