/*
 * traffic_flush_aw.c - IBTA 1.5 ATOMIC WRITE and FLUSH through the real
 * extended QP API (ibv_wr_atomic_write, ibv_wr_flush; ibv_wr_post(3)),
 * libibverbs, the provider and a running uroced (Check, inside `uroce run`
 * by traffic_flush_aw.sh).
 *
 * One context on uroce0, RC QPs A -> B at path MTU 1024, B's QP with
 * REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC | FLUSH_GLOBAL | FLUSH_PERSISTENT. ATOMIC WRITE:
 * 2000 writes of distinct 8-byte patterns, each CQE IBV_WC_ATOMIC_WRITE,
 * the 8 bytes exact and their neighbours untouched; an MR with
 * REMOTE_WRITE but without REMOTE_ATOMIC takes it (the rxe rule); the
 * errors: an MR without REMOTE_WRITE (IBV_WC_REM_ACCESS_ERR), a VA not
 * 8-byte aligned (IBV_WC_REM_INV_REQ_ERR). FLUSH (built only when the
 * verbs.h has ibv_wr_flush, rdma-core >= 45: `make check-rdma-core`; the
 * engine's FLUSH is tested on every host by transport_flush_aw): 300
 * batches of a 64 KiB RDMA WRITE followed by FLUSH of its range and of the
 * whole MR, completing in that order with the data in place; the errors:
 * an MR without FLUSH_GLOBAL, PERSISTENT asked (IBV_WC_REM_ACCESS_ERR);
 * bad type or level (EINVAL at ibv_wr_complete). The device caps (bits
 * 38 FLUSH_GLOBAL and 40 ATOMIC_WRITE of device_cap_flags_ex, not 39) and
 * the MR flags (FLUSH_GLOBAL taken, FLUSH_PERSISTENT EOPNOTSUPP). On every
 * host, FLUSH WQEs written straight into the SQ ring in the layout of
 * include/uroce/abi_ring.h (what ibv_wr_flush posts), then rung by an
 * ATOMIC WRITE: the daemon carries them out in SQ order (IBV_WC_FLUSH after
 * the 64 KiB WRITE before them), and a FLUSH WQE without a placement type
 * completes in error with nothing sent for it.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "provider/uroce.h"
#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 20000
#define MSG (64 * 1024)
#define BUF (4 * MSG)
#define ACC_FLUSH_GLOBAL (1u << 8)	/* IBV_ACCESS_FLUSH_GLOBAL */
#define ACC_FLUSH_PERSISTENT (1u << 9)	/* IBV_ACCESS_FLUSH_PERSISTENT */
#define WC_FLUSH 8			/* IBV_WC_FLUSH */
#define WC_ATOMIC_WRITE 9		/* IBV_WC_ATOMIC_WRITE */
#define WITH_FLUSH (1ull << 11)		/* IBV_QP_EX_WITH_FLUSH */
#define WITH_ATOMIC_WRITE (1ull << 12)	/* IBV_QP_EX_WITH_ATOMIC_WRITE */
#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static struct ibv_cq *cq_a, *cq_b;
static struct ibv_qp *qa, *qb;
static struct ibv_qp_ex *xa;
static struct ibv_mr *mr_a, *mr_b;
static unsigned char *buf_a, *buf_b;

