/*
 * transport_prefetch.c: small send WQEs' payloads read together
 * (emu/xport/prefetch.c), through two engines wired back to back. Each
 * case counts the sender's ops->mem reads exactly, checks every byte
 * placed at the responder and every completion:
 * - 64 WRITEs of 8 bytes 64 bytes apart (perftest's ib_write_bw -s 8)
 *   posted as one doorbell batch (xport_post_hold): one read for all 64;
 *   posted one by one (each started at once): 64 reads, same bytes;
 * - 8-byte WRITEs 1024 bytes apart: one read per 4 (XPORT_PREFETCH_SPAN);
 * - SENDs of 1..256 bytes, an inline SEND and one of another lkey in the
 *   batch: the group ends at each, every receive buffer holds its bytes;
 * - IBV_SEND_FENCE: a READ into X, a SEND from the same MR, then two
 *   SENDs from X, the first fenced: both carry what the READ brought (a
 *   prefetch past the fence would send X's old bytes);
 * - a WQE of the batch reaching past its MR: nothing is prefetched, the
 *   WQEs before it are placed, it fails with IBV_WC_LOC_PROT_ERR, the
 *   rest are flushed.
 */
#include "config.h"

#include "check_main.h"
#include <string.h>

#include "tests/transport_harness.h"

#define SRC 0x10000ull
#define DST 0x80000ull
#define LKEY 0x101u
#define LKEY2 0x102u
#define RKEY 0x201u
#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

struct pair {
	struct th_world *w;
	struct xport_qp *a, *b;
	uint8_t *amem, *bmem;
};

