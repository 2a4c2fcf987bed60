/*
 * transport_units.c: table-driven checks of the engine's small pieces:
 * the RNR timer table (IBA Table 45 / docs/wire-format.md §1.3), the retransmit
 * timeout (4.096 us * 2^timeout), path MTU sizes, QP creation errors,
 * attribute validation in xport_qp_modify, the UDP source port each
 * QP type uses, read-ahead and coalesced ACKs.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/xport/xport_int.h"
#include "tests/transport_harness.h"

/* Every RNR timer code, in ns (docs/wire-format.md §1.3, in ms there). */
static const uint64_t rnr_ns[32] = {
	655360000, 10000, 20000, 30000, 40000, 60000, 80000, 120000,
	160000, 240000, 320000, 480000, 640000, 960000, 1280000, 1920000,
	2560000, 3840000, 5120000, 7680000, 10240000, 15360000, 20480000, 30720000,
	40960000, 61440000, 81920000, 122880000, 163840000, 245760000, 327680000,
	491520000,
};

START_TEST(test_rnr_timer_table)
{
	ck_assert_uint_eq(xport_rnr_timer_ns((uint8_t)_i), rnr_ns[_i]);
}
END_TEST

START_TEST(test_timeout_and_mtu)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *qp = th_qp(w, 0, IBV_QPT_RC, 0x10, 4);
	struct xport_qp_attr a;

	memset(&a, 0, sizeof(a));
	ck_assert_uint_eq(xport_timeout_ns(qp), 0);	/* timeout 0: no timer */
	a.timeout = 1;
	ck_assert_int_eq(xport_qp_modify(qp, &a, IBV_QP_TIMEOUT), 0);
	ck_assert_uint_eq(xport_timeout_ns(qp), 8192);
	a.timeout = 14;
	ck_assert_int_eq(xport_qp_modify(qp, &a, IBV_QP_TIMEOUT), 0);
	ck_assert_uint_eq(xport_timeout_ns(qp), 67108864);	/* 67.1 ms */
	a.timeout = 31;
	ck_assert_int_eq(xport_qp_modify(qp, &a, IBV_QP_TIMEOUT), 0);
	ck_assert_uint_eq(xport_timeout_ns(qp), 4096ull << 31);

	ck_assert_uint_eq(xport_mtu_bytes(IBV_MTU_256), 256);
	ck_assert_uint_eq(xport_mtu_bytes(IBV_MTU_512), 512);
	ck_assert_uint_eq(xport_mtu_bytes(IBV_MTU_1024), 1024);
	ck_assert_uint_eq(xport_mtu_bytes(IBV_MTU_2048), 2048);
	ck_assert_uint_eq(xport_mtu_bytes(IBV_MTU_4096), 4096);
	ck_assert_uint_eq(xport_mtu_bytes((enum ibv_mtu)0), 0);
	ck_assert_uint_eq(xport_mtu_bytes((enum ibv_mtu)6), 0);
	th_world_free(w);
}
END_TEST

/* Out-of-range attribute values: EINVAL, and nothing applied. */
struct bad_attr {
	const char *name;
	int mask;
	struct xport_qp_attr a;
};

static const struct bad_attr bad_attrs[] = {
	{ "path_mtu 0", IBV_QP_PATH_MTU, { .path_mtu = (enum ibv_mtu)0 } },
	{ "path_mtu 6", IBV_QP_PATH_MTU, { .path_mtu = (enum ibv_mtu)6 } },
	{ "timeout 32", IBV_QP_TIMEOUT, { .timeout = 32 } },
	{ "retry_cnt 8", IBV_QP_RETRY_CNT, { .retry_cnt = 8 } },
	{ "rnr_retry 8", IBV_QP_RNR_RETRY, { .rnr_retry = 8 } },
	{ "min_rnr_timer 32", IBV_QP_MIN_RNR_TIMER, { .min_rnr_timer = 32 } },
	{ "dest_qp_num 2^24", IBV_QP_DEST_QPN, { .dest_qp_num = 1u << 24 } },
	{ "rq_psn 2^24", IBV_QP_RQ_PSN, { .rq_psn = 1u << 24 } },
	{ "sq_psn 2^24", IBV_QP_SQ_PSN, { .sq_psn = 1u << 24 } },
};

