/*
 * traffic_qpex.c - the extended post-send API (ibv_create_qp_ex with
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, ibv_qp_to_qp_ex, ibv_wr_start /
 * ibv_wr_* / ibv_wr_complete / ibv_wr_abort; ibv_wr_post(3)) through
 * libibverbs, the provider and a running uroced (Check, run inside
 * `uroce run` by traffic_qpex.sh).
 *
 * One context on uroce0, two QPs A and B of one type connected to each
 * other at path MTU 1024, every send built with the ibv_wr_* API only:
 * each builder (RC: SEND, SEND_WITH_IMM, RDMA_WRITE(_WITH_IMM), RDMA_READ,
 * both atomics; UC: SEND(_IMM), WRITE(_IMM); UD: SEND(_IMM) with
 * wr_set_ud_addr) with 64 KiB messages (UD: 1000 bytes) checked byte for
 * byte, with the CQE's opcode, byte_len, imm_data and wr_id; sge lists,
 * inline data and inline lists (the buffers changed right after
 * wr_complete); atomics' exact old values; several WQEs per batch. The
 * error rules: a batch with a building error (too many SGEs, inline too
 * long, an op not asked for at creation, UD without an address, a setter
 * without a builder, wr_set_ud_addr on RC, atomic with inline data or two
 * SGEs) fails at wr_complete with EINVAL and posts nothing, not even its
 * good WQEs; a batch bigger than the free SQ fails with ENOMEM; aborted
 * batches post nothing; a QP in RESET fails with EINVAL. "Nothing posted"
 * is shown by the next good batch: its marker is the first completion on
 * both sides. Creation: the send_ops_flags each type accepts, EOPNOTSUPP
 * for the rest. Then 3000 batches of SEND + WRITE_WITH_IMM on RC.
 */
#include "config.h"

#include <arpa/inet.h>
#include "check_main.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 20000
#define MSG (64 * 1024)
#define BUF (4 * MSG)
#define SQ_WR 16
#define MAX_SGE 4
#define MAX_INLINE 256
#define UD_MSG 1000
#define GRH 40

/* send_ops_flags bits by value (rdma-core 44/45 verbs.h). */
#define WITH_FLUSH (1ull << 11)
#define WITH_ATOMIC_WRITE (1ull << 12)

#define OPS_UD (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define OPS_UC (OPS_UD | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE | \
		IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_LOCAL_INV | \
		IBV_QP_EX_WITH_BIND_MW)
#define OPS_RC (OPS_UC | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static struct ibv_cq *cq_a, *cq_b;
static struct ibv_qp *qa, *qb;
static struct ibv_qp_ex *xa;
static struct ibv_mr *mr_a, *mr_b;
static unsigned char *buf_a, *buf_b;
static struct ibv_ah *ah;
static enum ibv_qp_type type;

static struct ibv_qp *create(enum ibv_qp_type t, uint64_t ops, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops,
		.cap = { .max_send_wr = SQ_WR, .max_recv_wr = 64, .max_send_sge = MAX_SGE,
			 .max_recv_sge = 1, .max_inline_data = MAX_INLINE },
	};

	return ibv_create_qp_ex(ctx, &a);
}

/* INIT -> RTR -> RTS towards DEST (RC: all remote access, 4 READ/atomics
 * in flight; UC: remote write). */
static void connect_qp(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;

	if (type == IBV_QPT_UD) {
		ck_assert_int_eq(tv_ud_ready(qp), 0);
		return;
	}
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (type == IBV_QPT_RC)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, mask), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (type == IBV_QPT_RC) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 12;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	ck_assert_int_eq(ibv_modify_qp(qp, &a, mask), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type == IBV_QPT_RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	ck_assert_int_eq(ibv_modify_qp(qp, &a, mask), 0);
}

