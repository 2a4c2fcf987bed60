/*
 * traffic_bad_wqe.c - WQEs no NIC can execute, through libibverbs and a
 * running uroced (Check, run inside `uroce run` by traffic_bad_wqe.sh).
 *
 * Atomics (docs/transport.md "Atomics"): the local data of CMP_AND_SWP and
 * FETCH_AND_ADD is one SGE of exactly 8 bytes. ibv_post_send refuses any
 * other shape (one SGE of 4 or 16 bytes, num_sge 0, num_sge 2 of 4+4 or
 * 8+8) with EINVAL and *bad_wr on it; the extended API (ibv_wr_atomic_*
 * then ibv_wr_set_sge of 4 bytes, no setter, a list of 2) fails
 * ibv_wr_complete with EINVAL and posts nothing. The same WQE written
 * straight into the SQ ring (a hostile client) completes with
 * IBV_WC_LOC_LEN_ERR (vendor_err 0x71, docs/cqe-format.md), the WQEs after
 * it with IBV_WC_WR_FLUSH_ERR (0xf9), the QP in ERR, the responder's word
 * untouched (nothing sent) and the 16 bytes at the 4-byte buffer untouched.
 *
 * Stranding (docs/daemon.md "Doorbell"): a malformed WQE (SGE count over
 * the QP's maximum, wqe_index of another lap) followed by valid WQEs.
 * Send: LOC_QP_OP_ERR (0x72) for it, WR_FLUSH_ERR for each later one, one
 * IBV_EVENT_QP_FATAL. Receive, met through the doorbell (QP in INIT) or
 * through rq_refill (RC or UD in RTS, a SEND arriving): the same, the RC
 * sender IBV_WC_REM_OP_ERR, the UD sender IBV_WC_SUCCESS; an lkey no MR has gives LOC_PROT_ERR (0x74) at
 * placement and the later ones flush too. Receives posted in ERR flush. A
 * producer index more than the ring's depth ahead is refused once
 * (LOC_QP_OP_ERR), not read as 2^31 WQEs. Every completion exact: count,
 * order, wr_id, status, vendor_err; then none within 300 ms.
 * Sources: ibv_post_send(3), ibv_wr_post(3), ibv_poll_cq(3), IBTA 10.3.1
 * (ERR flushes), 9.9.3 (a malformed WQE: Class A, QP to ERR).
 */
#include "config.h"
#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <infiniband/verbs.h>

#include "provider/uroce.h"
#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 20000
#define QUIET_MS 300
#define HOSTILE_WRID 0xbad0bad0ull
#define VE_LOC_LEN 0x71
#define VE_LOC_QP_OP 0x72
#define VE_LOC_PROT 0x74
#define VE_FLUSH 0xf9
#define CANARY 0xA5
#define TARGET0 0x1000000000000005ull
#define NLATER 5u

#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	     IBV_ACCESS_REMOTE_ATOMIC)
#define OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
	     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)

/* One context (one client of the daemon): an RC QP with two SGEs a side. */
struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	unsigned char *buf; /* 4096 bytes */
	union ibv_gid gid;
};

static void end_open_type(struct end *e, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = type,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = type == IBV_QPT_UD ? IBV_QP_EX_WITH_SEND : OPS,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2 },
	};

	memset(e, 0, sizeof(*e));
	e->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(e->ctx);
	ck_assert_int_eq(ibv_query_gid(e->ctx, 1, 0, &e->gid), 0);
	e->pd = ibv_alloc_pd(e->ctx);
	ck_assert_ptr_nonnull(e->pd);
	ck_assert_int_eq(posix_memalign((void **)&e->buf, 4096, 4096), 0);
	memset(e->buf, CANARY, 4096);
	e->mr = ibv_reg_mr(e->pd, e->buf, 4096, ACC);
	ck_assert_ptr_nonnull(e->mr);
	e->cq = ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	ck_assert_ptr_nonnull(e->cq);
	qa.send_cq = qa.recv_cq = e->cq;
	qa.pd = e->pd;
	e->qp = ibv_create_qp_ex(e->ctx, &qa);
	ck_assert_ptr_nonnull(e->qp);
	e->qpx = ibv_qp_to_qp_ex(e->qp);
	ck_assert_ptr_nonnull(e->qpx);
}

