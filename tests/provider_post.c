/*
 * provider_post.c - posting WQEs into a QP's rings (provider/post.c).
 *
 * The test owns a QP ring laid out as abi.h says and a real doorbell
 * eventfd, posts through the provider's post_send / post_recv, and reads
 * back exactly what the daemon would read: WQE headers, SGE lists, inline
 * payloads, producer indices, one doorbell per call, and the wr_id arrays
 * that polling uses. Then it plays the daemon (advancing sq_ci / rq_ci) to
 * check the queue-full rule and slot reuse, and the errno of every bad WR.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "provider/uroce.h"

struct fixture {
	struct uroce_context ctx;
	struct uroce_qp qp;
	struct uroce_ah ah;
};

static struct fixture *fx_new(enum ibv_qp_type type, uint32_t send_wr, uint32_t recv_wr,
			      uint32_t max_inline, int sq_sig_all)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct uroce_qp *qp;

	ck_assert_ptr_nonnull(f);
	f->ctx.doorbell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(f->ctx.doorbell, 0);
	qp = &f->qp;
	qp->vqp.qp.context = &f->ctx.vctx.context;
	qp->vqp.qp.qp_type = type;
	qp->vqp.qp.state = IBV_QPS_RTS;
	qp->sq_sig_all = sq_sig_all;
	qp->cap = (struct ibv_qp_cap){ .max_send_wr = send_wr, .max_recv_wr = recv_wr,
				       .max_send_sge = 2, .max_recv_sge = 2,
				       .max_inline_data = max_inline };
	uroce_qp_caps_round(&qp->cap);
	uroce_qp_ring_layout(&qp->cap, &qp->layout);
	qp->ring = aligned_alloc(4096, qp->layout.size);
	ck_assert_ptr_nonnull(qp->ring);
	memset(qp->ring, 0, qp->layout.size);
	qp->sq_wrid = calloc(qp->cap.max_send_wr, sizeof(uint64_t));
	qp->sq_wqe_head = calloc(qp->cap.max_send_wr, sizeof(uint32_t));
	qp->rq_wrid = calloc(qp->cap.max_recv_wr ? qp->cap.max_recv_wr : 1, sizeof(uint64_t));
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	f->ah.handle = 0x77;
	return f;
}

static void fx_free(struct fixture *f)
{
	close(f->ctx.doorbell);
	free(f->qp.ring);
	free(f->qp.sq_wrid);
	free(f->qp.sq_wqe_head);
	free(f->qp.rq_wrid);
	free(f);
}

static struct uroce_qp_ring_hdr *hdr(struct fixture *f)
{
	return f->qp.ring;
}

static struct uroce_send_wqe *sq_slot(struct fixture *f, uint32_t n)
{
	return (struct uroce_send_wqe *)((char *)f->qp.ring + f->qp.layout.sq_offset +
					 (size_t)(n & (f->qp.cap.max_send_wr - 1)) * f->qp.layout.sq_stride);
}

static struct uroce_recv_wqe *rq_slot(struct fixture *f, uint32_t n)
{
	return (struct uroce_recv_wqe *)((char *)f->qp.ring + f->qp.layout.rq_offset +
					 (size_t)(n & (f->qp.cap.max_recv_wr - 1)) * f->qp.layout.rq_stride);
}

/* Doorbell writes since the last call (0 if none). */
static uint64_t doorbells(struct fixture *f)
{
	eventfd_t v = 0;

	if (eventfd_read(f->ctx.doorbell, &v))
		return 0;
	return v;
}

