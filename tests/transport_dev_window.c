/*
 * transport_dev_window.c: the device window (emu/xport/dev_window.c) on a
 * real engine pair: 1,024 request PSNs in flight over all of a device's RC
 * QPs (XPORT_DEV_UNACKED_PSNS), past which a QP sends while it has fewer
 * than 16 (XPORT_FAIR_UNACKED_PSNS), the last packet before it stops with
 * AckReq so that its own ACK wakes it.
 *
 * 16 RC QPs at path MTU 256 each post four 8 KiB WRITEs (32 packets each,
 * 128 PSNs: the QP's own window) before any packet is delivered. QPs 0..7
 * send 128 each (1,024 in all); each of QPs 8..15 sends its fair 16, then
 * one more with AckReq (none of its 16 asked for an ACK: the first WRITE is
 * 32 packets long), and stops, again at each later post: 1,160 in flight,
 * 32 stops. Delivered, every
 * WRITE completes, no packet is sent twice (16 x 128 request packets in
 * all), and nothing is left in flight. Then the share of each QP while 16
 * send and half the window is taken: 1,024 / 16 = 64 PSNs; below half, 15
 * QPs with one PSN each leave a bulk sender its own window of 128; and a
 * QP moved to RESET or destroyed leaves the sum.
 */
#include "config.h"

#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

#define NQP 16
#define WRITES 4
#define LEN 8192u
#define PKTS (LEN / 256)