/* A and B of type T with send_ops OPS on A, connected (CONNECT) or left in RESET. */
static void pair_open(enum ibv_qp_type t, uint64_t ops, int connect)
{
	type = t;
	ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	pd = ibv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
	buf_a = calloc(1, BUF);
	buf_b = calloc(1, BUF);
	ck_assert(buf_a && buf_b);
	mr_a = ibv_reg_mr(pd, buf_a, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	mr_b = ibv_reg_mr(pd, buf_b, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	ck_assert(mr_a && mr_b);
	cq_a = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cq_b = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	ck_assert(cq_a && cq_b);
	qa = create(t, ops, cq_a);
	ck_assert_msg(qa, "ibv_create_qp_ex: %s", strerror(errno));
	qb = create(t, ops, cq_b);
	ck_assert_ptr_nonnull(qb);
	xa = ibv_qp_to_qp_ex(qa);
	ck_assert_ptr_nonnull(xa);
	ah = NULL;
	if (t == IBV_QPT_UD) {
		ah = tv_ah(pd, &gid);
		ck_assert_ptr_nonnull(ah);
	}
	if (connect) {
		connect_qp(qa, qb->qp_num);
		connect_qp(qb, qa->qp_num);
	}
}

static void pair_close(void)
{
	if (ah)
		ck_assert_int_eq(ibv_destroy_ah(ah), 0);
	ck_assert_int_eq(ibv_destroy_qp(qa), 0);
	ck_assert_int_eq(ibv_destroy_qp(qb), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq_a), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq_b), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr_a), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr_b), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
	free(buf_a);
	free(buf_b);
}

/* One receive on B of LEN bytes at OFF into buf_b. */
static void recv_b(uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(buf_b + off), len, mr_b->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(qb, &wr, &bad), 0);
}

/* The next completion of CQ must be WR_ID with success, OPCODE, BYTE_LEN
 * (checked unless -1) and IBV_WC_WITH_IMM when WITH_IMM: 1 with imm_data
 * IMM (responder), 2 without a value to check (requester of an _IMM op:
 * mlx5 flags it, ibv_poll_cq(3) defines imm_data for receives only). */
static void expect(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_opcode opcode,
		   int64_t byte_len, int with_imm, uint32_t imm)
{
	struct ibv_wc wc;

	ck_assert_int_eq(tv_poll_one(cq, WAIT_MS, &wc), 0);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS, "wr_id 0x%llx: %s",
		      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	ck_assert_uint_eq(wc.wr_id, wr_id);
	ck_assert_int_eq(wc.opcode, opcode);
	if (byte_len >= 0)
		ck_assert_uint_eq(wc.byte_len, (uint32_t)byte_len);
	ck_assert_uint_eq(!!(wc.wc_flags & IBV_WC_WITH_IMM), !!with_imm);
	if (with_imm == 1)
		ck_assert_uint_eq(ntohl(wc.imm_data), imm);
	ck_assert_uint_eq(wc.qp_num, cq == cq_a ? qa->qp_num : qb->qp_num);
}

/* Nothing more on CQ within 100 ms. */
static void expect_none(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	ck_assert_int_eq(tv_poll_one(cq, 100, &wc), ETIMEDOUT);
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 7 + seed + (i >> 8));
}

static void wr_set_ud(void)
{
	if (type == IBV_QPT_UD)
		ibv_wr_set_ud_addr(xa, ah, qb->qp_num, TV_QKEY);
}

/* A good one-WQE batch: SEND of 16 bytes 'M' + K as wr_id 0x900 + K; it must
 * be the next completion on both sides (nothing of a failed batch went). */
