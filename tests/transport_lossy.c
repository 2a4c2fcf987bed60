/*
 * transport_lossy.c: 10,000 RC messages of mixed kinds (SEND, RDMA WRITE,
 * RDMA READ) and sizes over a seeded lossy wire between two engines: 5%
 * of packets dropped, 1% duplicated, 2% reordered (in both directions,
 * ACKs and READ responses included). Every message must arrive byte-exact
 * and in order, with exactly one successful completion per WQE on the
 * requester and one per SEND on the responder: no duplicates, no gaps.
 * Time is simulated, so the run is fast and the same on every machine.
 */
#include "config.h"

#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

#define N_MSG 10000u
#define DEPTH 64u
#define SLOT 4096u
#define MTU 1024u
#define MAX_LEN (3 * MTU + 5)
#define A_SLOTS 0x100000ull	/* requester: sources / READ targets */
#define B_RECV 0x200000ull	/* responder: receive buffers */
#define B_WRITE 0x300000ull	/* responder: WRITE targets */
#define B_READ 0x400000ull	/* responder: READ source (fixed data) */
#define CANARY 0xEE

struct msg {
	enum ibv_wr_opcode op;
	uint32_t len;
	uint32_t read_off;
};

static uint8_t pat(uint32_t i, uint32_t j)
{
	return (uint8_t)(i * 31 + j * 7 + (j >> 8));
}

static uint8_t read_src(uint32_t j)
{
	return (uint8_t)(j * 13 + (j >> 9) + 5);
}

/* Wire faults per run, in parts per 10000, and the generator seed. The
 * first row is the base case; the others push loss and reordering. */
static const struct lossy_cfg {
	uint64_t seed;
	unsigned drop, dup, reorder;
} cfgs[] = {
	{ 20261130, 500, 100, 200 },	/* 5% drop, 1% dup, 2% reorder */
	{ 7, 1500, 100, 200 },		/* 15% drop */
	{ 99, 500, 2000, 3000 },	/* heavy duplication and reordering */
};

