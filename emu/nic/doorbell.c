/*
 * doorbell.c - a client's doorbell (see doorbell.h): the eventfd watcher,
 * and what a ring does: new WQEs from the QP rings into the engine, then the
 * CQ arm words.
 */
#include "config.h"
#include "emu/nic/doorbell.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/log.h"
#include "emu/nic/cq_ring.h"
#include "emu/nic/device.h"
#include "emu/nic/udp_port.h"
#include "emu/nic/wqe_reader.h"
#include "emu/xport/xport.h"
#include "emu/eth/eth.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* A WQE the daemon cannot execute: the engine completes it with
 * LOC_QP_OP_ERR after the older ones and moves the QP to ERR; in ERR it is
 * flushed like the others (xport_post_refused). */
static void bad_wqe(struct ctl_qp *qp, uint32_t n, bool is_recv, int why)
{
	if (xport_qp_state(qp->xqp) != IBV_QPS_ERR)
		ulog(ULOG_WARN, "client#%u qpn 0x%x: %s WQE %u refused (%s): QP to ERR", qp->owner->id,
		     qp->qpn, is_recv ? "receive" : "send", n, strerror(why));
	xport_post_refused(qp->xqp, is_recv, n);
}

/* Counts one WQE taken from QP's ring for the client's service: a lie
 * when the QP was in ERR before it (WAS_ERR: flushed at once) or REFUSED,
 * work otherwise (DOORBELL_PAUSE_SECONDS). */
static void tally(struct ctl_qp *qp, bool was_err, bool refused)
{
	if (was_err || refused)
		qp->owner->db_lies++;
	else
		qp->owner->db_work++;
}

/*
 * Whether the ring's producer index PI lies within DEPTH WQEs of the
 * daemon's cursor *NEXT. The provider never has more than DEPTH WQEs
 * outstanding (its consumer index only trails the cursor), so a farther PI
 * is a lie: the WQE at the cursor is refused and the cursor jumps to PI
 * (there is nothing honest in between to complete).
 */
static bool pi_sane(struct ctl_qp *qp, uint32_t pi, uint32_t *next, uint32_t depth, bool is_recv)
{
	if (pi - *next <= depth)
		return true;
	bad_wqe(qp, *next, is_recv, EOVERFLOW);
	qp->owner->db_lies++;
	*next = pi;
	return false;
}

/* Whether the budget is shared now (DOORBELL_SHARED_BUDGET). */
static bool budget_shared(const struct uroce_dev *d)
{
	return ev_now(d->loop) < d->doorbell_shared_until;
}

/* Send WQEs client C may still be given this loop turn. */
static uint32_t client_budget(struct ctl_client *c)
{
	unsigned int turn = ev_iteration(c->dev->loop);
	uint32_t budget;

	if (c->db_turn != turn) {
		c->db_turn = turn;
		c->db_taken = 0;
		c->db_recv_taken = 0;
	}
	budget = budget_shared(c->dev) ? DOORBELL_SHARED_BUDGET : DOORBELL_CLIENT_BUDGET;
	return c->db_taken < budget ? budget - c->db_taken : 0;
}

/* Charges N send WQEs to C's budget of this turn. A client other than the
 * last one to take any, within DOORBELL_SHARED_SECONDS of it, makes the
 * budget shared (doorbell_last is compared, never followed). */
static void client_charge(struct ctl_client *c, uint32_t n, bool stopped)
{
	struct uroce_dev *d = c->dev;
	double now = ev_now(d->loop);

	if (!n)
		return;
	c->db_taken += n;
	if (c->db_taken > d->doorbell_turn_max)
		d->doorbell_turn_max = c->db_taken;
	if (stopped)
		d->doorbell_budget_stops++;
	if (budget_shared(d)) {
		if (c->db_taken > d->doorbell_shared_max)
			d->doorbell_shared_max = c->db_taken;
		if (stopped)
			d->doorbell_shared_stops++;
	}
	if (d->doorbell_last != c && d->doorbell_last && now - d->doorbell_last_at < DOORBELL_SHARED_SECONDS &&
	    !d->vt.on)
		d->doorbell_shared_until = now + DOORBELL_SHARED_SECONDS;
	d->doorbell_last = c;
	d->doorbell_last_at = now;
}

/* Rings C's doorbell from the daemon's side: WQEs the budget left are
 * taken in a later turn (doorbell_cb), after the other clients'. */
static void ring_again(struct ctl_client *c)
{
	if (c->db_fd >= 0)
		eventfd_write(c->db_fd, 1);
}

