/*
 * transport_comm_est.c: IBV_EVENT_COMM_EST (IBTA 11.6.3.1, mlx5's
 * MLX5_EVENT_TYPE_COMM_EST): an RC or UC QP in RTR that accepts its first
 * request packet raises it once, for that QP; later packets, a QP that was
 * already in RTS, a UD QP, a packet the QP drops (wrong transport, QP
 * still in INIT) raise nothing; a QP reset and brought up again raises it
 * again. Two engines back to back (tests/transport_harness.c).
 */
#include "config.h"

#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

#define QPN_A 0x11u		/* node 0: the sender */
#define QPN_C 0x33u		/* node 0: a second sender (UC) */
#define QPN_B 0x22u		/* node 1: the receiver */
#define QPN_D 0x44u		/* node 1: an idle QP in RTR */
#define PSN_A 0x000500u
#define PSN_B 0x000900u
#define A_ADDR 0x10000ull
#define B_ADDR 0x40000ull
#define MSG 65536u		/* 64 SEND packets at MTU 1024 */
#define QKEY 0x11111111u

static void to_init(struct xport_qp *qp)
{
	struct xport_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.qkey = QKEY;
	ck_assert_int_eq(xport_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_QKEY), 0);
}

/* INIT -> RTR towards PEER on node PEER_NODE (UD: state only). */
static void to_rtr(struct th_world *w, struct xport_qp *qp, enum ibv_qp_type type,
		   uint32_t peer_qpn, int peer_node, uint32_t rq_psn)
{
	struct xport_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (type == IBV_QPT_UD) {
		ck_assert_int_eq(xport_qp_modify(qp, &a, IBV_QP_STATE), 0);
		return;
	}
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 16;
	a.dgid = w->node[peer_node].gid;
	ck_assert_int_eq(xport_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_AV), 0);
}

