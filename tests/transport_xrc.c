/*
 * transport_xrc.c - XRC in the engine, two engines back to back
 * (tests/transport_harness.h): an XRC_SEND QP on node 0, an XRC_RECV QP of
 * domain 5 on node 1 with XRC SRQs 0x10 (domain 5, PD 1), 0x11 (domain 5,
 * PD 2) and 0x12 (domain 6). One table row per case: a 4096-byte SEND or
 * RDMA WRITE at MTU 1024 naming an SRQ, optionally with its second packet
 * rewritten to name another SRQ (ICRC recomputed, as a forger would); the
 * sender's status, the receive completion's SRQ, and the bytes exact.
 * Sources: IBTA Annex A14 (XRCETH, the SRQ of a message), docs/xrc.md.
 */
#include "check_main.h"
#include <string.h>

#include "netstack/icrc.h"
#include "transport_harness.h"

#define LEN 4096u
#define MR0 0x30000u     /* node 0: the payload, key 3, PD 1 */
#define MR1 0x10000u     /* node 1: key 1, PD 1 */
#define MR2 0x20000u     /* node 1: key 2, PD 2 */
#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

enum { NONE = -1 };

static const struct xrc_case {
	const char *name;
	enum ibv_wr_opcode op;
	uint32_t srqn;          /* the WQE's remote_srqn */
	uint32_t rkey;          /* WRITE: 1 (PD 1) or 2 (PD 2), at MR1 / MR2 */
	uint32_t forge_srqn;    /* != 0: the second packet's XRCETH */
	enum ibv_wc_status want;
	int recv_srq;           /* index of the SRQ completing a receive, or NONE */
	uint64_t landed;        /* where the bytes must be, 0: nowhere */
} cases[] = {
	{ "SEND to SRQ 0x10 (PD 1)", IBV_WR_SEND, 0x10, 0, 0, IBV_WC_SUCCESS, 0, MR1 },
	{ "SEND to SRQ 0x11 (PD 2)", IBV_WR_SEND, 0x11, 0, 0, IBV_WC_SUCCESS, 1, MR2 },
	{ "WRITE, PD 2 key through SRQ 0x11", IBV_WR_RDMA_WRITE, 0x11, 2, 0, IBV_WC_SUCCESS, NONE, MR2 },
	{ "WRITE, PD 2 key through SRQ 0x10", IBV_WR_RDMA_WRITE, 0x10, 2, 0, IBV_WC_REM_ACCESS_ERR, NONE, 0 },
	{ "SEND to SRQ 0x12 (domain 6)", IBV_WR_SEND, 0x12, 0, 0, IBV_WC_REM_INV_REQ_ERR, NONE, 0 },
	{ "SEND to SRQ 0x13 (none)", IBV_WR_SEND, 0x13, 0, 0, IBV_WC_REM_INV_REQ_ERR, NONE, 0 },
	{ "SEND to 0x10, second packet names 0x11", IBV_WR_SEND, 0x10, 0, 0x11, IBV_WC_REM_INV_REQ_ERR, NONE, 0 },
	{ "WRITE to 0x10, second packet names 0x12", IBV_WR_RDMA_WRITE, 0x10, 1, 0x12, IBV_WC_REM_INV_REQ_ERR, NONE, 0 },
};

/* Rewrite the XRCETH of the wire packet at position I and its ICRC. */
static void forge(struct th_world *w, unsigned i, uint32_t srqn)
{
	struct th_wire_pkt *p = &w->q[(w->qhead + i) % w->qcap];
	struct roce_l3 l3;
	uint32_t crc;

	memset(&l3, 0, sizeof(l3));
	l3.kind = ROCE_L3_IPV4;
	memcpy(l3.src, w->node[p->from].gid.raw, 16);
	memcpy(l3.dst, w->node[p->to].gid.raw, 16);
	l3.sport = p->sport;
	l3.dport = ROCE_UDP_PORT;
	ck_assert_uint_eq(p->data[0] & 0xE0, ROCE_TRANSPORT_XRC);
	p->data[13] = (uint8_t)(srqn >> 16);
	p->data[14] = (uint8_t)(srqn >> 8);
	p->data[15] = (uint8_t)srqn;
	ck_assert_int_eq(roce_icrc_udp(p->data, p->len, &l3, &crc), ROCE_OK);
	roce_icrc_put(p->data + p->len - ROCE_ICRC_LEN, crc);
}