START_TEST(test_dev_window)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a[NQP], *b[NQP];
	const struct xport_dev_stats *st = xport_dev_stats(w->node[0].dev);
	uint8_t *dst;
	unsigned i, j, k, sent[NQP], ackreq[NQP], acked_at[NQP], total = 0;

	th_reg_mr(w, 0, 0x101, 1, 0x100000, LEN, IBV_ACCESS_LOCAL_WRITE, 0x5A);
	dst = th_reg_mr(w, 1, 0x201, 1, 0x800000, NQP * WRITES * LEN,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0);
	for (i = 0; i < NQP; i++) {
		a[i] = th_qp(w, 0, IBV_QPT_RC, 0x100 + i, 16);
		b[i] = th_qp(w, 1, IBV_QPT_RC, 0x200 + i, 16);
		th_connect(w, a[i], b[i], IBV_MTU_256, 0, 0, 14, 7, 7, 1);
	}
	w->log_on = true;
	for (i = 0; i < NQP; i++)
		for (j = 0; j < WRITES; j++)
			ck_assert_int_eq(th_post_send(a[i], i * WRITES + j, IBV_WR_RDMA_WRITE, 0x100000,
						      LEN, 0x101, 0x800000 + (i * WRITES + j) * LEN,
						      0x201, 0, IBV_SEND_SIGNALED), 0);
	ck_assert_uint_eq(xport_dev_unacked(w->node[0].dev), 8 * 128 + 8 * 17);
	/* each of QPs 8..15 stopped once for each post's run */
	ck_assert_uint_eq(st->window_stops, 8 * WRITES);
	memset(sent, 0, sizeof(sent));
	memset(ackreq, 0, sizeof(ackreq));
	for (k = 0; k < w->nlog; k++) {
		i = w->log[k].dqpn - 0x200;
		ck_assert_uint_lt(i, NQP);
		if (w->log[k].ackreq) {
			ackreq[i]++;
			acked_at[i] = w->log[k].psn;
		}
		sent[i]++;
	}
	for (i = 0; i < NQP; i++) {
		if (i < 8) {
			/* 128 PSNs: AckReq on each WRITE's last packet */
			ck_assert_uint_eq(sent[i], 128);
			ck_assert_uint_eq(ackreq[i], WRITES);
		} else {
			ck_assert_uint_eq(sent[i], 17);
			ck_assert_uint_eq(ackreq[i], 1);
			ck_assert_uint_eq(acked_at[i], 16);
		}
	}
	th_run(w, 1000000);
	ck_assert_uint_eq(w->node[0].cqes.n, NQP * WRITES);
	for (k = 0; k < w->node[0].cqes.n; k++)
		ck_assert_int_eq(w->node[0].cqes.v[k].status, IBV_WC_SUCCESS);
	for (k = 0; k < w->nlog; k++)
		if (w->log[k].from == 0)
			total++;
	ck_assert_uint_eq(total, NQP * WRITES * PKTS);
	ck_assert_uint_eq(xport_dev_unacked(w->node[0].dev), 0);
	ck_assert_uint_ge(st->window_max, 1024);
	ck_assert_uint_le(st->window_max, 8 * 128 + 8 * 17);
	for (k = 0; k < NQP * WRITES * LEN; k++)
		ck_assert_uint_eq(dst[k], 0x5A);
	/* the share of each: 16 QPs with one 8 KiB WRITE in flight each (512
	 * PSNs, below the window), then QP 0 posts three more: it stops at
	 * 1024 / 16 = 64 in flight (its second WRITE's last packet asked for
	 * the ACK), not at its own window of 128 */
	for (i = 0; i < NQP; i++)
		ck_assert_int_eq(th_post_send(a[i], 100 + i, IBV_WR_RDMA_WRITE, 0x100000, LEN, 0x101,
					      0x800000 + i * LEN, 0x201, 0, IBV_SEND_SIGNALED), 0);
	ck_assert_uint_eq(xport_dev_unacked(w->node[0].dev), NQP * PKTS);
	for (j = 1; j < WRITES; j++)
		ck_assert_int_eq(th_post_send(a[0], 200 + j, IBV_WR_RDMA_WRITE, 0x100000, LEN, 0x101,
					      0x800000 + j * LEN, 0x201, 0, IBV_SEND_SIGNALED), 0);
	ck_assert_uint_eq(xport_dev_unacked(w->node[0].dev), NQP * PKTS + 32);
	th_run(w, 1000000);
	ck_assert_uint_eq(w->node[0].cqes.n, NQP * WRITES + NQP + WRITES - 1);
	ck_assert_uint_eq(xport_dev_unacked(w->node[0].dev), 0);
	/* below half the window QPs with a PSN or two in flight cap nobody:
	 * 15 QPs with one 256-byte WRITE each, then QP 0 posts four 8 KiB
	 * WRITEs and sends its own window of 128 (not 1024 / 16 = 64) */
	for (i = 1; i < NQP; i++)
		ck_assert_int_eq(th_post_send(a[i], 300 + i, IBV_WR_RDMA_WRITE, 0x100000, 256, 0x101,
					      0x800000 + i * LEN, 0x201, 0, IBV_SEND_SIGNALED), 0);
	for (j = 0; j < WRITES; j++)
		ck_assert_int_eq(th_post_send(a[0], 400 + j, IBV_WR_RDMA_WRITE, 0x100000, LEN, 0x101,
					      0x800000 + j * LEN, 0x201, 0, IBV_SEND_SIGNALED), 0);
	ck_assert_uint_eq(xport_dev_unacked(w->node[0].dev), NQP - 1 + 128);
	/* a QP moved to RESET with PSNs in flight (a modify that runs
	 * nothing after it) takes them out of the sum */
	{
		struct xport_qp_attr at;

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RESET;
		ck_assert_int_eq(xport_qp_modify(a[0], &at, IBV_QP_STATE), 0);
	}
	ck_assert_uint_eq(xport_dev_unacked(w->node[0].dev), NQP - 1);
	th_run(w, 1000000);
	ck_assert_uint_eq(xport_dev_unacked(w->node[0].dev), 0);
	/* destroying a QP with PSNs in flight takes them out of the sum */
	ck_assert_int_eq(th_post_send(a[1], 99, IBV_WR_RDMA_WRITE, 0x100000, LEN, 0x101,
				      0x800000, 0x201, 0, IBV_SEND_SIGNALED), 0);
	ck_assert_uint_eq(xport_dev_unacked(w->node[0].dev), PKTS);
	th_qp_destroy(w, 0, a[1]);
	ck_assert_uint_eq(xport_dev_unacked(w->node[0].dev), 0);
	th_world_free(w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_dev_window");
	TCase *tc = tcase_create("dev_window");

	tcase_add_test(tc, test_dev_window);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