static void to_rts(struct xport_qp *qp, uint32_t sq_psn)
{
	struct xport_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 10;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	ck_assert_int_eq(xport_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					 IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

struct world {
	struct th_world *w;
	enum ibv_qp_type type;	/* of A and B */
	struct xport_qp *a, *b, *d;
};

/* A (node 0, TYPE) in RTS towards B (node 1, TYPE) in RTR; D (node 1, RC)
 * idle in RTR; 64 KiB regions on both nodes. */
static void world_new(struct world *x, enum ibv_qp_type type)
{
	x->w = th_world_new(1024);
	x->type = type;
	x->a = th_qp(x->w, 0, type, QPN_A, 16);
	x->b = th_qp(x->w, 1, type, QPN_B, 16);
	x->d = th_qp(x->w, 1, IBV_QPT_RC, QPN_D, 16);
	th_reg_mr(x->w, 0, 0x101, 1, A_ADDR, MSG, IBV_ACCESS_LOCAL_WRITE, 0x5a);
	th_reg_mr(x->w, 1, 0x201, 1, B_ADDR, 4 * MSG, IBV_ACCESS_LOCAL_WRITE, 0);
	to_init(x->a);
	to_rtr(x->w, x->a, type, QPN_B, 1, PSN_B);
	to_rts(x->a, PSN_A);
	to_init(x->b);
	to_rtr(x->w, x->b, type, QPN_A, 0, PSN_A);
	to_init(x->d);
	to_rtr(x->w, x->d, IBV_QPT_RC, QPN_A, 0, PSN_A);
}

/* Post one 64 KiB SEND on QP (to B for UD) and a receive on B; run. */
static void send_one(struct world *x, struct xport_qp *qp, uint64_t wr_id)
{
	struct xport_send_wqe s;

	ck_assert_int_eq(th_post_recv(x->b, wr_id, B_ADDR + (wr_id % 4) * MSG, MSG, 0x201), 0);
	memset(&s, 0, sizeof(s));
	s.wr_id = wr_id;
	s.wr_index = (uint32_t)wr_id;
	s.opcode = IBV_WR_SEND;
	s.send_flags = IBV_SEND_SIGNALED;
	s.num_sge = 1;
	s.sg_list[0].addr = A_ADDR;
	s.sg_list[0].lkey = 0x101;
	s.sg_list[0].length = x->type == IBV_QPT_UD ? 1024 : MSG;
	s.dgid = x->w->node[1].gid;
	s.remote_qpn = QPN_B;
	s.remote_qkey = QKEY;
	ck_assert_int_eq(xport_post_send(qp, &s), 0);
	th_run(x->w, 100000);
}

/* RC and UC: the first SEND to B in RTR gives one COMM_EST for B (not for
 * the idle D, nothing on node 0); 4 more, in RTR and after RTS, give none. */
static const enum ibv_qp_type connected[] = { IBV_QPT_RC, IBV_QPT_UC };

START_TEST(test_first_packet_in_rtr)
{
	struct world x;

	world_new(&x, connected[_i]);
	ck_assert_uint_eq(x.w->node[1].events, 0);
	send_one(&x, x.a, 1);
	ck_assert_uint_eq(x.w->node[1].cqes.n, 1);
	ck_assert_int_eq(x.w->node[1].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(x.w->node[1].cqes.v[0].byte_len, MSG);
	ck_assert_uint_eq(x.w->node[1].events, 1);
	ck_assert_int_eq(x.w->node[1].last_event, IBV_EVENT_COMM_EST);
	ck_assert_ptr_eq(x.w->node[1].last_event_qp, x.b);
	ck_assert_uint_eq(x.w->node[0].events, 0);
	send_one(&x, x.a, 2);
	send_one(&x, x.a, 3);
	to_rts(x.b, PSN_B);
	send_one(&x, x.a, 4);
	send_one(&x, x.a, 5);
	ck_assert_uint_eq(x.w->node[1].cqes.n, 5);
	ck_assert_int_eq(x.w->node[1].cqes.v[4].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(x.w->node[1].events, 1);
	ck_assert_uint_eq(x.w->node[0].events, 0);
	th_world_free(x.w);
}
END_TEST

/* Reset and up again: the next first packet in RTR raises it again. */
START_TEST(test_again_after_reset)
{
	struct world x;
	struct xport_qp_attr r;

	world_new(&x, IBV_QPT_RC);
	send_one(&x, x.a, 1);
	ck_assert_uint_eq(x.w->node[1].events, 1);
	memset(&r, 0, sizeof(r));
	r.qp_state = IBV_QPS_RESET;
	ck_assert_int_eq(xport_qp_modify(x.a, &r, IBV_QP_STATE), 0);
	ck_assert_int_eq(xport_qp_modify(x.b, &r, IBV_QP_STATE), 0);
	to_init(x.a);
	to_rtr(x.w, x.a, IBV_QPT_RC, QPN_B, 1, PSN_B);
	to_rts(x.a, PSN_A);
	to_init(x.b);
	to_rtr(x.w, x.b, IBV_QPT_RC, QPN_A, 0, PSN_A);
	send_one(&x, x.a, 2);
	ck_assert_uint_eq(x.w->node[1].cqes.n, 2);
	ck_assert_int_eq(x.w->node[1].cqes.v[1].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(x.w->node[1].events, 2);
	ck_assert_int_eq(x.w->node[1].last_event, IBV_EVENT_COMM_EST);
	ck_assert_ptr_eq(x.w->node[1].last_event_qp, x.b);
	th_world_free(x.w);
}
END_TEST

/* A QP already in RTS when its first packet comes raises nothing. */
START_TEST(test_none_in_rts)
{
	struct world x;

	world_new(&x, IBV_QPT_RC);
	to_rts(x.b, PSN_B);
	send_one(&x, x.a, 1);
	ck_assert_uint_eq(x.w->node[1].cqes.n, 1);
	ck_assert_int_eq(x.w->node[1].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(x.w->node[1].events, 0);
	th_world_free(x.w);
}
END_TEST

/* UD has no connection: a UD QP in RTR receiving a SEND raises nothing. */
START_TEST(test_none_for_ud)
{
	struct world x;

	world_new(&x, IBV_QPT_UD);
	send_one(&x, x.a, 1);
	ck_assert_uint_eq(x.w->node[1].cqes.n, 1);
	ck_assert_int_eq(x.w->node[1].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(x.w->node[1].cqes.v[0].byte_len, 40 + 1024);	/* GRH + data */
	ck_assert_uint_eq(x.w->node[1].events, 0);
	th_world_free(x.w);
}
END_TEST

/* Packets the QP drops raise nothing: a UC SEND to the RC QP in RTR (wrong
 * transport), an RC SEND while the QP is still in INIT; the first packet
 * it takes afterwards does. */
START_TEST(test_none_for_dropped)
{
	struct world x;
	struct xport_qp *c;
	struct xport_qp_attr r;

	world_new(&x, IBV_QPT_RC);
	c = th_qp(x.w, 0, IBV_QPT_UC, QPN_C, 16);
	to_init(c);
	to_rtr(x.w, c, IBV_QPT_UC, QPN_B, 1, PSN_B);
	to_rts(c, PSN_A);
	send_one(&x, c, 1);
	ck_assert_uint_eq(xport_qp_stats(x.b)->dropped, MSG / 1024);
	ck_assert_uint_eq(x.w->node[1].cqes.n, 0);
	ck_assert_uint_eq(x.w->node[1].events, 0);
	/* B back to INIT: A's SEND is dropped until B is in RTR (A resends) */
	memset(&r, 0, sizeof(r));
	r.qp_state = IBV_QPS_RESET;
	ck_assert_int_eq(xport_qp_modify(x.b, &r, IBV_QP_STATE), 0);
	to_init(x.b);
	ck_assert_int_eq(th_post_send(x.a, 2, IBV_WR_SEND, A_ADDR, 1024, 0x101, 0, 0, 0, 0), 0);
	th_run(x.w, 1);
	ck_assert_uint_eq(xport_qp_stats(x.b)->dropped, MSG / 1024 + 1);	/* stats survive RESET */
	ck_assert_uint_eq(x.w->node[1].events, 0);
	to_rtr(x.w, x.b, IBV_QPT_RC, QPN_A, 0, PSN_A);
	ck_assert_int_eq(th_post_recv(x.b, 2, B_ADDR, MSG, 0x201), 0);
	th_run(x.w, 100000);
	ck_assert_uint_eq(xport_qp_stats(x.a)->timeouts, 1);
	ck_assert_uint_eq(x.w->node[1].cqes.n, 1);
	ck_assert_int_eq(x.w->node[1].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(x.w->node[1].events, 1);
	ck_assert_int_eq(x.w->node[1].last_event, IBV_EVENT_COMM_EST);
	ck_assert_ptr_eq(x.w->node[1].last_event_qp, x.b);
	th_world_free(x.w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_comm_est");
	TCase *tc = tcase_create("comm_est");

	tcase_add_loop_test(tc, test_first_packet_in_rtr, 0,
			    sizeof(connected) / sizeof(connected[0]));
	tcase_add_test(tc, test_again_after_reset);
	tcase_add_test(tc, test_none_in_rts);
	tcase_add_test(tc, test_none_for_ud);
	tcase_add_test(tc, test_none_for_dropped);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