static void end_open(struct end *e)
{
	end_open_type(e, IBV_QPT_RC);
}

static void end_close(struct end *e)
{
	ck_assert_int_eq(ibv_destroy_qp(e->qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(e->cq), 0);
	ck_assert_int_eq(ibv_dereg_mr(e->mr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(e->pd), 0);
	ck_assert_int_eq(ibv_close_device(e->ctx), 0);
	free(e->buf);
}

static void to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = ACC };

	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS), 0);
}

/* INIT -> RTR -> RTS towards PEER: MTU 1024, PSNs 0, 4 READs/atomics each way. */
static void to_rts(struct end *e, const struct end *peer)
{
	struct ibv_qp_attr a;

	to_init(e->qp);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	ck_assert_int_eq(ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	ck_assert_int_eq(ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				       IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

/* A and B connected; B's target word (offset 0) holds TARGET0. */
static void pair_open(struct end *a, struct end *b)
{
	end_open(a);
	end_open(b);
	to_rts(a, b);
	to_rts(b, a);
	memcpy(b->buf, &(uint64_t){ TARGET0 }, 8);
}

static uint64_t target(const struct end *b)
{
	uint64_t v;

	memcpy(&v, b->buf, 8);
	return v;
}

/* The 16 bytes at A's 4-byte result buffer (offset 256) and the 8 bytes
 * after it in a second buffer (offset 260 is the 4 bytes right after). */
static void expect_canaries(const struct end *a)
{
	for (unsigned i = 256; i < 272; i++)
		ck_assert_msg(a->buf[i] == CANARY, "byte %u of the local buffer written: 0x%02x", i,
			      a->buf[i]);
}

static void expect_wc(struct end *e, uint64_t wr_id, enum ibv_wc_status st, uint32_t vendor)
{
	struct ibv_wc wc;

	ck_assert_int_eq(tv_poll_one(e->cq, WAIT_MS, &wc), 0);
	ck_assert_msg(wc.status == st && wc.wr_id == wr_id,
		      "wr_id 0x%llx status %s, expected wr_id 0x%llx %s",
		      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
		      (unsigned long long)wr_id, ibv_wc_status_str(st));
	ck_assert_uint_eq(wc.qp_num, e->qp->qp_num);
	if (st != IBV_WC_SUCCESS)
		ck_assert_uint_eq(wc.vendor_err, vendor);
}

static void expect_none(struct end *e)
{
	struct ibv_wc wc;

	ck_assert_int_eq(tv_poll_one(e->cq, QUIET_MS, &wc), ETIMEDOUT);
}

static void expect_state(struct end *e, enum ibv_qp_state want)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;

	ck_assert_int_eq(ibv_query_qp(e->qp, &qa, IBV_QP_STATE, &ia), 0);
	ck_assert_int_eq(qa.qp_state, want);
}

/* Exactly one QP_FATAL on E's QP, then no other event. */
static void expect_fatal_once(struct end *e)
{
	struct ibv_async_event ev;

	ck_assert_int_eq(tv_next_async(e->ctx, WAIT_MS, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_QP_FATAL);
	ck_assert_ptr_eq(ev.element.qp, e->qp);
	ibv_ack_async_event(&ev);
	ck_assert_int_eq(tv_next_async(e->ctx, QUIET_MS, &ev), ETIMEDOUT);
}

/* ibv_post_send of one atomic; on an error *bad_wr must be that WR. */
static int post_atomic(struct end *a, const struct end *b, uint64_t wr_id,
		       enum ibv_wr_opcode op, struct ibv_sge *sg, int num_sge)
{
	struct ibv_send_wr w = {
		.wr_id = wr_id, .sg_list = sg, .num_sge = num_sge, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)b->buf, .rkey = b->mr->rkey,
			       .compare_add = TARGET0, .swap = 7 },
	};

	struct ibv_send_wr *bad = NULL;
	int ret = ibv_post_send(a->qp, &w, &bad);

	if (ret)
		ck_assert_ptr_eq(bad, &w);
	return ret;
}

/* A valid FETCH_ADD of 1 with its result at A's offset 512: WR_ID completes
 * with the old value OLD. */
static void good_fetch_add(struct end *a, const struct end *b, uint64_t wr_id, uint64_t old)
{
	struct ibv_sge sg = { (uintptr_t)a->buf + 512, 8, a->mr->lkey };
	struct ibv_send_wr w = {
		.wr_id = wr_id, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)b->buf, .rkey = b->mr->rkey,
			       .compare_add = 1 },
	}, *bad = NULL;
	uint64_t got;

	ck_assert_int_eq(ibv_post_send(a->qp, &w, &bad), 0);
	expect_wc(a, wr_id, IBV_WC_SUCCESS, 0);
	memcpy(&got, a->buf + 512, 8);
	ck_assert_uint_eq(got, old);
	ck_assert_uint_eq(target(b), old + 1);
}

