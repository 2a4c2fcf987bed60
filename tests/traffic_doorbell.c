/*
 * traffic_doorbell.c - doorbell suppression under concurrent posters
 * (abi_ring.h "Doorbell suppression"; Check, run inside `uroce run` by
 * traffic_doorbell.sh against a running uroced).
 *
 * The provider skips the doorbell eventfd while the daemon has promised to
 * read the QP's ring again; the daemon withdraws the promise when a loop
 * turn finds the ring idle and looks once more. A post racing with that
 * withdrawal that nobody reads is a lost wake-up: its WQE would never
 * complete. Each poster here owns an RC QP pair on uroce0 (path MTU 1024)
 * and, ITERS times, posts a burst of 1 to BURST_MAX receives and 64-byte
 * signalled SENDs, then waits for every completion; most bursts are posted
 * the moment the last completion is seen (when the daemon is deciding
 * whether to sleep), every 16th after a pause of 50-500 us (the daemon
 * asleep). Two posters run at once: two threads of one context (one
 * doorbell eventfd), or two processes (two contexts). Every completion is
 * checked exactly: status SUCCESS, opcode, wr_id in order, byte_len 64, and
 * the received bytes. A missing completion fails after WAIT_MS.
 */
#include "check_main.h"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define ITERS 2000
#define BURST_MAX 8
#define MSG 64
#define WAIT_MS 10000

/* One poster: a sending QP and its receiving partner, CQs of their own. */
struct poster {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *sq, *rq;
	struct ibv_mr *mr;
	unsigned char buf[2 * BURST_MAX * MSG];
	unsigned int id;
	char err[160];
};

static int bad(struct poster *p, const char *what, long long v)
{
	snprintf(p->err, sizeof(p->err), "poster %u: %s (%lld)", p->id, what, v);
	return -1;
}

static struct ibv_qp *make_qp(struct poster *p)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = p->scq, .recv_cq = p->rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = BURST_MAX, .max_recv_wr = BURST_MAX,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(p->pd, &qa);
}

/* Objects of P on CTX (shared or not), both QPs in RTS, connected. */
static int poster_open(struct poster *p, struct ibv_context *ctx)
{
	union ibv_gid gid;

	p->ctx = ctx;
	if (ibv_query_gid(ctx, 1, 0, &gid))
		return bad(p, "ibv_query_gid", errno);
	p->pd = ibv_alloc_pd(ctx);
	p->scq = ibv_create_cq(ctx, 2 * BURST_MAX, NULL, NULL, 0);
	p->rcq = ibv_create_cq(ctx, 2 * BURST_MAX, NULL, NULL, 0);
	if (!p->pd || !p->scq || !p->rcq)
		return bad(p, "PD/CQ", errno);
	p->mr = ibv_reg_mr(p->pd, p->buf, sizeof(p->buf), IBV_ACCESS_LOCAL_WRITE);
	p->sq = make_qp(p);
	p->rq = make_qp(p);
	if (!p->mr || !p->sq || !p->rq)
		return bad(p, "MR/QP", errno);
	if (tv_rc_connect(p->sq, p->rq->qp_num, &gid, IBV_MTU_1024, 14) ||
	    tv_rc_connect(p->rq, p->sq->qp_num, &gid, IBV_MTU_1024, 14))
		return bad(p, "connect", errno);
	return 0;
}

static void poster_close(struct poster *p)
{
	ibv_destroy_qp(p->sq);
	ibv_destroy_qp(p->rq);
	ibv_dereg_mr(p->mr);
	ibv_destroy_cq(p->scq);
	ibv_destroy_cq(p->rcq);
	ibv_dealloc_pd(p->pd);
}

/* The bytes of message SEQ of poster ID. */
static void pattern(unsigned char *b, unsigned int id, uint64_t seq)
{
	for (int i = 0; i < MSG; i++)
		b[i] = (unsigned char)(id * 131 + seq * 7 + (uint64_t)i);
}

/* Waits for one completion on CQ and checks it is WR_ID / OPCODE / LEN. */
static int expect_wc(struct poster *p, struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_opcode op,
		     uint32_t len)
{
	struct ibv_wc wc;
	int rc = tv_poll_one(cq, WAIT_MS, &wc);

	if (rc)
		return bad(p, rc == ETIMEDOUT ? "completion missing (lost doorbell?) wr_id" :
				"ibv_poll_cq failed, wr_id", (long long)wr_id);
	if (wc.status != IBV_WC_SUCCESS)
		return bad(p, "completion status", wc.status);
	if (wc.wr_id != wr_id)
		return bad(p, "wr_id out of order", (long long)wc.wr_id);
	if (wc.opcode != op)
		return bad(p, "opcode", wc.opcode);
	if (op == IBV_WC_RECV && wc.byte_len != len)
		return bad(p, "byte_len", wc.byte_len);
	return 0;
}