START_TEST(test_modify_rejects)
{
	const struct bad_attr *c = &bad_attrs[_i];
	struct th_world *w = th_world_new(1024);
	struct xport_qp *qp = th_qp(w, 0, IBV_QPT_RC, 0x10, 4);

	ck_assert_msg(xport_qp_modify(qp, &c->a, c->mask) == EINVAL, "%s", c->name);
	ck_assert_uint_eq(qp->mtu, 256);
	ck_assert_uint_eq(xport_qp_sq_psn(qp), 0);
	ck_assert_uint_eq(xport_qp_rq_psn(qp), 0);
	ck_assert_int_eq(xport_qp_state(qp), IBV_QPS_RESET);
	th_world_free(w);
}
END_TEST

START_TEST(test_create_errors)
{
	struct th_world *w = th_world_new(1024);
	struct xport_dev *dev = w->node[0].dev;
	struct xport_qp *qp;
	union ibv_gid g;

	errno = 0;
	ck_assert_ptr_null(xport_qp_create(dev, IBV_QPT_DRIVER, 0x10, 1, 4, 4, false, NULL));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_ptr_null(xport_qp_create(dev, IBV_QPT_RAW_PACKET, 0x10, 1, 4, 4, false, NULL));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_ptr_null(xport_qp_create(dev, IBV_QPT_RC, 1u << 24, 1, 4, 4, false, NULL));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(xport_qp_create(dev, IBV_QPT_RC, 0x10, 1, 65537, 4, false, NULL));
	ck_assert_int_eq(errno, EINVAL);
	qp = th_qp(w, 0, IBV_QPT_RC, 0x10, 4);
	ck_assert_ptr_null(xport_qp_create(dev, IBV_QPT_UC, 0x10, 1, 4, 4, false, NULL));
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_uint_eq(xport_qp_num(qp), 0x10);
	/* depth 0 (max_recv_wr 0) is accepted */
	qp = xport_qp_create(dev, IBV_QPT_UD, 0x12, 1, 4, 0, false, NULL);
	ck_assert_ptr_nonnull(qp);
	xport_qp_destroy(qp);
	/* device arguments */
	memset(&g, 0, sizeof(g));
	ck_assert_ptr_null(xport_dev_new(&th_ops_for_tests, NULL, &g, 4791, 1000));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(xport_dev_new(&th_ops_for_tests, NULL, &g, 4791, 8192));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(xport_dev_new(NULL, NULL, &g, 4791, 1024));
	ck_assert_int_eq(errno, EINVAL);
	th_world_free(w);
}
END_TEST

/* RC/UC: the flow-label convention from both QPNs, the same at both ends
 * (docs/wire-format.md §1.7: 0x11/0x22 -> 0xC242); UD: rxe's create-time hash
 * (qpn 17 -> 0xDF94). */
START_TEST(test_udp_sport)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, 0x11, 4);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, 0x22, 4);
	struct xport_qp *ud = th_qp(w, 1, IBV_QPT_UD, 17, 4);

	th_connect(w, a, b, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	ck_assert_uint_eq(a->sport, 0xC242);
	ck_assert_uint_eq(b->sport, 0xC242);
	ck_assert_uint_eq(ud->sport, 0xDF94);
	th_world_free(w);
}
END_TEST

/* Fills N bytes at P with a pattern that differs per message (SALT). */
static void fill(uint8_t *p, uint32_t n, uint32_t salt)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + (i >> 9) + salt);
}