/*
 * Posts the QP's new receive WQEs (a QP on an SRQ has none of its own).
 * A WQE that cannot be read or posted is refused and the QP goes to ERR
 * (IBTA 9.9.3: a malformed WQE is a Class A error); every WQE after it is
 * still taken, in order, and flushed, so each one the client posted
 * completes. In ERR each one costs a CQE at once (WR_FLUSH_ERR), as a send
 * WQE costs its packets, so there they are charged to the client's budget
 * of the turn like send WQEs: a client moving its producer index a queue
 * depth ahead at every doorbell gets no more of the loop than one posting
 * sends. From the doorbell (RECV_BUDGET) at most DOORBELL_RECV_BUDGET of
 * the client's receive WQEs a turn are taken in any state; not when the
 * responder needs one for a packet in hand (doorbell_recv_refill), which
 * consumes them as traffic comes, nor at a move of state. Returns whether
 * receive WQEs are left for a later turn.
 */
static bool qp_recv_doorbell(struct ctl_qp *qp, bool recv_budget)
{
	struct uroce_qp_ring_hdr *h = qp->ring;
	struct ctl_client *c = qp->owner;
	uint32_t pi, n, budget = 0, flushed = 0;
	bool in_err = false, more;
	int rc;

	if (!qp->cap.max_recv_wr || qp->srq)
		return false;
	pi = __atomic_load_n(&h->rq_pi, __ATOMIC_ACQUIRE);
	if (!pi_sane(qp, pi, &qp->rq_next, qp->cap.max_recv_wr, true))
		return false;
	client_budget(c); /* starts the turn's counts */
	while (qp->rq_next != pi && (!recv_budget || c->db_recv_taken < DOORBELL_RECV_BUDGET)) {
		struct xport_recv_wqe w;

		if (!in_err && xport_qp_state(qp->xqp) == IBV_QPS_ERR) {
			in_err = true;
			budget = client_budget(c);
		}
		if (in_err && flushed == budget)
			break;
		c->db_recv_taken++;
		n = qp->rq_next++;
		rc = wqe_read_recv(qp, n, &w);
		if (!rc)
			rc = xport_post_recv(qp->xqp, &w);
		if (rc)
			bad_wqe(qp, n, true, rc);
		tally(qp, in_err, rc);
		if (in_err)
			flushed++;
	}
	more = qp->rq_next != pi;
	client_charge(c, flushed, more);
	return more;
}

/*
 * Posts the new WQEs: every receive WQE, at most DOORBELL_SEND_BATCH
 * send WQEs and no more than the client's budget of the turn (a refused
 * one and those after it as qp_recv_doorbell). Returns whether WQEs
 * are left for the next turn.
 */
static bool qp_doorbell(struct ctl_qp *qp)
{
	struct uroce_qp_ring_hdr *h = qp->ring;
	uint32_t pi, n, budget, left, taken = 0;
	bool more;
	int rc;

	pi = __atomic_load_n(&h->sq_pi, __ATOMIC_ACQUIRE);
	left = client_budget(qp->owner);
	budget = left < DOORBELL_SEND_BATCH ? left : DOORBELL_SEND_BATCH;
	if (pi_sane(qp, pi, &qp->sq_next, qp->cap.max_send_wr, false)) {
		xport_post_hold(qp->xqp, true);
		for (; qp->sq_next != pi && budget; budget--, taken++) {
			struct xport_send_wqe w;
			bool was_err = xport_qp_state(qp->xqp) == IBV_QPS_ERR;

			n = qp->sq_next++;
			rc = wqe_read_send(qp->owner, qp, n, &w);
			if (!rc)
				rc = xport_post_send(qp->xqp, &w);
			if (rc)
				bad_wqe(qp, n, false, rc);
			tally(qp, was_err, rc);
		}
		xport_post_hold(qp->xqp, false);
	}
	more = qp->sq_next != pi;
	client_charge(qp->owner, taken, more && taken == left);
	if (qp_recv_doorbell(qp, true))
		more = true;
	return more;
}

/* Whether QP's rings hold WQEs the daemon has not read (the RQ only when
 * the QP reads its own: a pi moved on a QP without one is ignored). */
static bool qp_has_new(const struct ctl_qp *qp)
{
	struct uroce_qp_ring_hdr *h = qp->ring;

	if (__atomic_load_n(&h->sq_pi, __ATOMIC_ACQUIRE) != qp->sq_next)
		return true;
	return qp->cap.max_recv_wr && !qp->srq &&
	       __atomic_load_n(&h->rq_pi, __ATOMIC_ACQUIRE) != qp->rq_next;
}

