/*
 * traffic_dv_wc.c - urocedv(3) through libibverbs and the real daemon (run
 * by traffic_dv_wc.sh inside `uroce run`), linked to the provider as an
 * application would (-luroce-rdmav<PABI>).
 *
 * test_api: urocedv_is_supported, urocedv_create_cq_wc's errors (a flag
 * outside UROCEDV_WC_FIELDS: EOPNOTSUPP; no layout: EINVAL), the layout it
 * returns, urocedv_poll_cq_wc on a CQ it did not create (negative) and on an
 * empty one (0), ibv_poll_cq and ibv_destroy_cq on its CQ.
 * test_traffic: 2000 RC messages of 64 KiB at MTU 1024, SEND and
 * SEND_WITH_IMM alternating, received on a CQ made by urocedv_create_cq_wc
 * with every field (the generic poll) and polled with urocedv_poll_cq_wc
 * in batches of 16: each WC exact (wr_id in order, status, opcode, wc_flags,
 * byte_len, imm_data, qp_num, src_qp, sl 2, slid 0, dlid_path_bits 0),
 * completion_ts never decreasing and between raw clock readings before the
 * post and after the poll, completion_wallclock_ns within 2 ms of
 * CLOCK_REALTIME, and the payload of the last message byte for byte.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <infiniband/urocedv.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define MSG 65536
#define COUNT 2000
#define WINDOW 64
#define BATCH 16
#define WAIT_MS 20000

static uint64_t raw_clock(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	ck_assert_int_eq(ibv_query_rt_values_ex(ctx, &v), 0);
	return (uint64_t)v.raw_clock.tv_sec * 1000000000ull + (uint64_t)v.raw_clock.tv_nsec;
}

static uint64_t realtime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

START_TEST(test_api)
{
	struct ibv_context *ctx = tv_open(DEV);
	struct ibv_cq_init_attr_ex ca = { .cqe = 64, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN |
								IBV_WC_EX_WITH_CVLAN };
	struct urocedv_wc_layout l;
	struct ibv_cq_ex *cq, *plain;
	unsigned char buf[BATCH * 64];
	struct ibv_wc wc;

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(urocedv_is_supported(ctx->device), 1);
	ck_assert_int_eq(urocedv_is_supported(NULL), 0);
	errno = 0;
	ck_assert_ptr_null(urocedv_create_cq_wc(ctx, &ca, &l));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	ck_assert_ptr_null(urocedv_create_cq_wc(ctx, &ca, NULL));
	ck_assert_int_eq(errno, EINVAL);
	cq = urocedv_create_cq_wc(ctx, &ca, &l);
	ck_assert_ptr_nonnull(cq);
	/* 16-byte head, completion_ts, byte_len, sl: 29 bytes, stride 32 */
	ck_assert_uint_eq(l.fields, ca.wc_flags);
	ck_assert_uint_eq(l.offset[UROCEDV_WC_COMPLETION_TS], 16);
	ck_assert_uint_eq(l.offset[UROCEDV_WC_BYTE_LEN], 24);
	ck_assert_uint_eq(l.offset[UROCEDV_WC_SL], 28);
	ck_assert_uint_eq(l.offset[UROCEDV_WC_QP_NUM], 0);
	ck_assert_uint_eq(l.stride, 32);
	ck_assert_int_eq(urocedv_poll_cq_wc(cq, BATCH, buf), 0);
	ck_assert_int_lt(urocedv_poll_cq_wc(cq, -1, buf), 0);
	ck_assert_int_eq(ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc), 0);
	plain = ibv_create_cq_ex(ctx, &ca);
	ck_assert_ptr_nonnull(plain);
	ck_assert_int_lt(urocedv_poll_cq_wc(plain, BATCH, buf), 0);
	ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(plain)), 0);
	ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* One end: context, PD, CQ, RC QP, registered buffer of WINDOW messages. */
struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cq_ex;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	union ibv_gid gid;
};

static void end_open(struct end *e, struct ibv_cq *cq, struct ibv_cq_ex *cq_ex,
		     struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = WINDOW, .max_recv_wr = WINDOW,
						.max_send_sge = 1, .max_recv_sge = 1 } };

	e->ctx = ctx;
	e->cq = cq;
	e->cq_ex = cq_ex;
	e->pd = ibv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(e->pd);
	e->buf = aligned_alloc(4096, (size_t)WINDOW * MSG);
	ck_assert_ptr_nonnull(e->buf);
	e->mr = ibv_reg_mr(e->pd, e->buf, (size_t)WINDOW * MSG, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(e->mr);
	qa.send_cq = qa.recv_cq = cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	ck_assert_ptr_nonnull(e->qp);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &e->gid), 0);
}

static void post_recv(struct end *b, uint64_t i)
{
	struct ibv_sge sge = { (uintptr_t)b->buf + (i % WINDOW) * MSG, MSG, b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(b->qp, &wr, &bad), 0);
}

static void post_send(struct end *a, uint64_t i)
{
	struct ibv_sge sge = { (uintptr_t)a->buf + (i % WINDOW) * MSG, MSG, a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				  .opcode = i % 2 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32((uint32_t)i * 7 + 1) }, *bad;

	memset(a->buf + (i % WINDOW) * MSG, (int)(i & 0xff), MSG);
	ck_assert_int_eq(ibv_post_send(a->qp, &wr, &bad), 0);
}