static void marker(unsigned int k)
{
	size_t off = type == IBV_QPT_UD ? GRH : 0;

	memset(buf_a + BUF - 16, 'M' + (int)k, 16);
	recv_b(0x800 + k, 0, type == IBV_QPT_UD ? GRH + 16 : 16);
	ibv_wr_start(xa);
	xa->wr_id = 0x900 + k;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(xa);
	ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)(buf_a + BUF - 16), 16);
	wr_set_ud();
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	expect(cq_a, 0x900 + k, IBV_WC_SEND, -1, 0, 0);
	expect(cq_b, 0x800 + k, IBV_WC_RECV, (type == IBV_QPT_UD ? GRH : 0) + 16, 0, 0);
	for (int i = 0; i < 16; i++)
		ck_assert_uint_eq(buf_b[off + i], 'M' + k);
	expect_none(cq_b);
}

/* Creation: the send_ops_flags each type takes; qp_to_qp_ex only for them. */
START_TEST(test_create)
{
	struct { enum ibv_qp_type t; uint64_t ops; int err; } c[] = {
		{ IBV_QPT_RC, OPS_RC, 0 }, { IBV_QPT_UC, OPS_UC, 0 }, { IBV_QPT_UD, OPS_UD, 0 },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 0 }, { IBV_QPT_RC, 0, 0 },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ, EOPNOTSUPP },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, EOPNOTSUPP },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE, EOPNOTSUPP },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_BIND_MW, EOPNOTSUPP },
		{ IBV_QPT_RC, OPS_RC | IBV_QP_EX_WITH_TSO, EOPNOTSUPP },
		/* RC only; on RC when this build's verbs.h has the builder
		 * (tests/traffic_flush_aw.c) */
		{ IBV_QPT_UC, IBV_QP_EX_WITH_SEND | WITH_FLUSH, EOPNOTSUPP },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_SEND | WITH_ATOMIC_WRITE, EOPNOTSUPP },
#ifdef HAVE_STRUCT_IBV_QP_EX_WR_FLUSH
		{ IBV_QPT_RC, IBV_QP_EX_WITH_SEND | WITH_FLUSH, 0 },
#else
		{ IBV_QPT_RC, IBV_QP_EX_WITH_SEND | WITH_FLUSH, EOPNOTSUPP },
#endif
#ifdef HAVE_STRUCT_IBV_QP_EX_WR_ATOMIC_WRITE
		{ IBV_QPT_RC, IBV_QP_EX_WITH_SEND | WITH_ATOMIC_WRITE, 0 },
#else
		{ IBV_QPT_RC, IBV_QP_EX_WITH_SEND | WITH_ATOMIC_WRITE, EOPNOTSUPP },
#endif
		{ IBV_QPT_RC, IBV_QP_EX_WITH_SEND | (1ull << 40), EOPNOTSUPP },
	};
	struct ibv_qp_init_attr legacy = {
		.qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp;
	struct ibv_qp_ex *x;

	pair_open(IBV_QPT_RC, OPS_RC, 0);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		errno = 0;
		qp = create(c[i].t, c[i].ops, cq_a);
		if (c[i].err) {
			ck_assert_msg(!qp, "case %zu created", i);
			ck_assert_int_eq(errno, c[i].err);
			continue;
		}
		ck_assert_msg(qp, "case %zu: %s", i, strerror(errno));
		x = ibv_qp_to_qp_ex(qp);
		ck_assert_ptr_eq(x, (struct ibv_qp_ex *)qp);
		ck_assert(x->wr_start && x->wr_complete && x->wr_abort && x->wr_send &&
			  x->wr_set_sge && x->wr_set_sge_list && x->wr_set_inline_data &&
			  x->wr_set_inline_data_list && x->wr_set_ud_addr && x->wr_bind_mw);
		ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	}
	legacy.send_cq = legacy.recv_cq = cq_a;
	qp = ibv_create_qp(pd, &legacy);
	ck_assert_ptr_nonnull(qp);
	ck_assert_ptr_null(ibv_qp_to_qp_ex(qp));
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	pair_close();
}
END_TEST