/* The local data shapes an atomic may not have: SGEs at A's offset 256. */
struct shape {
	const char *name;
	int num_sge;
	uint32_t len[2];
};

static const struct shape shapes[] = {
	{ "one SGE of 4 bytes", 1, { 4, 0 } },
	{ "one SGE of 16 bytes", 1, { 16, 0 } },
	{ "num_sge 0", 0, { 0, 0 } },
	{ "num_sge 2, 4 + 4 bytes", 2, { 4, 4 } },
	{ "num_sge 2, 8 + 8 bytes", 2, { 8, 8 } },
};
#define NSHAPES (int)(sizeof(shapes) / sizeof(shapes[0]))

static void shape_sges(const struct shape *s, const struct end *a, struct ibv_sge sg[2])
{
	sg[0] = (struct ibv_sge){ (uintptr_t)a->buf + 256, s->len[0], a->mr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)a->buf + 256 + s->len[0], s->len[1], a->mr->lkey };
}

/* ibv_post_send: EINVAL for each shape with either atomic, bad_wr on it,
 * nothing completes, nothing executes; the QP still works afterwards. */
START_TEST(post_send_atomic_sge)
{
	const struct shape *s = &shapes[_i];
	static const enum ibv_wr_opcode ops[2] = { IBV_WR_ATOMIC_FETCH_AND_ADD,
						   IBV_WR_ATOMIC_CMP_AND_SWP };
	struct ibv_sge sg[2];
	struct end a, b;

	pair_open(&a, &b);
	shape_sges(s, &a, sg);
	for (int k = 0; k < 2; k++) {
		ck_assert_msg(post_atomic(&a, &b, 0x10 + k, ops[k], sg, s->num_sge) == EINVAL,
			      "%s: ibv_post_send accepted it", s->name);
	}
	expect_none(&a);
	ck_assert_uint_eq(target(&b), TARGET0);
	expect_canaries(&a);
	good_fetch_add(&a, &b, 0x20, TARGET0);
	expect_canaries(&a);
	expect_state(&a, IBV_QPS_RTS);
	end_close(&a);
	end_close(&b);
}
END_TEST

/* The extended API: the same shapes through wr_set_sge / wr_set_sge_list,
 * and an atomic with no setter: ibv_wr_complete EINVAL, nothing posted. */