START_TEST(test_send_chain)
{
	struct fixture *f = fx_new(IBV_QPT_RC, 8, 4, 64, 0);
	struct ibv_sge sg[2] = { { 0x1000, 100, 0x501 }, { 0x2000, 28, 0x602 } };
	struct ibv_send_wr w2 = { .wr_id = 0xb2, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .sg_list = sg,
				  .num_sge = 1, .imm_data = htobe32(0xcafe),
				  .wr.rdma = { .remote_addr = 0xabcdef0123, .rkey = 0x4242 } };
	struct ibv_send_wr w1 = { .wr_id = 0xb1, .next = &w2, .opcode = IBV_WR_SEND, .sg_list = sg,
				  .num_sge = 2, .send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED };
	struct ibv_send_wr *bad = NULL;
	struct uroce_send_wqe *q;
	struct uroce_sge *s;

	ck_assert_int_eq(uroce_post_send(&f->qp.vqp.qp, &w1, &bad), 0);
	ck_assert_ptr_null(bad);
	ck_assert_uint_eq(hdr(f)->sq_pi, 2);
	ck_assert_uint_eq(doorbells(f), 1);

	q = sq_slot(f, 0);
	ck_assert_uint_eq(q->opcode, IBV_WR_SEND);
	ck_assert_uint_eq(q->flags, UROCE_WQE_SIGNALED | UROCE_WQE_SOLICITED);
	ck_assert_uint_eq(q->num_sge, 2);
	ck_assert_uint_eq(q->wqe_index, 0);
	ck_assert_uint_eq(q->byte_len, 128);
	s = (struct uroce_sge *)(q + 1);
	ck_assert_uint_eq(s[0].addr, 0x1000);
	ck_assert_uint_eq(s[0].length, 100);
	ck_assert_uint_eq(s[0].lkey, 0x501);
	ck_assert_uint_eq(s[1].addr, 0x2000);
	ck_assert_uint_eq(s[1].length, 28);
	ck_assert_uint_eq(s[1].lkey, 0x602);

	q = sq_slot(f, 1);
	ck_assert_uint_eq(q->opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
	ck_assert_uint_eq(q->flags, 0);
	ck_assert_uint_eq(q->wqe_index, 1);
	ck_assert_uint_eq(q->byte_len, 100);
	ck_assert_uint_eq(q->imm_data, htobe32(0xcafe));
	ck_assert_uint_eq(q->remote_addr, 0xabcdef0123);
	ck_assert_uint_eq(q->rkey, 0x4242);

	ck_assert_uint_eq(f->qp.sq_wrid[0], 0xb1);
	ck_assert_uint_eq(f->qp.sq_wrid[1], 0xb2);
	ck_assert_uint_eq(f->qp.sq_wqe_head[1], 1);
	fx_free(f);
}
END_TEST

START_TEST(test_sq_sig_all_and_read)
{
	struct fixture *f = fx_new(IBV_QPT_RC, 4, 4, 0, 1);
	struct ibv_sge sg = { 0x3000, 4096, 0x11 };
	struct ibv_send_wr w = { .wr_id = 1, .opcode = IBV_WR_RDMA_READ, .sg_list = &sg, .num_sge = 1,
				 .send_flags = IBV_SEND_FENCE,
				 .wr.rdma = { .remote_addr = 0x9000, .rkey = 0x99 } };
	struct ibv_send_wr *bad;

	ck_assert_int_eq(uroce_post_send(&f->qp.vqp.qp, &w, &bad), 0);
	ck_assert_uint_eq(sq_slot(f, 0)->flags, UROCE_WQE_SIGNALED | UROCE_WQE_FENCE);
	ck_assert_uint_eq(sq_slot(f, 0)->opcode, IBV_WR_RDMA_READ);
	ck_assert_uint_eq(sq_slot(f, 0)->remote_addr, 0x9000);
	ck_assert_uint_eq(sq_slot(f, 0)->rkey, 0x99);
	fx_free(f);
}
END_TEST

/* Atomics carry ibv_send_wr.wr.atomic into the WQE: target, operands. */
START_TEST(test_atomic_wqe)
{
	struct fixture *f = fx_new(IBV_QPT_RC, 4, 4, 0, 0);
	struct ibv_sge sg = { 0x3008, 8, 0x11 };
	struct ibv_send_wr w[2] = {
		{ .wr_id = 1, .opcode = IBV_WR_ATOMIC_CMP_AND_SWP, .sg_list = &sg, .num_sge = 1,
		  .send_flags = IBV_SEND_SIGNALED, .next = &w[1],
		  .wr.atomic = { .remote_addr = 0x9008, .compare_add = 0x0102030405060708ull,
				 .swap = 0xF0E0D0C0B0A09080ull, .rkey = 0x99 } },
		{ .wr_id = 2, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .sg_list = &sg, .num_sge = 1,
		  .wr.atomic = { .remote_addr = 0x9010, .compare_add = 5, .swap = 77, .rkey = 0x98 } },
	};
	struct ibv_send_wr *bad;

	ck_assert_int_eq(uroce_post_send(&f->qp.vqp.qp, w, &bad), 0);
	ck_assert_uint_eq(sq_slot(f, 0)->opcode, IBV_WR_ATOMIC_CMP_AND_SWP);
	ck_assert_uint_eq(sq_slot(f, 0)->flags, UROCE_WQE_SIGNALED);
	ck_assert_uint_eq(sq_slot(f, 0)->remote_addr, 0x9008);
	ck_assert_uint_eq(sq_slot(f, 0)->rkey, 0x99);
	ck_assert_uint_eq(sq_slot(f, 0)->compare_add, 0x0102030405060708ull);
	ck_assert_uint_eq(sq_slot(f, 0)->swap, 0xF0E0D0C0B0A09080ull);
	ck_assert_uint_eq(sq_slot(f, 0)->byte_len, 8);
	ck_assert_uint_eq(sq_slot(f, 0)->num_sge, 1);
	ck_assert_uint_eq(sq_slot(f, 1)->opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
	ck_assert_uint_eq(sq_slot(f, 1)->flags, 0);
	ck_assert_uint_eq(sq_slot(f, 1)->remote_addr, 0x9010);
	ck_assert_uint_eq(sq_slot(f, 1)->rkey, 0x98);
	ck_assert_uint_eq(sq_slot(f, 1)->compare_add, 5);
	ck_assert_uint_eq(sq_slot(f, 1)->swap, 77);
	ck_assert_uint_eq(hdr(f)->sq_pi, 2);
	ck_assert_uint_eq(doorbells(f), 1);
	fx_free(f);
}
END_TEST

/* SEND_WITH_INV, LOCAL_INV and BIND_MW in the abi_ring.h layout. */
START_TEST(test_mw_wqe)
{
	struct fixture *f = fx_new(IBV_QPT_RC, 4, 4, 0, 0);
	struct ibv_sge sg = { 0x3000, 100, 0x11 };
	struct ibv_mw mw = { .handle = 7, .rkey = 0x1234, .type = IBV_MW_TYPE_2 };
	struct ibv_mr mr = { .lkey = 0x5678 };
	struct ibv_send_wr w[3] = {
		{ .wr_id = 1, .opcode = IBV_WR_SEND_WITH_INV, .sg_list = &sg, .num_sge = 1,
		  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, .invalidate_rkey = 0xabcdef01,
		  .next = &w[1] },
		{ .wr_id = 2, .opcode = IBV_WR_LOCAL_INV, .sg_list = &sg, .num_sge = 1,
		  .invalidate_rkey = 0x4321, .next = &w[2] },
		{ .wr_id = 3, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_FENCE,
		  .bind_mw = { .mw = &mw, .rkey = 0x1235,
			       .bind_info = { &mr, 0x7000, 4096, IBV_ACCESS_REMOTE_READ } } },
	};
	struct ibv_send_wr *bad;

	ck_assert_int_eq(uroce_post_send(&f->qp.vqp.qp, w, &bad), 0);
	ck_assert_uint_eq(sq_slot(f, 0)->opcode, IBV_WR_SEND_WITH_INV);
	ck_assert_uint_eq(sq_slot(f, 0)->flags, UROCE_WQE_SIGNALED | UROCE_WQE_SOLICITED);
	ck_assert_uint_eq(sq_slot(f, 0)->invalidate_rkey, 0xabcdef01); /* host order */
	ck_assert_uint_eq(sq_slot(f, 0)->byte_len, 100);
	ck_assert_uint_eq(sq_slot(f, 0)->num_sge, 1);
	/* the SGE list of a LOCAL_INV is ignored (mlx5) */
	ck_assert_uint_eq(sq_slot(f, 1)->opcode, IBV_WR_LOCAL_INV);
	ck_assert_uint_eq(sq_slot(f, 1)->wqe_index, 1);
	ck_assert_uint_eq(sq_slot(f, 1)->rkey, 0x4321);
	ck_assert_uint_eq(sq_slot(f, 1)->num_sge, 0);
	ck_assert_uint_eq(sq_slot(f, 1)->byte_len, 0);
	ck_assert_uint_eq(sq_slot(f, 1)->flags, 0);
	ck_assert_uint_eq(sq_slot(f, 2)->opcode, IBV_WR_BIND_MW);
	ck_assert_uint_eq(sq_slot(f, 2)->flags, UROCE_WQE_FENCE);
	ck_assert_uint_eq(sq_slot(f, 2)->ah_handle, 7);
	ck_assert_uint_eq(sq_slot(f, 2)->rkey, 0x1235);
	ck_assert_uint_eq(sq_slot(f, 2)->remote_addr, 0x7000);
	ck_assert_uint_eq(sq_slot(f, 2)->compare_add, 4096);
	ck_assert_uint_eq(sq_slot(f, 2)->remote_qkey, 0x5678);
	ck_assert_uint_eq(sq_slot(f, 2)->remote_qpn, IBV_ACCESS_REMOTE_READ);
	ck_assert_uint_eq(sq_slot(f, 2)->num_sge, 0);
	ck_assert_uint_eq(sq_slot(f, 2)->byte_len, 0);
	ck_assert_uint_eq(hdr(f)->sq_pi, 3);
	ck_assert_uint_eq(doorbells(f), 1);
	fx_free(f);
}
END_TEST

START_TEST(test_inline_ud)
{
	struct fixture *f = fx_new(IBV_QPT_UD, 4, 4, 64, 0);
	char a[5] = "hello", b[3] = "abc";
	struct ibv_sge sg[2] = { { (uintptr_t)a, 5, 0 }, { (uintptr_t)b, 3, 0 } };
	struct ibv_send_wr w = { .wr_id = 9, .opcode = IBV_WR_SEND_WITH_IMM, .sg_list = sg, .num_sge = 2,
				 .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
				 .imm_data = htobe32(7),
				 .wr.ud = { .ah = &f->ah.ibv_ah, .remote_qpn = 0x1000abc,
					    .remote_qkey = 0x11111111 } };
	struct ibv_send_wr *bad;
	struct uroce_send_wqe *q;

	ck_assert_int_eq(uroce_post_send(&f->qp.vqp.qp, &w, &bad), 0);
	memcpy(a, "XXXXX", 5); /* the WQE holds a copy */
	q = sq_slot(f, 0);
	ck_assert_uint_eq(q->flags, UROCE_WQE_SIGNALED | UROCE_WQE_INLINE);
	ck_assert_uint_eq(q->num_sge, 0);
	ck_assert_uint_eq(q->byte_len, 8);
	ck_assert_int_eq(memcmp(q + 1, "helloabc", 8), 0);
	ck_assert_uint_eq(q->imm_data, htobe32(7));
	ck_assert_uint_eq(q->ah_handle, 0x77);
	ck_assert_uint_eq(q->remote_qpn, 0x000abc); /* 24 bits */
	ck_assert_uint_eq(q->remote_qkey, 0x11111111);
	fx_free(f);
}
END_TEST

/* One bad WR: its errno, *bad_wr on it, nothing posted, no doorbell. */
struct bad_case {
	const char *name;
	enum ibv_qp_type type;
	enum ibv_qp_state state;
	enum ibv_wr_opcode opcode;
	int num_sge;
	unsigned int send_flags;
	uint32_t len;
	bool no_ah;
	int want;
};

static const struct bad_case bad_cases[] = {
	{ "RESET", IBV_QPT_RC, IBV_QPS_RESET, IBV_WR_SEND, 1, 0, 8, false, EINVAL },
	{ "INIT", IBV_QPT_RC, IBV_QPS_INIT, IBV_WR_SEND, 1, 0, 8, false, EINVAL },
	{ "RTR", IBV_QPT_RC, IBV_QPS_RTR, IBV_WR_SEND, 1, 0, 8, false, EINVAL },
	{ "3 SGEs, max 2", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_SEND, 3, 0, 8, false, EINVAL },
	{ "negative num_sge", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_SEND, -1, 0, 8, false, EINVAL },
	{ "inline over max_inline_data", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_SEND, 1, IBV_SEND_INLINE, 65, false, EINVAL },
	{ "READ on UC", IBV_QPT_UC, IBV_QPS_RTS, IBV_WR_RDMA_READ, 1, 0, 8, false, EINVAL },
	{ "WRITE on UD", IBV_QPT_UD, IBV_QPS_RTS, IBV_WR_RDMA_WRITE, 1, 0, 8, false, EINVAL },
	{ "UD without AH", IBV_QPT_UD, IBV_QPS_RTS, IBV_WR_SEND, 1, 0, 8, true, EINVAL },
	{ "atomic with 2 SGEs", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_ATOMIC_FETCH_AND_ADD, 2, 0, 8, false, EINVAL },
	/* an atomic's local data is one SGE of exactly 8 bytes (docs/transport.md "Atomics") */
	{ "FETCH_ADD, SGE of 4 bytes", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 4, false, EINVAL },
	{ "CMP_SWP, SGE of 4 bytes", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_ATOMIC_CMP_AND_SWP, 1, 0, 4, false, EINVAL },
	{ "FETCH_ADD, SGE of 16 bytes", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 16, false, EINVAL },
	{ "FETCH_ADD, no SGE", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 0, 8, false, EINVAL },
	{ "CMP_SWP, no SGE", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 0, 8, false, EINVAL },
	{ "atomic inline", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_ATOMIC_CMP_AND_SWP, 1, IBV_SEND_INLINE, 8, false, EINVAL },
	{ "atomic on UC", IBV_QPT_UC, IBV_QPS_RTS, IBV_WR_ATOMIC_CMP_AND_SWP, 1, 0, 8, false, EINVAL },
	{ "LOCAL_INV on UD", IBV_QPT_UD, IBV_QPS_RTS, IBV_WR_LOCAL_INV, 0, 0, 0, false, EINVAL },
	{ "LOCAL_INV inline", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_LOCAL_INV, 1, IBV_SEND_INLINE, 8, false, EINVAL },
	{ "SEND_WITH_INV on UC", IBV_QPT_UC, IBV_QPS_RTS, IBV_WR_SEND_WITH_INV, 1, 0, 8, false, EINVAL },
	{ "BIND_MW without a window", IBV_QPT_RC, IBV_QPS_RTS, IBV_WR_BIND_MW, 0, 0, 0, false, EINVAL },
	{ "BIND_MW on UD", IBV_QPT_UD, IBV_QPS_RTS, IBV_WR_BIND_MW, 0, 0, 0, false, EINVAL },
	/* By value: older verbs.h lack the names (ATOMIC_WRITE from 44, FLUSH from 45). */
	{ "ATOMIC_WRITE (15)", IBV_QPT_RC, IBV_QPS_RTS, (enum ibv_wr_opcode)15, 1, 0, 8, false, EOPNOTSUPP },
	{ "FLUSH (14)", IBV_QPT_RC, IBV_QPS_RTS, (enum ibv_wr_opcode)14, 1, 0, 8, false, EOPNOTSUPP },
	{ "unknown opcode 99", IBV_QPT_RC, IBV_QPS_RTS, (enum ibv_wr_opcode)99, 1, 0, 8, false, EINVAL },
};

START_TEST(test_bad_send)
{
	const struct bad_case *c = &bad_cases[_i];
	struct fixture *f = fx_new(c->type, 4, 4, 64, 0);
	static char buf[128];
	struct ibv_sge sg[3] = { { (uintptr_t)buf, c->len, 1 }, { (uintptr_t)buf, 1, 1 },
				 { (uintptr_t)buf, 1, 1 } };
	struct ibv_send_wr w = { .wr_id = 5, .opcode = c->opcode, .sg_list = sg, .num_sge = c->num_sge,
				 .send_flags = c->send_flags };
	struct ibv_send_wr *bad = NULL;

	f->qp.vqp.qp.state = c->state;
	if (c->type == IBV_QPT_UD && !c->no_ah)
		w.wr.ud.ah = &f->ah.ibv_ah;
	ck_assert_msg(uroce_post_send(&f->qp.vqp.qp, &w, &bad) == c->want, "%s: errno", c->name);
	ck_assert_msg(bad == &w, "%s: bad_wr", c->name);
	ck_assert_uint_eq(hdr(f)->sq_pi, 0);
	ck_assert_uint_eq(doorbells(f), 0);
	fx_free(f);
}
END_TEST

/* A good WR then a bad one: the first is posted (and rung), bad_wr is the second. */
START_TEST(test_partial_chain)
{
	struct fixture *f = fx_new(IBV_QPT_RC, 4, 4, 0, 0);
	struct ibv_sge sg = { 0x1000, 8, 1 };
	struct ibv_send_wr w2 = { .wr_id = 2, .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sg, .num_sge = 3 };
	struct ibv_send_wr w1 = { .wr_id = 1, .next = &w2, .opcode = IBV_WR_SEND, .sg_list = &sg, .num_sge = 1 };
	struct ibv_send_wr *bad = NULL;

	ck_assert_int_eq(uroce_post_send(&f->qp.vqp.qp, &w1, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &w2);
	ck_assert_uint_eq(hdr(f)->sq_pi, 1);
	ck_assert_uint_eq(doorbells(f), 1);
	fx_free(f);
}
END_TEST

/* Queue full: ENOMEM at the first WR that finds no slot; slots come back with sq_ci. */
START_TEST(test_sq_full_and_wrap)
{
	struct fixture *f = fx_new(IBV_QPT_RC, 4, 4, 0, 0);
	struct ibv_sge sg = { 0x1000, 8, 1 };
	struct ibv_send_wr w[6], *bad = NULL;

	for (int i = 0; i < 6; i++)
		w[i] = (struct ibv_send_wr){ .wr_id = 100 + (uint64_t)i, .next = i < 5 ? &w[i + 1] : NULL,
					     .opcode = IBV_WR_SEND, .sg_list = &sg, .num_sge = 1 };
	ck_assert_int_eq(uroce_post_send(&f->qp.vqp.qp, &w[0], &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &w[4]);
	ck_assert_uint_eq(hdr(f)->sq_pi, 4);
	/* the "daemon" is done with two WQEs, but their completions were not polled yet */
	__atomic_store_n(&hdr(f)->sq_ci, 2, __ATOMIC_RELEASE);
	ck_assert_int_eq(uroce_post_send(&f->qp.vqp.qp, &w[4], &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &w[4]);
	/* polled (cq_poll.c advances sq_tail): now the slots and their wr_ids are free */
	f->qp.sq_tail = 2;
	ck_assert_int_eq(uroce_post_send(&f->qp.vqp.qp, &w[4], &bad), 0);
	ck_assert_uint_eq(hdr(f)->sq_pi, 6);
	ck_assert_uint_eq(sq_slot(f, 4)->wqe_index, 4); /* slot 0, WQE number 4 */
	ck_assert_uint_eq(sq_slot(f, 5)->wqe_index, 5);
	ck_assert_uint_eq(f->qp.sq_wrid[0], 104);
	ck_assert_uint_eq(f->qp.sq_wrid[1], 105);
	ck_assert_uint_eq(f->qp.sq_wrid[2], 102);
	ck_assert_uint_eq(doorbells(f), 2);
	fx_free(f);
}
END_TEST

START_TEST(test_recv)
{
	struct fixture *f = fx_new(IBV_QPT_RC, 4, 2, 0, 0);
	struct ibv_sge sg[3] = { { 0x1000, 64, 7 }, { 0x2000, 32, 8 }, { 0x3000, 1, 9 } };
	struct ibv_recv_wr r3 = { .wr_id = 3, .sg_list = sg, .num_sge = 1 };
	struct ibv_recv_wr r2 = { .wr_id = 2, .next = &r3, .sg_list = sg, .num_sge = 1 };
	struct ibv_recv_wr r1 = { .wr_id = 1, .next = &r2, .sg_list = sg, .num_sge = 2 };
	struct ibv_recv_wr bad_sge = { .wr_id = 4, .sg_list = sg, .num_sge = 3 };
	struct ibv_recv_wr *bad = NULL;
	struct uroce_sge *s;

	f->qp.vqp.qp.state = IBV_QPS_RESET;
	ck_assert_int_eq(uroce_post_recv(&f->qp.vqp.qp, &r1, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &r1);
	f->qp.vqp.qp.state = IBV_QPS_INIT; /* receives may be posted from INIT on */
	ck_assert_int_eq(uroce_post_recv(&f->qp.vqp.qp, &bad_sge, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &bad_sge);
	ck_assert_int_eq(uroce_post_recv(&f->qp.vqp.qp, &r1, &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &r3);
	ck_assert_uint_eq(hdr(f)->rq_pi, 2);
	ck_assert_uint_eq(doorbells(f), 1);
	ck_assert_uint_eq(rq_slot(f, 0)->num_sge, 2);
	ck_assert_uint_eq(rq_slot(f, 0)->wqe_index, 0);
	s = (struct uroce_sge *)(rq_slot(f, 0) + 1);
	ck_assert_uint_eq(s[1].addr, 0x2000);
	ck_assert_uint_eq(s[1].length, 32);
	ck_assert_uint_eq(s[1].lkey, 8);
	ck_assert_uint_eq(rq_slot(f, 1)->wqe_index, 1);
	ck_assert_uint_eq(f->qp.rq_wrid[0], 1);
	ck_assert_uint_eq(f->qp.rq_wrid[1], 2);
	__atomic_store_n(&hdr(f)->rq_ci, 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(uroce_post_recv(&f->qp.vqp.qp, &r3, &bad), ENOMEM); /* not polled yet */
	f->qp.rq_tail = 1;
	ck_assert_int_eq(uroce_post_recv(&f->qp.vqp.qp, &r3, &bad), 0);
	ck_assert_uint_eq(rq_slot(f, 2)->wqe_index, 2);
	ck_assert_uint_eq(f->qp.rq_wrid[0], 3);
	fx_free(f);
}
END_TEST

START_TEST(test_recv_no_rq)
{
	struct fixture *f = fx_new(IBV_QPT_RC, 4, 0, 0, 0);
	struct ibv_sge sg = { 0x1000, 64, 7 };
	struct ibv_recv_wr r = { .wr_id = 1, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;

	ck_assert_int_eq(uroce_post_recv(&f->qp.vqp.qp, &r, &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &r);
	fx_free(f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("provider_post");
	TCase *tc = tcase_create("post");

	tcase_add_test(tc, test_send_chain);
	tcase_add_test(tc, test_sq_sig_all_and_read);
	tcase_add_test(tc, test_atomic_wqe);
	tcase_add_test(tc, test_mw_wqe);
	tcase_add_test(tc, test_inline_ud);
	tcase_add_loop_test(tc, test_bad_send, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, test_partial_chain);
	tcase_add_test(tc, test_sq_full_and_wrap);
	tcase_add_test(tc, test_recv);
	tcase_add_test(tc, test_recv_no_rq);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_ENV);
}