/* A and B connected; B's MR over buf_b with B_ACC. */
static void pair_open(unsigned int b_acc)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | WITH_ATOMIC_WRITE,
		.cap = { .max_send_wr = 16, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	/* both FLUSH bits on the QP, as pyverbs' test_qpex sets them: the MR's
	 * rights decide (the QP's are transport_flush_aw's cases) */
	struct ibv_qp_attr at = { .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						     IBV_ACCESS_REMOTE_ATOMIC | ACC_FLUSH_GLOBAL |
						     ACC_FLUSH_PERSISTENT };

#ifdef HAVE_STRUCT_IBV_QP_EX_WR_FLUSH
	ia.send_ops_flags |= WITH_FLUSH;
#endif
	ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	pd = ibv_alloc_pd(ctx);
	cq_a = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cq_b = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	ck_assert(pd && cq_a && cq_b);
	buf_a = calloc(1, BUF);
	buf_b = calloc(1, BUF);
	ck_assert(buf_a && buf_b);
	for (unsigned i = 0; i < BUF; i++)
		buf_b[i] = (unsigned char)(i * 7 + 3);
	mr_a = ibv_reg_mr(pd, buf_a, BUF, RW);
	mr_b = ibv_reg_mr(pd, buf_b, BUF, b_acc);
	ck_assert(mr_a && mr_b);
	ia.pd = pd;
	ia.send_cq = ia.recv_cq = cq_a;
	qa = ibv_create_qp_ex(ctx, &ia);
	ia.send_cq = ia.recv_cq = cq_b;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND;
	qb = ibv_create_qp_ex(ctx, &ia);
	ck_assert(qa && qb);
	xa = ibv_qp_to_qp_ex(qa);
	ck_assert_ptr_nonnull(xa);
	ck_assert_ptr_nonnull(xa->wr_atomic_write);
	ck_assert_int_eq(tv_rc_connect(qa, qb->qp_num, &gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(qb, qa->qp_num, &gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(ibv_modify_qp(qb, &at, IBV_QP_ACCESS_FLAGS), 0);
}

static void pair_close(void)
{
	ck_assert_int_eq(ibv_destroy_qp(qa), 0);
	ck_assert_int_eq(ibv_destroy_qp(qb), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr_a), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr_b), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq_a), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq_b), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
	free(buf_a);
	free(buf_b);
}

static void expect(uint64_t wr_id, enum ibv_wc_status st, int opcode)
{
	struct ibv_wc wc;

	ck_assert_int_eq(tv_poll_one(cq_a, WAIT_MS, &wc), 0);
	ck_assert_uint_eq(wc.wr_id, wr_id);
	ck_assert_msg(wc.status == st, "wr %llu: status %s, want %s", (unsigned long long)wr_id,
		      ibv_wc_status_str(wc.status), ibv_wc_status_str(st));
	if (st == IBV_WC_SUCCESS)
		ck_assert_int_eq((int)wc.opcode, opcode);
}

static int post_aw(uint64_t wr_id, uint64_t addr, uint32_t rkey, const void *v)
{
	ibv_wr_start(xa);
	xa->wr_id = wr_id;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(xa, rkey, addr, v);
	return ibv_wr_complete(xa);
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + 3);
}

START_TEST(test_atomic_write)
{
	pair_open(RW | ACC_FLUSH_GLOBAL);
	for (unsigned i = 0; i < 2000; i++) {
		size_t off = 8 * (1 + i % 512);
		uint64_t v = 0x0102030405060708ull * (i + 1) ^ 0xA5A5A5A55A5A5A5Aull;

		ck_assert_int_eq(post_aw(i, (uintptr_t)buf_b + off, mr_b->rkey, &v), 0);
		expect(i, IBV_WC_SUCCESS, WC_ATOMIC_WRITE);
		ck_assert_mem_eq(buf_b + off, &v, 8);
		if (i < 512) {
			ck_assert_uint_eq(buf_b[off + 8], pattern(off + 8));
			ck_assert_uint_eq(buf_b[off - 1], i ? buf_b[off - 1] : pattern(off - 1));
		}
	}
	ck_assert_uint_eq(buf_b[7], pattern(7));
	pair_close();
}
END_TEST

/* An MR with REMOTE_WRITE and no REMOTE_ATOMIC takes ATOMIC WRITE: the
 * responder checks REMOTE_WRITE (the kernel's rxe_resp.c). */