/* SEND / SEND_WITH_IMM of LEN bytes from buf_a (one SGE), exact on B. */
static void send_one(uint64_t id, int imm, uint32_t len, unsigned int seed)
{
	size_t hdr = type == IBV_QPT_UD ? GRH : 0;

	fill(buf_a, len, seed);
	memset(buf_b, 0, hdr + len + 64);
	recv_b(id + 1, 0, (uint32_t)hdr + len + 64);
	ibv_wr_start(xa);
	xa->wr_id = id;
	xa->wr_flags = IBV_SEND_SIGNALED;
	if (imm)
		ibv_wr_send_imm(xa, htonl(0xA5000000u + seed));
	else
		ibv_wr_send(xa);
	wr_set_ud();
	ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)buf_a, len);
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	expect(cq_a, id, IBV_WC_SEND, len, imm ? 2 : 0, 0);
	expect(cq_b, id + 1, IBV_WC_RECV, (int64_t)(hdr + len), imm, 0xA5000000u + seed);
	ck_assert_int_eq(memcmp(buf_b + hdr, buf_a, len), 0);
	ck_assert_uint_eq(buf_b[hdr + len], 0);
}

/* WRITE (with IMM: B consumes a receive) of MSG bytes at offset OFF of buf_b. */
static void write_one(uint64_t id, int imm, size_t off, unsigned int seed)
{
	fill(buf_a, MSG, seed);
	memset(buf_b, 0, BUF);
	if (imm)
		recv_b(id + 1, 0, 0);
	ibv_wr_start(xa);
	xa->wr_id = id;
	xa->wr_flags = IBV_SEND_SIGNALED;
	if (imm)
		ibv_wr_rdma_write_imm(xa, mr_b->rkey, (uintptr_t)(buf_b + off), htonl(0x5A00 + seed));
	else
		ibv_wr_rdma_write(xa, mr_b->rkey, (uintptr_t)(buf_b + off));
	ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)buf_a, MSG);
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	expect(cq_a, id, IBV_WC_RDMA_WRITE, MSG, imm ? 2 : 0, 0);
	if (imm)
		expect(cq_b, id + 1, IBV_WC_RECV_RDMA_WITH_IMM, MSG, 1, 0x5A00 + seed);
	else
		expect_none(cq_b);
	ck_assert_int_eq(memcmp(buf_b + off, buf_a, MSG), 0);
	ck_assert_uint_eq(buf_b[off - 1], 0);
	ck_assert_uint_eq(buf_b[off + MSG], 0);
}

/* RC: every data builder with 64 KiB at MTU 1024, atomics' old values. */
START_TEST(test_rc_ops)
{
	uint64_t *word, *old;

	pair_open(IBV_QPT_RC, OPS_RC, 1);
	word = (uint64_t *)(buf_b + 3 * MSG);
	old = (uint64_t *)(buf_a + 3 * MSG);
	for (unsigned int i = 0; i < 8; i++) {
		send_one(0x100 + i, i & 1, MSG, i);
		write_one(0x200 + i, i & 1, 64 + 8 * i, i);
	}
	/* READ 64 KiB of B into A */
	fill(buf_b, MSG, 77);
	memset(buf_a, 0, BUF);
	ibv_wr_start(xa);
	xa->wr_id = 0x300;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(xa, mr_b->rkey, (uintptr_t)buf_b);
	ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)(buf_a + 32), MSG);
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	expect(cq_a, 0x300, IBV_WC_RDMA_READ, MSG, 0, 0);
	ck_assert_int_eq(memcmp(buf_a + 32, buf_b, MSG), 0);
	ck_assert_uint_eq(buf_a[31], 0);
	ck_assert_uint_eq(buf_a[32 + MSG], 0);

	/* CMP_AND_SWP: equal (swaps), then not equal (keeps); FETCH_AND_ADD */
	*word = 0x1122334455667788ull;
	ibv_wr_start(xa);
	xa->wr_id = 0x400;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_cmp_swp(xa, mr_b->rkey, (uintptr_t)word, 0x1122334455667788ull, 7);
	ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)&old[0], 8);
	xa->wr_id = 0x401;
	ibv_wr_atomic_cmp_swp(xa, mr_b->rkey, (uintptr_t)word, 6, 9);
	ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)&old[1], 8);
	xa->wr_id = 0x402;
	ibv_wr_atomic_fetch_add(xa, mr_b->rkey, (uintptr_t)word, 0xFFFFFFFFFFFFFFFFull);
	ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)&old[2], 8);
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	expect(cq_a, 0x400, IBV_WC_COMP_SWAP, 8, 0, 0);
	expect(cq_a, 0x401, IBV_WC_COMP_SWAP, 8, 0, 0);
	expect(cq_a, 0x402, IBV_WC_FETCH_ADD, 8, 0, 0);
	ck_assert_uint_eq(old[0], 0x1122334455667788ull);
	ck_assert_uint_eq(old[1], 7);
	ck_assert_uint_eq(old[2], 7);
	ck_assert_uint_eq(*word, 6);
	expect_none(cq_b);
	pair_close();
}
END_TEST