static void pair_new(struct pair *p, uint32_t depth)
{
	p->w = th_world_new(1024);
	p->a = th_qp(p->w, 0, IBV_QPT_RC, 0x11, depth);
	p->b = th_qp(p->w, 1, IBV_QPT_RC, 0x22, depth);
	th_connect(p->w, p->a, p->b, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	p->amem = th_reg_mr(p->w, 0, LKEY, 1, SRC, 256 * 1024, IBV_ACCESS_LOCAL_WRITE, 0);
	p->bmem = th_reg_mr(p->w, 1, RKEY, 1, DST, 256 * 1024, RW, 0xEE);
	for (uint32_t i = 0; i < 256 * 1024; i++)
		p->amem[i] = (uint8_t)(i * 13 + (i >> 8) + 1);
}

/* N WRITEs of LEN bytes STRIDE apart, held as one batch if HELD; returns
 * node 0's reads. Each lands at the same offset of B's MR. */
static unsigned writes(struct pair *p, unsigned n, uint32_t len, uint32_t stride, bool held)
{
	unsigned before = p->w->node[0].mem_reads;

	if (held)
		xport_post_hold(p->a, true);
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_eq(th_post_send(p->a, i, IBV_WR_RDMA_WRITE, SRC + i * stride, len, LKEY,
					      DST + i * stride, RKEY, 0, 0),
				 0);
	if (held)
		xport_post_hold(p->a, false);
	th_run(p->w, 1000000);
	ck_assert_uint_eq(p->w->node[0].cqes.n, n);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(p->w->node[0].cqes.v[i].status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(p->w->node[0].cqes.v[i].wr_id, i);
		ck_assert_int_eq(memcmp(p->bmem + i * stride, p->amem + i * stride, len), 0);
		/* nothing beyond the 8 bytes changed */
		if (stride > len)
			ck_assert_uint_eq(p->bmem[i * stride + len], 0xEE);
	}
	return p->w->node[0].mem_reads - before;
}

START_TEST(test_batch_one_read)
{
	struct pair p;
	const struct xport_dev_stats *st;

	pair_new(&p, 128);
	ck_assert_uint_eq(writes(&p, 64, 8, 64, true), 1);
	st = xport_dev_stats(p.w->node[0].dev);
	ck_assert_uint_eq(st->prefetch_reads, 1);
	ck_assert_uint_eq(st->prefetch_wqes, 64);
	th_world_free(p.w);

	pair_new(&p, 128);
	ck_assert_uint_eq(writes(&p, 64, 8, 64, false), 64);
	st = xport_dev_stats(p.w->node[0].dev);
	ck_assert_uint_eq(st->prefetch_reads, 0);
	th_world_free(p.w);
}
END_TEST

START_TEST(test_span_limit)
{
	struct pair p;

	pair_new(&p, 128);
	/* 0, 1024, 2048, 3072 (+8): 3080 bytes; a fifth would make 4104 */
	ck_assert_uint_eq(writes(&p, 64, 8, 1024, true), 16);
	ck_assert_uint_eq(xport_dev_stats(p.w->node[0].dev)->prefetch_wqes, 64);
	th_world_free(p.w);
	/* 256 bytes 256 apart: 16 per 4096 */
	pair_new(&p, 128);
	ck_assert_uint_eq(writes(&p, 64, 256, 256, true), 4);
	th_world_free(p.w);
	/* 257 bytes: over XPORT_MAX_INLINE, one read each */
	pair_new(&p, 128);
	ck_assert_uint_eq(writes(&p, 16, 257, 512, true), 16);
	ck_assert_uint_eq(xport_dev_stats(p.w->node[0].dev)->prefetch_reads, 0);
	th_world_free(p.w);
}
END_TEST

/* SENDs of 1..233 bytes, 300 bytes apart; WQE 10 inline, WQE 20 from a
 * second MR: groups [0,9], [11,19] and [21,29] read once each, WQE 20 on
 * its own, the inline one not at all. */
START_TEST(test_sends_groups)
{
	struct pair p;
	uint8_t *a2;
	unsigned before, n = 30;

	pair_new(&p, 64);
	a2 = th_reg_mr(p.w, 0, LKEY2, 1, 0x400000, 4096, 0, 0x5A);
	a2[3] = 0xA5;
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_eq(th_post_recv(p.b, 100 + i, DST + i * 300, 300, RKEY), 0);
	before = p.w->node[0].mem_reads;
	xport_post_hold(p.a, true);
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = 1 + i * 8;

		if (i == 10) {
			struct xport_send_wqe wqe;

			memset(&wqe, 0, sizeof(wqe));
			wqe.wr_id = i;
			wqe.wr_index = i;
			wqe.opcode = IBV_WR_SEND;
			wqe.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
			wqe.inline_len = len;
			memcpy(wqe.inline_data, p.amem + i * 300, len);
			ck_assert_int_eq(xport_post_send(p.a, &wqe), 0);
		} else if (i == 20) {
			ck_assert_int_eq(th_post_send(p.a, i, IBV_WR_SEND, 0x400000, len, LKEY2, 0, 0, 0, 0), 0);
		} else {
			ck_assert_int_eq(th_post_send(p.a, i, IBV_WR_SEND, SRC + i * 300, len, LKEY, 0, 0, 0, 0), 0);
		}
	}
	xport_post_hold(p.a, false);
	th_run(p.w, 1000000);
	/* [0..9] spans 9*300+73 = 2773 bytes: one read; [11..19] 2545: one;
	 * WQE 20 alone: one; [21..29] 2633: one */
	ck_assert_uint_eq(p.w->node[0].mem_reads - before, 4);
	ck_assert_uint_eq(xport_dev_stats(p.w->node[0].dev)->prefetch_wqes, 28);
	ck_assert_uint_eq(p.w->node[0].cqes.n, n);
	ck_assert_uint_eq(p.w->node[1].cqes.n, n);
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = 1 + i * 8;
		const uint8_t *want = i == 20 ? a2 : p.amem + i * 300;

		ck_assert_int_eq(p.w->node[0].cqes.v[i].status, IBV_WC_SUCCESS);
		ck_assert_int_eq(p.w->node[1].cqes.v[i].status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(p.w->node[1].cqes.v[i].wr_id, 100 + i);
		ck_assert_uint_eq(p.w->node[1].cqes.v[i].byte_len, len);
		ck_assert_int_eq(memcmp(p.bmem + i * 300, want, len), 0);
		ck_assert_uint_eq(p.bmem[i * 300 + len], 0xEE);
	}
	th_world_free(p.w);
}
END_TEST

