/*
 * poll_window.c - polling for a short window after traffic (poll_window.h).
 */
#include "config.h"

#include <sched.h>

#include "emu/nic/device.h"
#include "emu/nic/nic_time.h"
#include "emu/nic/poll_window.h"

/* Everything that counts as traffic: the clients' doorbells, datagrams a QP
 * took and datagrams sent, packets through the internal loopback. Not every
 * datagram received: a remote sender of junk (a bad ICRC, no such QP, a
 * forged source) must not keep the daemon polling a CPU; nor a doorbell
 * whose service found no work: nothing new, or only lies about the
 * client's rings (doorbell.h DOORBELL_PAUSE_SECONDS). */
static uint64_t traffic(const struct uroce_dev *d)
{
	return d->doorbell_reads - d->doorbell_idle_reads + d->rx_taken + d->udp.tx_packets +
	       d->udp.lb.packets;
}

/* Gives the CPU to whoever shares it; false when that took longer than the
 * stall limit: someone there does not yield back. The window is off in
 * deterministic mode, so the device's time is CLOCK_MONOTONIC here. */
static bool yield_kept_cpu(struct uroce_dev *d, double *lost)
{
	const struct poll_window *p = &d->poll_window;
	uint64_t t0;

	if (p->stall == 0) {
		sched_yield();
		return true;
	}
	t0 = nic_now_ns(d);
	sched_yield();
	*lost = (double)(nic_now_ns(d) - t0) * 1e-9;
	return *lost <= p->stall;
}

static void on_idle(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct uroce_dev *d = w->data;
	struct poll_window *p = &d->poll_window;
	uint64_t t = traffic(d);
	ev_tstamp now = ev_now(loop);
	double lost = 0;

	(void)revents;
	p->turns++;
	if (t != p->seen) {
		p->seen = t;
		p->last = now;
		p->caught++;
	} else if (now - p->last >= p->window) {
		p->closed++;
		ev_idle_stop(loop, w);
		return;
	}
	if (!yield_kept_cpu(d, &lost)) {
		p->stalls++;
		p->shut_until = now + lost + POLL_WINDOW_BACKOFF_MS * 1e-3;
		ev_idle_stop(loop, w);
	}
}

/* Before every poll of the backend, once this turn's callbacks have run: a
 * turn that moved traffic opens a window, so the poll does not block. A
 * wake-up without traffic (a timer, a control request) opens none, nor
 * does traffic while windows are shut after a stall. */
static void on_prepare(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct uroce_dev *d = w->data;
	struct poll_window *p = &d->poll_window;
	uint64_t t = traffic(d);

	(void)revents;
	if (ev_is_active(&p->idle) || t == p->seen)
		return;
	p->seen = t;
	if (ev_now(loop) < p->shut_until) {
		p->shut++;
		return;
	}
	p->opened++;
	p->last = ev_now(loop);
	ev_idle_start(loop, &p->idle);
}

void poll_window_start(struct uroce_dev *d, uint32_t usec, uint32_t stall_us)
{
	struct poll_window *p = &d->poll_window;

	p->window = usec * 1e-6;
	p->stall = stall_us * 1e-6;
	if (!usec)
		return;
	ev_idle_init(&p->idle, on_idle);
	p->idle.data = d;
	ev_prepare_init(&p->prepare, on_prepare);
	p->prepare.data = d;
	ev_prepare_start(d->loop, &p->prepare);
}
