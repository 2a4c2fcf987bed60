/*
 * dev_window.c - the device window: request PSNs in flight over all of a
 * device's RC QPs (XPORT_DEV_UNACKED_PSNS, xport.h).
 *
 * What a requester has in flight waits in the peer's receive socket until
 * its daemon reads it; each QP's own window (XPORT_MAX_UNACKED_PSNS) bounds
 * one QP, not 64 of them. The sum is kept as each QP's share at the end of
 * its xport_run, and where its state changes with no run after (RESET, a
 * fatal error, SQE) or it is destroyed.
 * Fairness: with N QPs sending and half the window taken, one that has
 * XPORT_DEV_UNACKED_PSNS / N in flight sends no more until its ACKs come,
 * so that a QP that came late gets the PSNs the others free instead of the
 * first comers taking them back.
 */
#include "config.h"

#include "emu/xport/xport_int.h"

/* QP's request PSNs sent and not acknowledged, while it may send. */
static uint32_t share(const struct xport_qp *qp)
{
	if (qp->type != IBV_QPT_RC || (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD))
		return 0;
	return roce_psn_sub(qp->req.psn, qp->comp.psn);
}

void xport_req_account(struct xport_qp *qp, bool gone)
{
	uint32_t now = gone ? 0 : share(qp);
	struct xport_dev *dev = qp->dev;

	dev->unacked = dev->unacked - qp->unacked_counted + now;
	dev->active = dev->active - (qp->unacked_counted != 0) + (now != 0);
	qp->unacked_counted = now;
	if (dev->unacked > dev->stats.window_max)
		dev->stats.window_max = dev->unacked;
}

bool xport_dev_window_full(const struct xport_qp *qp)
{
	const struct xport_dev *dev = qp->dev;
	uint32_t mine = share(qp);
	/* the QPs with PSNs in flight, this one included */
	uint32_t n = dev->active + (qp->unacked_counted == 0);
	uint32_t total = dev->unacked - qp->unacked_counted + mine;

	if (mine < XPORT_FAIR_UNACKED_PSNS)
		return false;
	/* past half the window a QP over its share of the device waits for
	 * its own ACKs, so that PSNs freed go to those under theirs; below
	 * it QPs with a few PSNs in flight do not cap a bulk sender */
	return total >= XPORT_DEV_UNACKED_PSNS ||
	       (total >= XPORT_DEV_UNACKED_PSNS / 2 && mine >= XPORT_DEV_UNACKED_PSNS / n);
}

uint32_t xport_dev_unacked(const struct xport_dev *dev)
{
	return dev->unacked;
}
