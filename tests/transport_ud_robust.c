/*
 * transport_ud_robust.c: a UD QP survives what any host can send it and
 * what its own host cannot send (IBTA 10.3.1, 11.4.2). An oversized
 * datagram completes the receive WQE with IBV_WC_LOC_LEN_ERR and the QP
 * stays in RTS (mlx5); malformed datagrams are dropped and counted; a
 * datagram the host cannot send fails its WQE and moves the QP to SQE (not
 * ERR), where receives go on and SQE -> RTS resumes sending. Exact
 * statuses, byte counts, bytes and states.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

#define QPN_A 0x11u
#define QPN_B 0x22u
#define QKEY 0x11111111u	/* th_connect's UD Q_Key */
#define A_ADDR 0x10000ull
#define B_ADDR 0x20000ull
#define REGION 16384u
#define GRH 40u

struct ud_pair {
	struct th_world *w;
	struct xport_qp *a, *b;
	uint8_t *amem, *bmem;
};

/* Two UD QPs in RTS on devices with port MTU PORT_MTU; A's memory holds a
 * pattern, B's is zero. */
static void ud_pair_new(struct ud_pair *p, uint32_t port_mtu)
{
	p->w = th_world_new(port_mtu);
	p->a = th_qp(p->w, 0, IBV_QPT_UD, QPN_A, 16);
	p->b = th_qp(p->w, 1, IBV_QPT_UD, QPN_B, 16);
	th_connect(p->w, p->a, p->b, IBV_MTU_1024, 0, 0, 0, 0, 0, 0);
	p->amem = th_reg_mr(p->w, 0, 0x101, 1, A_ADDR, REGION, IBV_ACCESS_LOCAL_WRITE, 0);
	p->bmem = th_reg_mr(p->w, 1, 0x201, 1, B_ADDR, REGION, IBV_ACCESS_LOCAL_WRITE, 0);
	for (unsigned i = 0; i < REGION; i++)
		p->amem[i] = (uint8_t)(i * 11 + 3);
}

/* A UD SEND of LEN bytes from node FROM's memory at OFF to the other QP. */
static int ud_send(struct ud_pair *p, int from, uint64_t id, uint32_t off, uint32_t len)
{
	struct xport_send_wqe s;

	memset(&s, 0, sizeof(s));
	s.wr_id = id;
	s.opcode = IBV_WR_SEND;
	s.send_flags = IBV_SEND_SIGNALED;
	s.dgid = p->w->node[!from].gid;
	s.remote_qpn = from ? QPN_A : QPN_B;
	s.remote_qkey = QKEY;
	s.num_sge = 1;
	s.sg_list[0] = (struct ibv_sge){ (from ? B_ADDR : A_ADDR) + off, len,
					 from ? 0x201 : 0x101 };
	return xport_post_send(from ? p->b : p->a, &s);
}

static const struct xport_cqe *cqe(struct ud_pair *p, int n, unsigned i)
{
	ck_assert_uint_gt(p->w->node[n].cqes.n, i);
	return &p->w->node[n].cqes.v[i];
}

START_TEST(test_oversized_datagram)
{
	struct ud_pair p;

	ud_pair_new(&p, 4096);
	/* 1064 = GRH + 1024: the ibv_ud_pingpong layout for 1024-byte messages */
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, GRH + 1024, 0x201), 0);
	ck_assert_int_eq(th_post_recv(p.b, 10, B_ADDR + 4096, GRH + 1024, 0x201), 0);
	ck_assert_int_eq(ud_send(&p, 0, 1, 0, 2000), 0);
	ck_assert_int_eq(ud_send(&p, 0, 2, 100, 1024), 0);
	th_run(p.w, 100);

	ck_assert_uint_eq(p.w->node[1].cqes.n, 2);
	ck_assert_uint_eq(cqe(&p, 1, 0)->wr_id, 9);
	ck_assert_int_eq(cqe(&p, 1, 0)->status, IBV_WC_LOC_LEN_ERR);
	ck_assert_uint_eq(cqe(&p, 1, 0)->byte_len, 0);
	ck_assert_uint_eq(p.bmem[0], 0);		/* nothing written */
	ck_assert_uint_eq(p.bmem[GRH + 1023], 0);
	ck_assert_uint_eq(cqe(&p, 1, 1)->wr_id, 10);
	ck_assert_int_eq(cqe(&p, 1, 1)->status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(cqe(&p, 1, 1)->byte_len, GRH + 1024);
	ck_assert_uint_eq(cqe(&p, 1, 1)->src_qp, QPN_A);
	ck_assert_int_eq(memcmp(p.bmem + 4096 + GRH, p.amem + 100, 1024), 0);
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);
	ck_assert_uint_eq(p.w->node[1].events, 0);	/* no QP_FATAL */
	ck_assert_ptr_nonnull(strstr(p.w->node[1].logtext,
		"UD datagram of 2040 bytes from QPN 0x000011 into a 1064-byte receive buffer: LOC_LEN_ERR"));
	/* The sender saw nothing wrong: UD has no acknowledgements. */
	ck_assert_uint_eq(p.w->node[0].cqes.n, 2);
	ck_assert_int_eq(cqe(&p, 0, 0)->status, IBV_WC_SUCCESS);
	ck_assert_int_eq(cqe(&p, 0, 1)->status, IBV_WC_SUCCESS);
	th_world_free(p.w);
}
END_TEST

