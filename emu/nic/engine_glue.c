/*
 * engine_glue.c - the transport engine inside uroced (see engine_glue.h):
 * the callbacks of struct xport_ops and the per-QP engine objects.
 */
#include "config.h"
#include "emu/nic/engine_glue.h"
#include "emu/nic/doorbell.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/log.h"
#include "emu/nic/cq_ring.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_access.h"
#include "emu/nic/mem_wb.h"
#include "emu/nic/mem_window.h"
#include "emu/nic/nic_time.h"
#include "emu/nic/port.h"
#include "emu/xport/xport.h"

#include <endian.h>
#include <errno.h>
#include <string.h>
#include <time.h>

static uint64_t dp_now_ns(void *ctx)
{
	return nic_now_ns(ctx);
}

static enum xport_mem_status dp_mem(void *ctx, struct xport_qp *xqp, uint32_t pd, bool is_rkey,
				    uint32_t key, uint64_t addr, void *buf, uint32_t len,
				    unsigned int access, enum xport_mem_op op)
{
	return mem_access_qp(ctx, pd, xport_qp_num(xqp), is_rkey, key, addr, buf, len, access, op);
}

static enum xport_mem_status dp_mem_sync(void *ctx, struct xport_qp *xqp)
{
	return mem_wb_sync(ctx, xport_qp_num(xqp)) ? XPORT_MEM_FAULT : XPORT_MEM_OK;
}

/* BIND_MW and LOCAL_INV, executed in SQ order (mem_window.h). A failed
 * LOCAL_INV completes with MW_BIND_ERR: mlx5 posts it as the same UMR WQE
 * as a bind (docs/transport.md). */
static enum ibv_wc_status dp_local_op(void *ctx, struct xport_qp *xqp, uint32_t pd,
				      const struct xport_send_wqe *w)
{
	struct ctl_qp *qp = xport_qp_user(xqp);

	if (w->opcode == IBV_WR_BIND_MW)
		return mw_bind(qp->owner, qp, w->rkey, &w->bind);
	return mw_invalidate(ctx, qp, w->invalidate_rkey, false) ? IBV_WC_MW_BIND_ERR : IBV_WC_SUCCESS;
}

static bool dp_invalidate(void *ctx, struct xport_qp *xqp, uint32_t pd, uint32_t rkey)
{
	return mw_invalidate(ctx, xport_qp_user(xqp), rkey, true) == 0;
}

static void dp_complete(void *ctx, struct xport_qp *xqp, const struct xport_cqe *c)
{
	struct uroce_dev *d = ctx;
	struct ctl_qp *qp = xport_qp_user(xqp);
	struct ctl_srq *srq = c->is_recv && c->srq ? xport_srq_user(c->srq) : NULL;
	struct uroce_qp_ring_hdr *h = qp->ring;
	struct mlx5_cqe64 cqe;
	int rc;

	/* the slot of this WQE (and of unsignaled ones before it) is free;
	 * an SRQ's slots are free once read (its tags come back by polling) */
	if (h && !srq)
		__atomic_store_n(c->is_recv ? &h->rq_ci : &h->sq_ci, c->wr_index + 1, __ATOMIC_RELEASE);
	if (!c->signaled && c->status == IBV_WC_SUCCESS)
		return;
	cqe_build(c, hca_clock_now(&d->clock), d->addr.ss_family == AF_INET6, &cqe);
	/* mlx5 CQE version 0: responder CQEs of SRQ WQEs name the SRQ; an
	 * XRC SRQ's go to its own CQ (mlx5: the XRC target QP has none) */
	if (srq)
		cqe.srqn_uidx = htobe32(srq->srqn & 0xFFFFFF);
	rc = cq_push(srq && srq->cq ? srq->cq : c->is_recv ? qp->recv_cq : qp->send_cq, &cqe);
	if (rc && ulog_limit_due(ULOG_LIMIT_CQ_LOST, ULOG_WARN))
		ulog_limited(ULOG_LIMIT_CQ_LOST, ULOG_WARN, "client#%u qpn 0x%x: completion lost: %s",
			     qp->owner->id, qp->qpn, strerror(rc));
}

/* Re-check interval while an expiry is put off. */
#define TIMER_DEFER_NS 1000000ull

/* A NIC handles the packets it has received before its timers; here they
 * may still wait in the device socket while the daemon was busy (many QPs
 * of one daemon sending to each other), and among them the ACKs this timer
 * waits for. So while a datagram waits, the expiry is put off (re-checked
 * every TIMER_DEFER_NS) and the receive watcher runs first; at most three
 * more retransmit periods, so a flood keeping the socket busy cannot stop
 * retransmission. Without this, 16 QPs with 64 KiB messages time out
 * spuriously and go-back-N resends add to the backlog until retry_cnt runs
 * out.
 * In deterministic mode nothing real may decide, so expiries are never put
 * off there.
 */
