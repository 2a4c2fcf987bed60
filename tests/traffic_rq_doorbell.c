/*
 * traffic_rq_doorbell.c - receive doorbell suppression and the moves to
 * ERR (Check, run inside `uroce run` by traffic_rq_doorbell.sh;
 * abi_ring.h "Receive doorbell suppression").
 *
 * Two contexts (two clients of the daemon, so a doorbell of one never
 * reads the other's rings): A and B, RC QPs connected at MTU 1024. In
 * RTS, B's receives are posted without a doorbell (rq_no_doorbell) and no
 * message consumes them; then B goes to ERR:
 *   modify: the client moves B with ibv_modify_qp(IBV_QPS_ERR);
 *   remote: A's RDMA WRITE with an rkey that names nothing makes B's
 *     responder fail (NAK Remote Access Error, IBV_EVENT_QP_ACCESS_ERR on
 *     B) and A's requester too (IBV_WC_REM_ACCESS_ERR, no event), both
 *     moved by the engine itself.
 * Every receive B posted completes with IBV_WC_WR_FLUSH_ERR, in posting
 * order (wr_id), exact count, none lost and none twice; in remote mode A's
 * own 8 posted receives too. Fill: 64 receives (a full RQ) posted before
 * the move. Race: a second thread keeps posting B's receives one by one
 * (polling B's CQ to free slots) while the main thread moves B to ERR
 * after 0-255 us, then posts 4 more: 300 rounds per mode, each ended by
 * RESET and a new connection; at most one round in ten may take over
 * 500 ms from the move to the last flush (a withdrawal that waits for the
 * daemon's next timer takes about 1 s, in nearly every round).
 * Sources: ibv_post_recv(3) (receives posted in ERR are flushed),
 * ibv_poll_cq(3), IBTA 10.3.1 (QP states), 9.7.5.2 (NAK codes), 11.6.3.
 */
#include "config.h"
#include "check_main.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 10000
#define RQ_DEPTH 64u
#define A_RECVS 8u
#define ROUNDS 300
#define AFTER_ERR 4u
/* A round whose flush waits for the daemon's next timer (a lost wake-up)
 * takes about a second; a few ms otherwise, so a round over SLOW_MS is
 * allowed only in one of ten (a loaded machine's scheduling). */
#define SLOW_MS 500

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char buf[4096];
	union ibv_gid gid;
	uint64_t next_wrid, done; /* receives posted / completed since the last RESET */
};

static struct end A, B;

static void end_open(struct end *e)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = RQ_DEPTH, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	memset(e, 0, sizeof(*e));
	e->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(e->ctx);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 4 * RQ_DEPTH, NULL, NULL, 0);
	ck_assert(e->pd && e->cq);
	e->mr = ibv_reg_mr(e->pd, e->buf, sizeof(e->buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(e->mr);
	qa.send_cq = qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	ck_assert_ptr_nonnull(e->qp);
	ck_assert_uint_eq(qa.cap.max_recv_wr, RQ_DEPTH);
	ck_assert_int_eq(ibv_query_gid(e->ctx, 1, 0, &e->gid), 0);
}

static void end_close(struct end *e)
{
	ck_assert_int_eq(ibv_destroy_qp(e->qp), 0);
	ck_assert_int_eq(ibv_dereg_mr(e->mr), 0);
	ck_assert_int_eq(ibv_destroy_cq(e->cq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(e->pd), 0);
	ck_assert_int_eq(ibv_close_device(e->ctx), 0);
}

/* Both QPs to RESET (discarding nothing: every receive has completed)
 * and connected again. */
static void connect_pair(void)
{
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };

	ck_assert_int_eq(ibv_modify_qp(A.qp, &r, IBV_QP_STATE), 0);
	ck_assert_int_eq(ibv_modify_qp(B.qp, &r, IBV_QP_STATE), 0);
	A.next_wrid = A.done = B.next_wrid = B.done = 0;
	ck_assert_int_eq(tv_rc_connect(A.qp, B.qp->qp_num, &B.gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(B.qp, A.qp->qp_num, &A.gid, IBV_MTU_1024, 14), 0);
}

static int post_recv(struct end *e)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = 64, .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = e->next_wrid, .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = ibv_post_recv(e->qp, &wr, &bad);

	if (!rc)
		e->next_wrid++;
	return rc;
}

/* One receive completion of E, if any: it must be the next flushed one.
 * Returns 1 if one was polled, 0 if none. */
static int poll_recv(struct end *e)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(e->cq, 1, &wc);

	ck_assert_int_ge(n, 0);
	if (!n)
		return 0;
	ck_assert_msg(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == e->done,
		      "receive completion %llu: status %s wr_id %llu, want WR_FLUSH_ERR",
		      (unsigned long long)e->done, ibv_wc_status_str(wc.status),
		      (unsigned long long)wc.wr_id);
	e->done++;
	return 1;
}