START_TEST(test_lossy_10000)
{
	const struct lossy_cfg *cfg = &cfgs[_i];
	struct th_world *w = th_world_new(4096);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, 0x101, DEPTH);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, 0x202, DEPTH);
	struct msg *m = calloc(N_MSG, sizeof(*m));
	uint32_t *send_seq = calloc(N_MSG, sizeof(*send_seq));
	uint8_t *asl, *brecv, *bwrite, *bread;
	uint32_t posted = 0, done_a = 0, sends_posted = 0, sends_done = 0;
	uint32_t recv_posted = 0, seen_a = 0, seen_b = 0, idle_rounds = 0;
	const uint32_t sizes[] = { 0, 1, MTU - 1, MTU, MTU + 1, MAX_LEN };

	w->log_on = false;
	w->rng = cfg->seed;
	th_connect(w, a, b, IBV_MTU_1024, 0xFFFF00, 0x123456, 14, 7, 7, 1);
	asl = th_reg_mr(w, 0, 0x11, 1, A_SLOTS, DEPTH * SLOT,
			IBV_ACCESS_LOCAL_WRITE, CANARY);
	brecv = th_reg_mr(w, 1, 0x21, 1, B_RECV, DEPTH * SLOT,
			  IBV_ACCESS_LOCAL_WRITE, CANARY);
	bwrite = th_reg_mr(w, 1, 0x22, 1, B_WRITE, DEPTH * SLOT,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, CANARY);
	bread = th_reg_mr(w, 1, 0x23, 1, B_READ, DEPTH * SLOT,
			  IBV_ACCESS_REMOTE_READ, 0);
	for (uint32_t j = 0; j < DEPTH * SLOT; j++)
		bread[j] = read_src(j);

	/* The workload, drawn before the faults start. */
	for (uint32_t i = 0; i < N_MSG; i++) {
		uint64_t r = th_rand(w);
		static const enum ibv_wr_opcode kinds[3] = {
			IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ };

		m[i].op = kinds[r % 3];
		m[i].len = (r >> 8) % 4 ? sizes[(r >> 16) % 6] :
					 (uint32_t)((r >> 24) % (MAX_LEN + 1));
		m[i].read_off = (uint32_t)((r >> 40) % (DEPTH * SLOT - MAX_LEN));
	}
	w->drop_ppm = cfg->drop;
	w->dup_ppm = cfg->dup;
	w->reorder_ppm = cfg->reorder;

	while (done_a < N_MSG) {
		unsigned long steps;

		/* Keep the receive queue full: one buffer per SEND to come. */
		while (recv_posted - sends_done < DEPTH) {
			uint32_t s = recv_posted % DEPTH;

			memset(brecv + s * SLOT, CANARY, SLOT);
			ck_assert_int_eq(th_post_recv(b, recv_posted, B_RECV + s * SLOT,
						      SLOT, 0x21), 0);
			recv_posted++;
		}
		/* Keep the send queue full. */
		while (posted < N_MSG && posted - done_a < DEPTH) {
			uint32_t s = posted % DEPTH;
			struct msg *x = &m[posted];
			uint8_t *buf = asl + s * SLOT;

			if (x->op == IBV_WR_RDMA_READ) {
				memset(buf, CANARY, SLOT);
			} else {
				for (uint32_t j = 0; j < x->len; j++)
					buf[j] = pat(posted, j);
			}
			if (x->op == IBV_WR_SEND)
				send_seq[sends_posted++] = posted;
			ck_assert_int_eq(th_post_send(a, posted, x->op, A_SLOTS + s * SLOT,
					x->len, 0x11,
					x->op == IBV_WR_RDMA_READ ? B_READ + x->read_off :
								    B_WRITE + s * SLOT,
					x->op == IBV_WR_RDMA_READ ? 0x23 : 0x22, 0, 0), 0);
			posted++;
		}
		steps = th_run(w, 3000);

		/* Requester completions: in order, once each, exact data. */
		for (; seen_a < w->node[0].cqes.n; seen_a++) {
			const struct xport_cqe *c = &w->node[0].cqes.v[seen_a];
			struct msg *x;
			uint32_t s;

			ck_assert_msg(c->status == IBV_WC_SUCCESS,
				      "wr %lu: status %d", (unsigned long)c->wr_id, c->status);
			ck_assert_msg(c->wr_id == done_a, "completion for wr %lu, want %u",
				      (unsigned long)c->wr_id, done_a);
			x = &m[done_a];
			s = done_a % DEPTH;
			ck_assert_uint_eq(c->byte_len, x->len);
			/* (plain loops: a ck_assert per byte would be slow) */
			if (x->op == IBV_WR_RDMA_WRITE) {
				uint32_t j = 0;

				while (j < x->len && bwrite[s * SLOT + j] == pat(done_a, j))
					j++;
				ck_assert_msg(j == x->len, "WRITE %u differs at byte %u", done_a, j);
			} else if (x->op == IBV_WR_RDMA_READ) {
				uint32_t j = 0;

				while (j < x->len &&
				       asl[s * SLOT + j] == read_src(x->read_off + j))
					j++;
				ck_assert_msg(j == x->len, "READ %u differs at byte %u", done_a, j);
				ck_assert_uint_eq(asl[s * SLOT + x->len], CANARY);
			}
			done_a++;
		}
		/* Responder completions: one per SEND, in SEND order. */
		for (; seen_b < w->node[1].cqes.n; seen_b++) {
			const struct xport_cqe *c = &w->node[1].cqes.v[seen_b];
			uint32_t i, s = sends_done % DEPTH;

			ck_assert_int_eq(c->status, IBV_WC_SUCCESS);
			ck_assert_uint_eq(c->wr_id, sends_done);
			ck_assert_uint_lt(sends_done, sends_posted);
			i = send_seq[sends_done];
			ck_assert_uint_eq(c->byte_len, m[i].len);
			{
				uint32_t j = 0;

				while (j < m[i].len && brecv[s * SLOT + j] == pat(i, j))
					j++;
				ck_assert_msg(j == m[i].len, "SEND %u differs at byte %u", i, j);
			}
			ck_assert_uint_eq(brecv[s * SLOT + m[i].len], CANARY);
			sends_done++;
		}
		idle_rounds = steps ? 0 : idle_rounds + 1;
		ck_assert_msg(idle_rounds < 3, "stuck at %u of %u", done_a, N_MSG);
	}
	th_run(w, 1000000);	/* drain: nothing more may complete */
	ck_assert_uint_eq(w->node[0].cqes.n, N_MSG);
	ck_assert_uint_eq(w->node[1].cqes.n, sends_posted);
	ck_assert_uint_eq(sends_done, sends_posted);
	ck_assert_int_eq(xport_qp_state(a), IBV_QPS_RTS);
	ck_assert_int_eq(xport_qp_state(b), IBV_QPS_RTS);
	/* The faults really happened and were recovered from. */
	ck_assert_uint_gt(w->dropped, 1000);
	ck_assert_uint_gt(w->duplicated, 100);
	ck_assert_uint_gt(w->reordered, 100);
	ck_assert_uint_gt(xport_qp_stats(a)->retransmits, 100);
	ck_assert_uint_gt(xport_qp_stats(b)->dup_requests, 100);
	printf("lossy[%d]: %u messages (%u SEND), %lu delivered, %lu dropped, %lu duplicated, "
	       "%lu reordered; requester %lu retransmits (%lu timeouts, %lu seq NAKs); "
	       "responder %lu duplicates; simulated %.3f s\n",
	       _i, N_MSG, sends_posted, (unsigned long)w->delivered,
	       (unsigned long)w->dropped, (unsigned long)w->duplicated,
	       (unsigned long)w->reordered,
	       (unsigned long)xport_qp_stats(a)->retransmits,
	       (unsigned long)xport_qp_stats(a)->timeouts,
	       (unsigned long)xport_qp_stats(a)->seq_naks_rx,
	       (unsigned long)xport_qp_stats(b)->dup_requests,
	       (double)w->now / 1e9);
	free(m);
	free(send_seq);
	th_world_free(w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_lossy");
	TCase *tc = tcase_create("lossy");

	tcase_add_loop_test(tc, test_lossy_10000, 0, sizeof(cfgs) / sizeof(cfgs[0]));
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