/* RC: sge lists, inline data and lists, unsignalled WQEs in one batch. */
START_TEST(test_rc_sge_inline)
{
	struct ibv_sge sgl[MAX_SGE];
	struct ibv_data_buf bufs[3];
	char in1[100], in2[1], in3[155];
	unsigned char want[MAX_INLINE];

	pair_open(IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE, 1);
	fill(buf_a, BUF, 3);
	memset(buf_b, 0, BUF);
	/* four SGEs from scattered pieces of buf_a: 1, 4096, 60000, 1439 bytes */
	sgl[0] = (struct ibv_sge){ (uintptr_t)(buf_a + 5), 1, mr_a->lkey };
	sgl[1] = (struct ibv_sge){ (uintptr_t)(buf_a + 9000), 4096, mr_a->lkey };
	sgl[2] = (struct ibv_sge){ (uintptr_t)(buf_a + 70000), 60000, mr_a->lkey };
	sgl[3] = (struct ibv_sge){ (uintptr_t)(buf_a + 200000), 1439, mr_a->lkey };
	recv_b(0x11, 0, MSG);
	ibv_wr_start(xa);
	xa->wr_id = 0x10;
	xa->wr_flags = 0; /* unsignalled: retired by the next signalled CQE */
	ibv_wr_send(xa);
	ibv_wr_set_sge_list(xa, MAX_SGE, sgl);
	xa->wr_id = 0x12;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(xa, mr_b->rkey, (uintptr_t)(buf_b + 2 * MSG));
	ibv_wr_set_sge_list(xa, 2, sgl + 1);
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	expect(cq_a, 0x12, IBV_WC_RDMA_WRITE, -1, 0, 0);
	expect(cq_b, 0x11, IBV_WC_RECV, 1 + 4096 + 60000 + 1439, 0, 0);
	ck_assert_uint_eq(buf_b[0], buf_a[5]);
	ck_assert_int_eq(memcmp(buf_b + 1, buf_a + 9000, 4096), 0);
	ck_assert_int_eq(memcmp(buf_b + 4097, buf_a + 70000, 60000), 0);
	ck_assert_int_eq(memcmp(buf_b + 64097, buf_a + 200000, 1439), 0);
	ck_assert_int_eq(memcmp(buf_b + 2 * MSG, buf_a + 9000, 4096), 0);
	ck_assert_int_eq(memcmp(buf_b + 2 * MSG + 4096, buf_a + 70000, 60000), 0);

	/* inline: one buffer (SEND) and a list of three (WRITE), from stack
	 * memory with no MR, overwritten as soon as wr_complete returns */
	memset(in1, 'a', sizeof(in1));
	in2[0] = 'b';
	memset(in3, 'c', sizeof(in3));
	memcpy(want, in1, 100);
	want[100] = 'b';
	memcpy(want + 101, in3, 155);
	bufs[0] = (struct ibv_data_buf){ in1, sizeof(in1) };
	bufs[1] = (struct ibv_data_buf){ in2, sizeof(in2) };
	bufs[2] = (struct ibv_data_buf){ in3, sizeof(in3) };
	memset(buf_b, 0, BUF);
	recv_b(0x21, 0, 4096);
	ibv_wr_start(xa);
	xa->wr_id = 0x20;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(xa);
	ibv_wr_set_inline_data(xa, in1, sizeof(in1));
	xa->wr_id = 0x22;
	ibv_wr_rdma_write(xa, mr_b->rkey, (uintptr_t)(buf_b + 8192));
	ibv_wr_set_inline_data_list(xa, 3, bufs);
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	memset(in1, 'x', sizeof(in1));
	memset(in3, 'x', sizeof(in3));
	expect(cq_a, 0x20, IBV_WC_SEND, -1, 0, 0);
	expect(cq_a, 0x22, IBV_WC_RDMA_WRITE, -1, 0, 0);
	expect(cq_b, 0x21, IBV_WC_RECV, 100, 0, 0);
	ck_assert_int_eq(memcmp(buf_b, want, 100), 0);
	ck_assert_int_eq(memcmp(buf_b + 8192, want, MAX_INLINE), 0);
	ck_assert_uint_eq(buf_b[8192 + MAX_INLINE], 0);
	pair_close();
}
END_TEST