START_TEST(wr_api_atomic_sge)
{
	struct ibv_sge sg[2];
	struct end a, b;

	pair_open(&a, &b);
	for (int c = 0; c <= NSHAPES; c++) {
		for (int k = 0; k < 2; k++) {
			ibv_wr_start(a.qpx);
			a.qpx->wr_id = 0x30 + c;
			a.qpx->wr_flags = IBV_SEND_SIGNALED;
			if (k)
				ibv_wr_atomic_cmp_swp(a.qpx, b.mr->rkey, (uintptr_t)b.buf, TARGET0, 7);
			else
				ibv_wr_atomic_fetch_add(a.qpx, b.mr->rkey, (uintptr_t)b.buf, 1);
			if (c < NSHAPES) {
				shape_sges(&shapes[c], &a, sg);
				if (shapes[c].num_sge == 1)
					ibv_wr_set_sge(a.qpx, sg[0].lkey, sg[0].addr, sg[0].length);
				else
					ibv_wr_set_sge_list(a.qpx, (size_t)shapes[c].num_sge, sg);
			} /* c == NSHAPES: no SGE setter at all */
			ck_assert_msg(ibv_wr_complete(a.qpx) == EINVAL, "%s, %s: wr_complete accepted it",
				      c < NSHAPES ? shapes[c].name : "no wr_set_sge",
				      k ? "CMP_SWP" : "FETCH_ADD");
		}
	}
	/* a valid batch after them: only its WQE completes */
	ibv_wr_start(a.qpx);
	a.qpx->wr_id = 0x40;
	a.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(a.qpx, b.mr->rkey, (uintptr_t)b.buf, 2);
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)a.buf + 512, 8);
	ck_assert_int_eq(ibv_wr_complete(a.qpx), 0);
	expect_wc(&a, 0x40, IBV_WC_SUCCESS, 0);
	expect_none(&a);
	ck_assert_uint_eq(target(&b), TARGET0 + 2);
	expect_canaries(&a);
	end_close(&a);
	end_close(&b);
}
END_TEST

/* Writes send WQE W (its SGEs after it) into QP's SQ ring as the next WQE
 * and publishes sq_pi without a doorbell: what a client may do to its own
 * ring memory, bypassing every check of the provider. */
static void silent_post_send(struct ibv_qp *ibqp, struct uroce_send_wqe *w,
			     const struct uroce_sge *sge, unsigned nsge, int index_skew)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	struct uroce_qp_ring_hdr *h = qp->ring;
	uint32_t slot = qp->sq_head & (qp->cap.max_send_wr - 1);
	unsigned char *p = (unsigned char *)qp->ring + qp->layout.sq_offset +
			   (size_t)slot * qp->layout.sq_stride;

	w->wqe_index = (uint16_t)(qp->sq_head + index_skew);
	memset(p, 0, qp->layout.sq_stride);
	memcpy(p, w, sizeof(*w));
	memcpy(p + sizeof(*w), sge, nsge * sizeof(*sge));
	qp->sq_wrid[slot] = HOSTILE_WRID;
	qp->sq_wqe_head[slot] = qp->sq_head;
	qp->sq_head++;
	__atomic_store_n(&h->sq_pi, qp->sq_head, __ATOMIC_RELEASE);
}

/* The same shapes written straight into the SQ ring, then two valid
 * FETCH_ADDs posted (their doorbell makes the daemon read all three):
 * LOC_LEN_ERR, two WR_FLUSH_ERR, QP in ERR, nothing executed or written. */
START_TEST(hostile_atomic_sge)
{
	const struct shape *s = &shapes[_i / 2];
	struct uroce_send_wqe w = {
		.opcode = _i % 2 ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD,
		.flags = UROCE_WQE_SIGNALED,
		.num_sge = (uint8_t)s->num_sge,
		.byte_len = s->len[0] + s->len[1],
		.compare_add = TARGET0,
		.swap = 7,
	};
	struct uroce_sge sge[2];
	struct ibv_sge sg = { 0, 8, 0 };
	struct end a, b;

	pair_open(&a, &b);
	w.remote_addr = (uintptr_t)b.buf;
	w.rkey = b.mr->rkey;
	sge[0] = (struct uroce_sge){ (uintptr_t)a.buf + 256, s->len[0], a.mr->lkey };
	sge[1] = (struct uroce_sge){ (uintptr_t)a.buf + 256 + s->len[0], s->len[1], a.mr->lkey };
	silent_post_send(a.qp, &w, sge, (unsigned)s->num_sge, 0);
	sg.addr = (uintptr_t)a.buf + 512;
	sg.lkey = a.mr->lkey;
	ck_assert_int_eq(post_atomic(&a, &b, 0x51, IBV_WR_ATOMIC_FETCH_AND_ADD, &sg, 1), 0);
	ck_assert_int_eq(post_atomic(&a, &b, 0x52, IBV_WR_ATOMIC_FETCH_AND_ADD, &sg, 1), 0);
	expect_wc(&a, HOSTILE_WRID, IBV_WC_LOC_LEN_ERR, VE_LOC_LEN);
	expect_wc(&a, 0x51, IBV_WC_WR_FLUSH_ERR, VE_FLUSH);
	expect_wc(&a, 0x52, IBV_WC_WR_FLUSH_ERR, VE_FLUSH);
	expect_none(&a);
	expect_state(&a, IBV_QPS_ERR);
	ck_assert_uint_eq(target(&b), TARGET0);
	expect_canaries(&a);
	for (unsigned i = 512; i < 520; i++)
		ck_assert_uint_eq(a.buf[i], CANARY);
	end_close(&a);
	end_close(&b);
}
END_TEST