static int post_burst(struct poster *p, uint64_t seq, int k)
{
	for (int j = 0; j < k; j++) {
		unsigned char *rb = p->buf + (size_t)(BURST_MAX + j) * MSG;
		unsigned char *sb = p->buf + (size_t)j * MSG;
		struct ibv_sge rs = { (uintptr_t)rb, MSG, p->mr->lkey };
		struct ibv_sge ss = { (uintptr_t)sb, MSG, p->mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = seq + (uint64_t)j, .sg_list = &rs, .num_sge = 1 };
		struct ibv_send_wr sw = { .wr_id = seq + (uint64_t)j, .sg_list = &ss, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
		struct ibv_recv_wr *rbad;
		struct ibv_send_wr *sbad;

		memset(rb, 0, MSG);
		pattern(sb, p->id, seq + (uint64_t)j);
		if (ibv_post_recv(p->rq, &rw, &rbad))
			return bad(p, "ibv_post_recv", errno);
		if (ibv_post_send(p->sq, &sw, &sbad))
			return bad(p, "ibv_post_send", errno);
	}
	return 0;
}

/* ITERS bursts; returns 0 or -1 with p->err set. */
static int poster_run(struct poster *p)
{
	uint64_t seq = 0;
	unsigned char want[MSG];

	for (unsigned int i = 0; i < ITERS; i++) {
		int k = 1 + (int)((i * 5 + p->id) % BURST_MAX);

		if (i % 16 == 15)
			usleep(50 + (i * 37 + p->id * 101) % 450);
		if (post_burst(p, seq, k))
			return -1;
		for (int j = 0; j < k; j++) {
			if (expect_wc(p, p->scq, seq + (uint64_t)j, IBV_WC_SEND, 0) ||
			    expect_wc(p, p->rcq, seq + (uint64_t)j, IBV_WC_RECV, MSG))
				return -1;
			pattern(want, p->id, seq + (uint64_t)j);
			if (memcmp(p->buf + (size_t)(BURST_MAX + j) * MSG, want, MSG))
				return bad(p, "received bytes differ, message", (long long)(seq + (uint64_t)j));
		}
		seq += (uint64_t)k;
	}
	return 0;
}

static void *poster_thread(void *arg)
{
	struct poster *p = arg;

	return poster_run(p) ? p : NULL;
}

/* Two threads of one context post at once: every WQE completes. */
START_TEST(test_two_threads)
{
	struct ibv_context *ctx = tv_open(DEV);
	struct poster *p = calloc(2, sizeof(*p));
	pthread_t t[2];

	ck_assert_ptr_nonnull(ctx);
	ck_assert_ptr_nonnull(p);
	for (unsigned int i = 0; i < 2; i++) {
		p[i].id = i;
		ck_assert_msg(poster_open(&p[i], ctx) == 0, "%s", p[i].err);
	}
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, poster_thread, &p[i]), 0);
	for (int i = 0; i < 2; i++) {
		void *ret;

		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_msg(ret == NULL, "%s", p[i].err);
	}
	for (int i = 0; i < 2; i++)
		poster_close(&p[i]);
	free(p);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* Two processes (two contexts, two doorbells) post at once. */
START_TEST(test_two_processes)
{
	pid_t pid[2];

	for (unsigned int i = 0; i < 2; i++) {
		pid[i] = fork();
		ck_assert_int_ge(pid[i], 0);
		if (!pid[i]) {
			struct poster *p = calloc(1, sizeof(*p));
			struct ibv_context *ctx = tv_open(DEV);
			int rc;

			if (!p || !ctx)
				_exit(2);
			p->id = 2 + i;
			rc = poster_open(p, ctx) || poster_run(p);
			if (rc)
				fprintf(stderr, "FAIL: %s\n", p->err);
			poster_close(p);
			ibv_close_device(ctx);
			_exit(rc ? 1 : 0);
		}
	}
	for (int i = 0; i < 2; i++) {
		int st;

		ck_assert_int_eq(waitpid(pid[i], &st, 0), pid[i]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "poster process %d failed (status 0x%x)", i, st);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_doorbell");
	TCase *tc = tcase_create("doorbell");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_two_threads);
	tcase_add_test(tc, test_two_processes);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