START_TEST(test_atomic_write_no_remote_atomic)
{
	static const unsigned char v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	pair_open(RW);
	ck_assert_int_eq(post_aw(1, (uintptr_t)buf_b + 4096, mr_b->rkey, v), 0);
	expect(1, IBV_WC_SUCCESS, WC_ATOMIC_WRITE);
	ck_assert_mem_eq(buf_b + 4096, v, 8);
	pair_close();
}
END_TEST

struct aw_err {
	const char *name;
	unsigned int b_acc;
	size_t off;
	enum ibv_wc_status st;
};

static const struct aw_err aw_errs[] = {
	{ "MR without REMOTE_WRITE", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
	  IBV_ACCESS_REMOTE_ATOMIC, 64, IBV_WC_REM_ACCESS_ERR },
	{ "VA not 8-byte aligned", RW, 68, IBV_WC_REM_INV_REQ_ERR },
	{ "VA beyond the MR", RW, BUF, IBV_WC_REM_ACCESS_ERR },
};

START_TEST(test_atomic_write_errors)
{
	const struct aw_err *c = &aw_errs[_i];
	static const unsigned char v[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };

	pair_open(c->b_acc);
	ck_assert_int_eq(post_aw(1, (uintptr_t)buf_b + c->off, mr_b->rkey, v), 0);
	expect(1, c->st, 0);
	if (c->off + 8 <= BUF)
		for (size_t i = 0; i < 8; i++)
			ck_assert_msg(buf_b[c->off + i] == pattern(c->off + i), "%s: byte %zu", c->name, i);
	pair_close();
}
END_TEST

START_TEST(test_caps_and_mr_flags)
{
	struct ibv_device_attr_ex a;
	struct ibv_mr *mr;

	pair_open(RW);
	ck_assert_int_eq(ibv_query_device_ex(ctx, NULL, &a), 0);
	ck_assert_uint_eq(a.device_cap_flags_ex >> 38 & 7, 5);	/* GLOBAL, not PERSISTENT, AW */
	mr = ibv_reg_mr(pd, buf_a, 4096, RW | ACC_FLUSH_GLOBAL);
	ck_assert_ptr_nonnull(mr);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	errno = 0;
	ck_assert_ptr_null(ibv_reg_mr(pd, buf_a, 4096, RW | ACC_FLUSH_PERSISTENT));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	/* the legacy API has no field for the 8 bytes */
	{
		struct ibv_sge sge = { (uintptr_t)buf_a, 8, mr_a->lkey };
		struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
					  .opcode = (enum ibv_wr_opcode)15 }, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)buf_b;
		wr.wr.rdma.rkey = mr_b->rkey;
		ck_assert_int_eq(ibv_post_send(qa, &wr, &bad), EOPNOTSUPP);
	}
	pair_close();
}
END_TEST

/* Writes FLUSH WQE number sq_head into A's SQ ring (abi_ring.h: length in
 * compare_add, FETH byte in swap) with WR_ID and publishes sq_pi without a
 * doorbell; the next wr_complete rings it. */
static void ring_flush(uint64_t wr_id, uint64_t addr, uint32_t len, uint8_t feth)
{
	struct uroce_qp *qp = to_uqp(qa);
	uint32_t slot = qp->sq_head & (qp->cap.max_send_wr - 1);
	struct uroce_send_wqe *w = (void *)((unsigned char *)qp->ring + qp->layout.sq_offset +
					    (size_t)slot * qp->layout.sq_stride);

	memset(w, 0, qp->layout.sq_stride);
	w->opcode = UROCE_IBV_WR_FLUSH;
	w->flags = UROCE_WQE_SIGNALED;
	w->wqe_index = (uint16_t)qp->sq_head;
	w->remote_addr = addr;
	w->rkey = mr_b->rkey;
	w->compare_add = len;
	w->swap = feth;
	qp->sq_wrid[slot] = wr_id;
	qp->sq_wqe_head[slot] = qp->sq_head;
	qp->sq_head++;
	__atomic_store_n(&((struct uroce_qp_ring_hdr *)qp->ring)->sq_pi, qp->sq_head, __ATOMIC_RELEASE);
}