/* A malformed send WQE (SGE count over max_send_sge, or a wqe_index of
 * the next lap) then NLATER valid FETCH_ADDs: LOC_QP_OP_ERR, NLATER
 * WR_FLUSH_ERR in order, one QP_FATAL; none executed. */
START_TEST(hostile_send_then_valid)
{
	struct uroce_send_wqe w = {
		.opcode = IBV_WR_SEND,
		.flags = UROCE_WQE_SIGNALED,
		.num_sge = _i ? 1 : 3,
		.byte_len = _i ? 8 : 24,
	};
	struct uroce_sge sge[3];
	struct end a, b;

	pair_open(&a, &b);
	for (int i = 0; i < 3; i++)
		sge[i] = (struct uroce_sge){ (uintptr_t)a.buf + 8 * i, 8, a.mr->lkey };
	silent_post_send(a.qp, &w, sge, w.num_sge,
			 _i ? (int)to_uqp(a.qp)->cap.max_send_wr : 0);
	for (unsigned k = 0; k < NLATER; k++) {
		struct ibv_sge sg = { (uintptr_t)a.buf + 512 + 8 * k, 8, a.mr->lkey };

		ck_assert_int_eq(post_atomic(&a, &b, 0x60 + k, IBV_WR_ATOMIC_FETCH_AND_ADD, &sg, 1), 0);
	}
	expect_wc(&a, HOSTILE_WRID, IBV_WC_LOC_QP_OP_ERR, VE_LOC_QP_OP);
	for (unsigned k = 0; k < NLATER; k++)
		expect_wc(&a, 0x60 + k, IBV_WC_WR_FLUSH_ERR, VE_FLUSH);
	expect_none(&a);
	expect_state(&a, IBV_QPS_ERR);
	expect_fatal_once(&a);
	ck_assert_uint_eq(target(&b), TARGET0);
	end_close(&a);
	end_close(&b);
}
END_TEST

/* The hostile receive WQE: header fields and up to three SGEs as written. */
struct bad_recv {
	const char *name;
	int index_skew;
	unsigned num_sge;
	uint32_t lkey_xor;	/* 0: B's own lkey */
	enum ibv_wc_status status;
	uint32_t vendor;
};

static const struct bad_recv bad_recvs[] = {
	{ "3 SGEs, max_recv_sge 2", 0, 3, 0, IBV_WC_LOC_QP_OP_ERR, VE_LOC_QP_OP },
	{ "wqe_index of the next lap", 16, 1, 0, IBV_WC_LOC_QP_OP_ERR, VE_LOC_QP_OP },
	{ "lkey of no MR", 0, 1, 0x5a5a5a00, IBV_WC_LOC_PROT_ERR, VE_LOC_PROT },
};

