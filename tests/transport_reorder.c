/*
 * transport_reorder.c: a reordering wire in both directions, packet by
 * packet, on a real engine pair (docs/transport.md, the completer's NAKs).
 *
 * Four one-packet RDMA WRITEs (PSN p .. p+3, each with AckReq) reach the
 * responder as p+1, p+2, p+3, p: it NAKs p (PSN sequence error) for p+1,
 * drops p+1 .. p+3, then takes p and ACKs it. The ACK overtakes the NAK on
 * the way back. The requester then holds a NAK for a PSN already
 * acknowledged while p+1 .. p+3, which the responder dropped, are still in
 * flight, and it has nothing new to send that would draw another NAK. It
 * resends from the oldest unacknowledged PSN at once (one rewind, three
 * packets) instead of waiting for the Local ACK Timeout.
 *
 * And the NAK's other late arrivals: after every WRITE was acknowledged it
 * resends nothing; after a rewind with no progress since, it is dropped;
 * with retry_cnt 0 it is left to the timer, and WQEs the responder took
 * complete.
 */
#include "config.h"

#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

#define QPN_A 0x11u
#define QPN_B 0x22u
#define A_ADDR 0x10000ull
#define B_ADDR 0x20000ull
#define PSN_A 0x100u
#define LEN 1000u	/* one packet at MTU 1024 */
#define TIMEOUT 14	/* 4.096 us x 2^14: 67 ms, perftest's default */

struct pair {
	struct th_world *w;
	struct xport_qp *a, *b;
	uint8_t *amem, *bmem;
};

/* RC pair at MTU 1024 with Local ACK Timeout TIMEOUT and RETRY_CNT; A's
 * buffer holds a pattern, B's zeros. */
static void pair_new(struct pair *p, uint8_t retry_cnt)
{
	p->w = th_world_new(1024);
	p->w->log_on = true;
	p->a = th_qp(p->w, 0, IBV_QPT_RC, QPN_A, 16);
	p->b = th_qp(p->w, 1, IBV_QPT_RC, QPN_B, 16);
	th_connect(p->w, p->a, p->b, IBV_MTU_1024, PSN_A, 0x300, TIMEOUT, retry_cnt, 7, 1);
	p->amem = th_reg_mr(p->w, 0, 0x101, 1, A_ADDR, 4 * LEN, IBV_ACCESS_LOCAL_WRITE, 0);
	p->bmem = th_reg_mr(p->w, 1, 0x201, 1, B_ADDR, 4 * LEN,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0);
	for (unsigned i = 0; i < 4 * LEN; i++)
		p->amem[i] = (uint8_t)(i * 7 + 3);
}

/* Wire position I (0: the next to be delivered). */
static struct th_wire_pkt *at(struct th_world *w, unsigned i)
{
	ck_assert_uint_lt(i, w->qlen);
	return &w->q[w->qhead + i];
}

static void swap(struct th_world *w, unsigned i, unsigned j)
{
	struct th_wire_pkt t = *at(w, i);

	*at(w, i) = *at(w, j);
	*at(w, j) = t;
}

/* The BTH PSN and AETH syndrome of wire position I (a UDP payload). */
static uint32_t wire_psn(struct th_world *w, unsigned i)
{
	const uint8_t *b = at(w, i)->data;

	return (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
}

static uint8_t wire_syndrome(struct th_world *w, unsigned i)
{
	return at(w, i)->data[12];	/* AETH right after the 12-byte BTH */
}

/* Post N one-packet WRITEs (wr_id 0 .. N-1): packets PSN_A .. PSN_A + N - 1
 * on the wire, in order. */
static void post_writes(struct pair *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_eq(th_post_send(p->a, i, IBV_WR_RDMA_WRITE, A_ADDR + i * LEN, LEN,
					      0x101, B_ADDR + i * LEN, 0x201, 0, 0), 0);
	ck_assert_uint_eq(p->w->qlen, n);
	ck_assert_uint_eq(wire_psn(p->w, 0), PSN_A);
}

/* Post the four WRITEs, deliver them as p+1, p+2, p+3, p, and leave the
 * responder's two answers on the wire with the ACK first. */
static void four_writes_reordered(struct pair *p)
{
	struct th_world *w = p->w;

	post_writes(p, 4);
	swap(w, 0, 1);
	swap(w, 1, 2);
	swap(w, 2, 3);		/* p+1, p+2, p+3, p */
	ck_assert_uint_eq(wire_psn(w, 3), PSN_A);
	ck_assert_uint_eq(th_run(w, 4), 4);
	ck_assert_uint_eq(xport_qp_stats(p->b)->seq_naks_tx, 1);
	/* p+1 drew the NAK; p+2 and p+3 were dropped without one */
	ck_assert_uint_eq(xport_qp_stats(p->b)->dropped, 2);
	ck_assert_uint_eq(w->qlen, 2);
	/* NAK (PSN sequence error, 0x60) then ACK, both for p */
	ck_assert_uint_eq(wire_psn(w, 0), PSN_A);
	ck_assert_uint_eq(wire_syndrome(w, 0), 0x60);
	ck_assert_uint_eq(wire_psn(w, 1), PSN_A);
	ck_assert_uint_eq(wire_syndrome(w, 1) & 0xE0, 0);
	swap(w, 0, 1);
}

/* Every WRITE completed in order with its bytes in place, and the
 * requester sent TX request packets in all. */
static void all_written(struct pair *p, uint64_t tx)
{
	struct th_world *w = p->w;

	ck_assert_uint_eq(xport_qp_stats(p->a)->tx_pkts, tx);
	ck_assert_uint_eq(w->node[0].cqes.n, 4);
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_int_eq(w->node[0].cqes.v[i].status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(w->node[0].cqes.v[i].wr_id, i);
	}
	ck_assert_int_eq(memcmp(p->bmem, p->amem, 4 * LEN), 0);
	ck_assert_int_eq(xport_qp_state(p->a), IBV_QPS_RTS);
}

START_TEST(test_ack_overtakes_nak)
{
	struct pair p;
	struct th_world *w;

	pair_new(&p, 7);
	w = p.w;
	four_writes_reordered(&p);
	th_run(w, 100000);
	/* resent at once: one rewind, no retransmit timeout, simulated time
	 * well below the Local ACK Timeout */
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeouts, 0);
	ck_assert_uint_lt(w->now, 4096ull << TIMEOUT);
	ck_assert_uint_eq(xport_qp_stats(p.a)->seq_naks_rx, 1);
	ck_assert_uint_eq(xport_qp_stats(p.a)->retransmits, 1);
	/* 4 first transmissions, then p+1 .. p+3 once more */
	all_written(&p, 7);
	th_world_free(w);
}
END_TEST