/* WRITE of LEN bytes A->B at MTU 1024; returns node 0's ops->mem reads. */
static unsigned gather_write(struct th_world *w, struct xport_qp *a, uint32_t len,
			     uint64_t wr_id, enum ibv_wc_status want)
{
	unsigned before = w->node[0].mem_reads, ncqe = w->node[0].cqes.n;

	ck_assert_int_eq(th_post_send(a, wr_id, IBV_WR_RDMA_WRITE, 0x10000, len, 0x101,
				      0x80000, 0x201, 0, IBV_SEND_SIGNALED), 0);
	th_run(w, 100000);
	ck_assert_uint_eq(w->node[0].cqes.n, ncqe + 1);
	ck_assert_int_eq(w->node[0].cqes.v[ncqe].status, want);
	return w->node[0].mem_reads - before;
}

/* The read-ahead (xport_read_ahead): a 64 KiB WRITE at MTU 1024 (64
 * packets) reads the sender's memory twice (first packet, then the other
 * 63 KiB at once); 200 KiB in 5 reads (1 KiB + 64 + 64 + 64 + 7 KiB); a
 * buffer changed after the completion goes out as changed (no stale bytes
 * from the previous WQE at the same address); the responder of a 64 KiB
 * READ reads twice too; a WQE whose SGE runs past its MR still fails with
 * IBV_WC_LOC_PROT_ERR. */
