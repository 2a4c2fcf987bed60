/*
 * traffic_events.c - completion events that announce nothing (Check, run
 * inside `uroce run` by traffic_events.sh against a private daemon).
 *
 * The pattern of ibv_get_cq_event(3) is: read the event, ack, re-arm, poll
 * the CQ empty. A CQE written between the re-arm and that poll fires an
 * event, yet the poll consumes the CQE, so the next event read finds an empty
 * CQ. On a blocking one-CQ channel the provider holds such an event, re-arms
 * the CQ and returns a newer event if one comes within
 * UROCE_STALE_EVENT_WAIT_MS, else the held one (provider/event_hold.c); a
 * non-blocking channel gets every event at once.
 * Each case: one RC QP connected to itself, its send CQ on a channel, armed;
 * SEND 1 completes and is polled BEFORE its event is read.
 */
#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 10000

struct fixture {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	char buf[256];
};

/* An RC QP connected to itself, sending on SCQ, two receives posted. */
static struct ibv_qp *self_qp(struct fixture *f, struct ibv_cq *scq)
{
	struct ibv_qp_init_attr qa;
	union ibv_gid gid;
	struct ibv_qp *qp;
	int i;

	ck_assert_int_eq(ibv_query_gid(f->ctx, 1, 0, &gid), 0);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = scq;
	qa.recv_cq = f->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = ibv_create_qp(f->pd, &qa);
	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(tv_rc_connect(qp, qp->qp_num, &gid, IBV_MTU_1024, 14), 0);
	for (i = 0; i < 2; i++) {
		struct ibv_sge sge = { (uintptr_t)f->buf + 128, 64, f->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		ck_assert_int_eq(ibv_post_recv(qp, &wr, &bad), 0);
	}
	return qp;
}

static void setup_fixture(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(f->ctx);
	f->ch = ibv_create_comp_channel(f->ctx);
	ck_assert_ptr_nonnull(f->ch);
	f->pd = ibv_alloc_pd(f->ctx);
	ck_assert_ptr_nonnull(f->pd);
	f->mr = ibv_reg_mr(f->pd, f->buf, sizeof(f->buf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(f->mr);
	f->scq = ibv_create_cq(f->ctx, 16, NULL, f->ch, 0);
	f->rcq = ibv_create_cq(f->ctx, 16, NULL, NULL, 0);
	ck_assert_ptr_nonnull(f->scq);
	ck_assert_ptr_nonnull(f->rcq);
	f->qp = self_qp(f, f->scq);
}

static void teardown_fixture(struct fixture *f, unsigned int events_read)
{
	ibv_ack_cq_events(f->scq, events_read);
	ck_assert_int_eq(ibv_destroy_qp(f->qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(f->scq), 0);
	ck_assert_int_eq(ibv_destroy_cq(f->rcq), 0);
	ck_assert_int_eq(ibv_dereg_mr(f->mr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(f->pd), 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(f->ch), 0);
	ck_assert_int_eq(ibv_close_device(f->ctx), 0);
}

static void post_send(struct ibv_qp *qp, struct ibv_mr *mr, char *buf, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
}

/* Busy-polls CQ until one completion arrives; returns its wr_id. */
static uint64_t poll_one(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int rc = tv_poll_one(cq, WAIT_MS, &wc);

	ck_assert_msg(rc == 0, "no completion within %d ms: %s", WAIT_MS, strerror(rc));
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	return wc.wr_id;
}

/* SEND 1 is polled before its event is read: the event is in the channel. */
static void consume_before_event(struct fixture *f)
{
	struct pollfd pfd = { .fd = f->ch->fd, .events = POLLIN };

	ck_assert_int_eq(ibv_req_notify_cq(f->scq, 0), 0);
	post_send(f->qp, f->mr, f->buf, 1);
	ck_assert_uint_eq(poll_one(f->scq), 1);
	ck_assert_int_eq(poll(&pfd, 1, WAIT_MS), 1); /* the event for SEND 1 */
	ck_assert_uint_eq(poll_one(f->rcq), 100);
}

struct later_send {
	struct fixture *f;
};

static void *send_later(void *arg)
{
	struct fixture *f = ((struct later_send *)arg)->f;

	usleep(100 * 1000);
	post_send(f->qp, f->mr, f->buf, 2);
	return NULL;
}

START_TEST(blocking_channel_returns_newer_event)
{
	struct later_send ls;
	struct fixture f;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	pthread_t t;
	struct ibv_wc wc;

	/* Long enough that SEND 2 (posted 100 ms in) always falls inside. */
	ck_assert_int_eq(setenv("UROCE_STALE_EVENT_WAIT_MS", "30000", 1), 0);
	setup_fixture(&f);
	consume_before_event(&f);
	ls.f = &f;
	ck_assert_int_eq(pthread_create(&t, NULL, send_later, &ls), 0);
	/* The event of SEND 1 announces nothing; the one returned is SEND 2's. */
	ck_assert_int_eq(ibv_get_cq_event(f.ch, &ev_cq, &ev_ctx), 0);
	ck_assert_ptr_eq(ev_cq, f.scq);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(ibv_poll_cq(f.scq, 1, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 2);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(ibv_poll_cq(f.scq, 1, &wc), 0);
	ck_assert_uint_eq(poll_one(f.rcq), 101);
	teardown_fixture(&f, 1);
}
END_TEST

START_TEST(blocking_channel_late_event_when_nothing_newer)
{
	struct fixture f;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;

	/* Nothing newer comes: after the wait the held event is returned, as
	 * ibv_req_notify_cq(3) promises an event for a CQE added after the arm. */
	ck_assert_int_eq(setenv("UROCE_STALE_EVENT_WAIT_MS", "300", 1), 0);
	setup_fixture(&f);
	consume_before_event(&f);
	ck_assert_int_eq(ibv_get_cq_event(f.ch, &ev_cq, &ev_ctx), 0);
	ck_assert_ptr_eq(ev_cq, f.scq);
	ck_assert_int_eq(ibv_poll_cq(f.scq, 1, &wc), 0);
	teardown_fixture(&f, 1);
}
END_TEST

struct reader {
	struct ibv_comp_channel *ch;
	struct ibv_cq *ev_cq;
	int ret;
};

static void *read_event(void *arg)
{
	struct reader *r = arg;
	void *ev_ctx;

	r->ret = ibv_get_cq_event(r->ch, &r->ev_cq, &ev_ctx);
	return NULL;
}

/* The CQ of a held event is destroyed meanwhile: that event is never handed
 * over (the CQ is freed); the reader gets the next live CQ's event. */
START_TEST(held_event_of_destroyed_cq_is_void)
{
	struct reader r = { 0 };
	struct fixture f;
	struct ibv_cq *cq2;
	struct ibv_qp *qp2;
	pthread_t t;

	ck_assert_int_eq(setenv("UROCE_STALE_EVENT_WAIT_MS", "1000", 1), 0);
	setup_fixture(&f);
	consume_before_event(&f);
	r.ch = f.ch;
	ck_assert_int_eq(pthread_create(&t, NULL, read_event, &r), 0);
	usleep(100 * 1000); /* the reader holds SEND 1's event */
	/* cq2 first, so that it cannot reuse the freed CQ's address */
	cq2 = ibv_create_cq(f.ctx, 16, NULL, f.ch, 0);
	ck_assert_ptr_nonnull(cq2);
	ck_assert_int_eq(ibv_destroy_qp(f.qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(f.scq), 0);
	qp2 = self_qp(&f, cq2);
	ck_assert_int_eq(ibv_req_notify_cq(cq2, 0), 0);
	post_send(qp2, f.mr, f.buf, 3);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(r.ret, 0);
	ck_assert_ptr_eq(r.ev_cq, cq2);
	ck_assert_uint_eq(poll_one(cq2), 3);
	ibv_ack_cq_events(cq2, 1);
	f.qp = qp2;
	f.scq = cq2;
	teardown_fixture(&f, 0);
}
END_TEST

START_TEST(nonblocking_channel_gets_every_event)
{
	struct fixture f;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;
	int fl;

	setup_fixture(&f);
	fl = fcntl(f.ch->fd, F_GETFL);
	ck_assert_int_eq(fcntl(f.ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	consume_before_event(&f);
	ck_assert_int_eq(ibv_get_cq_event(f.ch, &ev_cq, &ev_ctx), 0);
	ck_assert_ptr_eq(ev_cq, f.scq);
	ck_assert_int_eq(ibv_poll_cq(f.scq, 1, &wc), 0);
	/* No second event is waiting. */
	errno = 0;
	ck_assert_int_eq(ibv_get_cq_event(f.ch, &ev_cq, &ev_ctx), -1);
	ck_assert_int_eq(errno, EAGAIN);
	teardown_fixture(&f, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_events");
	TCase *tc = tcase_create("stale");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, blocking_channel_returns_newer_event);
	tcase_add_test(tc, blocking_channel_late_event_when_nothing_newer);
	tcase_add_test(tc, held_event_of_destroyed_cq_is_void);
	tcase_add_test(tc, nonblocking_channel_gets_every_event);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