/* UC: SEND(_IMM), WRITE(_IMM) of 64 KiB at MTU 1024. */
START_TEST(test_uc_ops)
{
	pair_open(IBV_QPT_UC, OPS_UC, 1);
	for (unsigned int i = 0; i < 8; i++) {
		send_one(0x100 + i, i & 1, MSG, i);
		write_one(0x200 + i, i & 1, 64 + 8 * i, i);
	}
	pair_close();
}
END_TEST

/* UD: SEND(_IMM) with wr_set_ud_addr before or after the data setter, inline. */
START_TEST(test_ud_ops)
{
	char in[64];

	pair_open(IBV_QPT_UD, OPS_UD, 1);
	for (unsigned int i = 0; i < 8; i++)
		send_one(0x100 + i, i & 1, UD_MSG - 8 * i, i);
	memset(in, 'u', sizeof(in));
	memset(buf_b, 0, 4096);
	recv_b(0x31, 0, 4096);
	ibv_wr_start(xa);
	xa->wr_id = 0x30;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(xa, htonl(0xCAFE));
	ibv_wr_set_inline_data(xa, in, sizeof(in));
	ibv_wr_set_ud_addr(xa, ah, qb->qp_num, TV_QKEY);
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	memset(in, 'x', sizeof(in));
	expect(cq_a, 0x30, IBV_WC_SEND, 64, 2, 0);
	expect(cq_b, 0x31, IBV_WC_RECV, GRH + 64, 1, 0xCAFE);
	for (int i = 0; i < 64; i++)
		ck_assert_uint_eq(buf_b[GRH + i], 'u');
	pair_close();
}
END_TEST

/* One 16-byte SEND on A from the end of buf_a (for error batches). */
static void add_send(uint64_t id)
{
	xa->wr_id = id;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(xa);
	wr_set_ud();
	ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)(buf_a + BUF - 64), 16);
}

static struct ibv_qp_cap query_cap(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	ck_assert_int_eq(ibv_query_qp(qp, &a, IBV_QP_CAP, &ia), 0);
	return ia.cap;
}

