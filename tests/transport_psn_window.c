/*
 * transport_psn_window.c: every edge of the RC PSN windows, table-driven,
 * with PSNs forged onto the wire of a real engine pair.
 *
 * Completer (requester side, IBTA 9.7.5.3 / 9.7.6): an ACK answers only
 * PSNs already sent. With sent PSNs [first, psn_max), an ACK at psn_max - 1
 * completes everything; one at psn_max, psn_max + 1 or the far end of the
 * 2^23 "after" half must complete nothing (a forged ACK cannot complete
 * an unacknowledged SEND). Around 2^24 the same holds modulo 2^24.
 *
 * Responder (IBTA 9.7.5.1): a request at ePSN executes; ePSN + 1 up to
 * ePSN + 2^23 - 1 is out of sequence (PSN sequence error NAK carrying
 * ePSN); ePSN - 1 down to ePSN - 2^23 is a duplicate (re-ACK of ePSN - 1,
 * nothing executed again).
 *
 * And the length edges of a packet at ePSN (IBTA 9.7.5.1.2 /
 * docs/wire-format.md §1.5): a FIRST packet carries exactly one path MTU, an ONLY at most one;
 * one word short or over is an Invalid Request NAK and the QP goes to ERR.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

#define QPN_A 0x11u
#define QPN_B 0x22u
#define A_ADDR 0x10000ull
#define B_ADDR 0x20000ull
#define REGION 8192u
#define HALF (1u << 23)		/* half the 24-bit PSN space */
#define PSNM(x) ((uint32_t)(x) & 0xFFFFFFu)

struct pair {
	struct th_world *w;
	struct xport_qp *a, *b;
};

/* RC pair at MTU 1024; A sends from PSN psn_a, B expects psn_a. Every
 * packet put on the wire by either engine is lost, so the only packets
 * that arrive are the forged ones. */
static void pair_new(struct pair *p, uint32_t psn_a)
{
	p->w = th_world_new(1024);
	p->a = th_qp(p->w, 0, IBV_QPT_RC, QPN_A, 16);
	p->b = th_qp(p->w, 1, IBV_QPT_RC, QPN_B, 16);
	th_connect(p->w, p->a, p->b, IBV_MTU_1024, psn_a, 0x300, 10, 7, 7, 1);
	th_reg_mr(p->w, 0, 0x101, 1, A_ADDR, REGION, IBV_ACCESS_LOCAL_WRITE, 0x5A);
	th_reg_mr(p->w, 1, 0x201, 1, B_ADDR, REGION, IBV_ACCESS_LOCAL_WRITE, 0);
	p->w->drop_ppm = 10000;
}

/* Put one packet from node FROM to node TO's engine, as if from the wire. */
static int forge(struct pair *p, int from, uint8_t opcode, uint32_t dqpn,
		 uint32_t psn, bool ackreq, uint8_t syndrome,
		 const void *payload, uint32_t len)
{
	uint8_t buf[2048];
	struct roce_hdrs h;
	struct roce_l3 l3;
	int to = !from;
	size_t n;

	memset(&l3, 0, sizeof(l3));
	l3.kind = ROCE_L3_IPV4;
	memcpy(l3.src, p->w->node[from].gid.raw, 16);
	memcpy(l3.dst, p->w->node[to].gid.raw, 16);
	l3.sport = 0xC000;
	l3.dport = ROCE_UDP_PORT;
	memset(&h, 0, sizeof(h));
	h.opcode = opcode;
	h.pkey = 0xFFFF;
	h.dqpn = dqpn;
	h.psn = psn;
	h.ackreq = ackreq;
	h.aeth.syndrome = syndrome;
	ck_assert_int_eq(roce_build_udp(buf, sizeof(buf), &l3, &h, payload, len, &n),
			 ROCE_OK);
	return xport_input(p->w->node[to].dev, buf, n, &p->w->node[from].gid,
			   &p->w->node[to].gid, 0xC000, ROCE_UDP_PORT);
}

/* ---- completer ---- */