START_TEST(test_late_nak_after_all_acked)
{
	struct pair p;
	struct th_world *w;

	pair_new(&p, 7);
	w = p.w;
	four_writes_reordered(&p);
	/* the NAK is held back until everything was resent and acknowledged */
	th_run(w, 1);		/* the ACK of p */
	{
		struct th_wire_pkt nak = *at(w, 0);

		w->qhead++;
		w->qlen--;
		th_run(w, 100000);	/* the timeout's resend completes the rest */
		ck_assert_uint_eq(xport_qp_stats(p.a)->timeouts, 1);
		ck_assert_uint_ge(w->now, 4096ull << TIMEOUT);
		/* p+1 twice after a timeout (timeout_copies), p+2, p+3 */
		all_written(&p, 8);
		/* ignored by the completer: not taken (the poll window
		 * counts taken datagrams only) */
		ck_assert_int_eq(xport_input(w->node[0].dev, nak.data, nak.len, &w->node[1].gid,
					     &w->node[0].gid, nak.sport, ROCE_UDP_PORT), EAGAIN);
		free(nak.data);
	}
	th_run(w, 100000);
	/* nothing outstanding: nothing resent, no rewind */
	ck_assert_uint_eq(xport_qp_stats(p.a)->retransmits, 1);
	ck_assert_uint_eq(xport_qp_stats(p.a)->seq_naks_rx, 0);
	all_written(&p, 8);
	th_world_free(w);
}
END_TEST

START_TEST(test_late_nak_after_rewind)
{
	struct pair p;
	struct th_world *w;

	pair_new(&p, 7);
	w = p.w;
	four_writes_reordered(&p);
	/* a copy of the NAK follows it: the second finds the requester
	 * rewound with no progress since, and is dropped */
	th_wire_repeat(w, 1, 1);
	ck_assert_uint_eq(th_run(w, 3), 3);	/* ACK, NAK, NAK */
	ck_assert_uint_eq(xport_qp_stats(p.a)->seq_naks_rx, 1);
	ck_assert_uint_eq(xport_qp_stats(p.a)->retransmits, 1);
	th_run(w, 100000);
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeouts, 0);
	all_written(&p, 7);
	th_world_free(w);
}
END_TEST

/* retry_cnt 0: two one-packet WRITEs reach the responder as p+1, p, p+1
 * (a duplicate): it NAKs p, takes p, then takes the copy of p+1, so it has
 * both. The ACK of p overtakes the NAK: with no retry left the late NAK is
 * not acted on (a rewind would fail the WQE with RETRY_EXC_ERR although
 * the responder has its data); the ACK of p+1 completes both. */
START_TEST(test_stale_nak_no_retry_left)
{
	struct pair p;
	struct th_world *w;

	pair_new(&p, 0);
	w = p.w;
	post_writes(&p, 2);
	th_wire_repeat(w, 1, 1);
	swap(w, 0, 1);		/* p+1, p, p+1 */
	ck_assert_uint_eq(wire_psn(w, 0), PSN_A + 1);
	ck_assert_uint_eq(th_run(w, 3), 3);
	ck_assert_uint_eq(w->qlen, 3);	/* NAK p, ACK p, ACK p+1 */
	ck_assert_uint_eq(wire_syndrome(w, 0), 0x60);
	swap(w, 0, 1);
	th_run(w, 100000);
	ck_assert_uint_eq(w->node[0].cqes.n, 2);
	for (unsigned i = 0; i < 2; i++)
		ck_assert_int_eq(w->node[0].cqes.v[i].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_RTS);
	ck_assert_uint_eq(xport_qp_stats(p.a)->retransmits, 0);
	ck_assert_uint_eq(xport_qp_stats(p.a)->tx_pkts, 2);
	ck_assert_int_eq(memcmp(p.bmem, p.amem, 2 * LEN), 0);
	th_world_free(w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_reorder");
	TCase *tc = tcase_create("reorder");

	tcase_add_test(tc, test_ack_overtakes_nak);
	tcase_add_test(tc, test_late_nak_after_all_acked);
	tcase_add_test(tc, test_late_nak_after_rewind);
	tcase_add_test(tc, test_stale_nak_no_retry_left);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