/* Build a datagram from node 0 to B's QP: OPCODE, Q_Key, LEN payload
 * bytes. Returns its length. */
static size_t forge(struct ud_pair *p, uint8_t *buf, size_t cap, uint8_t opcode,
		    uint32_t qkey, uint32_t len)
{
	static uint8_t payload[4096];
	struct roce_hdrs h;
	struct roce_l3 l3;
	size_t n = 0;

	memset(payload, 0x5A, sizeof(payload));
	memset(&l3, 0, sizeof(l3));
	l3.kind = ROCE_L3_IPV4;
	memcpy(l3.src, p->w->node[0].gid.raw, 16);
	memcpy(l3.dst, p->w->node[1].gid.raw, 16);
	l3.sport = 0xC000;
	l3.dport = ROCE_UDP_PORT;
	memset(&h, 0, sizeof(h));
	h.opcode = opcode;
	h.pkey = 0xFFFF;
	h.dqpn = QPN_B;
	h.deth.qkey = qkey;
	h.deth.sqpn = 0x999;
	ck_assert_int_eq(roce_build_udp(buf, cap, &l3, &h, payload, len, &n), ROCE_OK);
	return n;
}

static int inject(struct ud_pair *p, const uint8_t *buf, size_t n)
{
	return xport_input(p->w->node[1].dev, buf, n, &p->w->node[0].gid,
			   &p->w->node[1].gid, 0xC000, ROCE_UDP_PORT);
}

START_TEST(test_malformed_datagrams)
{
	struct ud_pair p;
	uint8_t buf[4400];
	size_t n;

	ud_pair_new(&p, 4096);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, GRH + 1024, 0x201), 0);
	ck_assert_int_eq(th_post_recv(p.b, 10, B_ADDR + 4096, GRH + 1024, 0x201), 0);

	n = forge(&p, buf, sizeof(buf), ROCE_OP_UD_SEND_ONLY, QKEY, 64);
	ck_assert_int_eq(inject(&p, buf, 11), EBADMSG);		/* truncated BTH */
	ck_assert_int_eq(inject(&p, buf, n - 3), EBADMSG);	/* cut in the ICRC */
	buf[20] ^= 0x40;					/* a payload bit */
	ck_assert_int_eq(inject(&p, buf, n), EBADMSG);		/* ICRC catches it */
	n = forge(&p, buf, sizeof(buf), ROCE_OP_RC_SEND_ONLY, QKEY, 64);
	ck_assert_int_eq(inject(&p, buf, n), EAGAIN);		/* RC opcode to UD */
	n = forge(&p, buf, sizeof(buf), ROCE_OP_UC_SEND_ONLY, QKEY, 64);
	ck_assert_int_eq(inject(&p, buf, n), EAGAIN);		/* UC opcode to UD */
	n = forge(&p, buf, sizeof(buf), ROCE_OP_UD_SEND_ONLY, 0x22222222, 64);
	/* a wrong Q_Key: dropped by the QP, so not taken (EAGAIN; the
	 * daemon's poll window counts only datagrams a QP took) */
	ck_assert_int_eq(inject(&p, buf, n), EAGAIN);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 0);
	ck_assert_uint_eq(xport_dev_stats(p.w->node[1].dev)->rx_bad, 3);
	ck_assert_uint_eq(xport_qp_stats(p.b)->dropped, 3);
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);

	/* Longer than the buffer (and than B's port MTU would let B send). */
	n = forge(&p, buf, sizeof(buf), ROCE_OP_UD_SEND_ONLY, QKEY, 4096);
	ck_assert_int_eq(inject(&p, buf, n), 0);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 1);
	ck_assert_int_eq(cqe(&p, 1, 0)->status, IBV_WC_LOC_LEN_ERR);
	ck_assert_uint_eq(cqe(&p, 1, 0)->wr_id, 9);
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);

	/* The next datagram from the real peer arrives intact. */
	ck_assert_int_eq(ud_send(&p, 0, 1, 0, 1000), 0);
	th_run(p.w, 100);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 2);
	ck_assert_uint_eq(cqe(&p, 1, 1)->wr_id, 10);
	ck_assert_int_eq(cqe(&p, 1, 1)->status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(cqe(&p, 1, 1)->byte_len, GRH + 1000);
	ck_assert_int_eq(memcmp(p.bmem + 4096 + GRH, p.amem, 1000), 0);
	ck_assert_uint_eq(p.w->node[1].events, 0);

	/* A good datagram with no receive WQE left: dropped, not taken. */
	n = forge(&p, buf, sizeof(buf), ROCE_OP_UD_SEND_ONLY, QKEY, 64);
	ck_assert_int_eq(inject(&p, buf, n), EAGAIN);
	ck_assert_uint_eq(xport_qp_stats(p.b)->dropped, 4);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 2);
	th_world_free(p.w);
}
END_TEST