/* Every receive E posted completes (flushed), then no more. */
static void drain(struct end *e)
{
	uint64_t deadline = tv_now_ms() + WAIT_MS;
	struct ibv_wc wc;

	while (e->done < e->next_wrid) {
		if (!poll_recv(e))
			ck_assert_msg(tv_now_ms() < deadline, "%llu of %llu receives flushed",
				      (unsigned long long)e->done, (unsigned long long)e->next_wrid);
	}
	usleep(2000);
	ck_assert_int_eq(ibv_poll_cq(e->cq, 1, &wc), 0);
}

/* B to ERR: by ibv_modify_qp, or (REMOTE) by A's WRITE with a bad rkey;
 * then the engine's own moves are confirmed by A's completion and B's
 * async event. */
static void to_err(int remote)
{
	struct ibv_async_event ev;
	struct ibv_wc wc;

	if (!remote) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		ck_assert_int_eq(ibv_modify_qp(B.qp, &a, IBV_QP_STATE), 0);
		return;
	}
	struct ibv_sge sge = { .addr = (uintptr_t)A.buf, .length = 8, .lkey = A.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0xbad, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)B.buf, .rkey = B.mr->rkey ^ 0x5a5a00 },
	}, *bad;

	ck_assert_int_eq(ibv_post_send(A.qp, &wr, &bad), 0);
	ck_assert_int_eq(tv_poll_one(A.cq, WAIT_MS, &wc), 0);
	ck_assert_uint_eq(wc.wr_id, 0xbad);
	ck_assert_str_eq(ibv_wc_status_str(wc.status), ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	ck_assert_int_eq(tv_next_async(B.ctx, WAIT_MS, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
	ck_assert_ptr_eq(ev.element.qp, B.qp);
	ibv_ack_async_event(&ev);
}

/* A full RQ posted in RTS without a doorbell, then ERR. */
static void fill_round(int remote)
{
	connect_pair();
	for (unsigned int i = 0; i < A_RECVS; i++)
		ck_assert_int_eq(post_recv(&A), 0);
	for (unsigned int i = 0; i < RQ_DEPTH; i++)
		ck_assert_int_eq(post_recv(&B), 0);
	to_err(remote);
	drain(&B);
	ck_assert_uint_eq(B.done, RQ_DEPTH);
	if (remote) {
		drain(&A);
		ck_assert_uint_eq(A.done, A_RECVS);
	}
}

static volatile int poster_stop;

/* B's receives one by one until told to stop, then AFTER_ERR more (the
 * QP is in ERR by then); a full RQ waits for completions. */
static void *poster(void *arg)
{
	unsigned int extra = 0;

	(void)arg;
	while (extra < AFTER_ERR) {
		if (B.next_wrid - B.done >= RQ_DEPTH) {
			poll_recv(&B);
			continue;
		}
		ck_assert_int_eq(post_recv(&B), 0);
		poll_recv(&B);
		if (__atomic_load_n(&poster_stop, __ATOMIC_ACQUIRE))
			extra++;
	}
	return NULL;
}

static void race_rounds(int remote)
{
	unsigned int seed = 13 + remote, slow = 0;

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0;
		pthread_t t;

		connect_pair();
		__atomic_store_n(&poster_stop, 0, __ATOMIC_RELEASE);
		ck_assert_int_eq(pthread_create(&t, NULL, poster, NULL), 0);
		usleep(rand_r(&seed) % 256);
		to_err(remote);
		t0 = tv_now_ms();
		__atomic_store_n(&poster_stop, 1, __ATOMIC_RELEASE);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
		drain(&B);
		ck_assert_uint_ge(B.done, AFTER_ERR);
		if (tv_now_ms() - t0 > SLOW_MS)
			slow++;
	}
	ck_assert_msg(slow <= ROUNDS / 10, "%u of %d rounds took over %d ms to flush", slow, ROUNDS, SLOW_MS);
}

static void setup(void)
{
	end_open(&A);
	end_open(&B);
}

static void teardown(void)
{
	end_close(&A);
	end_close(&B);
}

START_TEST(modify_fill)
{
	fill_round(0);
}
END_TEST

START_TEST(remote_access_fill)
{
	fill_round(1);
}
END_TEST

START_TEST(modify_race)
{
	race_rounds(0);
}
END_TEST

START_TEST(remote_access_race)
{
	race_rounds(1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_rq_doorbell");
	TCase *tc = tcase_create("rq_doorbell");

	tcase_set_timeout(tc, 240);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, modify_fill);
	tcase_add_test(tc, remote_access_fill);
	tcase_add_test(tc, modify_race);
	tcase_add_test(tc, remote_access_race);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
