/*
 * transport_reliability.c: retry counting under repeated loss (IBTA
 * 9.7.5.2.2 PSN-sequence NAKs, 9.7.6 requester retries). A NAK or ACK
 * that acknowledges new packets is forward progress and gives retry_cnt
 * back in full; a NAK or timeout without progress uses one retry. Each
 * case loses chosen transmissions of chosen PSNs of one 64 KiB RDMA WRITE
 * (64 packets at MTU 1024) and checks the exact outcome and counters.
 */
#include "config.h"

#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

#define QPN_A 0x11u
#define QPN_B 0x22u
#define PSN_A 0x000500u
#define PSN_B 0x000900u
#define A_ADDR 0x100000ull
#define B_ADDR 0x200000ull
#define LEN (64u * 1024u)
#define TIMEOUT 10		/* 4.096 us << 10 */

struct loss_case {
	const char *name;
	uint8_t retry_cnt;
	struct { uint32_t psn_off; unsigned nth; } drop[6];	/* nth 0 ends */
	enum ibv_wc_status status;
	unsigned seq_naks, retransmits, timeouts;
};

static const struct loss_case loss_cases[] = {
	/* Five NAK rounds, each acknowledging 10 more packets: more rounds
	 * than retry_cnt 2, but every one is progress. */
	{ "progress every round", 2,
	  { { 5, 1 }, { 15, 2 }, { 25, 3 }, { 35, 4 }, { 45, 5 } },
	  IBV_WC_SUCCESS, 5, 5, 0 },
	/* The same with retry_cnt 1: one retry per round is enough. */
	{ "progress, retry_cnt 1", 1,
	  { { 5, 1 }, { 15, 2 }, { 25, 3 }, { 35, 4 }, { 45, 5 } },
	  IBV_WC_SUCCESS, 5, 5, 0 },
	/* The NAK for the first PSN acknowledges nothing new: it uses the
	 * only retry, so the timeout after the second loss fails. */
	{ "NAK without progress counts", 1,
	  { { 0, 1 }, { 0, 2 } },
	  IBV_WC_RETRY_EXC_ERR, 1, 1, 1 },
	/* With two retries the same losses are survived. */
	{ "NAK and timeout, retry_cnt 2", 2,
	  { { 0, 1 }, { 0, 2 } },
	  IBV_WC_SUCCESS, 1, 2, 1 },
	/* A no-progress NAK, then a NAK with progress: the second starts
	 * the count over. */
	{ "no progress, then progress", 1,
	  { { 0, 1 }, { 1, 2 } },
	  IBV_WC_SUCCESS, 2, 2, 0 },
	/* retry_cnt 0: no retransmission at all, even after progress. */
	{ "retry_cnt 0", 0,
	  { { 5, 1 } },
	  IBV_WC_RETRY_EXC_ERR, 1, 0, 0 },
};

START_TEST(test_retry_counting)
{
	const struct loss_case *c = &loss_cases[_i];
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, QPN_A, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, QPN_B, 16);
	struct xport_qp_attr at;
	uint8_t *amem, *bmem;
	const struct xport_qp_stats *st;

	th_connect(w, a, b, IBV_MTU_1024, PSN_A, PSN_B, TIMEOUT, c->retry_cnt, 7, 1);
	memset(&at, 0, sizeof(at));
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ck_assert_int_eq(xport_qp_modify(b, &at, IBV_QP_ACCESS_FLAGS), 0);
	amem = th_reg_mr(w, 0, 0x101, 1, A_ADDR, LEN, IBV_ACCESS_LOCAL_WRITE, 0);
	bmem = th_reg_mr(w, 1, 0x201, 1, B_ADDR, LEN,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0);
	for (unsigned i = 0; i < LEN; i++)
		amem[i] = (uint8_t)(i * 7 + i / 1024);
	w->drop_from = 0;
	for (unsigned r = 0; r < 6 && c->drop[r].nth; r++) {
		w->drop_rule[r].psn = PSN_A + c->drop[r].psn_off;
		w->drop_rule[r].nth = c->drop[r].nth;
		w->ndrop_rule = r + 1;
	}
	ck_assert_int_eq(th_post_send(a, 1, IBV_WR_RDMA_WRITE, A_ADDR, LEN, 0x101,
				      B_ADDR, 0x201, 0, 0), 0);
	th_run(w, 100000);

	st = xport_qp_stats(a);
	ck_assert_msg(w->node[0].cqes.n == 1, "%s: %u CQEs", c->name, w->node[0].cqes.n);
	ck_assert_msg(w->node[0].cqes.v[0].status == c->status, "%s: status %d",
		      c->name, w->node[0].cqes.v[0].status);
	ck_assert_msg(st->seq_naks_rx == c->seq_naks, "%s: %llu seq NAKs", c->name,
		      (unsigned long long)st->seq_naks_rx);
	ck_assert_msg(st->retransmits == c->retransmits, "%s: %llu retransmits",
		      c->name, (unsigned long long)st->retransmits);
	ck_assert_msg(st->timeouts == c->timeouts, "%s: %llu timeouts", c->name,
		      (unsigned long long)st->timeouts);
	ck_assert_uint_eq(w->dropped, w->ndrop_rule);
	if (c->status == IBV_WC_SUCCESS) {
		ck_assert_uint_eq(w->node[0].cqes.v[0].byte_len, LEN);
		ck_assert_int_eq(memcmp(bmem, amem, LEN), 0);
		ck_assert_int_eq(xport_qp_state(a), IBV_QPS_RTS);
	} else {
		ck_assert_int_eq(xport_qp_state(a), IBV_QPS_ERR);
	}
	th_world_free(w);
}
END_TEST