/* 100 rounds: WRITE 64 KiB, a ring FLUSH of its range, a ring FLUSH of the
 * MR, an ATOMIC WRITE that rings; four CQEs in that order. */
START_TEST(test_flush_ring)
{
	static const unsigned char v[8] = { 0xF0, 0xE1, 0xD2, 0xC3, 0xB4, 0xA5, 0x96, 0x87 };

	pair_open(RW | ACC_FLUSH_GLOBAL);
	for (unsigned it = 0; it < 100; it++) {
		struct ibv_sge sge = { (uintptr_t)buf_a, MSG, mr_a->lkey };
		struct ibv_send_wr wr = { .wr_id = 4 * it, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;

		for (size_t i = 0; i < MSG; i++)
			buf_a[i] = (unsigned char)(i * 11 + it);
		wr.wr.rdma.remote_addr = (uintptr_t)buf_b + MSG;
		wr.wr.rdma.rkey = mr_b->rkey;
		ck_assert_int_eq(ibv_post_send(qa, &wr, &bad), 0);
		ring_flush(4 * it + 1, (uintptr_t)buf_b + MSG, MSG, 0x01);
		ring_flush(4 * it + 2, (uintptr_t)buf_b, 0, 0x11);
		ck_assert_int_eq(post_aw(4 * it + 3, (uintptr_t)buf_b + 8 * (it + 1), mr_b->rkey, v), 0);
		expect(4 * it, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		expect(4 * it + 1, IBV_WC_SUCCESS, WC_FLUSH);
		expect(4 * it + 2, IBV_WC_SUCCESS, WC_FLUSH);
		expect(4 * it + 3, IBV_WC_SUCCESS, WC_ATOMIC_WRITE);
		ck_assert_mem_eq(buf_b + MSG, buf_a, MSG);
		ck_assert_mem_eq(buf_b + 8 * (it + 1), v, 8);
	}
	pair_close();
}
END_TEST

/* A FLUSH WQE naming no placement type (FETH byte 0x10): the daemon
 * refuses it at the ring; it completes in error, the WQE after it flushes. */
START_TEST(test_flush_ring_bad)
{
	static const unsigned char v[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	struct ibv_wc wc;

	pair_open(RW | ACC_FLUSH_GLOBAL);
	ring_flush(7, (uintptr_t)buf_b, 64, 0x10);
	ck_assert_int_eq(post_aw(8, (uintptr_t)buf_b + 64, mr_b->rkey, v), 0);
	ck_assert_int_eq(tv_poll_one(cq_a, WAIT_MS, &wc), 0);
	ck_assert_uint_eq(wc.wr_id, 7);
	ck_assert_int_eq(wc.status, IBV_WC_LOC_QP_OP_ERR);
	expect(8, IBV_WC_WR_FLUSH_ERR, 0);
	for (size_t i = 64; i < 72; i++)
		ck_assert_uint_eq(buf_b[i], pattern(i));
	pair_close();
}
END_TEST

#ifdef HAVE_STRUCT_IBV_QP_EX_WR_FLUSH
/* 300 batches: WRITE 64 KiB, FLUSH its range, FLUSH the MR. */
START_TEST(test_flush_after_write)
{
	pair_open(RW | ACC_FLUSH_GLOBAL);
	for (unsigned it = 0; it < 300; it++) {
		size_t off = (size_t)(it % 3) * MSG;

		for (size_t i = 0; i < MSG; i++)
			buf_a[i] = (unsigned char)(i * 13 + it);
		ibv_wr_start(xa);
		xa->wr_id = 3 * it;
		xa->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(xa, mr_b->rkey, (uintptr_t)buf_b + off);
		ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)buf_a, MSG);
		xa->wr_id = 3 * it + 1;
		ibv_wr_flush(xa, mr_b->rkey, (uintptr_t)buf_b + off, MSG, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
		xa->wr_id = 3 * it + 2;
		ibv_wr_flush(xa, mr_b->rkey, (uintptr_t)buf_b, 0, IBV_FLUSH_GLOBAL, IBV_FLUSH_MR);
		ck_assert_int_eq(ibv_wr_complete(xa), 0);
		expect(3 * it, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		expect(3 * it + 1, IBV_WC_SUCCESS, WC_FLUSH);
		expect(3 * it + 2, IBV_WC_SUCCESS, WC_FLUSH);
		ck_assert_mem_eq(buf_b + off, buf_a, MSG);
	}
	ck_assert_uint_eq(buf_b[3 * MSG], pattern(3 * MSG));
	pair_close();
}
END_TEST

struct flush_err {
	const char *name;
	unsigned int b_acc;
	uint8_t type, level;
	size_t len;
	enum ibv_wc_status st;
};

static const struct flush_err flush_errs[] = {
	{ "MR without FLUSH_GLOBAL", RW, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE, 4096, IBV_WC_REM_ACCESS_ERR },
	{ "MR level, MR without FLUSH_GLOBAL", RW, IBV_FLUSH_GLOBAL, IBV_FLUSH_MR, 0,
	  IBV_WC_REM_ACCESS_ERR },
	{ "PERSISTENT", RW | ACC_FLUSH_GLOBAL, IBV_FLUSH_PERSISTENT, IBV_FLUSH_RANGE, 4096,
	  IBV_WC_REM_ACCESS_ERR },
	{ "range beyond the MR", RW | ACC_FLUSH_GLOBAL, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE, BUF + 1,
	  IBV_WC_REM_ACCESS_ERR },
};

START_TEST(test_flush_errors)
{
	const struct flush_err *c = &flush_errs[_i];

	pair_open(c->b_acc);
	ibv_wr_start(xa);
	xa->wr_id = 1;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(xa, mr_b->rkey, (uintptr_t)buf_b, c->len, c->type, c->level);
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	expect(1, c->st, 0);
	pair_close();
}
END_TEST

/* Bad type or level: EINVAL at wr_complete, nothing posted (the next
 * good FLUSH is the first completion). */
START_TEST(test_flush_bad_args)
{
	static const uint8_t tl[3][2] = { { 0, IBV_FLUSH_RANGE }, { 4, IBV_FLUSH_RANGE },
					  { IBV_FLUSH_GLOBAL, 2 } };

	pair_open(RW | ACC_FLUSH_GLOBAL);
	for (int i = 0; i < 3; i++) {
		ibv_wr_start(xa);
		xa->wr_id = 100 + i;
		xa->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_flush(xa, mr_b->rkey, (uintptr_t)buf_b, 64, tl[i][0], tl[i][1]);
		ck_assert_int_eq(ibv_wr_complete(xa), EINVAL);
	}
	ibv_wr_start(xa);
	xa->wr_id = 1;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(xa, mr_b->rkey, (uintptr_t)buf_b, 64, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	expect(1, IBV_WC_SUCCESS, WC_FLUSH);
	pair_close();
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("traffic_flush_aw");
	TCase *tc = tcase_create("flush_aw");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_atomic_write);
	tcase_add_test(tc, test_atomic_write_no_remote_atomic);
	tcase_add_loop_test(tc, test_atomic_write_errors, 0, (int)(sizeof(aw_errs) / sizeof(aw_errs[0])));
	tcase_add_test(tc, test_caps_and_mr_flags);
	tcase_add_test(tc, test_flush_ring);
	tcase_add_test(tc, test_flush_ring_bad);
#ifdef HAVE_STRUCT_IBV_QP_EX_WR_FLUSH
	tcase_add_test(tc, test_flush_after_write);
	tcase_add_loop_test(tc, test_flush_errors, 0, (int)(sizeof(flush_errs) / sizeof(flush_errs[0])));
	tcase_add_test(tc, test_flush_bad_args);
#endif
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