struct comp_case {
	const char *name;
	uint32_t sq_psn;	/* A's first PSN */
	uint32_t len[2];	/* SENDs posted (0: none); MTU 1024 */
	uint32_t ack_off;	/* forged ACK PSN = sq_psn + ack_off (mod 2^24) */
	unsigned completed;	/* successful completions expected */
	int rc;			/* xport_input: 0 when the completer acted on the
				 * ACK, EAGAIN when it ignored it (not taken) */
};

/* SENDs of 3000 bytes take 3 packets: PSNs sq_psn .. sq_psn + 2, so
 * psn_max = sq_psn + 3. Two 10-byte SENDs: psn_max = sq_psn + 2. */
static const struct comp_case comp_cases[] = {
	{ "psn_max - 1 completes", 0x000500, { 3000, 0 }, 2, 1, 0 },
	{ "psn_max (never sent)", 0x000500, { 3000, 0 }, 3, 0, EAGAIN },
	{ "psn_max + 1", 0x000500, { 3000, 0 }, 4, 0, EAGAIN },
	{ "psn_max - 2 (partial ACK)", 0x000500, { 3000, 0 }, 1, 0, 0 },
	{ "first - 1 (before anything sent)", 0x000500, { 3000, 0 }, PSNM(-1), 0, EAGAIN },
	{ "far end of the after-half", 0x000500, { 3000, 0 }, HALF - 1, 0, EAGAIN },
	{ "two WQEs: psn_max - 1 completes both", 0x000500, { 10, 10 }, 1, 2, 0 },
	{ "two WQEs: first one only", 0x000500, { 10, 10 }, 0, 1, 0 },
	{ "two WQEs: psn_max", 0x000500, { 10, 10 }, 2, 0, EAGAIN },
	/* 0xFFFFFE, 0xFFFFFF, 0x000000 sent: psn_max = 0x000001 */
	{ "wrap: psn_max - 1 = 0x000000 completes", 0xFFFFFE, { 3000, 0 }, 2, 1, 0 },
	{ "wrap: psn_max = 0x000001", 0xFFFFFE, { 3000, 0 }, 3, 0, EAGAIN },
	{ "wrap: 0xFFFFFF partial", 0xFFFFFE, { 3000, 0 }, 1, 0, 0 },
	/* 0xFFFFFD, 0xFFFFFE, 0xFFFFFF sent: psn_max = 0x000000 */
	{ "wrap: psn_max = 0x000000", 0xFFFFFD, { 3000, 0 }, 3, 0, EAGAIN },
	{ "wrap: psn_max - 1 = 0xFFFFFF completes", 0xFFFFFD, { 3000, 0 }, 2, 1, 0 },
	{ "no WQE outstanding", 0x000500, { 0, 0 }, 0, 0, EAGAIN },
};

START_TEST(test_comp_window)
{
	const struct comp_case *c = &comp_cases[_i];
	uint32_t ack_psn = PSNM(c->sq_psn + c->ack_off);
	unsigned posted = 0;
	struct pair p;

	pair_new(&p, c->sq_psn);
	for (unsigned i = 0; i < 2; i++) {
		if (!c->len[i])
			continue;
		ck_assert_int_eq(th_post_send(p.a, 1 + i, IBV_WR_SEND, A_ADDR, c->len[i],
					      0x101, 0, 0, 0, 0), 0);
		posted++;
	}
	ck_assert_int_eq(forge(&p, 1, ROCE_OP_RC_ACK, QPN_A, ack_psn, false,
			       ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID), NULL, 0), c->rc);
	ck_assert_msg(p.w->node[0].cqes.n == c->completed,
		      "%s: ACK at PSN 0x%06x completed %u WQEs, want %u", c->name,
		      ack_psn, p.w->node[0].cqes.n, c->completed);
	for (unsigned i = 0; i < c->completed; i++) {
		ck_assert_int_eq(p.w->node[0].cqes.v[i].status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(p.w->node[0].cqes.v[i].wr_id, 1 + i);
		ck_assert_uint_eq(p.w->node[0].cqes.v[i].byte_len, c->len[i]);
	}
	ck_assert_uint_eq(posted, (c->len[0] != 0) + (c->len[1] != 0));
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_RTS);
	th_world_free(p.w);
}
END_TEST