/* Takes QP's new WQEs; the send WQEs left over ring the doorbell again, so
 * the next loop turn (after the UDP socket's) takes them. */
static void qp_take(struct ctl_qp *qp)
{
	if (qp_doorbell(qp))
		ring_again(qp->owner);
}

/* The service of a client that took more lies than work stops for
 * DOORBELL_PAUSE_SECONDS: its doorbell is not watched (the daemon sleeps
 * however fast it rings) and its rings are not polled. */
static void pause_client(struct ctl_client *c)
{
	if (ev_is_active(&c->db_pause))
		return;
	c->dev->doorbell_pauses++;
	ev_io_stop(c->dev->loop, &c->db_io);
	ev_timer_set(&c->db_pause, DOORBELL_PAUSE_SECONDS, 0.);
	ev_timer_start(c->dev->loop, &c->db_pause);
}

/* The pause's end: the doorbell watched again and rung, so the next turn
 * looks at every ring (what was posted meanwhile, rung for or not). */
static void pause_end_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ctl_client *c = w->data;

	(void)revents;
	ev_io_start(loop, &c->db_io);
	ring_again(c);
}

/* The end of one service of C (DOORBELL_DEBT_MAX): its lies into the
 * debt, its work out of it; IDLE (no WQE at all, only CQ arm requests if
 * anything) lengthens C's run of idle services, work ends it. Pauses C at
 * either limit (not in deterministic mode, where a wall-clock pause would
 * make the trace depend on real time). Returns whether C is paused now. */
static bool settle_service(struct ctl_client *c, bool idle)
{
	uint64_t debt = (uint64_t)c->db_debt + c->db_lies;
	uint64_t credit = (uint64_t)c->db_work * DOORBELL_WORK_CREDIT;

	debt = debt > credit ? debt - credit : 0;
	if (c->db_work)
		c->db_idle_run = 0;
	else if (idle)
		c->db_idle_run++;
	c->db_lies = c->db_work = 0;
	if ((debt < DOORBELL_DEBT_MAX && c->db_idle_run < DOORBELL_IDLE_MAX) || c->dev->vt.on) {
		c->db_debt = (uint32_t)debt;
		return false;
	}
	c->db_debt = 0;
	c->db_idle_run = 0;
	pause_client(c);
	return true;
}

/*
 * The daemon's half of doorbell suppression (abi_ring.h): runs before the
 * loop polls while QP's no_doorbell promise stands. New WQEs are taken and
 * the promise kept; after a turn without any, it is withdrawn (store 0,
 * full fence, look once more) and the watcher stops, so the loop never
 * sleeps with a post nobody rang for. Packets the WQEs produce are sent
 * (and, sent to this device, read) here: the device's own prepare watcher
 * may already have run.
 */
static void qp_poll_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct ctl_qp *qp = w->data;
	struct uroce_qp_ring_hdr *h = qp->ring;

	(void)revents;
	if (ev_is_active(&qp->owner->db_pause)) {
		/* withdrawn like an idle QP's; the pause's end looks again */
		__atomic_store_n(&h->no_doorbell, 0, __ATOMIC_RELAXED);
		ev_prepare_stop(loop, w);
		return;
	}
	if (!qp_has_new(qp)) {
		/* --busy-poll: the loop spins anyway, the promise costs one
		 * look per turn; it stands while the QP is in use */
		if (qp->owner->dev->busy_poll && ++qp->db_idle_turns < DOORBELL_BUSY_KEEP)
			return;
		__atomic_store_n(&h->no_doorbell, 0, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!qp_has_new(qp)) {
			qp->db_idle_turns = 0;
			ev_prepare_stop(loop, w);
			return;
		}
		__atomic_store_n(&h->no_doorbell, 1, __ATOMIC_RELAXED);
	}
	qp->db_idle_turns = 0;
	qp->owner->db_lies = qp->owner->db_work = 0;
	qp_take(qp);
	if (settle_service(qp->owner, false))
		return; /* the promise is withdrawn at the next turn (paused above) */
	udp_port_settle(&qp->owner->dev->udp);
	/* The promise still stands: the client will not ring for what it
	 * posts next. The settle above may have read every answer to these
	 * WQEs (and written their CQEs) already, so no datagram need wake the
	 * loop: an active idle watcher makes its next poll not block, and the
	 * next turn looks again (and withdraws the promise if nothing came). */
	ev_idle_start(loop, &qp->db_turn);
}