static void qp_timer_cb(struct nic_timer *t)
{
	struct ctl_qp *qp = t->data;
	struct uroce_dev *d = qp->owner->dev;
	uint64_t now = dp_now_ns(d);

	if (!d->vt.on && udp_port_rx_pending(&d->udp)) {
		if (!qp->timer_defer_until) {
			struct xport_qp_attr a;

			xport_qp_query(qp->xqp, &a);
			qp->timer_defer_until = now + (a.timeout ? 3 * (4096ull << a.timeout) : 0);
		}
		if (now < qp->timer_defer_until) {
			nic_timer_start(&qp->timer, now + TIMER_DEFER_NS);
			return;
		}
	}
	qp->timer_defer_until = 0;
	xport_timer_expired(qp->xqp);
}

static void dp_timer_arm(void *ctx, struct xport_qp *xqp, uint64_t when_ns)
{
	struct ctl_qp *qp = xport_qp_user(xqp);

	qp->timer_defer_until = 0;
	if (when_ns)
		nic_timer_start(&qp->timer, when_ns);
	else
		nic_timer_stop(&qp->timer);
}

static void dp_qp_event(void *ctx, struct xport_qp *xqp, enum ibv_event_type event)
{
	struct ctl_qp *qp = xport_qp_user(xqp);

	/* the application may look at memory once it has the event */
	mem_wb_flush(ctx);
	if (event == IBV_EVENT_QP_LAST_WQE_REACHED)
		ulog(ULOG_INFO, "client#%u qpn 0x%x on srqn 0x%x: last WQE reached", qp->owner->id,
		     qp->qpn, qp->srq ? qp->srq->srqn : 0);
	else if (event == IBV_EVENT_COMM_EST)
		ulog(ULOG_DEBUG, "client#%u qpn 0x%x: communication established", qp->owner->id,
		     qp->qpn);
	else if (event != IBV_EVENT_SQ_DRAINED)
		ulog(ULOG_INFO, "client#%u qpn 0x%x -> ERR (event %d)", qp->owner->id, qp->qpn, event);
	if (!client_async_event(qp->owner, qp->user_handle, event))
		qp->async_events++;
}

static void dp_srq_event(void *ctx, struct xport_srq *xsrq, enum ibv_event_type event)
{
	struct ctl_srq *srq = xport_srq_user(xsrq);

	mem_wb_flush(ctx);
	ulog(ULOG_DEBUG, "client#%u srqn 0x%x: event %d", srq->owner->id, srq->srqn, event);
	if (!client_async_event(srq->owner, srq->user_handle, event))
		srq->async_events++;
}

/* The engine's next turn for a QP that spent its budget: run after this
 * loop iteration's I/O (ev_check), with an ev_idle so that poll does not
 * block meanwhile. Control requests and other QPs get their turn between. */
static void dp_schedule(void *ctx, struct xport_qp *xqp)
{
	struct uroce_dev *d = ctx;
	struct ctl_qp *qp = xport_qp_user(xqp);

	ev_check_start(d->loop, &qp->run_check);
	ev_idle_start(d->loop, &qp->run_idle);
}

static void qp_run_cb(struct ev_loop *loop, ev_check *w, int revents)
{
	struct ctl_qp *qp = w->data;

	ev_check_stop(loop, &qp->run_check);
	ev_idle_stop(loop, &qp->run_idle);
	xport_run(qp->xqp);
}

static void qp_idle_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
}

/* IP TOS / IPv6 traffic class of a QP's packets (DSCP + ECN): the GRH
 * traffic class of its address vector, as rxe and mlx5 send it; UD packets
 * carry their AH's, which the engine does not pass here: 0. */
static uint8_t qp_tclass(struct xport_qp *xqp)
{
	const struct ctl_qp *qp = xqp ? xport_qp_user(xqp) : NULL;

	return qp && qp->type != IBV_QPT_UD ? qp->ah_attr.grh.traffic_class : 0;
}

static int dp_xmit(void *ctx, struct xport_qp *xqp, const union ibv_gid *dgid, uint16_t sport,
		   const void *pkt, size_t len)
{
	const struct ctl_qp *qp = xport_qp_user(xqp);

	/* a UD WQE completes with the send's error: no queueing */
	return port_xmit(ctx, dgid, sport, qp_tclass(xqp), pkt, len, !qp || qp->type == IBV_QPT_UD);
}

/* Transport events (retransmissions, NAKs, RNR waits, errors): debug level,
 * as one lossy link writes many of them (UROCED_DEBUG=1 shows them). */
static void dp_log(void *ctx, struct xport_qp *xqp, int level, const char *msg)
{
	ulog(ULOG_DEBUG, "%s", msg);
}

/* The engine found no receive WQE: read the rings first, as a NIC reads
 * its RQ from host memory (xport.h rq_refill). */
