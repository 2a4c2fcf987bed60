/*
 * transport_units.c: table-driven checks of the engine's small pieces:
 * the RNR timer table (IBA Table 45 / docs/wire-format.md §1.3), the retransmit
 * timeout (4.096 us * 2^timeout), path MTU sizes, QP creation errors,
 * attribute validation in xport_qp_modify, and the UDP source port each
 * QP type uses.
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
	ck_assert_ptr_null(xport_qp_create(dev, IBV_QPT_XRC_SEND, 0x10, 1, 4, 4, false, NULL));
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
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