/* RC building errors: EINVAL at wr_complete, nothing of the batch posted. */
START_TEST(test_rc_errors)
{
	struct ibv_sge sgl[MAX_SGE + 1];
	struct ibv_qp_cap cap;
	struct ibv_ah *rc_ah;
	char in[MAX_INLINE + 1];
	unsigned int k = 0;

	pair_open(IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, 1);
	cap = query_cap(qa);
	ck_assert_uint_eq(cap.max_send_sge, MAX_SGE);
	ck_assert_uint_eq(cap.max_inline_data, MAX_INLINE);
	rc_ah = tv_ah(pd, &gid);
	ck_assert_ptr_nonnull(rc_ah);
	for (int i = 0; i <= MAX_SGE; i++)
		sgl[i] = (struct ibv_sge){ (uintptr_t)(buf_a + 64 * i), 8, mr_a->lkey };
	memset(in, 'i', sizeof(in));
	for (int c = 0; c < 9; c++) {
		ibv_wr_start(xa);
		add_send(0x50); /* a good WQE first: it must not go either */
		xa->wr_id = 0x51;
		switch (c) {
		case 0: /* one SGE more than max_send_sge */
			ibv_wr_send(xa);
			ibv_wr_set_sge_list(xa, MAX_SGE + 1, sgl);
			break;
		case 1: /* inline data one byte over max_inline_data */
			ibv_wr_send(xa);
			ibv_wr_set_inline_data(xa, in, MAX_INLINE + 1);
			break;
		case 2: /* RDMA WRITE was not asked for at creation */
			ibv_wr_rdma_write(xa, mr_b->rkey, (uintptr_t)buf_b);
			ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)buf_a, 8);
			break;
		case 3: /* a setter with no builder before it */
			ibv_wr_abort(xa);
			ibv_wr_start(xa);
			ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)buf_a, 8);
			break;
		case 4: /* UD addressing on an RC QP */
			ibv_wr_send(xa);
			ibv_wr_set_ud_addr(xa, rc_ah, qb->qp_num, TV_QKEY);
			ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)buf_a, 8);
			break;
		case 5: /* atomic with inline data */
			ibv_wr_atomic_fetch_add(xa, mr_b->rkey, (uintptr_t)buf_b, 1);
			ibv_wr_set_inline_data(xa, in, 8);
			break;
		case 6: /* atomic with two SGEs */
			ibv_wr_atomic_fetch_add(xa, mr_b->rkey, (uintptr_t)buf_b, 1);
			ibv_wr_set_sge_list(xa, 2, sgl);
			break;
		case 7: /* TSO and XRC setters: not for an RC QP */
			ibv_wr_send(xa);
			ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)buf_a, 8);
			ibv_wr_set_xrc_srqn(xa, 1);
			break;
		case 8: /* an error, then good WQEs after it */
			ibv_wr_send(xa);
			ibv_wr_set_inline_data(xa, in, MAX_INLINE + 1);
			add_send(0x52);
			add_send(0x53);
			break;
		}
		ck_assert_msg(ibv_wr_complete(xa) == EINVAL, "case %d", c);
		marker(k++);
		expect_none(cq_a);
	}
	ck_assert_int_eq(ibv_destroy_ah(rc_ah), 0);
	pair_close();
}
END_TEST

