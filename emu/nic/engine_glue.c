/*
 * engine_glue.c - the transport engine inside uroced (see engine_glue.h):
 * the callbacks of struct xport_ops and the per-QP engine objects.
 */
#include "config.h"
#include "emu/nic/engine_glue.h"
#include "emu/ctl/client.h"
#include "emu/ctl/objects.h"
#include "emu/log.h"
#include "emu/nic/cq_ring.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_access.h"
#include "emu/nic/nic_time.h"
#include "emu/nic/port.h"
#include "emu/xport/xport.h"

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
	return mem_access(ctx, pd, is_rkey, key, addr, buf, len, access, op);
}

static void dp_complete(void *ctx, struct xport_qp *xqp, const struct xport_cqe *c)
{
	struct uroce_dev *d = ctx;
	struct ctl_qp *qp = xport_qp_user(xqp);
	struct uroce_qp_ring_hdr *h = qp->ring;
	struct mlx5_cqe64 cqe;
	int rc;

	/* the slot of this WQE (and of unsignaled ones before it) is free */
	if (h)
		__atomic_store_n(c->is_recv ? &h->rq_ci : &h->sq_ci, c->wr_index + 1, __ATOMIC_RELEASE);
	if (!c->signaled && c->status == IBV_WC_SUCCESS)
		return;
	cqe_build(c, hca_clock_now(&d->clock), d->addr.ss_family == AF_INET6, &cqe);
	rc = cq_push(c->is_recv ? qp->recv_cq : qp->send_cq, &cqe);
	if (rc)
		ulog_limited(ULOG_LIMIT_CQ_LOST, ULOG_WARN, "client#%u qpn 0x%x: completion lost: %s",
			     qp->owner->id, qp->qpn, strerror(rc));
}

static void qp_timer_cb(struct nic_timer *t)
{
	struct ctl_qp *qp = t->data;

	xport_timer_expired(qp->xqp);
}

static void dp_timer_arm(void *ctx, struct xport_qp *xqp, uint64_t when_ns)
{
	struct ctl_qp *qp = xport_qp_user(xqp);

	if (when_ns)
		nic_timer_start(&qp->timer, when_ns);
	else
		nic_timer_stop(&qp->timer);
}

static void dp_qp_event(void *ctx, struct xport_qp *xqp, enum ibv_event_type event)
{
	struct ctl_qp *qp = xport_qp_user(xqp);

	if (event != IBV_EVENT_SQ_DRAINED)
		ulog(ULOG_INFO, "client#%u qpn 0x%x -> ERR (event %d)", qp->owner->id, qp->qpn, event);
	if (!client_async_event(qp->owner, qp->user_handle, event))
		qp->async_events++;
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
	return port_xmit(ctx, dgid, sport, qp_tclass(xqp), pkt, len);
}

/* Transport events (retransmissions, NAKs, RNR waits, errors): debug level,
 * as one lossy link writes many of them (UROCED_DEBUG=1 shows them). */
static void dp_log(void *ctx, struct xport_qp *xqp, int level, const char *msg)
{
	ulog(ULOG_DEBUG, "%s", msg);
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
};

int engine_init(struct uroce_dev *d)
{
	union ibv_gid me;
	int rc;

	port_local_gid(d, &me);
	d->xdev = xport_dev_new(&engine_ops, d, &me, d->port, d->mtu);
	if (!d->xdev)
		return errno ? errno : ENOMEM;
	rc = port_init(d);
	if (rc) {
		xport_dev_free(d->xdev);
		d->xdev = NULL;
	}
	return rc;
}

void engine_fini(struct uroce_dev *d)
{
	port_fini(d);
	if (d->xdev)
		xport_dev_free(d->xdev);
	d->xdev = NULL;
}

int engine_qp_create(struct ctl_qp *qp)
{
	struct uroce_dev *d = qp->owner->dev;

	qp->xqp = xport_qp_create(d->xdev, qp->type, qp->qpn, qp->pd->pdn, qp->cap.max_send_wr,
				  qp->cap.max_recv_wr ? qp->cap.max_recv_wr : 1, qp->sq_sig_all, qp);
	if (!qp->xqp)
		return errno ? errno : ENOMEM;
	nic_timer_init(&qp->timer, d, qp_timer_cb, qp);
	ev_check_init(&qp->run_check, qp_run_cb);
	qp->run_check.data = qp;
	ev_idle_init(&qp->run_idle, qp_idle_cb);
	return 0;
}

void engine_qp_destroy(struct ctl_qp *qp)
{
	if (!qp->xqp)
		return;
	nic_timer_stop(&qp->timer);
	ev_check_stop(qp->owner->dev->loop, &qp->run_check);
	ev_idle_stop(qp->owner->dev->loop, &qp->run_idle);
	xport_qp_destroy(qp->xqp);
	qp->xqp = NULL;
}

