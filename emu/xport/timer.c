/*
 * timer.c: the engine's per-QP deadlines, multiplexed onto the one
 * timer per QP the daemon provides (ops->timer_arm): the completer's
 * retransmit timer (IBTA 9.7.6.1.3 "local ACK timeout") and the
 * requester's RNR wait (9.7.5.2.8). Also the unit conversions for both.
 * The expiry itself is an entry point (run.c).
 */
#include "config.h"

#include "emu/xport/xport_int.h"

uint64_t xport_timeout_ns(const struct xport_qp *qp)
{
	/* 4.096 us * 2^timeout = 4096 ns << timeout; 0 disables the timer. */
	if (!qp->attr.timeout)
		return 0;
	return 4096ull << qp->attr.timeout;
}

uint64_t xport_rnr_timer_ns(uint8_t code)
{
	/* IBTA Table 45 (RNR NAK timer field encoding) in units of 10 us;
	 * code 0 is the largest, 655.36 ms. */
	static const uint32_t us100[32] = {
		65536000, 1, 2, 3, 4, 6, 8, 12,
		16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072,
		4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
	};

	if (code == 0)
		return 655360000ull;
	return (uint64_t)us100[code & 31] * 10000ull;
}

void xport_timer_update(struct xport_qp *qp)
{
	uint64_t when = 0;

	if (qp->comp.retrans_deadline)
		when = qp->comp.retrans_deadline;
	if (qp->req.rnr_deadline && (!when || qp->req.rnr_deadline < when))
		when = qp->req.rnr_deadline;
	if (when == qp->timer_armed)
		return;
	qp->timer_armed = when;
	qp->dev->ops.timer_arm(qp->dev->ctx, qp, when);
}
