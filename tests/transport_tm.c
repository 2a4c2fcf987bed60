/*
 * transport_tm.c - tag matching in the engine (emu/xport/tm.c,
 * docs/tag-matching.md), two engines back to back (tests/transport_harness.h)
 * at MTU 1024 on a wire that drops, duplicates and reorders 3 % of the
 * packets each: node 0 sends, node 1's RC QP is on a tag-matching SRQ.
 *
 * - eager_lossy: 100 EAGER messages of 64 KiB to 8 reposted tags: each
 *   completes once, CONSUMED_MSG, wr_index the entry, 65520 bytes placed
 *   exactly, the TMH in the completion; retransmitted packets match nothing
 *   twice and count no unexpected message (the device's count stays 0).
 * - rndv_lossy: 100 rendezvous requests for 64 KiB: per request exactly
 *   CONSUMED then EXPECTED (65536 bytes READ exactly) at node 1 and the
 *   SEND then the FIN's receive (32 bytes: the TMH with opcode FIN, the RVH)
 *   at node 0, nothing more, however often packets were resent.
 */
#include "check_main.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/tm_types.h>

#include "transport_harness.h"
#include "uroce/abi.h"

#define BIG 65536u
#define NSLOT 8u
#define NMSG 100u
#define A_SRC 0x100000ull    /* node 0: the messages / rendezvous data */
#define A_FIN 0x400000ull    /* node 0: FIN receive buffers */
#define B_TAG 0x800000ull    /* node 1: the tags' buffers */
#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)

struct env {
	struct th_world *w;
	struct xport_qp *a, *b;
	struct xport_srq *srq;
	uint8_t *src, *fin, *tag;
};

static void env_new(struct env *e, uint64_t seed)
{
	e->w = th_world_new(1024);
	e->w->rng = seed;
	e->src = th_reg_mr(e->w, 0, 0x11, 1, A_SRC, 2 * BIG, ACC, 0);
	e->fin = th_reg_mr(e->w, 0, 0x12, 1, A_FIN, NMSG * 64, ACC, 0);
	e->tag = th_reg_mr(e->w, 1, 0x21, 1, B_TAG, NSLOT * BIG, ACC, 0);
	e->a = th_qp(e->w, 0, IBV_QPT_RC, 0x101, 64);
	e->b = th_qp(e->w, 1, IBV_QPT_RC, 0x202, 64);
	e->srq = xport_srq_create(e->w->node[1].dev, 16, NULL);
	ck_assert_ptr_nonnull(e->srq);
	ck_assert_int_eq(xport_srq_set_tm(e->srq, 128), 0);
	ck_assert_int_eq(xport_srq_set_tm(e->srq, 128), EINVAL);
	ck_assert_int_eq(xport_qp_set_srq(e->b, e->srq), 0);
	th_connect(e->w, e->a, e->b, IBV_MTU_1024, 0x10, 0x20, 14, 7, 7, 1);
	e->w->drop_ppm = 300;
	e->w->dup_ppm = 300;
	e->w->reorder_ppm = 300;
}

static void env_free(struct env *e)
{
	th_world_free(e->w);
	xport_srq_destroy(e->srq);
}

static void add(struct env *e, uint32_t index, uint64_t tag)
{
	struct xport_tm_op op = { .opcode = IBV_WR_TAG_ADD, .index = index, .tag = tag,
				  .mask = ~0ull };
	bool ok;
	uint16_t hw;

	op.sge.addr = B_TAG + (uint64_t)index * BIG;
	op.sge.length = BIG;
	op.sge.lkey = 0x21;
	ck_assert_int_eq(xport_tm_op(e->srq, &op, &ok, &hw), 0);
	ck_assert(ok);
	ck_assert_uint_eq(hw, 0);
}

static void put_tmh(uint8_t *p, uint8_t op, uint64_t tag, uint32_t ctx)
{
	struct ibv_tmh h = { .opcode = op, .app_ctx = htobe32(ctx), .tag = htobe64(tag) };

	memcpy(p, &h, sizeof(h));
}

