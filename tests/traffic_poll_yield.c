/*
 * traffic_poll_yield.c - an empty CQ polled through the real provider
 * gives the CPU back (provider/poll_yield.h; Check, run inside `uroce run`
 * by traffic_poll_yield.sh).
 *
 * This program defines sched_yield and exports it (-rdynamic), so the
 * provider libibverbs loads reaches this definition and every yield is
 * counted. Each test sets UROCE_POLL_YIELD before ibv_open_device (Check
 * runs each in its own process):
 *   default (unset): 640 empty ibv_poll_cq calls yield 10 times, 640 empty
 *     ibv_start_poll calls on an extended CQ 10 more;
 *   UROCE_POLL_YIELD=0: 10,000 empty polls, no yield; =1: one per poll;
 *   a completion restarts the count: 63 empty polls, an RDMA WRITE of an
 *     RC QP connected to itself completes (waited for on a completion
 *     channel, not by polling), the poll that finds it, 63 empty polls: no
 *     yield; the 64th: one.
 * Source: sched_yield(2), ibv_poll_cq(3), ibv_create_cq_ex(3).
 */
#include "config.h"
#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 10000

static unsigned int yields;

/* The provider's sched_yield(2) calls land here (exported by -rdynamic). */
int sched_yield(void)
{
	yields++;
	return 0;
}

static struct ibv_context *open_with(const char *setting)
{
	struct ibv_context *ctx;

	if (setting)
		ck_assert_int_eq(setenv("UROCE_POLL_YIELD", setting, 1), 0);
	else
		ck_assert_int_eq(unsetenv("UROCE_POLL_YIELD"), 0);
	ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(ctx);
	return ctx;
}

static void empty_polls(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc;

	for (int i = 0; i < n; i++)
		ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 0);
}

START_TEST(test_default)
{
	struct ibv_context *ctx = open_with(NULL);
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cq);
	yields = 0;
	empty_polls(cq, 640);
	ck_assert_uint_eq(yields, 10);
	cqx = ibv_create_cq_ex(ctx, &ca);
	ck_assert_ptr_nonnull(cqx);
	for (int i = 0; i < 640; i++)
		ck_assert_int_eq(ibv_start_poll(cqx, &pa), ENOENT);
	ck_assert_uint_eq(yields, 20);
	ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_never_and_always)
{
	struct ibv_context *ctx = open_with("0");
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);

	ck_assert_ptr_nonnull(cq);
	yields = 0;
	empty_polls(cq, 10000);
	ck_assert_uint_eq(yields, 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);

	ctx = open_with("1");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cq);
	empty_polls(cq, 100);
	ck_assert_uint_eq(yields, 100);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_completion_restarts)
{
	struct ibv_context *ctx = open_with("64");
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	static unsigned char buf[128];
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_cq *cq, *ev_cq;
	union ibv_gid gid;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	void *ev_ctx;

	ck_assert_ptr_nonnull(ch);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	ck_assert(pd && cq);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(mr);
	qa.send_cq = qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	ck_assert_int_eq(tv_rc_connect(qp, qp->qp_num, &gid, IBV_MTU_1024, 14), 0);

	yields = 0;
	empty_polls(cq, 63);
	ck_assert_uint_eq(yields, 0);
	ck_assert_int_eq(ibv_req_notify_cq(cq, 0), 0);
	memset(buf, 0xa5, 64);
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				   .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { .remote_addr = (uintptr_t)(buf + 64), .rkey = mr->rkey } };
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
	ck_assert_int_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	ck_assert_ptr_eq(ev_cq, cq);
	ibv_ack_cq_events(cq, 1);
	ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 1);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 7);
	ck_assert_int_eq(memcmp(buf, buf + 64, 64), 0);
	empty_polls(cq, 63);
	ck_assert_uint_eq(yields, 0);
	empty_polls(cq, 1);
	ck_assert_uint_eq(yields, 1);

	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_poll_yield");
	TCase *tc = tcase_create("poll_yield");

	tcase_set_timeout(tc, WAIT_MS / 1000 * 3);
	tcase_add_test(tc, test_default);
	tcase_add_test(tc, test_never_and_always);
	tcase_add_test(tc, test_completion_restarts);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