static void silent_post_recv(struct end *e, const struct bad_recv *r)
{
	struct uroce_qp *qp = to_uqp(e->qp);
	struct uroce_qp_ring_hdr *h = qp->ring;
	uint32_t slot = qp->rq_head & (qp->cap.max_recv_wr - 1);
	unsigned char *p = (unsigned char *)qp->ring + qp->layout.rq_offset +
			   (size_t)slot * qp->layout.rq_stride;
	struct uroce_recv_wqe hdr = {
		.wqe_index = (uint16_t)(qp->rq_head + r->index_skew),
		.num_sge = (uint8_t)r->num_sge,
	};
	struct uroce_sge sge[3];

	for (int i = 0; i < 3; i++)
		sge[i] = (struct uroce_sge){ (uintptr_t)e->buf + 1024 * i, 1024,
					     e->mr->lkey ^ r->lkey_xor };
	memset(p, 0, qp->layout.rq_stride);
	memcpy(p, &hdr, sizeof(hdr));
	/* at most what the slot holds: the WQE is refused for its count */
	memcpy(p + sizeof(hdr), sge,
	       qp->layout.rq_stride - sizeof(hdr) < sizeof(sge) ? qp->layout.rq_stride - sizeof(hdr) :
								   sizeof(sge));
	qp->rq_wrid[slot] = HOSTILE_WRID;
	qp->rq_head++;
	__atomic_store_n(&h->rq_pi, qp->rq_head, __ATOMIC_RELEASE);
}

static void post_recvs(struct end *e, uint64_t first_wr_id, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		struct ibv_sge sg = { (uintptr_t)e->buf + 2048, 1024, e->mr->lkey };
		struct ibv_recv_wr w = { .wr_id = first_wr_id + k, .sg_list = &sg, .num_sge = 1 };
		struct ibv_recv_wr *bad = NULL;

		ck_assert_int_eq(ibv_post_recv(e->qp, &w, &bad), 0);
	}
}

static void expect_recv_flushes(struct end *e, uint64_t first_wr_id, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		expect_wc(e, first_wr_id + k, IBV_WC_WR_FLUSH_ERR, VE_FLUSH);
}

/* Through the doorbell: B in INIT (no receive doorbell suppression), the
 * hostile WQE then NLATER valid receives; ibv_post_recv rings. */
START_TEST(rq_doorbell_bad_then_valid)
{
	const struct bad_recv *r = &bad_recvs[_i];
	struct end b;

	end_open(&b);
	to_init(b.qp);
	silent_post_recv(&b, r);
	post_recvs(&b, 0x100, NLATER);
	/* in INIT nothing is placed: a bad lkey is not seen, the WQEs wait */
	if (r->status == IBV_WC_LOC_PROT_ERR) {
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

		expect_none(&b);
		ck_assert_int_eq(ibv_modify_qp(b.qp, &qa, IBV_QP_STATE), 0);
		expect_wc(&b, HOSTILE_WRID, IBV_WC_WR_FLUSH_ERR, VE_FLUSH);
		expect_recv_flushes(&b, 0x100, NLATER);
	} else {
		expect_wc(&b, HOSTILE_WRID, r->status, r->vendor);
		expect_recv_flushes(&b, 0x100, NLATER);
		expect_fatal_once(&b);
	}
	expect_none(&b);
	expect_state(&b, IBV_QPS_ERR);
	/* posted in ERR: flushed at once */
	post_recvs(&b, 0x200, 3);
	expect_recv_flushes(&b, 0x200, 3);
	expect_none(&b);
	end_close(&b);
}
END_TEST

/* Through rq_refill: B in RTS posts without a doorbell; A's SEND finds the
 * hostile WQE first. */