START_TEST(test_traffic)
{
	struct ibv_context *ca = tv_open(DEV), *cb = tv_open(DEV);
	struct ibv_cq_init_attr_ex attr = { .cqe = 2 * WINDOW, .wc_flags = UROCEDV_WC_FIELDS };
	struct urocedv_wc_layout l;
	struct end a, b;
	unsigned char wcbuf[BATCH * 64];
	uint64_t sent = 0, send_done = 0, got = 0, last_ts = 0, t0, wall0;

	ck_assert_ptr_nonnull(ca);
	ck_assert_ptr_nonnull(cb);
	struct ibv_cq_ex *rcq = urocedv_create_cq_wc(cb, &attr, &l);
	ck_assert_ptr_nonnull(rcq);
	ck_assert_uint_le(l.stride * BATCH, sizeof(wcbuf));
	end_open(&a, ibv_create_cq(ca, 2 * WINDOW, NULL, NULL, 0), NULL, ca);
	end_open(&b, ibv_cq_ex_to_cq(rcq), rcq, cb);
	ck_assert_int_eq(tv_rc_connect(a.qp, b.qp->qp_num, &b.gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(b.qp, a.qp->qp_num, &a.gid, IBV_MTU_1024, 14), 0);

	t0 = raw_clock(cb);
	wall0 = realtime_ns();
	for (uint64_t i = 0; i < WINDOW; i++)
		post_recv(&b, i);
	uint64_t deadline = tv_now_ms() + WAIT_MS;
	while (got < COUNT) {
		struct ibv_wc swc[BATCH];
		int k;

		ck_assert_msg(tv_now_ms() < deadline, "%llu of %d received", (unsigned long long)got, COUNT);
		while (sent < COUNT && sent - got < WINDOW && sent - send_done < WINDOW)
			post_send(&a, sent++);
		k = ibv_poll_cq(a.cq, BATCH, swc);
		ck_assert_int_ge(k, 0);
		for (int i = 0; i < k; i++, send_done++) {
			ck_assert_int_eq(swc[i].status, IBV_WC_SUCCESS);
			ck_assert_uint_eq(swc[i].wr_id, send_done);
		}
		k = urocedv_poll_cq_wc(rcq, BATCH, wcbuf);
		ck_assert_int_ge(k, 0);
		uint64_t t1 = k ? raw_clock(cb) : 0, wall1 = k ? realtime_ns() : 0;
		for (int j = 0; j < k; j++, got++) {
			const struct urocedv_wc *w = urocedv_wc_at(&l, wcbuf, j);
			uint64_t ts = urocedv_wc_read_u64(&l, w, UROCEDV_WC_COMPLETION_TS);
			uint64_t wall = urocedv_wc_read_u64(&l, w, UROCEDV_WC_COMPLETION_WALLCLOCK_NS);
			int imm = got % 2;

			ck_assert_uint_eq(w->wr_id, got);
			ck_assert_int_eq(w->status, IBV_WC_SUCCESS);
			ck_assert_int_eq(w->opcode, IBV_WC_RECV);
			ck_assert_uint_eq(w->wc_flags, imm ? IBV_WC_WITH_IMM : 0);
			ck_assert_uint_eq(w->vendor_err, 0);
			ck_assert_uint_eq(urocedv_wc_read_u32(&l, w, UROCEDV_WC_BYTE_LEN), MSG);
			if (imm)
				ck_assert_uint_eq(urocedv_wc_read_u32(&l, w, UROCEDV_WC_IMM_DATA),
						  htobe32((uint32_t)got * 7 + 1));
			ck_assert_uint_eq(urocedv_wc_read_u32(&l, w, UROCEDV_WC_QP_NUM), b.qp->qp_num);
			ck_assert_uint_eq(urocedv_wc_read_u32(&l, w, UROCEDV_WC_SRC_QP), a.qp->qp_num);
			ck_assert_uint_eq(urocedv_wc_read_u8(&l, w, UROCEDV_WC_SL), 2);
			ck_assert_uint_eq(urocedv_wc_read_u16(&l, w, UROCEDV_WC_SLID), 0);
			ck_assert_uint_eq(urocedv_wc_read_u8(&l, w, UROCEDV_WC_DLID_PATH_BITS), 0);
			ck_assert_uint_ge(ts, last_ts);
			ck_assert_uint_ge(ts, t0);
			ck_assert_uint_le(ts, t1);
			ck_assert_uint_ge(wall + 2000000, wall0);
			ck_assert_uint_le(wall, wall1 + 2000000);
			last_ts = ts;
			if (got + WINDOW < COUNT)
				post_recv(&b, got + WINDOW);
		}
	}
	/* the last message arrived whole: byte (COUNT-1) & 0xff everywhere */
	const unsigned char *last = b.buf + ((COUNT - 1) % WINDOW) * MSG;
	for (int i = 0; i < MSG; i++)
		ck_assert_uint_eq(last[i], (COUNT - 1) & 0xff);
	ck_assert_int_eq(ibv_destroy_qp(a.qp), 0);
	ck_assert_int_eq(ibv_destroy_qp(b.qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(a.cq), 0);
	ck_assert_int_eq(ibv_destroy_cq(b.cq), 0);
	ibv_dereg_mr(a.mr);
	ibv_dereg_mr(b.mr);
	ibv_dealloc_pd(a.pd);
	ibv_dealloc_pd(b.pd);
	free(a.buf);
	free(b.buf);
	ibv_close_device(ca);
	ibv_close_device(cb);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_dv_wc");
	TCase *tc = tcase_create("dv_wc");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_api);
	tcase_add_test(tc, test_traffic);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_ENV);
}
