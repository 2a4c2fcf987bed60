/*
 * transport_ops.c: every opcode of RC, UC and UD, message sizes 0, 1,
 * mtu-1, mtu, mtu+1, 3*mtu+5 at every path MTU 256..4096, through two
 * engines wired back to back with the real codec. Each case asserts the
 * exact packet sequence (opcodes, PSNs across the 2^24 wrap, pad counts,
 * AckReq, payload sizes, RETH length, ACK/READ-response PSNs and MSN),
 * the exact bytes placed (and that nothing around them changed), and the
 * exact completions on both sides. The expectations are computed here
 * from docs/wire-format.md §1.5-1.6, independently of the engine.
 */
#include "config.h"

#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

enum { T_RC, T_UC, T_UD };

struct op_case {
	int type;
	enum ibv_wr_opcode op;
	const char *name;
};

static const struct op_case ops[] = {
	{ T_RC, IBV_WR_SEND, "RC SEND" },
	{ T_RC, IBV_WR_SEND_WITH_IMM, "RC SEND_IMM" },
	{ T_RC, IBV_WR_RDMA_WRITE, "RC WRITE" },
	{ T_RC, IBV_WR_RDMA_WRITE_WITH_IMM, "RC WRITE_IMM" },
	{ T_RC, IBV_WR_RDMA_READ, "RC READ" },
	{ T_UC, IBV_WR_SEND, "UC SEND" },
	{ T_UC, IBV_WR_SEND_WITH_IMM, "UC SEND_IMM" },
	{ T_UC, IBV_WR_RDMA_WRITE, "UC WRITE" },
	{ T_UC, IBV_WR_RDMA_WRITE_WITH_IMM, "UC WRITE_IMM" },
	{ T_UD, IBV_WR_SEND, "UD SEND" },
	{ T_UD, IBV_WR_SEND_WITH_IMM, "UD SEND_IMM" },
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))
#define N_MTU 5
#define N_SIZE 6
#define N_CASES (N_OPS * N_MTU * N_SIZE)

static const enum ibv_mtu mtus[N_MTU] = { IBV_MTU_256, IBV_MTU_512,
	IBV_MTU_1024, IBV_MTU_2048, IBV_MTU_4096 };

static uint32_t size_of(int k, uint32_t mtu)
{
	const uint32_t s[N_SIZE] = { 0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu + 5 };

	return s[k];
}

#define PSN_A 0xFFFFFDu		/* requester PSNs wrap through 0 */
#define PSN_B 0x000100u
#define QPN_A 0x000011u
#define QPN_B 0x000022u
#define IMM 0x12345678u
#define SRC_ADDR 0x10000ull
#define DST_ADDR 0x20000ull
#define DST_OFF 8u		/* data lands 8 bytes into the region */
#define CANARY 0xEE