START_TEST(rq_refill_bad_then_valid)
{
	const struct bad_recv *r = &bad_recvs[_i];
	struct ibv_sge sg;
	struct ibv_send_wr w = { .wr_id = 0x70, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct end a, b;

	pair_open(&a, &b);
	sg = (struct ibv_sge){ (uintptr_t)a.buf + 1024, 64, a.mr->lkey };
	silent_post_recv(&b, r);
	post_recvs(&b, 0x100, NLATER);
	ck_assert_int_eq(ibv_post_send(a.qp, &w, &bad), 0);
	expect_wc(&a, 0x70, IBV_WC_REM_OP_ERR, 0x94);
	expect_wc(&b, HOSTILE_WRID, r->status, r->vendor);
	expect_recv_flushes(&b, 0x100, NLATER);
	expect_none(&b);
	expect_state(&b, IBV_QPS_ERR);
	expect_fatal_once(&b);
	post_recvs(&b, 0x200, 3);
	expect_recv_flushes(&b, 0x200, 3);
	expect_none(&b);
	end_close(&a);
	end_close(&b);
}
END_TEST

/* The same through rq_refill on UD: A's 64-byte datagram finds the hostile
 * WQE first; A's send succeeds (UD), B's WQEs complete as on RC. */
START_TEST(ud_refill_bad_then_valid)
{
	const struct bad_recv *r = &bad_recvs[_i];
	struct ibv_sge sg;
	struct ibv_send_wr w = { .wr_id = 0x71, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct end a, b;
	struct ibv_ah *ah;

	end_open_type(&a, IBV_QPT_UD);
	end_open_type(&b, IBV_QPT_UD);
	ck_assert_int_eq(tv_ud_ready(a.qp), 0);
	ck_assert_int_eq(tv_ud_ready(b.qp), 0);
	ah = tv_ah(a.pd, &b.gid);
	ck_assert_ptr_nonnull(ah);
	sg = (struct ibv_sge){ (uintptr_t)a.buf + 1024, 64, a.mr->lkey };
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = b.qp->qp_num;
	w.wr.ud.remote_qkey = TV_QKEY;
	silent_post_recv(&b, r);
	post_recvs(&b, 0x100, NLATER);
	ck_assert_int_eq(ibv_post_send(a.qp, &w, &bad), 0);
	expect_wc(&a, 0x71, IBV_WC_SUCCESS, 0);
	expect_wc(&b, HOSTILE_WRID, r->status, r->vendor);
	expect_recv_flushes(&b, 0x100, NLATER);
	expect_none(&b);
	expect_state(&b, IBV_QPS_ERR);
	expect_fatal_once(&b);
	post_recvs(&b, 0x200, 3);
	expect_recv_flushes(&b, 0x200, 3);
	expect_none(&b);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
	end_close(&a);
	end_close(&b);
}
END_TEST

/* A producer index 2^31 ahead (no WQE written) and a doorbell: one
 * LOC_QP_OP_ERR, the QP in ERR, not 2^31 completions. */
START_TEST(rq_pi_beyond_depth)
{
	struct uroce_qp *qp;
	struct end b;

	end_open(&b);
	to_init(b.qp);
	qp = to_uqp(b.qp);
	qp->rq_wrid[0] = HOSTILE_WRID;
	__atomic_store_n(&((struct uroce_qp_ring_hdr *)qp->ring)->rq_pi, 0x80000000u,
			 __ATOMIC_RELEASE);
	ck_assert_int_eq(eventfd_write(to_uctx(b.ctx)->doorbell, 1), 0);
	expect_wc(&b, HOSTILE_WRID, IBV_WC_LOC_QP_OP_ERR, VE_LOC_QP_OP);
	expect_none(&b);
	expect_state(&b, IBV_QPS_ERR);
	expect_fatal_once(&b);
	end_close(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_bad_wqe");
	TCase *tc = tcase_create("bad_wqe");
	int nrecv = (int)(sizeof(bad_recvs) / sizeof(bad_recvs[0]));

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, post_send_atomic_sge, 0, NSHAPES);
	tcase_add_test(tc, wr_api_atomic_sge);
	tcase_add_loop_test(tc, hostile_atomic_sge, 0, 2 * NSHAPES);
	tcase_add_loop_test(tc, hostile_send_then_valid, 0, 2);
	tcase_add_loop_test(tc, rq_doorbell_bad_then_valid, 0, nrecv);
	tcase_add_loop_test(tc, rq_refill_bad_then_valid, 0, nrecv);
	tcase_add_loop_test(tc, ud_refill_bad_then_valid, 0, nrecv);
	tcase_add_test(tc, rq_pi_beyond_depth);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