START_TEST(test_gather_readahead)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, 0x11, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, 0x22, 16);
	uint8_t *amem = th_reg_mr(w, 0, 0x101, 1, 0x10000, 256 * 1024, IBV_ACCESS_LOCAL_WRITE, 0);
	uint8_t *bmem = th_reg_mr(w, 1, 0x201, 1, 0x80000, 512 * 1024,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ, 0);
	unsigned reads;

	th_connect(w, a, b, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	fill(amem, 256 * 1024, 1);
	ck_assert_uint_eq(gather_write(w, a, 65536, 1, IBV_WC_SUCCESS), 2);
	ck_assert_int_eq(memcmp(bmem, amem, 65536), 0);
	fill(amem, 65536, 2);
	ck_assert_int_ne(memcmp(bmem, amem, 65536), 0);
	ck_assert_uint_eq(gather_write(w, a, 65536, 2, IBV_WC_SUCCESS), 2);
	ck_assert_int_eq(memcmp(bmem, amem, 65536), 0);
	fill(amem, 256 * 1024, 3);
	ck_assert_uint_eq(gather_write(w, a, 200 * 1024, 3, IBV_WC_SUCCESS), 5);
	ck_assert_int_eq(memcmp(bmem, amem, 200 * 1024), 0);
	ck_assert_uint_eq(gather_write(w, a, 1024, 4, IBV_WC_SUCCESS), 1);
	/* the responder of a 64 KiB READ (64 response packets): two reads */
	fill(bmem, 65536, 4);
	reads = w->node[1].mem_reads;
	ck_assert_int_eq(th_post_send(a, 6, IBV_WR_RDMA_READ, 0x10000 + 131072, 65536, 0x101,
				      0x80000, 0x201, 0, IBV_SEND_SIGNALED), 0);
	th_run(w, 100000);
	ck_assert_int_eq(w->node[0].cqes.v[w->node[0].cqes.n - 1].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(w->node[1].mem_reads - reads, 2);
	ck_assert_int_eq(memcmp(amem + 131072, bmem, 65536), 0);
	/* 257 KiB > the sender's MR of 256 KiB: three read-aheads succeed, the fourth
	 * (to 257 KiB) fails, the 63 packets left inside the MR go out one
	 * read each, the one across fails */
	ck_assert_uint_eq(gather_write(w, a, 257 * 1024, 5, IBV_WC_LOC_PROT_ERR), 1 + 3 + 63);
	th_world_free(w);
}
END_TEST

/* The ACKs node 1 put on the wire since log entry FROM: their count, the
 * last one's PSN and MSN. */
static unsigned acks_from_b(const struct th_world *w, unsigned from, uint32_t *psn, uint32_t *msn)
{
	unsigned n = 0;

	for (unsigned i = from; i < w->nlog; i++)
		if (w->log[i].from == 1 && w->log[i].opcode == ROCE_OP_RC_ACK) {
			n++;
			*psn = w->log[i].psn;
			*msn = w->log[i].msn;
		}
	return n;
}

/* Coalesced ACKs (ack.c, IBTA Vol 1 9.7.5.1): with coalescing on, eight
 * one-packet WRITEs with AckReq received in one batch earn one ACK, held
 * until xport_ack_flush and equal to the last of the eight (PSN 7, MSN 8);
 * it retires all eight WQEs. A held ACK leaves before a later READ
 * response of the same QP (responses stay in PSN order). */
START_TEST(test_ack_coalescing)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, 0x11, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, 0x22, 16);
	uint32_t psn = 0, msn = 0;
	unsigned i, mark;

	th_reg_mr(w, 0, 0x101, 1, 0x10000, 4096, IBV_ACCESS_LOCAL_WRITE, 1);
	th_reg_mr(w, 1, 0x201, 1, 0x80000, 4096, IBV_ACCESS_LOCAL_WRITE |
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 2);
	th_connect(w, a, b, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	xport_ack_coalescing(w->node[1].dev, true);
	w->log_on = true;
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(th_post_send(a, i, IBV_WR_RDMA_WRITE, 0x10000 + i * 64, 64, 0x101,
					      0x80000 + i * 64, 0x201, 0, IBV_SEND_SIGNALED), 0);
	ck_assert_uint_eq(th_run(w, 8), 8);
	ck_assert_uint_eq(w->qlen, 0);
	ck_assert_uint_eq(acks_from_b(w, 0, &psn, &msn), 0);
	ck_assert_uint_eq(xport_qp_stats(b)->acks_coalesced, 7);
	xport_ack_flush(w->node[1].dev);
	ck_assert_uint_eq(w->qlen, 1);
	ck_assert_uint_eq(acks_from_b(w, 0, &psn, &msn), 1);
	ck_assert_uint_eq(psn, 7);
	ck_assert_uint_eq(msn, 8);
	th_run(w, 1000);
	ck_assert_uint_eq(w->node[0].cqes.n, 8);
	for (i = 0; i < 8; i++) {
		ck_assert_uint_eq(w->node[0].cqes.v[i].wr_id, i);
		ck_assert_int_eq(w->node[0].cqes.v[i].status, IBV_WC_SUCCESS);
	}
	/* a WRITE (PSN 8), then a READ (PSN 9): ACK 8 leaves first */
	mark = w->nlog;
	ck_assert_int_eq(th_post_send(a, 8, IBV_WR_RDMA_WRITE, 0x10000, 64, 0x101, 0x80000, 0x201,
				      0, IBV_SEND_SIGNALED), 0);
	ck_assert_int_eq(th_post_send(a, 9, IBV_WR_RDMA_READ, 0x10800, 64, 0x101, 0x80000, 0x201,
				      0, IBV_SEND_SIGNALED), 0);
	ck_assert_uint_eq(th_run(w, 2), 2);
	ck_assert_uint_eq(w->nlog, mark + 4);
	ck_assert_uint_eq(w->log[mark + 2].opcode, ROCE_OP_RC_ACK);
	ck_assert_uint_eq(w->log[mark + 2].psn, 8);
	ck_assert_uint_eq(w->log[mark + 3].opcode, ROCE_OP_RC_READ_RESP_ONLY);
	ck_assert_uint_eq(w->log[mark + 3].psn, 9);
	th_run(w, 1000);
	ck_assert_uint_eq(w->node[0].cqes.n, 10);
	ck_assert_int_eq(w->node[0].cqes.v[9].status, IBV_WC_SUCCESS);
	th_world_free(w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_units");
	TCase *tc = tcase_create("units");

	tcase_add_loop_test(tc, test_rnr_timer_table, 0, 32);
	tcase_add_test(tc, test_timeout_and_mtu);
	tcase_add_loop_test(tc, test_modify_rejects, 0,
			    sizeof(bad_attrs) / sizeof(bad_attrs[0]));
	tcase_add_test(tc, test_create_errors);
	tcase_add_test(tc, test_udp_sport);
	tcase_add_test(tc, test_gather_readahead);
	tcase_add_test(tc, test_ack_coalescing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