static void dp_rq_refill(void *ctx, struct xport_qp *xqp)
{
	struct ctl_qp *qp = xport_qp_user(xqp);
	struct xport_srq *xsrq = xport_qp_srq(xqp);

	(void)ctx;
	/* an XRC_RECV QP reads the ring of the SRQ its request named */
	if (qp->xrcd) {
		if (xsrq)
			doorbell_srq_refill(xport_srq_user(xsrq));
		return;
	}
	doorbell_recv_refill(qp);
}

/* The QP entered ERR: its receive doorbell promise goes before the loop
 * sleeps (doorbell.h). */
static void dp_qp_err(void *ctx, struct xport_qp *xqp)
{
	(void)ctx;
	doorbell_rq_err(xport_qp_user(xqp));
}

static const struct xport_ops engine_ops = {
	.now_ns = dp_now_ns,
	.mem = dp_mem,
	.xmit = dp_xmit,
	.complete = dp_complete,
	.timer_arm = dp_timer_arm,
	.qp_event = dp_qp_event,
	.schedule = dp_schedule,
	.log = dp_log,
	.srq_event = dp_srq_event,
	.local_op = dp_local_op,
	.invalidate = dp_invalidate,
	.rq_refill = dp_rq_refill,
	.mem_sync = dp_mem_sync,
	.qp_err = dp_qp_err,
};

int engine_init(struct uroce_dev *d)
{
	union ibv_gid me;
	int rc;

	rc = mem_wb_init(d);
	if (rc)
		return rc;
	port_local_gid(d, &me);
	d->xdev = xport_dev_new(&engine_ops, d, &me, d->port, d->mtu);
	if (!d->xdev) {
		rc = errno ? errno : ENOMEM;
		mem_wb_fini(d);
		return rc;
	}
	/* one ACK per QP per receive batch: port.c flushes after each */
	xport_ack_coalescing(d->xdev, true);
	rc = port_init(d);
	if (rc) {
		xport_dev_free(d->xdev);
		d->xdev = NULL;
		mem_wb_fini(d);
	}
	return rc;
}

void engine_fini(struct uroce_dev *d)
{
	mem_wb_fini(d);
	port_fini(d);
	if (d->xdev)
		xport_dev_free(d->xdev);
	d->xdev = NULL;
}

int engine_qp_create(struct ctl_qp *qp)
{
	struct uroce_dev *d = qp->owner->dev;

	/* an XRC_RECV QP has no PD: each request's SRQ lends its own */
	qp->xqp = xport_qp_create(d->xdev, qp->type, qp->qpn, qp->pd ? qp->pd->pdn : 0,
				  qp->cap.max_send_wr, qp->cap.max_recv_wr ? qp->cap.max_recv_wr : 1,
				  qp->sq_sig_all, qp);
	if (!qp->xqp)
		return errno ? errno : ENOMEM;
	if ((qp->srq && xport_qp_set_srq(qp->xqp, qp->srq->xsrq)) ||
	    (qp->xrcd && xport_qp_set_xrcd(qp->xqp, qp->xrcd->dom->xrcdn))) {
		xport_qp_destroy(qp->xqp);
		qp->xqp = NULL;
		return EINVAL;
	}
	nic_timer_init(&qp->timer, d, qp_timer_cb, qp);
	ev_check_init(&qp->run_check, qp_run_cb);
	qp->run_check.data = qp;
	ev_idle_init(&qp->run_idle, qp_idle_cb);
	doorbell_qp_init(qp);
	return 0;
}

void engine_qp_destroy(struct ctl_qp *qp)
{
	const struct xport_qp_stats *st;
	struct dev_qp_totals *t;

	if (!qp->xqp)
		return;
	mem_wb_forget_qp(qp->owner->dev, qp->qpn);
	nic_timer_stop(&qp->timer);
	doorbell_qp_stop(qp);
	ev_check_stop(qp->owner->dev->loop, &qp->run_check);
	ev_idle_stop(qp->owner->dev->loop, &qp->run_idle);
	st = xport_qp_stats(qp->xqp);
	t = &qp->owner->dev->retired;
	t->dup_requests += st->dup_requests;
	t->seq_naks_rx += st->seq_naks_rx;
	t->timeouts += st->timeouts;
	t->rnr_naks_rx += st->rnr_naks_rx;
	xport_qp_destroy(qp->xqp);
	qp->xqp = NULL;
}


int engine_srq_create(struct ctl_srq *srq)
{
	srq->xsrq = xport_srq_create(srq->owner->dev->xdev, srq->max_wr, srq);
	return srq->xsrq ? 0 : errno ? errno : ENOMEM;
}

int engine_srq_set_xrc(struct ctl_srq *srq)
{
	return xport_srq_set_xrc(srq->xsrq, srq->srqn, srq->xrcd->dom->xrcdn, srq->pd->pdn);
}

void engine_srq_destroy(struct ctl_srq *srq)
{
	xport_srq_destroy(srq->xsrq);
	srq->xsrq = NULL;
}