/* A forged ACK at psn_max must not complete the WQE later either: the
 * real ACK at psn_max - 1 still completes it exactly once. */
START_TEST(test_comp_forged_then_real)
{
	struct pair p;

	pair_new(&p, 0xFFFFFE);
	ck_assert_int_eq(th_post_send(p.a, 7, IBV_WR_SEND, A_ADDR, 3000, 0x101, 0, 0, 0,
				      0), 0);
	ck_assert_int_eq(forge(&p, 1, ROCE_OP_RC_ACK, QPN_A, 0x000001, false,
			       ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID), NULL, 0), EAGAIN);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 0);
	ck_assert_int_eq(forge(&p, 1, ROCE_OP_RC_ACK, QPN_A, 0x000000, false,
			       ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID), NULL, 0), 0);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 1);
	ck_assert_uint_eq(p.w->node[0].cqes.v[0].wr_id, 7);
	ck_assert_int_eq(p.w->node[0].cqes.v[0].status, IBV_WC_SUCCESS);
	/* the same ACK again: ignored, so not taken */
	ck_assert_int_eq(forge(&p, 1, ROCE_OP_RC_ACK, QPN_A, 0x000000, false,
			       ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID), NULL, 0), EAGAIN);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 1);
	th_world_free(p.w);
}
END_TEST

/* ---- responder ---- */

enum resp_outcome { EXECUTED, SEQ_NAK, DUPLICATE };

struct resp_case {
	const char *name;
	uint32_t epsn;		/* B's expected PSN (A's sq_psn) */
	uint32_t psn_off;	/* request PSN = epsn + psn_off (mod 2^24) */
	enum resp_outcome want;
};

static const struct resp_case resp_cases[] = {
	{ "ePSN", 0x000900, 0, EXECUTED },
	{ "ePSN + 1", 0x000900, 1, SEQ_NAK },
	{ "ePSN + 2", 0x000900, 2, SEQ_NAK },
	{ "ePSN + 2^23 - 1", 0x000900, HALF - 1, SEQ_NAK },
	{ "ePSN - 1", 0x000900, PSNM(-1), DUPLICATE },
	{ "ePSN - 2", 0x000900, PSNM(-2), DUPLICATE },
	{ "ePSN - 2^23", 0x000900, HALF, DUPLICATE },
	{ "wrap: ePSN 0xFFFFFF", 0xFFFFFF, 0, EXECUTED },
	{ "wrap: 0x000000 after ePSN 0xFFFFFF", 0xFFFFFF, 1, SEQ_NAK },
	{ "wrap: ePSN 0x000000", 0x000000, 0, EXECUTED },
	{ "wrap: 0xFFFFFF before ePSN 0x000000", 0x000000, PSNM(-1), DUPLICATE },
	{ "wrap: 0x000001 after ePSN 0x000000", 0x000000, 1, SEQ_NAK },
};