START_TEST(test_fence)
{
	struct pair p;
	const uint64_t x = SRC + 512;
	uint8_t old[8], fresh[8];

	pair_new(&p, 16);
	memcpy(old, p.amem + 512, 8);
	memset(p.bmem + 4096, 0x55, 8);	/* what the READ brings */
	memset(fresh, 0x55, 8);
	ck_assert_int_ne(memcmp(old, fresh, 8), 0);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(th_post_recv(p.b, 100 + i, DST + i * 64, 64, RKEY), 0);
	xport_post_hold(p.a, true);
	ck_assert_int_eq(th_post_send(p.a, 0, IBV_WR_RDMA_READ, x, 8, LKEY, DST + 4096, RKEY, 0, 0), 0);
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, SRC, 8, LKEY, 0, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_SEND, x, 8, LKEY, 0, 0, 0, IBV_SEND_FENCE), 0);
	ck_assert_int_eq(th_post_send(p.a, 3, IBV_WR_SEND, x, 8, LKEY, 0, 0, 0, 0), 0);
	xport_post_hold(p.a, false);
	th_run(p.w, 100000);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 4);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_int_eq(p.w->node[0].cqes.v[i].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(p.amem + 512, fresh, 8), 0);
	ck_assert_int_eq(memcmp(p.bmem, p.amem, 8), 0);
	ck_assert_int_eq(memcmp(p.bmem + 64, fresh, 8), 0);
	ck_assert_int_eq(memcmp(p.bmem + 128, fresh, 8), 0);
	/* SEND 1 alone (the fenced one ends its group); 2 and 3 together */
	ck_assert_uint_eq(xport_dev_stats(p.w->node[0].dev)->prefetch_wqes, 2);
	th_world_free(p.w);
}
END_TEST

START_TEST(test_bad_range)
{
	struct pair p;
	const uint64_t base = 0x400000;
	uint8_t *m;
	unsigned before;

	pair_new(&p, 16);
	m = th_reg_mr(p.w, 0, LKEY2, 1, base, 4096, 0, 0);
	for (uint32_t i = 0; i < 4096; i++)
		m[i] = (uint8_t)(i * 5 + 3);
	before = p.w->node[0].mem_reads;
	xport_post_hold(p.a, true);
	for (unsigned i = 0; i < 8; i++) {
		/* WQE 5 ends 8 bytes past its 4 KiB MR, yet all eight lie
		 * within one span: [64, 4104) */
		uint64_t src = i == 5 ? base + 4096 - 8 : base + 64 + i * 64;

		ck_assert_int_eq(th_post_send(p.a, i, IBV_WR_RDMA_WRITE, src, 16, LKEY2,
					      DST + i * 64, RKEY, 0, 0),
				 0);
	}
	xport_post_hold(p.a, false);
	th_run(p.w, 100000);
	ck_assert_uint_eq(xport_dev_stats(p.w->node[0].dev)->prefetch_reads, 0);
	/* WQEs 0-4 one read each; WQE 5's read fails */
	ck_assert_uint_eq(p.w->node[0].mem_reads - before, 5);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 8);
	/* 0-4 were sent and placed (their ACKs come after the QP went to
	 * ERR: flushed, as before any prefetch) */
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(memcmp(p.bmem + i * 64, m + 64 + i * 64, 16), 0);
	ck_assert_uint_eq(p.w->node[0].cqes.v[5].wr_id, 5);
	ck_assert_int_eq(p.w->node[0].cqes.v[5].status, IBV_WC_LOC_PROT_ERR);
	ck_assert_int_eq(p.w->node[0].cqes.v[6].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(p.w->node[0].cqes.v[7].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(p.bmem[5 * 64], 0xEE);
	ck_assert_uint_eq(p.bmem[6 * 64], 0xEE);
	th_world_free(p.w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_prefetch");
	TCase *tc = tcase_create("prefetch");

	tcase_add_test(tc, test_batch_one_read);
	tcase_add_test(tc, test_span_limit);
	tcase_add_test(tc, test_sends_groups);
	tcase_add_test(tc, test_fence);
	tcase_add_test(tc, test_bad_range);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