static unsigned sent_by(const struct th_world *w, int from)
{
	unsigned n = 0;

	for (unsigned i = 0; i < w->nlog; i++)
		n += w->log[i].from == from;
	return n;
}

/* The case from the field: one 1 MiB RDMA WRITE (1024 packets at MTU 1024)
 * over a wire that drops 10 % of the packets both ways, retry_cnt 7. It
 * needs far more than 7 recoveries, each of which makes progress, so it
 * completes. No storm: every rewind answers one sequence NAK or one
 * timeout, and resends at most the 128-PSN window. */
START_TEST(test_long_write_at_loss)
{
	const uint32_t len = 1024u * 1024u;
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, QPN_A, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, QPN_B, 16);
	struct xport_qp_attr at;
	const struct xport_qp_stats *st;
	uint8_t *amem, *bmem;
	unsigned sent;

	th_connect(w, a, b, IBV_MTU_1024, PSN_A, PSN_B, TIMEOUT, 7, 7, 1);
	memset(&at, 0, sizeof(at));
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ck_assert_int_eq(xport_qp_modify(b, &at, IBV_QP_ACCESS_FLAGS), 0);
	amem = th_reg_mr(w, 0, 0x101, 1, A_ADDR, len, IBV_ACCESS_LOCAL_WRITE, 0);
	bmem = th_reg_mr(w, 1, 0x201, 1, B_ADDR, len,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0);
	for (uint32_t i = 0; i < len; i++)
		amem[i] = (uint8_t)(i * 13 + (i >> 10));
	w->rng = 0x1234567u;
	w->drop_ppm = 1000;
	ck_assert_int_eq(th_post_send(a, 1, IBV_WR_RDMA_WRITE, A_ADDR, len, 0x101,
				      B_ADDR, 0x201, 0, 0), 0);
	th_run(w, 1000000);

	st = xport_qp_stats(a);
	sent = sent_by(w, 0);
	printf("1 MiB WRITE at 10%% loss: %u packets sent, %llu seq NAKs, "
	       "%llu timeouts, %llu retransmits, %llu dropped\n", sent,
	       (unsigned long long)st->seq_naks_rx, (unsigned long long)st->timeouts,
	       (unsigned long long)st->retransmits, (unsigned long long)w->dropped);
	ck_assert_uint_eq(w->node[0].cqes.n, 1);
	ck_assert_int_eq(w->node[0].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(bmem, amem, len), 0);
	ck_assert_uint_gt(st->retransmits, 7);		/* more rounds than retry_cnt */
	ck_assert_uint_le(st->retransmits, st->seq_naks_rx + st->timeouts);
	ck_assert_uint_le(sent, 1024 + 128 * st->retransmits);
	th_world_free(w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_reliability");
	TCase *tc = tcase_create("retry");

	tcase_add_loop_test(tc, test_retry_counting, 0,
			    (int)(sizeof(loss_cases) / sizeof(loss_cases[0])));
	tcase_add_test(tc, test_long_write_at_loss);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