static uint8_t pattern(uint32_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/* Opcode of packet I of N for operation OP on transport T (IBA Table 38). */
static uint8_t expect_opcode(int t, enum ibv_wr_opcode op, uint32_t i, uint32_t n)
{
	bool first = i == 0, last = i == n - 1;
	bool imm = op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
	uint8_t base;

	if (t == T_UD)
		return imm ? 0x65 : 0x64;
	if (op == IBV_WR_RDMA_READ)
		return 0x0C;
	if (op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM)
		base = first && last ? (imm ? 0x05 : 0x04) :
		       first ? 0x00 : last ? (imm ? 0x03 : 0x02) : 0x01;
	else
		base = first && last ? (imm ? 0x0B : 0x0A) :
		       first ? 0x06 : last ? (imm ? 0x09 : 0x08) : 0x07;
	return base | (t == T_UC ? 0x20 : 0x00);
}

START_TEST(test_opcode_size_mtu)
{
	const struct op_case *oc = &ops[_i / (N_MTU * N_SIZE)];
	uint32_t mtu = 256u << ((_i / N_SIZE) % N_MTU);
	enum ibv_mtu emtu = mtus[(_i / N_SIZE) % N_MTU];
	uint32_t len = size_of(_i % N_SIZE, mtu);
	bool is_read = oc->op == IBV_WR_RDMA_READ;
	bool is_send = oc->op == IBV_WR_SEND || oc->op == IBV_WR_SEND_WITH_IMM;
	bool has_imm = oc->op == IBV_WR_SEND_WITH_IMM ||
		       oc->op == IBV_WR_RDMA_WRITE_WITH_IMM;
	bool recv_side = is_send || oc->op == IBV_WR_RDMA_WRITE_WITH_IMM;
	uint32_t grh = oc->type == T_UD ? 40 : 0;
	uint32_t npk = len ? (len + mtu - 1) / mtu : 1;
	uint32_t region = len + 64 + grh;
	enum ibv_qp_type qpt = oc->type == T_RC ? IBV_QPT_RC :
			       oc->type == T_UC ? IBV_QPT_UC : IBV_QPT_UD;
	struct th_world *w;
	struct xport_qp *a, *b;
	uint8_t *src, *dst, *data, *other;
	unsigned k;
	int rc;

	w = th_world_new(mtu);
	a = th_qp(w, 0, qpt, QPN_A, 16);
	b = th_qp(w, 1, qpt, QPN_B, 16);
	th_connect(w, a, b, emtu, PSN_A, PSN_B, 14, 7, 7, 1);
	/* Node 0 region: the source (or READ destination). */
	src = th_reg_mr(w, 0, 0x101, 1, SRC_ADDR, region,
			IBV_ACCESS_LOCAL_WRITE, CANARY);
	/* Node 1 region: the target (or READ source). */
	dst = th_reg_mr(w, 1, 0x201, 1, DST_ADDR, region,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ, CANARY);
	data = is_read ? dst + DST_OFF : src;
	for (uint32_t i = 0; i < len; i++)
		data[i] = pattern(i);

	if (recv_side) {
		rc = th_post_recv(b, 77, DST_ADDR, region, 0x201);
		ck_assert_int_eq(rc, 0);
	}
	if (oc->type == T_UD) {
		struct xport_send_wqe wqe;

		memset(&wqe, 0, sizeof(wqe));
		wqe.wr_id = 1;
		wqe.opcode = oc->op;
		wqe.send_flags = IBV_SEND_SIGNALED;
		wqe.imm_data = htobe32(IMM);
		wqe.dgid = w->node[1].gid;
		wqe.remote_qpn = QPN_B;
		wqe.remote_qkey = 0x11111111;
		wqe.num_sge = 1;
		wqe.sg_list[0] = (struct ibv_sge){ SRC_ADDR, len, 0x101 };
		rc = xport_post_send(a, &wqe);
	} else {
		rc = th_post_send(a, 1, oc->op, SRC_ADDR, len, 0x101,
				  DST_ADDR + DST_OFF, 0x201, htobe32(IMM), 0);
	}
	ck_assert_int_eq(rc, 0);
	th_run(w, 100000);

	if (oc->type == T_UD && len > mtu) {
		/* A UD message is one packet of at most the port MTU: the
		 * WQE fails locally, nothing is sent (C10-93.1.1; mlx5). */
		ck_assert_uint_eq(w->nlog, 0);
		ck_assert_uint_eq(w->node[0].cqes.n, 1);
		ck_assert_int_eq(w->node[0].cqes.v[0].status, IBV_WC_LOC_LEN_ERR);
		ck_assert_uint_eq(w->node[0].cqes.v[0].wr_id, 1);
		ck_assert_int_eq(xport_qp_state(a), IBV_QPS_SQE);	/* IBTA 10.3.1 */
		ck_assert_uint_eq(w->node[1].cqes.n, 0);
		th_world_free(w);
		return;
	}

	/* ---- packets from the requester ---- */
	k = 0;
	uint32_t req_pkts = is_read ? 1 : npk;

	for (uint32_t i = 0; i < req_pkts; i++, k++) {
		const struct th_pkt *p = &w->log[k];
		uint32_t pl = is_read ? 0 : (i == npk - 1 ? len - i * mtu : mtu);

		ck_assert_msg(k < w->nlog, "%s mtu %u len %u: only %u packets",
			      oc->name, mtu, len, w->nlog);
		ck_assert_int_eq(p->from, 0);
		ck_assert_msg(p->opcode == expect_opcode(oc->type, oc->op, i, req_pkts),
			      "%s mtu %u len %u pkt %u: opcode 0x%02x want 0x%02x",
			      oc->name, mtu, len, i, p->opcode,
			      expect_opcode(oc->type, oc->op, i, req_pkts));
		ck_assert_uint_eq(p->dqpn, QPN_B);
		if (oc->type != T_UD)
			ck_assert_uint_eq(p->psn, (PSN_A + i) & 0xFFFFFF);
		ck_assert_uint_eq(p->payload_len, pl);
		ck_assert_uint_eq(p->pad, (-pl) & 3);
		ck_assert_int_eq(p->ackreq, oc->type == T_RC && i == req_pkts - 1);
		ck_assert_int_eq(p->se, 0);
		if ((oc->op == IBV_WR_RDMA_WRITE ||
		     oc->op == IBV_WR_RDMA_WRITE_WITH_IMM || is_read) && i == 0)
			ck_assert_uint_eq(p->dma_len, len);
	}
	/* ---- answers from the responder ---- */
	if (oc->type == T_RC && !is_read) {
		const struct th_pkt *p = &w->log[k++];

		ck_assert_uint_eq(p->opcode, 0x11);
		ck_assert_uint_eq(p->psn, (PSN_A + npk - 1) & 0xFFFFFF);
		ck_assert_uint_eq(p->syndrome, 0x1F);
		ck_assert_uint_eq(p->msn, 1);
		ck_assert_uint_eq(p->dqpn, QPN_A);
	} else if (is_read) {
		for (uint32_t i = 0; i < npk; i++, k++) {
			const struct th_pkt *p = &w->log[k];
			uint32_t pl = i == npk - 1 ? len - i * mtu : mtu;
			uint8_t want = npk == 1 ? 0x10 : i == 0 ? 0x0D :
				       i == npk - 1 ? 0x0F : 0x0E;

			ck_assert_int_eq(p->from, 1);
			ck_assert_uint_eq(p->opcode, want);
			ck_assert_uint_eq(p->psn, (PSN_A + i) & 0xFFFFFF);
			ck_assert_uint_eq(p->payload_len, pl);
			ck_assert_uint_eq(p->pad, (-pl) & 3);
			ck_assert_int_eq(p->ackreq, 0);
			if (want != 0x0E)
				ck_assert_uint_eq(p->msn, 1);
		}
	}
	ck_assert_msg(k == w->nlog, "%s mtu %u len %u: %u packets, want %u",
		      oc->name, mtu, len, w->nlog, k);
	ck_assert_uint_eq(xport_qp_sq_psn(a), (PSN_A + npk) & 0xFFFFFF);

	/* ---- bytes placed ---- */
	if (is_read) {
		uint32_t i = 0;

		while (i < region && src[i] == (i < len ? pattern(i) : CANARY))
			i++;
		ck_assert_msg(i == region, "%s mtu %u len %u: byte %u wrong",
			      oc->name, mtu, len, i);
	} else {
		uint32_t at = is_send ? grh : DST_OFF, i = grh;

		other = dst;
		while (i < region && other[i] == ((i >= at && i < at + len) ?
						  pattern(i - at) : CANARY))
			i++;
		ck_assert_msg(i == region, "%s mtu %u len %u: byte %u = 0x%02x wrong",
			      oc->name, mtu, len, i, i < region ? other[i] : 0);
		if (grh) {
			/* GRH area: 20 zero bytes, then the IPv4 header of
			 * 10.0.0.1 -> 10.0.0.2 (docs/wire-format.md §1.6). */
			for (int g = 0; g < 20; g++)
				ck_assert_uint_eq(dst[g], 0);
			ck_assert_uint_eq(dst[20], 0x45);
			ck_assert_uint_eq(dst[29], 17);
			ck_assert_uint_eq(dst[32], 10);
			ck_assert_uint_eq(dst[35], 1);
			ck_assert_uint_eq(dst[36], 10);
			ck_assert_uint_eq(dst[39], 2);
		}
	}

	/* ---- completions ---- */
	ck_assert_uint_eq(w->node[0].cqes.n, 1);
	{
		const struct xport_cqe *c = &w->node[0].cqes.v[0];

		ck_assert_int_eq(c->status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(c->wr_id, 1);
		ck_assert_int_eq(c->is_recv, 0);
		ck_assert_int_eq(c->opcode, is_read ? IBV_WC_RDMA_READ :
				 is_send ? IBV_WC_SEND : IBV_WC_RDMA_WRITE);
		ck_assert_int_eq(c->wr_opcode, oc->op);
		ck_assert_uint_eq(c->byte_len, len);
		ck_assert_uint_eq(c->qpn, QPN_A);
		ck_assert_uint_eq(c->wc_flags, has_imm ? IBV_WC_WITH_IMM : 0);
	}
	ck_assert_uint_eq(w->node[1].cqes.n, recv_side ? 1 : 0);
	if (recv_side) {
		const struct xport_cqe *c = &w->node[1].cqes.v[0];
		unsigned flags = (has_imm ? IBV_WC_WITH_IMM : 0) |
				 (grh ? IBV_WC_GRH : 0);

		ck_assert_int_eq(c->status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(c->wr_id, 77);
		ck_assert_int_eq(c->is_recv, 1);
		ck_assert_int_eq(c->opcode, is_send ? IBV_WC_RECV :
				 IBV_WC_RECV_RDMA_WITH_IMM);
		ck_assert_uint_eq(c->byte_len, len + grh);
		ck_assert_uint_eq(c->qpn, QPN_B);
		ck_assert_uint_eq(c->src_qp, QPN_A);
		ck_assert_uint_eq(c->wc_flags, flags);
		if (has_imm)
			ck_assert_uint_eq(c->imm_data, htobe32(IMM));
	}
	ck_assert_uint_eq(w->dropped, 0);
	ck_assert_int_eq(xport_qp_state(a), IBV_QPS_RTS);
	ck_assert_int_eq(xport_qp_state(b), IBV_QPS_RTS);
	th_world_free(w);
}
END_TEST

/* Several SGEs on both sides and inline data: the message is the
 * concatenation of the list, scattered across the receive list. */
START_TEST(test_sge_lists_and_inline)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, QPN_A, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, QPN_B, 16);
	uint8_t *src = th_reg_mr(w, 0, 0x101, 1, SRC_ADDR, 4096, 0, 0);
	uint8_t *dst = th_reg_mr(w, 1, 0x201, 1, DST_ADDR, 4096,
				 IBV_ACCESS_LOCAL_WRITE, CANARY);
	struct xport_send_wqe s;
	struct xport_recv_wqe r;

	th_connect(w, a, b, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	for (int i = 0; i < 4096; i++)
		src[i] = pattern(i);
	memset(&r, 0, sizeof(r));
	r.wr_id = 5;
	r.num_sge = 3;
	r.sg_list[0] = (struct ibv_sge){ DST_ADDR, 100, 0x201 };
	r.sg_list[1] = (struct ibv_sge){ DST_ADDR + 1000, 1500, 0x201 };
	r.sg_list[2] = (struct ibv_sge){ DST_ADDR + 3000, 1000, 0x201 };
	ck_assert_int_eq(xport_post_recv(b, &r), 0);
	memset(&s, 0, sizeof(s));
	s.wr_id = 9;
	s.opcode = IBV_WR_SEND;
	s.send_flags = IBV_SEND_SIGNALED;
	s.num_sge = 2;
	s.sg_list[0] = (struct ibv_sge){ SRC_ADDR + 10, 1200, 0x101 };
	s.sg_list[1] = (struct ibv_sge){ SRC_ADDR + 2000, 800, 0x101 };
	ck_assert_int_eq(xport_post_send(a, &s), 0);
	/* Inline: the payload travels in the WQE itself. */
	ck_assert_int_eq(th_post_recv(b, 6, DST_ADDR + 3500, 200, 0x201), 0);
	memset(&s, 0, sizeof(s));
	s.wr_id = 10;
	s.opcode = IBV_WR_SEND;
	s.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	s.inline_len = 37;
	for (int i = 0; i < 37; i++)
		s.inline_data[i] = (uint8_t)(0xA0 + i);
	ck_assert_int_eq(xport_post_send(a, &s), 0);
	th_run(w, 100000);

	ck_assert_uint_eq(w->node[1].cqes.n, 2);
	ck_assert_uint_eq(w->node[1].cqes.v[0].byte_len, 2000);
	ck_assert_uint_eq(w->node[1].cqes.v[1].byte_len, 37);
	/* message byte m: m < 1200 from src[10+m], else src[2000+m-1200] */
	for (uint32_t m = 0; m < 2000; m++) {
		uint8_t want = m < 1200 ? pattern(10 + m) : pattern(2000 + m - 1200);
		uint32_t at = m < 100 ? m : m < 1600 ? 1000 + (m - 100) :
			      3000 + (m - 1600);

		ck_assert_uint_eq(dst[at], want);
	}
	ck_assert_uint_eq(dst[100], CANARY);
	ck_assert_uint_eq(dst[2500], CANARY);
	ck_assert_uint_eq(dst[3400], CANARY);
	for (int i = 0; i < 37; i++)
		ck_assert_uint_eq(dst[3500 + i], 0xA0 + i);
	ck_assert_uint_eq(w->node[0].cqes.n, 2);
	ck_assert_uint_eq(w->node[0].cqes.v[1].byte_len, 37);
	th_world_free(w);
}
END_TEST

/* A message of more than 64 packets carries AckReq on every 64th packet
 * too, and the responder ACKs each of them (rxe RXE_MAX_PKT_PER_ACK). */
START_TEST(test_ackreq_every_64)
{
	struct th_world *w = th_world_new(256);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, QPN_A, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, QPN_B, 16);
	uint32_t len = 100 * 256;
	unsigned acks = 0, areq = 0;

	th_connect(w, a, b, IBV_MTU_256, 0, 0, 14, 7, 7, 1);
	th_reg_mr(w, 0, 0x101, 1, SRC_ADDR, len, 0, 1);
	th_reg_mr(w, 1, 0x201, 1, DST_ADDR, len, IBV_ACCESS_REMOTE_WRITE, 0);
	ck_assert_int_eq(th_post_send(a, 1, IBV_WR_RDMA_WRITE, SRC_ADDR, len,
				      0x101, DST_ADDR, 0x201, 0, 0), 0);
	th_run(w, 100000);
	for (unsigned i = 0; i < w->nlog; i++) {
		if (w->log[i].from == 0 && w->log[i].ackreq) {
			areq++;
			ck_assert(w->log[i].psn == 63 || w->log[i].psn == 99);
		}
		if (w->log[i].from == 1)
			acks++;
	}
	ck_assert_uint_eq(areq, 2);
	ck_assert_uint_eq(acks, 2);
	ck_assert_uint_eq(w->node[0].cqes.n, 1);
	ck_assert_int_eq(w->node[0].cqes.v[0].status, IBV_WC_SUCCESS);
	th_world_free(w);
}
END_TEST

/* More than 128 outstanding PSNs: the requester waits for ACKs (window)
 * and still delivers every message. */
START_TEST(test_window)
{
	struct th_world *w = th_world_new(256);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, QPN_A, 64);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, QPN_B, 64);
	unsigned max_out = 0, sent = 0;

	th_connect(w, a, b, IBV_MTU_256, 0, 0, 14, 7, 7, 1);
	th_reg_mr(w, 0, 0x101, 1, SRC_ADDR, 64 * 1024, 0, 1);
	th_reg_mr(w, 1, 0x201, 1, DST_ADDR, 64 * 1024, IBV_ACCESS_REMOTE_WRITE, 0);
	for (int i = 0; i < 40; i++)
		ck_assert_int_eq(th_post_send(a, i, IBV_WR_RDMA_WRITE,
					      SRC_ADDR + i * 1024, 1024, 0x101,
					      DST_ADDR + i * 1024, 0x201, 0, 0), 0);
	/* 40 x 4 = 160 PSNs posted; at most 128 may be sent before an ACK. */
	for (unsigned i = 0; i < w->nlog; i++)
		if (w->log[i].from == 0)
			sent++;
	max_out = sent;
	ck_assert_uint_eq(max_out, 128);
	th_run(w, 100000);
	ck_assert_uint_eq(w->node[0].cqes.n, 40);
	for (unsigned i = 0; i < 40; i++)
		ck_assert_uint_eq(w->node[0].cqes.v[i].wr_id, i);
	th_world_free(w);
}
END_TEST

