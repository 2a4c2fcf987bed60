/*
 * traffic_post.c - ibv_post_send / ibv_post_recv errors and inline data
 * through libibverbs, the provider and a running uroced (Check, run inside
 * `uroce run` by traffic_post.sh).
 *
 * ibv_post_send(3) / ibv_post_recv(3): on error nothing from *bad_wr on is
 * posted; EINVAL for a QP in a state that cannot post (send: RESET, INIT,
 * RTR; receive: RESET) or a bad WR, ENOMEM for a full queue. Posting in ERR
 * is accepted and completes with IBV_WC_WR_FLUSH_ERR, as on mlx5. Inline
 * data (IBV_SEND_INLINE) is copied at post time: its buffer needs no MR.
 */
#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 10000
#define INLINE 64

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static struct ibv_cq *cq;
static union ibv_gid gid;
static char buf[4096];

static void setup(void)
{
	ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	pd = ibv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cq);
}

static void teardown(void)
{
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}

/* RC QP with 4 send and 4 receive WRs, INLINE bytes of inline data; *cap
 * receives what the provider granted. */
static struct ibv_qp *rc_qp(struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = INLINE },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);

	ck_assert_ptr_nonnull(qp);
	ck_assert_uint_ge(qa.cap.max_send_wr, 4);
	ck_assert_uint_ge(qa.cap.max_inline_data, INLINE);
	*cap = qa.cap;
	return qp;
}

/* One signalled 16-byte SEND; the WR stays valid for the caller's *bad. */
static int send_one(struct ibv_qp *qp, uint64_t wr_id, struct ibv_send_wr **bad)
{
	static struct ibv_sge sge;
	static struct ibv_send_wr wr;

	sge = (struct ibv_sge){ (uintptr_t)buf, 16, mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	*bad = NULL;
	return ibv_post_send(qp, &wr, bad);
}

static struct ibv_wc poll_one(void)
{
	struct ibv_wc wc;
	int rc = tv_poll_one(cq, WAIT_MS, &wc);

	ck_assert_msg(rc == 0, "no completion within %d ms: %s", WAIT_MS, strerror(rc));
	return wc;
}

START_TEST(post_send_before_rts_is_einval)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	struct ibv_recv_wr rwr = { .wr_id = 9 }, *rbad = NULL;
	struct ibv_send_wr *bad;
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = rc_qp(&cap);

	/* RESET: neither queue posts. */
	ck_assert_int_eq(send_one(qp, 1, &bad), EINVAL);
	ck_assert_ptr_nonnull(bad);
	ck_assert_uint_eq(bad->wr_id, 1);
	ck_assert_int_eq(ibv_post_recv(qp, &rwr, &rbad), EINVAL);
	ck_assert_ptr_eq(rbad, &rwr);
	/* INIT: receives post, sends do not. */
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					       IBV_QP_ACCESS_FLAGS), 0);
	ck_assert_int_eq(send_one(qp, 2, &bad), EINVAL);
	ck_assert_uint_eq(bad->wr_id, 2);
	rbad = NULL;
	ck_assert_int_eq(ibv_post_recv(qp, &rwr, &rbad), 0);
	ck_assert_ptr_null(rbad);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
}
END_TEST

START_TEST(full_send_queue_is_enomem_at_the_first_wr_left)
{
	struct ibv_send_wr wrs[64], *bad = NULL;
	struct ibv_sge sge = { (uintptr_t)buf, 16, mr->lkey };
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = rc_qp(&cap);
	uint32_t i, n = cap.max_send_wr + 2;

	ck_assert_uint_le(n, 64);
	/* To a QPN nobody has, with a 4 s ACK timeout: nothing completes
	 * while the test looks at the queue. */
	ck_assert_int_eq(tv_rc_connect(qp, 0xABCDE, &gid, IBV_MTU_1024, 20), 0);
	memset(wrs, 0, sizeof(wrs));
	for (i = 0; i < n; i++) {
		wrs[i].wr_id = 100 + i;
		wrs[i].sg_list = &sge;
		wrs[i].num_sge = 1;
		wrs[i].opcode = IBV_WR_SEND;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
	}
	ck_assert_int_eq(ibv_post_send(qp, wrs, &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wrs[cap.max_send_wr]);
	ck_assert_int_eq(send_one(qp, 7, &bad), ENOMEM);
	ck_assert_uint_eq(bad->wr_id, 7);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
}
END_TEST

START_TEST(inline_send_needs_no_mr)
{
	char payload[INLINE];
	char big[INLINE * 8];
	struct ibv_sge in = { (uintptr_t)payload, sizeof(payload), 0xdeadbeef };
	struct ibv_sge too_big = { (uintptr_t)big, sizeof(big), 0xdeadbeef };
	struct ibv_sge rsge = { (uintptr_t)buf + 1024, 1024, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &in, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE }, *bad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = rc_qp(&cap);
	struct ibv_wc wc[2];
	int i, got_send = 0, got_recv = 0;

	for (i = 0; i < INLINE; i++)
		payload[i] = (char)(0xA0 + i);
	memset(buf + 1024, 0, 1024);
	ck_assert_int_eq(tv_rc_connect(qp, qp->qp_num, &gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(ibv_post_recv(qp, &rwr, &rbad), 0);
	/* More than max_inline_data: EINVAL, nothing posted. */
	wr.sg_list = &too_big;
	ck_assert_uint_lt(cap.max_inline_data, sizeof(big));
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	wr.sg_list = &in;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
	memset(payload, 0, sizeof(payload)); /* copied at post time */
	for (i = 0; i < 2; i++) {
		wc[i] = poll_one();
		ck_assert_int_eq(wc[i].status, IBV_WC_SUCCESS);
		if (wc[i].opcode == IBV_WC_SEND) {
			ck_assert_uint_eq(wc[i].wr_id, 1);
			got_send++;
		} else {
			ck_assert_int_eq(wc[i].opcode, IBV_WC_RECV);
			ck_assert_uint_eq(wc[i].wr_id, 2);
			ck_assert_uint_eq(wc[i].byte_len, INLINE);
			got_recv++;
		}
	}
	ck_assert_int_eq(got_send, 1);
	ck_assert_int_eq(got_recv, 1);
	for (i = 0; i < INLINE; i++)
		ck_assert_uint_eq((uint8_t)buf[1024 + i], 0xA0 + i);
	ck_assert_uint_eq((uint8_t)buf[1024 + INLINE], 0);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
}
END_TEST

START_TEST(post_in_err_flushes)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_send_wr *bad;
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = rc_qp(&cap);
	struct ibv_wc wc;

	ck_assert_int_eq(tv_rc_connect(qp, qp->qp_num, &gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	ck_assert_int_eq(send_one(qp, 5, &bad), 0);
	wc = poll_one();
	ck_assert_uint_eq(wc.wr_id, 5);
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc.qp_num, qp->qp_num);
	ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 0);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_post");
	TCase *tc = tcase_create("post");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, post_send_before_rts_is_einval);
	tcase_add_test(tc, full_send_queue_is_enomem_at_the_first_wr_left);
	tcase_add_test(tc, inline_send_needs_no_mr);
	tcase_add_test(tc, post_in_err_flushes);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