START_TEST(test_resp_window)
{
	const struct resp_case c = resp_cases[_i];
	uint32_t psn = PSNM(c.epsn + c.psn_off);
	const struct th_pkt *ans;
	struct pair p;

	pair_new(&p, c.epsn);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 4096, 0x201), 0);
	ck_assert_int_eq(forge(&p, 0, ROCE_OP_RC_SEND_ONLY, QPN_B, psn, true, 0, "abcd", 4),
			 0);
	/* Exactly one answer from B. */
	ck_assert_msg(p.w->nlog == 1, "%s: %u packets from B", c.name, p.w->nlog);
	ans = &p.w->log[0];
	ck_assert_int_eq(ans->from, 1);
	ck_assert_uint_eq(ans->opcode, ROCE_OP_RC_ACK);
	switch (c.want) {
	case EXECUTED:
		ck_assert_uint_eq(ans->syndrome,
				  ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID));
		ck_assert_uint_eq(ans->psn, psn);
		ck_assert_uint_eq(p.w->node[1].cqes.n, 1);
		ck_assert_uint_eq(p.w->node[1].cqes.v[0].wr_id, 9);
		ck_assert_uint_eq(p.w->node[1].cqes.v[0].byte_len, 4);
		ck_assert_int_eq(p.w->node[1].cqes.v[0].status, IBV_WC_SUCCESS);
		break;
	case SEQ_NAK:
		ck_assert_msg(ans->syndrome == (ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR),
			      "%s: syndrome 0x%02x", c.name, ans->syndrome);
		ck_assert_uint_eq(ans->psn, c.epsn);	/* the NAK carries ePSN */
		ck_assert_uint_eq(p.w->node[1].cqes.n, 0);
		ck_assert_uint_eq(xport_qp_stats(p.b)->seq_naks_tx, 1);
		break;
	case DUPLICATE:
		ck_assert_uint_eq(ans->syndrome,
				  ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID));
		ck_assert_uint_eq(ans->psn, PSNM(c.epsn - 1));
		ck_assert_uint_eq(p.w->node[1].cqes.n, 0);
		ck_assert_uint_eq(xport_qp_stats(p.b)->dup_requests, 1);
		break;
	}
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);
	th_world_free(p.w);
}
END_TEST

/* ---- responder: segmentation length edges ---- */

struct len_case {
	const char *name;
	uint8_t opcode;
	uint32_t len;		/* payload bytes; path MTU 1024 */
	bool ok;		/* accepted (ACK) or Invalid Request NAK */
};

static const struct len_case len_cases[] = {
	{ "SEND FIRST of exactly the MTU", ROCE_OP_RC_SEND_FIRST, 1024, true },
	{ "SEND FIRST one word short", ROCE_OP_RC_SEND_FIRST, 1020, false },
	{ "SEND FIRST of half the MTU", ROCE_OP_RC_SEND_FIRST, 512, false },
	{ "SEND ONLY of exactly the MTU", ROCE_OP_RC_SEND_ONLY, 1024, true },
	{ "SEND ONLY one word over the MTU", ROCE_OP_RC_SEND_ONLY, 1028, false },
};

START_TEST(test_resp_length)
{
	const struct len_case *c = &len_cases[_i];
	static uint8_t payload[2048];
	const struct th_pkt *ans;
	struct pair p;

	pair_new(&p, 0x000900);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 4096, 0x201), 0);
	ck_assert_int_eq(forge(&p, 0, c->opcode, QPN_B, 0x000900, true, 0, payload, c->len), 0);
	ck_assert_msg(p.w->nlog == 1, "%s: %u packets from B", c->name, p.w->nlog);
	ans = &p.w->log[0];
	ck_assert_uint_eq(ans->opcode, ROCE_OP_RC_ACK);
	ck_assert_uint_eq(ans->psn, 0x000900);
	if (c->ok) {
		ck_assert_msg(ans->syndrome == ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID),
			      "%s: syndrome 0x%02x", c->name, ans->syndrome);
		ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);
	} else {
		ck_assert_msg(ans->syndrome == ROCE_AETH_SYN_NAK(ROCE_NAK_INVALID_REQ),
			      "%s: syndrome 0x%02x", c->name, ans->syndrome);
		ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_ERR);
		ck_assert_uint_eq(p.w->node[1].events, 1);
		ck_assert_int_eq(p.w->node[1].last_event, IBV_EVENT_QP_REQ_ERR);
		for (unsigned i = 0; i < p.w->node[1].cqes.n; i++)
			ck_assert_int_ne(p.w->node[1].cqes.v[i].status, IBV_WC_SUCCESS);
	}
	th_world_free(p.w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_psn_window");
	TCase *tc = tcase_create("window");

	tcase_add_loop_test(tc, test_comp_window, 0,
			    sizeof(comp_cases) / sizeof(comp_cases[0]));
	tcase_add_test(tc, test_comp_forged_then_real);
	tcase_add_loop_test(tc, test_resp_window, 0,
			    sizeof(resp_cases) / sizeof(resp_cases[0]));
	tcase_add_loop_test(tc, test_resp_length, 0,
			    sizeof(len_cases) / sizeof(len_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