static void qp_turn_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	(void)revents;
	ev_idle_stop(loop, w);
}

/* Promise (abi_ring.h "Doorbell suppression") to read QP's rings again
 * before the loop sleeps. */
static void qp_promise(struct ctl_qp *qp)
{
	if (ev_is_active(&qp->db_poll))
		return;
	__atomic_store_n(&((struct uroce_qp_ring_hdr *)qp->ring)->no_doorbell, 1, __ATOMIC_RELAXED);
	ev_prepare_start(qp->owner->dev->loop, &qp->db_poll);
}

/* Whether QP's responder takes receive WQEs from its own RQ on demand
 * (xport_rq_take): RTR, RTS, SQD and SQE accept messages (IBTA 10.3.1);
 * RESET, INIT and ERR do not. */
static bool rq_on_demand(const struct ctl_qp *qp)
{
	enum ibv_qp_state s = xport_qp_state(qp->xqp);

	return qp->ring && qp->cap.max_recv_wr && !qp->srq &&
	       (s == IBV_QPS_RTR || s == IBV_QPS_RTS || s == IBV_QPS_SQD || s == IBV_QPS_SQE);
}

void doorbell_rq_promise_update(struct ctl_qp *qp)
{
	struct uroce_qp_ring_hdr *h = qp->ring;

	if (!qp->xqp)
		return;
	if (rq_on_demand(qp)) {
		if (!qp->rq_promise)
			__atomic_store_n(&h->rq_no_doorbell, 1, __ATOMIC_RELAXED);
		qp->rq_promise = true;
		return;
	}
	ev_prepare_stop(qp->owner->dev->loop, &qp->rq_withdraw);
	if (qp->rq_promise) {
		qp->rq_promise = false;
		__atomic_store_n(&h->rq_no_doorbell, 0, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	/* what was posted without a doorbell: in ERR the engine flushes it
	 * at once; RESET discards it (the caller) */
	if (qp->ring && xport_qp_state(qp->xqp) != IBV_QPS_RESET && qp_recv_doorbell(qp, false))
		ring_again(qp->owner);
}

static void rq_withdraw_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)loop;
	(void)revents;
	doorbell_rq_promise_update(w->data);
}

void doorbell_rq_err(struct ctl_qp *qp)
{
	if (!qp->rq_promise)
		return;
	ev_prepare_start(qp->owner->dev->loop, &qp->rq_withdraw);
	/* the move may come from inside a prepare watcher (the internal
	 * loopback's delivery), after libev chose this turn's: one turn
	 * without sleeping, so the withdrawal runs before the loop sleeps */
	ev_idle_start(qp->owner->dev->loop, &qp->db_turn);
}

void doorbell_qp_init(struct ctl_qp *qp)
{
	ev_prepare_init(&qp->db_poll, qp_poll_cb);
	qp->db_poll.data = qp;
	ev_idle_init(&qp->db_turn, qp_turn_cb);
	ev_prepare_init(&qp->rq_withdraw, rq_withdraw_cb);
	qp->rq_withdraw.data = qp;
	qp->rq_promise = false;
}

void doorbell_qp_stop(struct ctl_qp *qp)
{
	ev_prepare_stop(qp->owner->dev->loop, &qp->db_poll);
	ev_idle_stop(qp->owner->dev->loop, &qp->db_turn);
	ev_prepare_stop(qp->owner->dev->loop, &qp->rq_withdraw);
}

/* New WQEs of an SRQ into the engine. A WQE the daemon cannot take puts
 * the SRQ in error (abi_ring.h "SRQ ring"): IBV_EVENT_SRQ_ERR once, and
 * its ring is not read any more. */
static void srq_doorbell(struct ctl_srq *srq)
{
	struct uroce_srq_ring_hdr *h = srq->ring;
	uint32_t pi = __atomic_load_n(&h->pi, __ATOMIC_ACQUIRE);
	uint32_t budget;
	int rc = 0;

	for (budget = srq->max_wr; !srq->error && srq->next != pi && budget; budget--) {
		struct xport_recv_wqe w;

		rc = wqe_read_srq(srq, srq->next, &w);
		if (!rc)
			rc = xport_srq_post(srq->xsrq, &w);
		if (rc) {
			srq->owner->db_lies++;
			ulog(ULOG_WARN, "client#%u srqn 0x%x: WQE %u refused (%s): SRQ in error",
			     srq->owner->id, srq->srqn, srq->next, strerror(rc));
			srq->error = true;
			if (!client_async_event(srq->owner, srq->user_handle, IBV_EVENT_SRQ_ERR))
				srq->async_events++;
			break;
		}
		srq->owner->db_work++;
		srq->next++;
	}
	__atomic_store_n(&h->ci, srq->next, __ATOMIC_RELEASE);
}