START_TEST(eager_lossy)
{
	struct env e;
	unsigned int seen = 0;

	env_new(&e, 0x1234);
	for (uint32_t i = 0; i < NMSG; i++) {
		uint32_t idx = i % NSLOT;
		const struct xport_cqe *c;

		memset(e.tag + (size_t)idx * BIG, 0, BIG);
		add(&e, idx, 0x5000 + i);
		for (uint32_t k = 0; k < BIG; k++)
			e.src[k] = (uint8_t)(k * 3 + i);
		put_tmh(e.src, IBV_TMH_EAGER, 0x5000 + i, i);
		ck_assert_int_eq(th_post_send(e.a, i, IBV_WR_SEND, A_SRC, BIG, 0x11, 0, 0, 0,
					      IBV_SEND_SIGNALED), 0);
		th_run(e.w, 1000000);
		ck_assert_uint_eq(e.w->node[1].cqes.n, seen + 1);
		c = &e.w->node[1].cqes.v[seen++];
		ck_assert_int_eq(c->status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(c->tm_app_op, UROCE_TM_APP_OP_CONSUMED_MSG);
		ck_assert_uint_eq(c->tm_app_info, idx);
		ck_assert_uint_eq(c->wr_index, idx);
		ck_assert_uint_eq(c->byte_len, BIG - 16);
		ck_assert(!memcmp(c->tmh, e.src, 16));
		ck_assert(!memcmp(e.tag + (size_t)idx * BIG, e.src + 16, BIG - 16));
		ck_assert_uint_eq(e.tag[(size_t)idx * BIG + BIG - 16], 0);
		ck_assert_uint_eq(e.w->node[0].cqes.n, i + 1);
		ck_assert_int_eq(e.w->node[0].cqes.v[i].status, IBV_WC_SUCCESS);
	}
	/* no retransmission counted as an unexpected message */
	{
		struct xport_tm_op op = { .opcode = IBV_WR_TAG_SYNC, .sync = true, .sw_cnt = 1 };
		bool ok;
		uint16_t hw;

		ck_assert_int_eq(xport_tm_op(e.srq, &op, &ok, &hw), EINVAL);
		op.sw_cnt = 0;
		ck_assert_int_eq(xport_tm_op(e.srq, &op, &ok, &hw), 0);
		ck_assert_uint_eq(hw, 0);
	}
	ck_assert_uint_gt(e.w->dropped, 0);
	ck_assert_uint_gt(e.w->duplicated, 0);
	env_free(&e);
}
END_TEST

START_TEST(rndv_lossy)
{
	struct env e;
	unsigned int seen_b = 0, seen_a = 0;

	env_new(&e, 0x4321);
	for (uint32_t i = 0; i < NMSG; i++) {
		uint32_t idx = i % NSLOT;
		struct ibv_rvh r = { .va = htobe64(A_SRC + BIG), .rkey = htobe32(0x11),
				     .len = htobe32(BIG) };
		const struct xport_cqe *c;

		memset(e.tag + (size_t)idx * BIG, 0, BIG);
		add(&e, idx, 0x7000 + i);
		for (uint32_t k = 0; k < BIG; k++)
			e.src[BIG + k] = (uint8_t)(k * 5 + i);
		put_tmh(e.src, IBV_TMH_RNDV, 0x7000 + i, i);
		memcpy(e.src + 16, &r, sizeof(r));
		ck_assert_int_eq(th_post_recv(e.a, 900 + i, A_FIN + i * 64, 64, 0x12), 0);
		ck_assert_int_eq(th_post_send(e.a, i, IBV_WR_SEND, A_SRC, 32, 0x11, 0, 0, 0,
					      IBV_SEND_SIGNALED), 0);
		th_run(e.w, 1000000);
		ck_assert_uint_eq(e.w->node[1].cqes.n, seen_b + 2);
		c = &e.w->node[1].cqes.v[seen_b++];
		ck_assert_int_eq(c->status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(c->tm_app_op, UROCE_TM_APP_OP_CONSUMED);
		ck_assert_uint_eq(c->tm_app_info, idx);
		ck_assert_uint_eq(c->byte_len, 0);
		ck_assert(!memcmp(c->tmh, e.src, 16));
		c = &e.w->node[1].cqes.v[seen_b++];
		ck_assert_int_eq(c->status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(c->tm_app_op, UROCE_TM_APP_OP_EXPECTED);
		ck_assert_uint_eq(c->tm_app_info, idx);
		ck_assert_uint_eq(c->byte_len, BIG);
		ck_assert(c->is_recv);
		ck_assert(!memcmp(e.tag + (size_t)idx * BIG, e.src + BIG, BIG));
		/* node 0: its SEND and the FIN, in either order, once each */
		ck_assert_uint_eq(e.w->node[0].cqes.n, seen_a + 2);
		for (int k = 0; k < 2; k++) {
			c = &e.w->node[0].cqes.v[seen_a++];
			ck_assert_int_eq(c->status, IBV_WC_SUCCESS);
			if (c->is_recv) {
				ck_assert_uint_eq(c->wr_id, 900 + i);
				ck_assert_uint_eq(c->byte_len, 32);
			} else {
				ck_assert_uint_eq(c->wr_id, i);
			}
		}
		ck_assert_uint_eq(e.fin[i * 64], IBV_TMH_FIN);
		ck_assert(!memcmp(e.fin + i * 64 + 1, e.src + 1, 31));
		ck_assert_uint_eq(e.fin[i * 64 + 32], 0);
	}
	ck_assert_uint_gt(e.w->dropped, 0);
	env_free(&e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transport_tm");
	TCase *tc = tcase_create("tm");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, eager_lossy);
	tcase_add_test(tc, rndv_lossy);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