START_TEST(xrc_cases)
{
	const struct xrc_case *c = &cases[_i];
	struct th_world *w = th_world_new(1024);
	struct xport_srq *srq[3];
	static const uint32_t srqn[3] = { 0x10, 0x11, 0x12 }, xrcd[3] = { 5, 5, 6 },
			      pd[3] = { 1, 2, 1 };
	uint8_t *src, *b1, *b2;
	struct xport_qp *sqp, *rqp;
	struct xport_send_wqe wqe;
	uint8_t zero[LEN] = { 0 };

	src = th_reg_mr(w, 0, 3, 1, MR0, LEN, ACC, 0);
	b1 = th_reg_mr(w, 1, 1, 1, MR1, LEN, ACC, 0);
	b2 = th_reg_mr(w, 1, 2, 2, MR2, LEN, ACC, 0);
	for (uint32_t k = 0; k < LEN; k++)
		src[k] = (uint8_t)(k * 7 + _i);
	sqp = th_qp(w, 0, IBV_QPT_XRC_SEND, 0x100, 16);
	rqp = th_qp(w, 1, IBV_QPT_XRC_RECV, 0x200, 16);
	ck_assert_int_eq(xport_qp_set_xrcd(rqp, 5), 0);
	ck_assert_int_eq(xport_qp_set_xrcd(sqp, 5), EINVAL);
	for (int i = 0; i < 3; i++) {
		struct xport_recv_wqe r = { .wr_id = 50u + (uint64_t)i, .wr_index = (uint32_t)i,
					    .num_sge = 1 };

		srq[i] = xport_srq_create(w->node[1].dev, 16, NULL);
		ck_assert_ptr_nonnull(srq[i]);
		ck_assert_int_eq(xport_srq_set_xrc(srq[i], srqn[i], xrcd[i], pd[i]), 0);
		r.sg_list[0].addr = pd[i] == 1 ? MR1 : MR2;
		r.sg_list[0].length = LEN;
		r.sg_list[0].lkey = pd[i];
		ck_assert_int_eq(xport_srq_post(srq[i], &r), 0);
	}
	ck_assert_int_eq(xport_srq_set_xrc(srq[0], 0x20, 5, 1), EINVAL);
	th_connect(w, sqp, rqp, IBV_MTU_1024, 0, 0, 14, 3, 3, 1);

	memset(&wqe, 0, sizeof(wqe));
	wqe.wr_id = 7;
	wqe.opcode = c->op;
	wqe.send_flags = IBV_SEND_SIGNALED;
	wqe.remote_srqn = c->srqn;
	wqe.remote_addr = c->rkey == 2 ? MR2 : MR1;
	wqe.rkey = c->rkey;
	wqe.num_sge = 1;
	wqe.sg_list[0].addr = MR0;
	wqe.sg_list[0].length = LEN;
	wqe.sg_list[0].lkey = 3;
	ck_assert_int_eq(xport_post_send(sqp, &wqe), 0);
	ck_assert_uint_eq(w->qlen, 4);
	if (c->forge_srqn)
		forge(w, 1, c->forge_srqn);
	th_run(w, 100000);

	ck_assert_uint_ge(w->node[0].cqes.n, 1);
	ck_assert_uint_eq(w->node[0].cqes.v[0].wr_id, 7);
	ck_assert_msg(w->node[0].cqes.v[0].status == c->want, "%s: status %d, want %d", c->name,
		      w->node[0].cqes.v[0].status, c->want);
	if (c->recv_srq != NONE) {
		const struct xport_cqe *r = &w->node[1].cqes.v[0];

		ck_assert_uint_eq(w->node[1].cqes.n, 1);
		ck_assert_int_eq(r->status, IBV_WC_SUCCESS);
		ck_assert(r->is_recv);
		ck_assert_ptr_eq(r->srq, srq[c->recv_srq]);
		ck_assert_uint_eq(r->wr_id, 50u + (uint64_t)c->recv_srq);
		ck_assert_uint_eq(r->qpn, 0x200);
		ck_assert_uint_eq(r->byte_len, LEN);
	} else {
		/* no receive WQE consumed; a forged message's WQE is flushed */
		for (unsigned k = 0; k < w->node[1].cqes.n; k++)
			ck_assert_int_ne(w->node[1].cqes.v[k].status, IBV_WC_SUCCESS);
	}
	if (c->forge_srqn) {
		/* the first packet was placed before the second was refused
		 * (IBTA leaves the buffer undefined then); nothing after it */
		ck_assert_int_eq(memcmp(b1, src, 1024), 0);
		ck_assert_int_eq(memcmp(b1 + 1024, zero, LEN - 1024), 0);
	} else {
		ck_assert_int_eq(memcmp(b1, c->landed == MR1 ? src : zero, LEN), 0);
	}
	ck_assert_int_eq(memcmp(b2, c->landed == MR2 ? src : zero, LEN), 0);
	for (int i = 0; i < 3; i++)
		xport_srq_destroy(srq[i]);
	th_world_free(w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transport_xrc");
	TCase *tc = tcase_create("xrc");

	tcase_add_loop_test(tc, xrc_cases, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