/* Abort, SQ overflow (ENOMEM), a full SQ in one batch, RESET. */
START_TEST(test_abort_full_state)
{
	struct ibv_qp_cap cap;
	unsigned int k = 0;

	pair_open(IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 0);
	cap = query_cap(qa);
	ck_assert_uint_eq(cap.max_send_wr, SQ_WR);
	/* RESET (then INIT): EINVAL, nothing posted */
	ibv_wr_start(xa);
	add_send(0x60);
	ck_assert_int_eq(ibv_wr_complete(xa), EINVAL);
	connect_qp(qa, qb->qp_num);
	connect_qp(qb, qa->qp_num);
	marker(k++);
	/* abort of two WQEs, twice */
	for (int i = 0; i < 2; i++) {
		ibv_wr_start(xa);
		add_send(0x61);
		add_send(0x62);
		ibv_wr_abort(xa);
		marker(k++);
	}
	expect_none(cq_a);
	/* one WQE more than the SQ holds: ENOMEM, nothing posted */
	ibv_wr_start(xa);
	for (unsigned int i = 0; i <= SQ_WR; i++)
		add_send(0x70 + i);
	ck_assert_int_eq(ibv_wr_complete(xa), ENOMEM);
	marker(k++);
	expect_none(cq_a);
	/* exactly SQ_WR in one batch: all go, in order */
	for (unsigned int i = 0; i < SQ_WR; i++)
		recv_b(0x1000 + i, 64 * i, 64);
	ibv_wr_start(xa);
	for (unsigned int i = 0; i < SQ_WR; i++) {
		xa->wr_id = 0x2000 + i;
		xa->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(xa);
		ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)(buf_a + i), 1);
	}
	ck_assert_int_eq(ibv_wr_complete(xa), 0);
	for (unsigned int i = 0; i < SQ_WR; i++) {
		expect(cq_a, 0x2000 + i, IBV_WC_SEND, -1, 0, 0);
		expect(cq_b, 0x1000 + i, IBV_WC_RECV, 1, 0, 0);
	}
	marker(k++);
	pair_close();
}
END_TEST

/* UD without wr_set_ud_addr: EINVAL, nothing posted. */
START_TEST(test_ud_errors)
{
	pair_open(IBV_QPT_UD, OPS_UD, 1);
	ibv_wr_start(xa);
	add_send(0x50);
	xa->wr_id = 0x51;
	ibv_wr_send(xa);
	ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)buf_a, 8);
	ck_assert_int_eq(ibv_wr_complete(xa), EINVAL);
	marker(0);
	expect_none(cq_a);
	pair_close();
}
END_TEST

#define STRESS_ITERS 3000

/* RC: STRESS_ITERS batches of a 64 KiB WRITE_WITH_IMM + a 512-byte SEND,
 * each checked byte for byte. */
START_TEST(test_rc_many)
{
	pair_open(IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, 1);
	for (unsigned int i = 0; i < STRESS_ITERS; i++) {
		unsigned char *src = buf_a + (i & 1) * MSG;

		fill(src, MSG, i);
		recv_b(2 * i, 0, 0);
		recv_b(2 * i + 1, 2 * MSG, 512);
		ibv_wr_start(xa);
		xa->wr_id = 3 * i;
		xa->wr_flags = 0;
		ibv_wr_rdma_write_imm(xa, mr_b->rkey, (uintptr_t)buf_b, htonl(i));
		ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)src, MSG);
		xa->wr_id = 3 * i + 1;
		xa->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(xa);
		ibv_wr_set_sge(xa, mr_a->lkey, (uintptr_t)(src + 1000), 512);
		ck_assert_int_eq(ibv_wr_complete(xa), 0);
		expect(cq_a, 3 * i + 1, IBV_WC_SEND, 512, 0, 0);
		expect(cq_b, 2 * i, IBV_WC_RECV_RDMA_WITH_IMM, MSG, 1, i);
		expect(cq_b, 2 * i + 1, IBV_WC_RECV, 512, 0, 0);
		ck_assert_msg(memcmp(buf_b, src, MSG) == 0, "iteration %u: WRITE data", i);
		ck_assert_msg(memcmp(buf_b + 2 * MSG, src + 1000, 512) == 0, "iteration %u: SEND data", i);
	}
	pair_close();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_qpex");
	TCase *tc = tcase_create("qpex");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_create);
	tcase_add_test(tc, test_rc_ops);
	tcase_add_test(tc, test_rc_sge_inline);
	tcase_add_test(tc, test_uc_ops);
	tcase_add_test(tc, test_ud_ops);
	tcase_add_test(tc, test_rc_errors);
	tcase_add_test(tc, test_abort_full_state);
	tcase_add_test(tc, test_ud_errors);
	tcase_add_test(tc, test_rc_many);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