/* IBV_SEND_SOLICITED: SE only on the last packet of the SEND (docs/wire-format.md
 * §1.5), and the receive completion says so. */
START_TEST(test_solicited)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, QPN_A, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, QPN_B, 16);

	th_connect(w, a, b, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	th_reg_mr(w, 0, 0x101, 1, SRC_ADDR, 4096, 0, 1);
	th_reg_mr(w, 1, 0x201, 1, DST_ADDR, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	ck_assert_int_eq(th_post_recv(b, 1, DST_ADDR, 4096, 0x201), 0);
	ck_assert_int_eq(th_post_recv(b, 2, DST_ADDR, 4096, 0x201), 0);
	ck_assert_int_eq(th_post_send(a, 1, IBV_WR_SEND, SRC_ADDR, 2100, 0x101,
				      0, 0, 0, IBV_SEND_SOLICITED), 0);
	ck_assert_int_eq(th_post_send(a, 2, IBV_WR_SEND, SRC_ADDR, 10, 0x101,
				      0, 0, 0, 0), 0);
	th_run(w, 1000);
	ck_assert_uint_eq(w->nlog, 6);	/* 3 + 1 request packets, 2 ACKs */
	ck_assert_int_eq(w->log[0].se, 0);
	ck_assert_int_eq(w->log[1].se, 0);
	ck_assert_int_eq(w->log[2].se, 1);
	ck_assert_int_eq(w->log[3].se, 0);
	ck_assert_uint_eq(w->node[1].cqes.n, 2);
	ck_assert_int_eq(w->node[1].cqes.v[0].solicited, 1);
	ck_assert_int_eq(w->node[1].cqes.v[1].solicited, 0);
	th_world_free(w);
}
END_TEST

/* UD over IPv6: the GRH area holds the 40-byte IPv6 header. */
START_TEST(test_ud_ipv6_grh)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a, *b;
	struct xport_send_wqe s;
	uint8_t *dst;

	/* Re-address both nodes as fd00::1 and fd00::2. */
	for (int i = 0; i < 2; i++) {
		xport_dev_free(w->node[i].dev);
		memset(&w->node[i].gid, 0, sizeof(w->node[i].gid));
		w->node[i].gid.raw[0] = 0xfd;
		w->node[i].gid.raw[15] = (uint8_t)(i + 1);
		w->node[i].dev = xport_dev_new(&th_ops_for_tests, &w->node[i],
					       &w->node[i].gid, ROCE_UDP_PORT, 1024);
	}
	a = th_qp(w, 0, IBV_QPT_UD, QPN_A, 4);
	b = th_qp(w, 1, IBV_QPT_UD, QPN_B, 4);
	th_connect(w, a, b, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	th_reg_mr(w, 0, 0x101, 1, SRC_ADDR, 4096, 0, 0x5A);
	dst = th_reg_mr(w, 1, 0x201, 1, DST_ADDR, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	ck_assert_int_eq(th_post_recv(b, 1, DST_ADDR, 4096, 0x201), 0);
	memset(&s, 0, sizeof(s));
	s.wr_id = 1;
	s.opcode = IBV_WR_SEND;
	s.send_flags = IBV_SEND_SIGNALED;
	s.dgid = w->node[1].gid;
	s.remote_qpn = QPN_B;
	s.remote_qkey = 0x11111111;
	s.num_sge = 1;
	s.sg_list[0] = (struct ibv_sge){ SRC_ADDR, 100, 0x101 };
	ck_assert_int_eq(xport_post_send(a, &s), 0);
	th_run(w, 100);
	ck_assert_uint_eq(w->node[1].cqes.n, 1);
	ck_assert_int_eq(w->node[1].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(w->node[1].cqes.v[0].byte_len, 140);
	ck_assert_uint_eq(dst[0] >> 4, 6);		/* IPv6 version */
	ck_assert_uint_eq(dst[6], 17);			/* next header UDP */
	ck_assert_int_eq(memcmp(dst + 8, w->node[0].gid.raw, 16), 0);
	ck_assert_int_eq(memcmp(dst + 24, w->node[1].gid.raw, 16), 0);
	ck_assert_uint_eq(dst[40], 0x5A);
	ck_assert_uint_eq(dst[139], 0x5A);
	ck_assert_uint_eq(dst[140], 0);
	th_world_free(w);
}
END_TEST

/* SEND with Invalidate: SEND FIRST/MIDDLE then SEND_LAST_WITH_INVALIDATE
 * (0x16) carrying the IETH, or SEND_ONLY_WITH_INVALIDATE (0x17); the
 * receiver's CQE has IBV_WC_WITH_INV and the R_Key (host order) after the
 * responder invalidated it; an R_Key it cannot invalidate fails both ends
 * with REM_INV_REQ_ERR (NAK Invalid Request). */
START_TEST(test_send_inv)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, QPN_A, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, QPN_B, 16);

	w->log_on = true;
	w->node[1].inv_rkey = 0x00abcd17;
	th_connect(w, a, b, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	th_reg_mr(w, 0, 0x101, 1, SRC_ADDR, 4096, 0, 1);
	th_reg_mr(w, 1, 0x201, 1, DST_ADDR, 4096, IBV_ACCESS_LOCAL_WRITE, 0);
	ck_assert_int_eq(th_post_recv(b, 1, DST_ADDR, 4096, 0x201), 0);
	ck_assert_int_eq(th_post_recv(b, 2, DST_ADDR, 4096, 0x201), 0);
	ck_assert_int_eq(th_post_recv(b, 3, DST_ADDR, 4096, 0x201), 0);
	{
		struct xport_send_wqe q = { .wr_id = 1, .wr_index = 1, .opcode = IBV_WR_SEND_WITH_INV,
					    .send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED,
					    .invalidate_rkey = 0x00abcd17, .num_sge = 1,
					    .sg_list = { { SRC_ADDR, 2100, 0x101 } } };

		ck_assert_int_eq(xport_post_send(a, &q), 0);
		q.wr_id = q.wr_index = 2;
		q.send_flags = IBV_SEND_SIGNALED;
		q.sg_list[0].length = 10;
		ck_assert_int_eq(xport_post_send(a, &q), 0);
	}
	th_run(w, 1000);
	ck_assert_uint_eq(w->nlog, 6);	/* 3 + 1 request packets, 2 ACKs */
	ck_assert_uint_eq(w->log[0].opcode, ROCE_OP_RC_SEND_FIRST);
	ck_assert_uint_eq(w->log[1].opcode, ROCE_OP_RC_SEND_MIDDLE);
	ck_assert_uint_eq(w->log[2].opcode, ROCE_OP_RC_SEND_LAST_INV);
	ck_assert_uint_eq(w->log[2].ieth, 0x00abcd17);
	ck_assert_uint_eq(w->log[2].payload_len, 52);
	ck_assert_int_eq(w->log[2].se, 1);
	ck_assert_uint_eq(w->log[0].ieth, 0);
	ck_assert_uint_eq(w->log[3].opcode, ROCE_OP_RC_SEND_ONLY_INV);
	ck_assert_uint_eq(w->log[3].ieth, 0x00abcd17);
	ck_assert_uint_eq(w->log[3].payload_len, 10);
	ck_assert_uint_eq(w->log[4].opcode, ROCE_OP_RC_ACK);
	ck_assert_uint_eq(w->node[1].invalidations, 2);
	ck_assert_uint_eq(w->node[1].cqes.n, 2);
	for (unsigned i = 0; i < 2; i++) {
		const struct xport_cqe *c = &w->node[1].cqes.v[i];

		ck_assert_int_eq(c->status, IBV_WC_SUCCESS);
		ck_assert_int_eq(c->opcode, IBV_WC_RECV);
		ck_assert_uint_eq(c->wc_flags, IBV_WC_WITH_INV);
		ck_assert_uint_eq(c->imm_data, 0x00abcd17);
		ck_assert_uint_eq(c->byte_len, i ? 10 : 2100);
	}
	ck_assert_uint_eq(w->node[0].cqes.n, 2);
	ck_assert_int_eq(w->node[0].cqes.v[1].status, IBV_WC_SUCCESS);
	/* an R_Key the responder cannot invalidate */
	{
		struct xport_send_wqe q = { .wr_id = 3, .wr_index = 3, .opcode = IBV_WR_SEND_WITH_INV,
					    .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = 0x1234,
					    .num_sge = 1, .sg_list = { { SRC_ADDR, 8, 0x101 } } };

		ck_assert_int_eq(xport_post_send(a, &q), 0);
	}
	th_run(w, 1000);
	ck_assert_uint_eq(w->node[1].cqes.n, 3);
	ck_assert_int_eq(w->node[1].cqes.v[2].status, IBV_WC_REM_INV_REQ_ERR);
	ck_assert_uint_eq(w->node[1].cqes.v[2].wr_id, 3);
	ck_assert_uint_eq(w->node[0].cqes.n, 3);
	ck_assert_int_eq(w->node[0].cqes.v[2].status, IBV_WC_REM_INV_REQ_ERR);
	ck_assert_int_eq(xport_qp_state(a), IBV_QPS_ERR);
	ck_assert_int_eq(xport_qp_state(b), IBV_QPS_ERR);
	/* not on UC: IBTA has no UC SEND with Invalidate */
	ck_assert_int_eq(th_post_send(th_qp(w, 0, IBV_QPT_UC, QPN_A + 1, 4), 9,
				      IBV_WR_SEND_WITH_INV, SRC_ADDR, 8, 0x101, 0, 0, 0, 0), EINVAL);
	th_world_free(w);
}
END_TEST

/* BIND_MW and LOCAL_INV run once each, in SQ order, behind a WRITE whose
 * first packet is lost (the go-back-N resend passes them without running
 * them again), and complete after it; a failing one completes with its
 * status and the QP enters ERR. */
START_TEST(test_local_ops_order)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, QPN_A, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, QPN_B, 16);
	struct xport_send_wqe bind = { .wr_id = 2, .wr_index = 2, .opcode = IBV_WR_BIND_MW,
				       .send_flags = IBV_SEND_SIGNALED,
				       .bind = { .mw_handle = 1, .length = 64 } };
	struct xport_send_wqe inv = { .wr_id = 3, .wr_index = 3, .opcode = IBV_WR_LOCAL_INV,
				      .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = 0x111 };
	static const enum ibv_wc_opcode want[3] = { IBV_WC_RDMA_WRITE, IBV_WC_BIND_MW,
						    IBV_WC_LOCAL_INV };

	w->log_on = true;
	w->drop_from = 0;
	w->drop_rule[0].psn = 0;
	w->drop_rule[0].nth = 1;
	w->ndrop_rule = 1;
	th_connect(w, a, b, IBV_MTU_1024, 0, 0, 10, 7, 7, 1);
	th_reg_mr(w, 0, 0x101, 1, SRC_ADDR, 4096, 0, 1);
	th_reg_mr(w, 1, 0x201, 1, DST_ADDR, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0);
	ck_assert_int_eq(th_post_send(a, 1, IBV_WR_RDMA_WRITE, SRC_ADDR, 4096, 0x101, DST_ADDR,
				      0x201, 0, 0), 0);
	ck_assert_int_eq(xport_post_send(a, &bind), 0);
	ck_assert_int_eq(xport_post_send(a, &inv), 0);
	ck_assert_uint_eq(w->node[0].local_ops, 2);	/* run as the requester passed them */
	ck_assert_uint_eq(w->node[0].cqes.n, 0);	/* but not complete before the WRITE */
	th_run(w, 1000);
	ck_assert_uint_eq(xport_qp_stats(a)->retransmits, 1);
	ck_assert_uint_eq(w->node[0].local_ops, 2);
	ck_assert_uint_eq(w->node[0].cqes.n, 3);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_int_eq(w->node[0].cqes.v[i].status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(w->node[0].cqes.v[i].wr_id, i + 1);
		ck_assert_int_eq(w->node[0].cqes.v[i].opcode, want[i]);
	}
	/* with SGEs: malformed; then a failing bind */
	bind.num_sge = 1;
	ck_assert_int_eq(xport_post_send(a, &bind), EINVAL);
	bind.num_sge = 0;
	w->node[0].local_status = IBV_WC_MW_BIND_ERR;
	bind.wr_id = 4;
	ck_assert_int_eq(xport_post_send(a, &bind), 0);
	ck_assert_uint_eq(w->node[0].cqes.n, 4);
	ck_assert_int_eq(w->node[0].cqes.v[3].status, IBV_WC_MW_BIND_ERR);
	ck_assert_uint_eq(w->node[0].cqes.v[3].wr_id, 4);
	ck_assert_int_eq(xport_qp_state(a), IBV_QPS_ERR);
	th_world_free(w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_ops");
	TCase *tc = tcase_create("ops");

	tcase_add_loop_test(tc, test_opcode_size_mtu, 0, N_CASES);
	tcase_add_test(tc, test_sge_lists_and_inline);
	tcase_add_test(tc, test_ackreq_every_64);
	tcase_add_test(tc, test_window);
	tcase_add_test(tc, test_solicited);
	tcase_add_test(tc, test_ud_ipv6_grh);
	tcase_add_test(tc, test_send_inv);
	tcase_add_test(tc, test_local_ops_order);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
