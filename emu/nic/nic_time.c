/*
 * nic_time.c - device time and timers, real or virtual (see nic_time.h).
 */
#include "config.h"
#include "emu/nic/nic_time.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/obj/objtab.h"
#include "emu/log.h"
#include "emu/nic/cq_ring.h"
#include "emu/nic/device.h"
#include "emu/nic/hca_clock.h"
#include "emu/xport/xport.h"

#include <time.h>

uint64_t nic_now_ns(struct uroce_dev *d)
{
	struct timespec ts;

	if (d->vt.on)
		return d->vt.now;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void vt_set(struct uroce_dev *d, uint64_t now)
{
	d->vt.now = now;
	hca_clock_set_virtual(&d->clock, now);
}

static void kick_arm(struct uroce_dev *d)
{
	if (!ev_is_active(&d->vt.kick) && d->vt.timers) {
		ev_timer_set(&d->vt.kick, NIC_VTIME_GRACE_MS / 1000., 0.);
		ev_timer_start(d->loop, &d->vt.kick);
	}
}

/* What the send queues of the device say about who acts next. */
enum sq_state {
	SQ_DRAINED,     /* all completed: the application acts next */
	SQ_OUTSTANDING, /* the device owes completions: a timer may be next */
	SQ_POSTED,      /* WQEs posted, their doorbell not yet served */
};

static enum sq_state send_queues(struct uroce_dev *d)
{
	enum sq_state st = SQ_DRAINED;
	struct ctl_client *c;
	uint32_t h;

	for (c = d->clients; c; c = c->next)
		for (h = 1; h <= c->qps.cap; h++) {
			const struct ctl_qp *qp = objtab_get(&c->qps, h);
			struct uroce_qp_ring_hdr *r = qp ? qp->ring : NULL;

			if (!r)
				continue;
			if (__atomic_load_n(&r->sq_pi, __ATOMIC_ACQUIRE) != qp->sq_next)
				return SQ_POSTED;
			if (qp->sq_next != __atomic_load_n(&r->sq_ci, __ATOMIC_ACQUIRE))
				st = SQ_OUTSTANDING;
		}
	return st;
}

/* Whether a CQ of the device holds CQEs its client has not polled: the
 * application has work to take (and may post in answer to it). */
static bool cqes_unpolled(struct uroce_dev *d)
{
	struct ctl_client *c;
	uint32_t h;

	for (c = d->clients; c; c = c->next)
		for (h = 1; h <= c->cqs.cap; h++) {
			const struct ctl_cq *cq = objtab_get(&c->cqs, h);

			if (cq && cq->ring && cq_unpolled(cq))
				return true;
		}
	return false;
}

/* The grace period ended: if nothing happened during it, no packet to
 * ourselves is missing and the applications are not expected to act, jump
 * to the earliest deadline and fire every timer due then, in arming order. */
static void kick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct uroce_dev *d = w->data;
	struct nic_vtime *vt = &d->vt;
	enum sq_state sq = send_queues(d);
	uint64_t when;

	if (vt->activity != vt->seen_activity) {
		vt->seen_activity = vt->activity;
		vt->quiet_graces = vt->idle_graces = 0;
		kick_arm(d);
		return;
	}
	if (sq == SQ_POSTED) {
		kick_arm(d);
		return;
	}
	if (vt->self_inflight > 0) {
		if (++vt->quiet_graces < NIC_VTIME_LOST_GRACES) {
			kick_arm(d);
			return;
		}
		ulog(ULOG_WARN, "deterministic mode: %lld packets to ourselves never arrived "
				"(kernel drop?): going on without them",
		     (long long)vt->self_inflight);
		vt->self_inflight = 0;
	}
	/* the application acts next: every WQE completed, or completions
	 * waiting to be polled (a busy poller descheduled on a loaded machine
	 * must not see a timer overtake the post it is about to make) */
	if ((sq == SQ_DRAINED || cqes_unpolled(d)) && ++vt->idle_graces < NIC_VTIME_IDLE_GRACES) {
		kick_arm(d);
		return;
	}
	vt->quiet_graces = vt->idle_graces = 0;
	if (!vt->timers)
		return;
	when = vt->timers->when;
	if (when > vt->now)
		vt_set(d, when);
	while (vt->timers && vt->timers->when <= when) {
		struct nic_timer *t = vt->timers;

		vt->timers = t->next;
		t->next = NULL;
		t->when = 0;
		t->cb(t);
	}
	kick_arm(d);
}

void nic_vtime_enable(struct uroce_dev *d)
{
	d->vt.on = true;
	/* a receive batch's size is decided by real arrival times: one ACK
	 * per AckReq packet keeps the trace the same from run to run */
	if (d->xdev)
		xport_ack_coalescing(d->xdev, false);
	/* nor may a read of our own datagrams right after sending them
	 * depend on whether the kernel has queued them yet */
	d->udp.no_self_read = true;
	/* and datagrams to self go through the socket, read after the poll
	 * like any other, not through the internal loopback */
	d->udp.lb.off = true;
	ev_timer_init(&d->vt.kick, kick_cb, 0., 0.);
	d->vt.kick.data = d;
	vt_set(d, NIC_VTIME_START_NS);
}

void nic_vtime_fini(struct uroce_dev *d)
{
	if (d->vt.on)
		ev_timer_stop(d->loop, &d->vt.kick);
	d->vt.timers = NULL;
}

void nic_vtime_packet(struct uroce_dev *d, bool sent, bool self)
{
	if (!d->vt.on)
		return;
	vt_set(d, d->vt.now + NIC_VTIME_PACKET_NS);
	d->vt.activity++;
	if (self)
		d->vt.self_inflight += sent ? 1 : -1;
}

static void real_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct nic_timer *t = w->data;

	t->when = 0;
	t->cb(t);
}

void nic_timer_init(struct nic_timer *t, struct uroce_dev *d, nic_timer_cb cb, void *data)
{
	t->dev = d;
	t->cb = cb;
	t->data = data;
	t->when = 0;
	t->next = NULL;
	ev_timer_init(&t->ev, real_cb, 0., 0.);
	t->ev.data = t;
}

void nic_timer_stop(struct nic_timer *t)
{
	struct nic_timer **p;

	if (!t->dev)
		return;
	if (!t->dev->vt.on) {
		ev_timer_stop(t->dev->loop, &t->ev);
		t->when = 0;
		return;
	}
	for (p = &t->dev->vt.timers; *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			break;
		}
	}
	t->next = NULL;
	t->when = 0;
}

void nic_timer_start(struct nic_timer *t, uint64_t when)
{
	struct uroce_dev *d = t->dev;
	struct nic_timer **p;
	uint64_t now;

	nic_timer_stop(t);
	if (!when)
		when = 1;
	if (!d->vt.on) {
		now = nic_now_ns(d);
		ev_timer_set(&t->ev, when > now ? (double)(when - now) / 1e9 : 0., 0.);
		ev_timer_start(d->loop, &t->ev);
		t->when = when;
		return;
	}
	t->when = when;
	t->seq = d->vt.next_seq++;
	for (p = &d->vt.timers; *p && (*p)->when <= when; p = &(*p)->next)
		;
	t->next = *p;
	*p = t;
	kick_arm(d);
}