void doorbell_srq_refill(struct ctl_srq *srq)
{
	if (srq->xsrq)
		srq_doorbell(srq);
}

void doorbell_recv_refill(struct ctl_qp *qp)
{
	if (qp->srq) {
		if (qp->srq->xsrq)
			srq_doorbell(qp->srq);
	} else if (qp->ring && qp->xqp && qp_recv_doorbell(qp, false)) {
		ring_again(qp->owner);
	}
}

bool doorbell_post_wqes(struct ctl_client *c)
{
	uint32_t h, i, n = c->qps.cap;
	bool more = false;

	/* SRQs first: a QP's receive may be waiting for them */
	for (h = 1; h <= c->srqs.cap; h++) {
		struct ctl_srq *srq = objtab_get(&c->srqs, h);

		if (srq && srq->xsrq)
			srq_doorbell(srq);
	}
	/* from where the budget stopped the last scan, round the table once */
	for (i = 0; i < n; i++) {
		uint32_t slot = (c->db_next_slot + i) % n;
		struct ctl_qp *qp = objtab_get(&c->qps, slot + 1);

		if (!client_budget(c)) {
			c->db_next_slot = slot;
			return true;
		}
		if (qp && qp->raw) {
			uint32_t left = client_budget(c), taken;
			bool qp_more = raw_qp_doorbell(qp, left, &taken);

			client_charge(c, taken, qp_more && taken == left);
			more = more || qp_more;
			continue;
		}
		if (!qp || !qp->ring || !qp->xqp || !qp_has_new(qp))
			continue;
		qp_promise(qp);
		if (qp_doorbell(qp))
			more = true;
	}
	return more;
}

void doorbell_take_posted(struct ctl_client *c)
{
	uint64_t rounds = 1;
	uint32_t h;

	for (h = 1; h <= c->qps.cap; h++) {
		const struct ctl_qp *qp = objtab_get(&c->qps, h);

		if (qp)
			rounds += qp->cap.max_send_wr / DOORBELL_SEND_BATCH + 1;
	}
	for (; rounds; rounds--) {
		c->db_taken = 0; /* its own posted WQEs, before its own request */
		if (!doorbell_post_wqes(c))
			return;
	}
	/* posting on while we take: the rest in later turns */
	ring_again(c);
}

static void doorbell_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ctl_client *c = w->data;
	uint32_t h, arms = 0;
	uint64_t v;
	bool more;

	/* Drain the counter first: a ring after this read re-arms the watcher. */
	if (read(c->db_fd, &v, sizeof(v)) < 0) {
		if (errno != EAGAIN)
			return;
	} else {
		c->dev->doorbell_reads++;
		c->dev->doorbell_rings += v;
	}
	/* new WQEs first: their completions may be what an arm waits for; send
	 * WQEs left over ring the doorbell again, so the next loop turn (after
	 * the UDP socket's) takes them */
	c->db_lies = c->db_work = 0;
	more = doorbell_post_wqes(c);
	if (more)
		ring_again(c);
	for (h = 1; h <= c->cqs.cap; h++) {
		struct ctl_cq *cq = objtab_get(&c->cqs, h);

		if (cq && cq_check_arm(cq))
			arms++;
	}
	/* a read whose service found no work is no traffic (poll_window.c) */
	if (!c->db_work && !arms)
		c->dev->doorbell_idle_reads++;
	settle_service(c, !c->db_lies && !c->db_work && !more);
}

int doorbell_open(struct ctl_client *c)
{
	int db = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	if (db < 0)
		return errno;
	c->db_fd = db;
	ev_io_init(&c->db_io, doorbell_cb, db, EV_READ);
	c->db_io.data = c;
	ev_io_start(c->dev->loop, &c->db_io);
	ev_timer_init(&c->db_pause, pause_end_cb, DOORBELL_PAUSE_SECONDS, 0.);
	c->db_pause.data = c;
	return 0;
}

void doorbell_close(struct ctl_client *c)
{
	if (c->db_fd < 0)
		return;
	ev_io_stop(c->dev->loop, &c->db_io);
	ev_timer_stop(c->dev->loop, &c->db_pause);
	close(c->db_fd);
	c->db_fd = -1;
}