/* ---- sends the host cannot make: table ---- */

struct xmit_case {
	int err;			/* what the host's send returns */
	enum ibv_wc_status status;	/* the WQE's completion */
	enum ibv_qp_state state;	/* the sender's state after it */
};

static const struct xmit_case xmit_cases[] = {
	{ EMSGSIZE, IBV_WC_LOC_LEN_ERR, IBV_QPS_SQE },
	{ ENETUNREACH, IBV_WC_LOC_QP_OP_ERR, IBV_QPS_SQE },
	{ EHOSTUNREACH, IBV_WC_LOC_QP_OP_ERR, IBV_QPS_SQE },
	{ EAFNOSUPPORT, IBV_WC_LOC_QP_OP_ERR, IBV_QPS_SQE },
	/* congestion is loss, which UD allows */
	{ EAGAIN, IBV_WC_SUCCESS, IBV_QPS_RTS },
	{ ENOBUFS, IBV_WC_SUCCESS, IBV_QPS_RTS },
};

START_TEST(test_send_error_sqe)
{
	const struct xmit_case *c = &xmit_cases[_i];
	bool failed = c->state == IBV_QPS_SQE;
	struct xport_qp_attr at;
	struct ud_pair p;

	ud_pair_new(&p, 1024);
	ck_assert_int_eq(th_post_recv(p.a, 7, A_ADDR + 8192, GRH + 1024, 0x101), 0);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, GRH + 1024, 0x201), 0);
	p.w->xmit_errno = c->err;
	ck_assert_int_eq(ud_send(&p, 0, 1, 0, 100), 0);
	ck_assert_int_eq(ud_send(&p, 0, 2, 0, 100), 0);
	p.w->xmit_errno = 0;
	th_run(p.w, 100);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 2);
	ck_assert_uint_eq(cqe(&p, 0, 0)->wr_id, 1);
	ck_assert_int_eq(cqe(&p, 0, 0)->status, c->status);
	ck_assert_uint_eq(cqe(&p, 0, 1)->wr_id, 2);
	ck_assert_int_eq(cqe(&p, 0, 1)->status,
			 failed ? IBV_WC_WR_FLUSH_ERR : IBV_WC_SUCCESS);
	ck_assert_int_eq(xport_qp_state(p.a), c->state);
	ck_assert_uint_eq(p.w->node[0].events, 0);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 0);	/* nothing arrived */
	if (!failed) {
		th_world_free(p.w);
		return;
	}
	ck_assert_ptr_nonnull(strstr(p.w->node[0].logtext, "QP to SQE"));

	/* In SQE the receive queue works ... */
	ck_assert_int_eq(ud_send(&p, 1, 20, 0, 300), 0);
	th_run(p.w, 100);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 3);
	ck_assert_uint_eq(cqe(&p, 0, 2)->wr_id, 7);
	ck_assert_int_eq(cqe(&p, 0, 2)->status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(cqe(&p, 0, 2)->byte_len, GRH + 300);
	/* ... a new send is flushed ... */
	ck_assert_int_eq(ud_send(&p, 0, 3, 0, 100), 0);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 4);
	ck_assert_uint_eq(cqe(&p, 0, 3)->wr_id, 3);
	ck_assert_int_eq(cqe(&p, 0, 3)->status, IBV_WC_WR_FLUSH_ERR);
	/* ... and SQE -> RTS resumes sending. */
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(xport_qp_modify(p.a, &at, IBV_QP_STATE), 0);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_RTS);
	ck_assert_int_eq(ud_send(&p, 0, 4, 200, 500), 0);
	th_run(p.w, 100);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 5);
	ck_assert_int_eq(cqe(&p, 0, 4)->status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 2);	/* B's send 20, then this */
	ck_assert_uint_eq(cqe(&p, 1, 0)->wr_id, 20);
	ck_assert_uint_eq(cqe(&p, 1, 1)->wr_id, 9);
	ck_assert_int_eq(cqe(&p, 1, 1)->status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(cqe(&p, 1, 1)->byte_len, GRH + 500);
	ck_assert_int_eq(memcmp(p.bmem + GRH, p.amem + 200, 500), 0);
	th_world_free(p.w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_ud_robust");
	TCase *tc = tcase_create("ud");

	tcase_add_test(tc, test_oversized_datagram);
	tcase_add_test(tc, test_malformed_datagrams);
	tcase_add_loop_test(tc, test_send_error_sqe, 0,
			    (int)(sizeof(xmit_cases) / sizeof(xmit_cases[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
