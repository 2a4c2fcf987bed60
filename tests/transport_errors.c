/*
 * transport_errors.c: the engine's error paths, each with exact statuses,
 * NAK syndromes, packet sequences and QP states: remote access and invalid
 * request NAKs (table-driven), receive buffer too small, RNR with
 * rnr_retry 0 / 3 / 7, lost packets until retry_cnt is exhausted,
 * duplicate requests (re-ACK, READ replay from the start and from the
 * middle), PSN-sequence NAK recovery, UC loss, UD Q_Key, local errors,
 * post-time validation, flushing, and malformed input.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

#define QPN_A 0x11u
#define QPN_B 0x22u
#define PSN_A 0x000500u
#define PSN_B 0x000900u
#define A_ADDR 0x10000ull
#define B_ADDR 0x20000ull
#define REGION 8192u
#define TIMEOUT 10		/* 4.096 us << 10 = 4194304 ns */
#define TIMEOUT_NS (4096ull << TIMEOUT)

struct pair {
	struct th_world *w;
	struct xport_qp *a, *b;
	uint8_t *amem, *bmem;
};

/* RC (or TYPE) pair at MTU 1024 with A's region (key 0x101) and B's
 * region (key 0x201, access B_ACCESS); B's QP allows QP_ACCESS. */
static void pair_new(struct pair *p, enum ibv_qp_type type,
		     unsigned int b_access, unsigned int qp_access,
		     uint8_t retry_cnt, uint8_t rnr_retry)
{
	struct xport_qp_attr at;

	p->w = th_world_new(1024);
	p->a = th_qp(p->w, 0, type, QPN_A, 16);
	p->b = th_qp(p->w, 1, type, QPN_B, 16);
	th_connect(p->w, p->a, p->b, IBV_MTU_1024, PSN_A, PSN_B, TIMEOUT,
		   retry_cnt, rnr_retry, 1);
	memset(&at, 0, sizeof(at));
	at.qp_access_flags = qp_access;
	ck_assert_int_eq(xport_qp_modify(p->b, &at, IBV_QP_ACCESS_FLAGS), 0);
	p->amem = th_reg_mr(p->w, 0, 0x101, 1, A_ADDR, REGION,
			    IBV_ACCESS_LOCAL_WRITE, 0);
	p->bmem = th_reg_mr(p->w, 1, 0x201, 1, B_ADDR, REGION, b_access, 0);
	for (unsigned i = 0; i < REGION; i++) {
		p->amem[i] = (uint8_t)(i * 13 + 1);
		p->bmem[i] = (uint8_t)(i * 5 + 2);
	}
	/* a region of another PD on B */
	th_reg_mr(p->w, 1, 0x301, 2, 0x40000, REGION,
		  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ, 0);
}

#define ALL_B (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define ALL_QP (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static const struct th_pkt *find_from(struct th_world *w, int from, uint8_t opcode,
				      unsigned nth)
{
	for (unsigned i = 0; i < w->nlog; i++)
		if (w->log[i].from == from && w->log[i].opcode == opcode && nth-- == 0)
			return &w->log[i];
	return NULL;
}

static unsigned count_from(struct th_world *w, int from, uint8_t opcode)
{
	unsigned n = 0;

	for (unsigned i = 0; i < w->nlog; i++)
		n += w->log[i].from == from && w->log[i].opcode == opcode;
	return n;
}

/* ---- fatal NAKs: table ---- */

struct nak_case {
	const char *name;
	enum ibv_wr_opcode op;
	uint64_t raddr;
	uint32_t len, rkey;
	unsigned int b_access, qp_access;
	uint32_t recv_len;		/* first receive buffer on B */
	uint8_t syndrome;		/* NAK sent by B */
	enum ibv_wc_status a_status;	/* requester's first completion */
	enum ibv_wc_status b_status;	/* B's first receive completion */
	int b_event;
	uint32_t nak_psn_off;		/* NAK PSN - PSN_A */
};

static const struct nak_case nak_cases[] = {
	{ "WRITE bad rkey", IBV_WR_RDMA_WRITE, B_ADDR, 100, 0x999, ALL_B, ALL_QP, 4096,
	  0x62, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, IBV_EVENT_QP_ACCESS_ERR, 0 },
	{ "WRITE rkey+1", IBV_WR_RDMA_WRITE, B_ADDR, 100, 0x202, ALL_B, ALL_QP, 4096,
	  0x62, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, IBV_EVENT_QP_ACCESS_ERR, 0 },
	{ "WRITE out of bounds", IBV_WR_RDMA_WRITE, B_ADDR + REGION - 10, 100, 0x201,
	  ALL_B, ALL_QP, 4096, 0x62, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR,
	  IBV_EVENT_QP_ACCESS_ERR, 0 },
	{ "WRITE below region", IBV_WR_RDMA_WRITE, B_ADDR - 1, 100, 0x201,
	  ALL_B, ALL_QP, 4096, 0x62, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR,
	  IBV_EVENT_QP_ACCESS_ERR, 0 },
	{ "WRITE no REMOTE_WRITE on MR", IBV_WR_RDMA_WRITE, B_ADDR, 100, 0x201,
	  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, ALL_QP, 4096, 0x62,
	  IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, IBV_EVENT_QP_ACCESS_ERR, 0 },
	{ "WRITE other PD", IBV_WR_RDMA_WRITE, 0x40000, 100, 0x301, ALL_B, ALL_QP, 4096,
	  0x62, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, IBV_EVENT_QP_ACCESS_ERR, 0 },
	{ "READ no REMOTE_READ on MR", IBV_WR_RDMA_READ, B_ADDR, 3000, 0x201,
	  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, ALL_QP, 4096, 0x62,
	  IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, IBV_EVENT_QP_ACCESS_ERR, 0 },
	{ "READ out of bounds", IBV_WR_RDMA_READ, B_ADDR + 100, REGION, 0x201, ALL_B,
	  ALL_QP, 4096, 0x62, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR,
	  IBV_EVENT_QP_ACCESS_ERR, 0 },
	{ "READ on QP without REMOTE_READ", IBV_WR_RDMA_READ, B_ADDR, 100, 0x201, ALL_B,
	  IBV_ACCESS_REMOTE_WRITE, 4096, 0x61, IBV_WC_REM_INV_REQ_ERR,
	  IBV_WC_WR_FLUSH_ERR, IBV_EVENT_QP_REQ_ERR, 0 },
	{ "WRITE on QP without REMOTE_WRITE", IBV_WR_RDMA_WRITE, B_ADDR, 100, 0x201,
	  ALL_B, IBV_ACCESS_REMOTE_READ, 4096, 0x61, IBV_WC_REM_INV_REQ_ERR,
	  IBV_WC_WR_FLUSH_ERR, IBV_EVENT_QP_REQ_ERR, 0 },
	{ "SEND larger than receive buffer", IBV_WR_SEND, 0, 2500, 0, ALL_B, ALL_QP, 2000,
	  0x61, IBV_WC_REM_INV_REQ_ERR, IBV_WC_LOC_LEN_ERR, IBV_EVENT_QP_REQ_ERR,
	  1 /* the second packet no longer fits */ },
};

START_TEST(test_fatal_nak)
{
	const struct nak_case *c = &nak_cases[_i];
	struct pair p;
	const struct th_pkt *nak;
	struct th_cqe_log *la, *lb;

	pair_new(&p, IBV_QPT_RC, c->b_access, c->qp_access, 7, 7);
	ck_assert_int_eq(th_post_recv(p.b, 50, B_ADDR, c->recv_len, 0x201), 0);
	ck_assert_int_eq(th_post_recv(p.b, 51, B_ADDR + 4096, 4096, 0x201), 0);
	ck_assert_int_eq(th_post_send(p.a, 1, c->op, A_ADDR, c->len, 0x101,
				      c->raddr, c->rkey, 0, 0), 0);
	ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_SEND, A_ADDR, 10, 0x101,
				      0, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_send(p.a, 3, IBV_WR_SEND, A_ADDR, 10, 0x101,
				      0, 0, 0, 0), 0);
	th_run(p.w, 10000);

	nak = find_from(p.w, 1, 0x11, 0);
	ck_assert_msg(nak != NULL, "%s: no NAK", c->name);
	ck_assert_msg(nak->syndrome == c->syndrome, "%s: syndrome 0x%02x want 0x%02x",
		      c->name, nak->syndrome, c->syndrome);
	ck_assert_uint_eq(nak->psn, PSN_A + c->nak_psn_off);
	ck_assert_uint_eq(count_from(p.w, 1, 0x11), 1);

	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 3);
	ck_assert_msg(la->v[0].status == c->a_status, "%s: status %d want %d",
		      c->name, la->v[0].status, c->a_status);
	ck_assert_uint_eq(la->v[0].wr_id, 1);
	ck_assert_int_eq(la->v[1].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(la->v[1].wr_id, 2);
	ck_assert_int_eq(la->v[2].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(la->v[2].wr_id, 3);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_ERR);

	lb = &p.w->node[1].cqes;
	ck_assert_uint_eq(lb->n, 2);
	ck_assert_int_eq(lb->v[0].status, c->b_status);
	ck_assert_uint_eq(lb->v[0].wr_id, 50);
	ck_assert_int_eq(lb->v[1].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(lb->v[1].wr_id, 51);
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_ERR);
	ck_assert_uint_eq(p.w->node[1].events, 1);
	ck_assert_int_eq(p.w->node[1].last_event, c->b_event);
	/* The requester reports through its completion only. */
	ck_assert_uint_eq(p.w->node[0].events, 0);
	/* Both sides log the error with QPN and PSN. */
	{
		char want[128];

		snprintf(want, sizeof(want), "qpn 0x22: PSN 0x%06x ", PSN_A + c->nak_psn_off);
		ck_assert_msg(strstr(p.w->node[1].logtext, want), "%s: log: %s", c->name,
			      p.w->node[1].logtext);
		snprintf(want, sizeof(want), "qpn 0x11: send WQE 1 (%s, PSN 0x%06x) failed: ",
			 c->op == IBV_WR_RDMA_READ ? "RDMA_READ" :
			 c->op == IBV_WR_SEND ? "SEND" : "RDMA_WRITE", PSN_A);
		ck_assert_msg(strstr(p.w->node[0].logtext, want), "%s: log: %s", c->name,
			      p.w->node[0].logtext);
		ck_assert_ptr_nonnull(strstr(p.w->node[0].logtext, "qpn 0x11: QP to ERR"));
	}
	/* Nothing was written by a refused WRITE. */
	if (c->op == IBV_WR_RDMA_WRITE && c->rkey == 0x201 && c->raddr >= B_ADDR)
		for (unsigned i = 0; i < 100 && c->raddr - B_ADDR + i < REGION; i++)
			ck_assert_uint_eq(p.bmem[c->raddr - B_ADDR + i],
					  (uint8_t)((c->raddr - B_ADDR + i) * 5 + 2));
	th_world_free(p.w);
}
END_TEST

/* ---- RNR ---- */

START_TEST(test_rnr_retry_0)
{
	struct pair p;
	const struct th_pkt *nak;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 0);
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 10, 0x101, 0, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_SEND, A_ADDR, 10, 0x101, 0, 0, 0, 0), 0);
	th_run(p.w, 10000);
	nak = find_from(p.w, 1, 0x11, 0);
	ck_assert_ptr_nonnull(nak);
	ck_assert_uint_eq(nak->syndrome, 0x21);	/* RNR NAK, timer code 1 */
	ck_assert_uint_eq(nak->psn, PSN_A);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 2);
	ck_assert_int_eq(p.w->node[0].cqes.v[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
	ck_assert_int_eq(p.w->node[0].cqes.v[1].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_ERR);
	/* RNR is not an error for the responder. */
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 0);
	th_world_free(p.w);
}
END_TEST

START_TEST(test_rnr_retry_3)
{
	struct pair p;
	uint64_t t0;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 3);
	t0 = p.w->now;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 10, 0x101, 0, 0, 0, 0), 0);
	th_run(p.w, 10000);
	/* 1 try + 3 retries, each answered by an RNR NAK. */
	ck_assert_uint_eq(count_from(p.w, 0, 0x04), 4);
	ck_assert_uint_eq(count_from(p.w, 1, 0x11), 4);
	ck_assert_uint_eq(xport_qp_stats(p.a)->rnr_naks_rx, 4);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 1);
	ck_assert_int_eq(p.w->node[0].cqes.v[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
	/* Three waits of the RNR timer (code 1 = 10 us) in simulated time. */
	ck_assert_uint_eq(p.w->now - t0, 3 * 10000ull);
	th_world_free(p.w);
}
END_TEST

START_TEST(test_rnr_retry_infinite)
{
	struct pair p;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 7);
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 3000, 0x101, 0, 0, 0, 0), 0);
	/* No receive posted: it keeps trying (bounded run). */
	th_run(p.w, 400);
	ck_assert_uint_ge(xport_qp_stats(p.a)->rnr_naks_rx, 50);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 0);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_RTS);
	/* A receive arrives: the next retry succeeds. */
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 4096, 0x201), 0);
	th_run(p.w, 10000);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 1);
	ck_assert_int_eq(p.w->node[0].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 1);
	ck_assert_int_eq(p.w->node[1].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(p.w->node[1].cqes.v[0].byte_len, 3000);
	ck_assert_int_eq(memcmp(p.bmem, p.amem, 3000), 0);
	th_world_free(p.w);
}
END_TEST

/* ---- lost packets ---- */

START_TEST(test_retry_exhausted)
{
	struct pair p;
	uint64_t t0;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 3, 7);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 4096, 0x201), 0);
	p.w->drop_ppm = 10000;		/* the link is dead */
	t0 = p.w->now;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 100, 0x101, 0, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_SEND, A_ADDR, 100, 0x101, 0, 0, 0, 0), 0);
	th_run(p.w, 10000);
	/* Each of the 4 attempts (1 + retry_cnt 3) sends both PSNs; each of
	 * the 3 retries after a timeout sends its first packet twice. */
	ck_assert_uint_eq(count_from(p.w, 0, 0x04), 11);
	ck_assert_uint_eq(find_from(p.w, 0, 0x04, 2)->psn, PSN_A);
	ck_assert_uint_eq(find_from(p.w, 0, 0x04, 3)->psn, PSN_A);
	ck_assert_uint_eq(find_from(p.w, 0, 0x04, 4)->psn, PSN_A + 1);
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeout_copies, 3);
	ck_assert_ptr_nonnull(find_from(p.w, 0, 0x04, 6));
	ck_assert_uint_eq(find_from(p.w, 0, 0x04, 6)->psn, PSN_A);
	ck_assert_uint_eq(find_from(p.w, 0, 0x04, 7)->psn, PSN_A + 1);
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeouts, 4);
	ck_assert_uint_eq(xport_qp_stats(p.a)->retransmits, 3);
	ck_assert_uint_eq(p.w->now - t0, 4 * TIMEOUT_NS);
	ck_assert_ptr_nonnull(strstr(p.w->node[0].logtext,
		"qpn 0x11: timeout: go back to PSN 0x000500 (2 retries left)\n"));
	ck_assert_ptr_nonnull(strstr(p.w->node[0].logtext,
		"qpn 0x11: send WQE 1 (SEND, PSN 0x000500) failed: RETRY_EXC_ERR (after timeout)\n"));
	ck_assert_uint_eq(p.w->node[0].cqes.n, 2);
	ck_assert_int_eq(p.w->node[0].cqes.v[0].status, IBV_WC_RETRY_EXC_ERR);
	ck_assert_uint_eq(p.w->node[0].cqes.v[0].wr_id, 1);
	ck_assert_int_eq(p.w->node[0].cqes.v[1].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_ERR);
	th_world_free(p.w);
}
END_TEST

START_TEST(test_lost_ack_duplicate_send)
{
	struct pair p;
	const struct th_pkt *ack2;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 7);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 4096, 0x201), 0);
	p.w->drop_from = 1;		/* lose B's first ACK */
	p.w->drop_next = 1;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 2500, 0x101, 0, 0, 0, 0), 0);
	th_run(p.w, 10000);
	/* After the timeout A resent the 3 packets, the first of them twice,
	 * each with AckReq (the first packets resent after a loss ask for an
	 * ACK); B saw the 4 as duplicates and ACKed each again with ePSN-1 =
	 * the message's last PSN (C9-105): the lost ACK and 4 more. */
	ck_assert_uint_eq(count_from(p.w, 0, 0x00), 3);
	ck_assert_uint_eq(xport_qp_stats(p.b)->dup_requests, 4);
	ck_assert_uint_eq(count_from(p.w, 1, 0x11), 5);
	ack2 = find_from(p.w, 1, 0x11, 1);
	ck_assert_uint_eq(ack2->psn, PSN_A + 2);
	ck_assert_uint_eq(ack2->syndrome, 0x1F);
	ck_assert_uint_eq(ack2->msn, 1);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 1);	/* executed once */
	ck_assert_uint_eq(p.w->node[0].cqes.n, 1);
	ck_assert_int_eq(p.w->node[0].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(p.bmem, p.amem, 2500), 0);
	th_world_free(p.w);
}
END_TEST

/* A's READ of LEN bytes from B_ADDR + 16 completed once, successfully,
 * with B's bytes and nothing beyond them (A's region was 0xEE). */
static void check_read_done(const struct pair *p, uint32_t len)
{
	ck_assert_uint_eq(p->w->node[0].cqes.n, 1);
	ck_assert_int_eq(p->w->node[0].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(p->w->node[0].cqes.v[0].byte_len, len);
	ck_assert_int_eq(memcmp(p->amem, p->bmem + 16, len), 0);
	ck_assert_uint_eq(p->amem[len], 0xEE);
}

/* READ with one response lost: SKIP responses pass, one is dropped. The
 * requester restarts the READ at the missing PSN; B replays from its
 * saved resource. */
START_TEST(test_read_replay)
{
	const unsigned skip = _i;	/* 0: FIRST lost, 2: third lost */
	struct pair p;
	const struct th_pkt *rq2;
	uint32_t len = 3 * 1024 + 5;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 7);
	memset(p.amem, 0xEE, REGION);
	p.w->drop_from = 1;
	p.w->drop_skip = skip;
	p.w->drop_next = 1;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_RDMA_READ, A_ADDR, len, 0x101,
				      B_ADDR + 16, 0x201, 0, 0), 0);
	th_run(p.w, 10000);
	ck_assert_uint_eq(count_from(p.w, 0, 0x0C), 2);
	rq2 = find_from(p.w, 0, 0x0C, 1);
	ck_assert_uint_eq(rq2->psn, PSN_A + skip);
	ck_assert_uint_eq(rq2->dma_len, len - skip * 1024);
	ck_assert_uint_eq(xport_qp_stats(p.b)->dup_requests, 1);
	/* The replay starts with a FIRST at the restart PSN. */
	ck_assert_uint_eq(find_from(p.w, 1, 0x0D, 1)->psn, PSN_A + skip);
	check_read_done(&p, len);
	th_world_free(p.w);
}
END_TEST

/* A READ request lost twice: the original, then the first copy of the
 * retry after the Local ACK Timeout. The retry's second copy arrives, so
 * one retry does it: with retry_cnt 1 the READ completes (one copy only
 * would have needed a second timeout and failed with RETRY_EXC_ERR). */
START_TEST(test_read_timeout_copy)
{
	struct pair p;
	uint32_t len = 3 * 1024 + 5;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 1, 7);
	memset(p.amem, 0xEE, REGION);
	p.w->drop_from = 0;
	p.w->drop_rule[0].psn = PSN_A;
	p.w->drop_rule[0].nth = 1;
	p.w->drop_rule[1].psn = PSN_A;
	p.w->drop_rule[1].nth = 2;
	p.w->ndrop_rule = 2;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_RDMA_READ, A_ADDR, len, 0x101,
				      B_ADDR + 16, 0x201, 0, 0), 0);
	th_run(p.w, 10000);
	ck_assert_uint_eq(count_from(p.w, 0, 0x0C), 3);
	ck_assert_uint_eq(find_from(p.w, 0, 0x0C, 2)->psn, PSN_A);
	ck_assert_uint_eq(find_from(p.w, 0, 0x0C, 2)->dma_len, len);
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeouts, 1);
	ck_assert_uint_eq(xport_qp_stats(p.a)->retransmits, 1);
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeout_copies, 1);
	ck_assert_uint_eq(count_from(p.w, 1, 0x0D), 1);	/* one FIRST */
	check_read_done(&p, len);
	th_world_free(p.w);
}
END_TEST

START_TEST(test_psn_sequence_nak)
{
	struct pair p;
	const struct th_pkt *nak;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 7);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 8192, 0x201), 0);
	p.w->drop_from = 0;		/* lose the SEND's second packet */
	p.w->drop_skip = 1;
	p.w->drop_next = 1;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 3 * 1024 + 5,
				      0x101, 0, 0, 0, 0), 0);
	th_run(p.w, 10000);
	nak = find_from(p.w, 1, 0x11, 0);
	ck_assert_uint_eq(nak->syndrome, 0x60);
	ck_assert_uint_eq(nak->psn, PSN_A + 1);
	ck_assert_uint_eq(xport_qp_stats(p.b)->seq_naks_tx, 1);	/* once per gap */
	ck_assert_uint_eq(xport_qp_stats(p.a)->seq_naks_rx, 1);
	/* Sent: FIRST, MIDDLE (lost), MIDDLE, LAST; after the NAK MIDDLE,
	 * MIDDLE, LAST again from PSN_A+1. */
	ck_assert_uint_eq(count_from(p.w, 0, 0x00), 1);
	ck_assert_uint_eq(count_from(p.w, 0, 0x01), 4);
	ck_assert_uint_eq(count_from(p.w, 0, 0x02), 2);
	ck_assert_uint_eq(find_from(p.w, 0, 0x01, 2)->psn, PSN_A + 1);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 1);
	ck_assert_uint_eq(p.w->node[1].cqes.v[0].byte_len, 3 * 1024 + 5);
	ck_assert_int_eq(memcmp(p.bmem, p.amem, 3 * 1024 + 5), 0);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 1);
	ck_assert_int_eq(p.w->node[0].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeouts, 0);
	th_world_free(p.w);
}
END_TEST

/* UC: a lost packet kills that message silently; its receive WQE serves
 * the next message. */
START_TEST(test_uc_loss)
{
	struct pair p;

	pair_new(&p, IBV_QPT_UC, ALL_B, ALL_QP, 7, 7);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 8192, 0x201), 0);
	p.w->drop_from = 0;
	p.w->drop_skip = 1;
	p.w->drop_next = 1;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 3 * 1024 + 5,
				      0x101, 0, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_SEND, A_ADDR + 100, 700,
				      0x101, 0, 0, 0, 0), 0);
	th_run(p.w, 10000);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 2);
	ck_assert_int_eq(p.w->node[0].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(p.w->node[0].cqes.v[1].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 1);
	ck_assert_uint_eq(p.w->node[1].cqes.v[0].wr_id, 9);
	ck_assert_uint_eq(p.w->node[1].cqes.v[0].byte_len, 700);
	ck_assert_int_eq(memcmp(p.bmem, p.amem + 100, 700), 0);
	ck_assert_uint_eq(xport_qp_stats(p.b)->dropped, 2);	/* MIDDLE + LAST */
	ck_assert_uint_eq(count_from(p.w, 1, 0x11), 0);	/* UC never ACKs */
	th_world_free(p.w);
}
END_TEST

/* ---- UD Q_Key ---- */

static int ud_send(struct pair *p, uint64_t id, uint32_t qkey)
{
	struct xport_send_wqe s;

	memset(&s, 0, sizeof(s));
	s.wr_id = id;
	s.opcode = IBV_WR_SEND;
	s.send_flags = IBV_SEND_SIGNALED;
	s.dgid = p->w->node[1].gid;
	s.remote_qpn = QPN_B;
	s.remote_qkey = qkey;
	s.num_sge = 1;
	s.sg_list[0] = (struct ibv_sge){ A_ADDR, 64, 0x101 };
	return xport_post_send(p->a, &s);
}

START_TEST(test_ud_qkey)
{
	struct pair p;

	pair_new(&p, IBV_QPT_UD, ALL_B, ALL_QP, 7, 7);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 4096, 0x201), 0);
	ck_assert_int_eq(ud_send(&p, 1, 0x22222222), 0);	/* wrong Q_Key */
	th_run(p.w, 100);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 0);
	ck_assert_uint_eq(xport_qp_stats(p.b)->dropped, 1);
	ck_assert_int_eq(ud_send(&p, 2, 0x80000000), 0);	/* use the QP's */
	th_run(p.w, 100);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 1);
	ck_assert_uint_eq(p.w->node[1].cqes.v[0].byte_len, 40 + 64);
	ck_assert_uint_eq(p.w->node[1].cqes.v[0].src_qp, QPN_A);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 2);	/* UD: sent = done */
	th_world_free(p.w);
}
END_TEST

/* ---- local errors and post-time validation ---- */

START_TEST(test_local_protection)
{
	struct pair p;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 7);
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 100, 0x777, 0, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_SEND, A_ADDR, 100, 0x101, 0, 0, 0, 0), 0);
	th_run(p.w, 100);
	ck_assert_uint_eq(p.w->nlog, 0);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 2);
	ck_assert_int_eq(p.w->node[0].cqes.v[0].status, IBV_WC_LOC_PROT_ERR);
	ck_assert_int_eq(p.w->node[0].cqes.v[1].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_ERR);
	th_world_free(p.w);
}
END_TEST

START_TEST(test_post_validation)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *rc = th_qp(w, 0, IBV_QPT_RC, 0x31, 2);
	struct xport_qp *uc = th_qp(w, 0, IBV_QPT_UC, 0x32, 2);
	struct xport_qp *ud = th_qp(w, 0, IBV_QPT_UD, 0x33, 2);
	struct xport_qp *peer = th_qp(w, 1, IBV_QPT_RC, 0x41, 2);
	struct xport_send_wqe s;

	/* Wrong state: RESET (ibv_post_send(3): EINVAL). */
	ck_assert_int_eq(th_post_send(rc, 1, IBV_WR_SEND, 0, 0, 0, 0, 0, 0, 0), EINVAL);
	ck_assert_int_eq(th_post_recv(rc, 1, 0, 0, 0), EINVAL);
	th_connect(w, rc, peer, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	th_connect(w, uc, peer, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	th_connect(w, ud, peer, IBV_MTU_1024, 0, 0, 14, 7, 7, 1);
	/* ATOMIC_WRITE carries its 8 bytes in the WQE, never an SGE; RC only */
	ck_assert_int_eq(th_post_send(rc, 1, (enum ibv_wr_opcode)15 /* ATOMIC_WRITE */,
				      0, 8, 0, 0, 0, 0, 0), EINVAL);
	ck_assert_int_eq(th_post_send(uc, 1, (enum ibv_wr_opcode)15, 0, 0, 0, 0, 0, 0, 0), EINVAL);
	ck_assert_int_eq(th_post_send(uc, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, 0, 0, 0, 0, 0),
			 EINVAL);
	ck_assert_int_eq(th_post_send(uc, 1, IBV_WR_SEND_WITH_INV, 0, 8, 0, 0, 0, 0, 0),
			 EINVAL);
	ck_assert_int_eq(th_post_send(ud, 1, IBV_WR_LOCAL_INV, 0, 0, 0, 0, 0, 0, 0), EINVAL);
	ck_assert_int_eq(th_post_send(rc, 1, IBV_WR_TSO, 0, 8, 0, 0, 0, 0, 0), EOPNOTSUPP);
	ck_assert_int_eq(th_post_send(uc, 1, IBV_WR_RDMA_READ, 0, 8, 0, 0, 0, 0, 0), EINVAL);
	ck_assert_int_eq(th_post_send(ud, 1, IBV_WR_RDMA_WRITE, 0, 8, 0, 0, 0, 0, 0), EINVAL);
	ck_assert_int_eq(th_post_send(rc, 1, (enum ibv_wr_opcode)99, 0, 8, 0, 0, 0, 0, 0), EINVAL);
	memset(&s, 0, sizeof(s));
	s.opcode = IBV_WR_SEND;
	s.num_sge = XPORT_MAX_SGE + 1;
	ck_assert_int_eq(xport_post_send(rc, &s), EINVAL);
	s.num_sge = 0;
	s.send_flags = IBV_SEND_INLINE;
	s.inline_len = XPORT_MAX_INLINE + 1;
	ck_assert_int_eq(xport_post_send(rc, &s), EINVAL);
	/* Queue full: depth 2, the peer never answers (no QP 0x22 there). */
	ck_assert_int_eq(th_post_send(uc, 1, IBV_WR_SEND, 0, 0, 0, 0, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_send(rc, 1, IBV_WR_SEND, 0, 0, 0, 0, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_send(rc, 2, IBV_WR_SEND, 0, 0, 0, 0, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_send(rc, 3, IBV_WR_SEND, 0, 0, 0, 0, 0, 0, 0), ENOMEM);
	ck_assert_int_eq(th_post_recv(rc, 1, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_recv(rc, 2, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_recv(rc, 3, 0, 0, 0), ENOMEM);
	th_world_free(w);
}
END_TEST

START_TEST(test_modify_err_flushes)
{
	struct pair p;
	struct xport_qp_attr at;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 7);
	ck_assert_int_eq(th_post_recv(p.b, 1, B_ADDR, 10, 0x201), 0);
	ck_assert_int_eq(th_post_recv(p.b, 2, B_ADDR, 10, 0x201), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_ERR;
	ck_assert_int_eq(xport_qp_modify(p.b, &at, IBV_QP_STATE), 0);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 2);
	ck_assert_int_eq(p.w->node[1].cqes.v[0].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(p.w->node[1].cqes.v[0].wr_id, 1);
	ck_assert_uint_eq(p.w->node[1].cqes.v[1].wr_id, 2);
	ck_assert_int_eq(p.w->node[1].cqes.v[1].is_recv, 1);
	/* Posting in ERR completes at once with WR_FLUSH_ERR. */
	ck_assert_int_eq(th_post_recv(p.b, 3, B_ADDR, 10, 0x201), 0);
	ck_assert_int_eq(th_post_send(p.b, 4, IBV_WR_SEND, B_ADDR, 10, 0x201, 0, 0, 0, 0), 0);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 4);
	ck_assert_uint_eq(p.w->node[1].cqes.v[2].wr_id, 3);
	ck_assert_uint_eq(p.w->node[1].cqes.v[3].wr_id, 4);
	ck_assert_int_eq(p.w->node[1].cqes.v[3].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(p.w->nlog, 0);
	/* RESET clears it; back to RTS works again. */
	at.qp_state = IBV_QPS_RESET;
	ck_assert_int_eq(xport_qp_modify(p.b, &at, IBV_QP_STATE), 0);
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RESET);
	th_world_free(p.w);
}
END_TEST

/* ---- malformed input ---- */

START_TEST(test_malformed_input)
{
	struct pair p;
	uint8_t buf[256];
	struct roce_hdrs h;
	struct roce_l3 l3;
	size_t n;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 7);
	memset(&l3, 0, sizeof(l3));
	l3.kind = ROCE_L3_IPV4;
	memcpy(l3.src, p.w->node[0].gid.raw, 16);
	memcpy(l3.dst, p.w->node[1].gid.raw, 16);
	l3.sport = 0xC000;
	l3.dport = ROCE_UDP_PORT;
	memset(&h, 0, sizeof(h));
	h.opcode = ROCE_OP_RC_SEND_ONLY;
	h.pkey = 0xFFFF;
	h.dqpn = QPN_B;
	h.psn = PSN_A;
	ck_assert_int_eq(roce_build_udp(buf, sizeof(buf), &l3, &h, "abc", 3, &n), ROCE_OK);

	/* truncated, corrupted ICRC, unknown QPN, garbage */
	ck_assert_int_eq(xport_input(p.w->node[1].dev, buf, 5, &p.w->node[0].gid,
				     &p.w->node[1].gid, 0xC000, ROCE_UDP_PORT), EBADMSG);
	buf[n - 1] ^= 1;
	ck_assert_int_eq(xport_input(p.w->node[1].dev, buf, n, &p.w->node[0].gid,
				     &p.w->node[1].gid, 0xC000, ROCE_UDP_PORT), EBADMSG);
	buf[n - 1] ^= 1;
	ck_assert_int_eq(xport_input(p.w->node[1].dev, buf, n, &p.w->node[0].gid,
				     &p.w->node[1].gid, 0xC001, ROCE_UDP_PORT), EBADMSG);
	memset(buf + 12, 0xFF, 40);
	ck_assert_int_eq(xport_input(p.w->node[1].dev, buf, 60, &p.w->node[0].gid,
				     &p.w->node[1].gid, 0xC000, ROCE_UDP_PORT), EBADMSG);
	h.dqpn = 0x555;
	ck_assert_int_eq(roce_build_udp(buf, sizeof(buf), &l3, &h, "abc", 3, &n), ROCE_OK);
	ck_assert_int_eq(xport_input(p.w->node[1].dev, buf, n, &p.w->node[0].gid,
				     &p.w->node[1].gid, 0xC000, ROCE_UDP_PORT), ENOENT);
	/* a UC opcode to an RC QP */
	h.dqpn = QPN_B;
	h.opcode = ROCE_OP_UC_SEND_ONLY;
	ck_assert_int_eq(roce_build_udp(buf, sizeof(buf), &l3, &h, "abc", 3, &n), ROCE_OK);
	ck_assert_int_eq(xport_input(p.w->node[1].dev, buf, n, &p.w->node[0].gid,
				     &p.w->node[1].gid, 0xC000, ROCE_UDP_PORT), EAGAIN);
	ck_assert_uint_eq(xport_dev_stats(p.w->node[1].dev)->rx_bad, 4);
	ck_assert_uint_eq(xport_dev_stats(p.w->node[1].dev)->rx_no_qp, 1);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 0);
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);
	/* A forged ACK for a PSN never sent is ignored by the completer. */
	memset(&h, 0, sizeof(h));
	h.opcode = ROCE_OP_RC_ACK;
	h.dqpn = QPN_A;
	h.psn = PSN_A + 50;
	h.aeth.syndrome = 0x1F;
	memcpy(l3.src, p.w->node[1].gid.raw, 16);
	memcpy(l3.dst, p.w->node[0].gid.raw, 16);
	ck_assert_int_eq(roce_build_udp(buf, sizeof(buf), &l3, &h, NULL, 0, &n), ROCE_OK);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 4096, 0x201), 0);
	p.w->drop_ppm = 10000;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 10, 0x101, 0, 0, 0, 0), 0);
	ck_assert_int_eq(xport_input(p.w->node[0].dev, buf, n, &p.w->node[1].gid,
				     &p.w->node[0].gid, 0xC000, ROCE_UDP_PORT), EAGAIN);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 0);
	th_world_free(p.w);
}
END_TEST

/* A QP connected to itself (one device, loopback): its requests reach its
 * own responder and the answers its own completer. */
START_TEST(test_self_loop)
{
	struct th_world *w = th_world_new(1024);
	struct xport_qp *q = th_qp(w, 0, IBV_QPT_RC, 0x33, 8);
	uint8_t *mem = th_reg_mr(w, 0, 0x101, 1, A_ADDR, REGION, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 0);
	struct xport_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ck_assert_int_eq(xport_qp_modify(q, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS), 0);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x33;
	a.rq_psn = 0x10;
	a.dgid = w->node[0].gid;
	a.max_dest_rd_atomic = 1;	/* 0 would NAK the READ (no resources) */
	ck_assert_int_eq(xport_qp_modify(q, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					 IBV_QP_RQ_PSN | IBV_QP_AV |
					 IBV_QP_MAX_DEST_RD_ATOMIC), 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x10;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	ck_assert_int_eq(xport_qp_modify(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					 IBV_QP_MAX_QP_RD_ATOMIC), 0);
	for (unsigned i = 0; i < 3000; i++)
		mem[i] = (uint8_t)(i * 3);
	ck_assert_int_eq(th_post_recv(q, 7, A_ADDR + 4096, 3000, 0x101), 0);
	ck_assert_int_eq(th_post_send(q, 1, IBV_WR_SEND, A_ADDR, 3000, 0x101, 0, 0, 0, 0), 0);
	ck_assert_int_eq(th_post_send(q, 2, IBV_WR_RDMA_READ, A_ADDR + 7100, 1000, 0x101,
				      A_ADDR, 0x101, 0, 0), 0);
	th_run(w, 1000);
	ck_assert_uint_eq(w->node[0].cqes.n, 3);
	ck_assert_int_eq(w->node[0].cqes.v[0].is_recv, 1);	/* the RECV first */
	ck_assert_uint_eq(w->node[0].cqes.v[0].byte_len, 3000);
	ck_assert_uint_eq(w->node[0].cqes.v[1].wr_id, 1);
	ck_assert_uint_eq(w->node[0].cqes.v[2].wr_id, 2);
	ck_assert_int_eq(w->node[0].cqes.v[2].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(mem + 4096, mem, 3000), 0);
	ck_assert_int_eq(memcmp(mem + 7100, mem, 1000), 0);
	th_world_free(w);
}
END_TEST

/* SQD: WQEs already started finish (and are retransmitted if need be);
 * new ones wait until the QP is back in RTS. */
START_TEST(test_sqd_drain)
{
	struct pair p;
	struct xport_qp_attr at;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 7);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 4096, 0x201), 0);
	ck_assert_int_eq(th_post_recv(p.b, 10, B_ADDR, 4096, 0x201), 0);
	p.w->drop_from = 1;		/* B's ACK is lost: A must retransmit */
	p.w->drop_next = 1;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 100, 0x101, 0, 0, 0, 0), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_SQD;
	ck_assert_int_eq(xport_qp_modify(p.a, &at, IBV_QP_STATE), 0);
	ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_SEND, A_ADDR, 100, 0x101, 0, 0, 0, 0), 0);
	th_run(p.w, 1000);
	/* WQE 1 once, then twice more: the first packet after a timeout */
	ck_assert_uint_eq(count_from(p.w, 0, 0x04), 3);
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeouts, 1);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 1);
	ck_assert_uint_eq(p.w->node[0].cqes.v[0].wr_id, 1);
	at.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(xport_qp_modify(p.a, &at, IBV_QP_STATE), 0);
	th_run(p.w, 1000);
	ck_assert_uint_eq(count_from(p.w, 0, 0x04), 4);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 2);
	ck_assert_uint_eq(p.w->node[0].cqes.v[1].wr_id, 2);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 2);
	th_world_free(p.w);
}
END_TEST

/* SQD with en_sqd_async_notify: SQ_DRAINED comes from the completer once
 * the started WQE is acknowledged (here after a retransmission), not at
 * modify time. */
START_TEST(test_sqd_drained_event)
{
	struct pair p;
	struct xport_qp_attr at;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 7);
	ck_assert_int_eq(th_post_recv(p.b, 9, B_ADDR, 4096, 0x201), 0);
	p.w->drop_from = 1;		/* B's ACK is lost: A must retransmit */
	p.w->drop_next = 1;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 100, 0x101, 0, 0, 0, 0), 0);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_SQD;
	at.en_sqd_async_notify = true;
	ck_assert_int_eq(xport_qp_modify(p.a, &at, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
	ck_assert_uint_eq(p.w->node[0].events, 0);	/* WQE 1 still unacked */
	th_run(p.w, 1000);
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeouts, 1);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 1);
	ck_assert_uint_eq(p.w->node[0].events, 1);
	ck_assert_int_eq(p.w->node[0].last_event, IBV_EVENT_SQ_DRAINED);
	/* An idle QP entering SQD is drained at once: one more event. */
	at.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(xport_qp_modify(p.a, &at, IBV_QP_STATE), 0);
	at.qp_state = IBV_QPS_SQD;
	ck_assert_int_eq(xport_qp_modify(p.a, &at, IBV_QP_STATE), 0);
	ck_assert_uint_eq(p.w->node[0].events, 2);
	th_world_free(p.w);
}
END_TEST

/* A WQE the daemon refuses completes with LOC_QP_OP_ERR after the older
 * WQE still waiting for its ACK (flushed), and the QP raises QP_FATAL; one
 * refused once the QP is in ERR is flushed, with no second event. */
START_TEST(test_refused_wqe_order)
{
	struct pair p;

	pair_new(&p, IBV_QPT_RC, ALL_B, ALL_QP, 7, 7);
	p.w->drop_from = 0;		/* A's SEND never arrives */
	p.w->drop_next = 1;
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_SEND, A_ADDR, 100, 0x101, 0, 0, 0, 0), 0);
	xport_post_refused(p.a, false, 2);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_ERR);
	ck_assert_uint_eq(p.w->node[0].events, 1);
	ck_assert_int_eq(p.w->node[0].last_event, IBV_EVENT_QP_FATAL);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 2);
	ck_assert_uint_eq(p.w->node[0].cqes.v[0].wr_index, 1);
	ck_assert_int_eq(p.w->node[0].cqes.v[0].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(p.w->node[0].cqes.v[1].wr_index, 2);
	ck_assert_int_eq(p.w->node[0].cqes.v[1].status, IBV_WC_LOC_QP_OP_ERR);
	/* receive side: the same order in the RQ */
	ck_assert_int_eq(th_post_recv(p.b, 7, B_ADDR, 4096, 0x201), 0);
	xport_post_refused(p.b, true, 8);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 2);
	ck_assert_uint_eq(p.w->node[1].cqes.v[0].wr_index, 7);
	ck_assert_int_eq(p.w->node[1].cqes.v[0].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(p.w->node[1].cqes.v[1].wr_index, 8);
	ck_assert_int_eq(p.w->node[1].cqes.v[1].status, IBV_WC_LOC_QP_OP_ERR);
	ck_assert(p.w->node[1].cqes.v[1].is_recv);
	/* refused again in ERR: nothing is executed there, so it is flushed,
	 * without another QP_FATAL */
	xport_post_refused(p.a, false, 3);
	xport_post_refused(p.b, true, 9);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 3);
	ck_assert_uint_eq(p.w->node[0].cqes.v[2].wr_index, 3);
	ck_assert_int_eq(p.w->node[0].cqes.v[2].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(p.w->node[0].events, 1);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 3);
	ck_assert_uint_eq(p.w->node[1].cqes.v[2].wr_index, 9);
	ck_assert_int_eq(p.w->node[1].cqes.v[2].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert(p.w->node[1].cqes.v[2].is_recv);
	th_world_free(p.w);
}
END_TEST

/* Bounded work: a 64 KiB READ at MTU 256 is 256 response packets; one
 * packet input sends at most XPORT_RUN_BUDGET of them and asks for another
 * turn. A SEND that arrives meanwhile waits: its ACK follows the READ
 * response LAST, and both WQEs complete with the right data. */
START_TEST(test_read_paced)
{
	struct th_world *w = th_world_new(256);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, QPN_A, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, QPN_B, 16);
	uint32_t len = 65536;
	uint8_t *am, *bm;
	unsigned resp = 0, last_at = 0, ack_at = 0;

	th_connect(w, a, b, IBV_MTU_256, PSN_A, PSN_B, TIMEOUT, 7, 7, 1);
	am = th_reg_mr(w, 0, 0x101, 1, A_ADDR, 2 * len, IBV_ACCESS_LOCAL_WRITE, 0);
	bm = th_reg_mr(w, 1, 0x201, 1, B_ADDR, len, ALL_B, 0);
	for (uint32_t i = 0; i < len; i++)
		bm[i] = (uint8_t)(i * 7 + 3);
	ck_assert_int_eq(th_post_recv(b, 5, B_ADDR, 100, 0x201), 0);
	ck_assert_int_eq(th_post_send(a, 1, IBV_WR_RDMA_READ, A_ADDR, len, 0x101,
				      B_ADDR, 0x201, 0, 0), 0);
	ck_assert_int_eq(th_post_send(a, 2, IBV_WR_SEND, A_ADDR + len, 100, 0x101,
				      0, 0, 0, 0), 0);
	ck_assert_uint_eq(th_run(w, 1), 1);	/* B gets the READ request */
	for (unsigned i = 0; i < w->nlog; i++)
		resp += w->log[i].from == 1;
	ck_assert_uint_eq(resp, XPORT_RUN_BUDGET);
	ck_assert_uint_eq(w->nsched, 1);
	ck_assert_ptr_eq(w->sched[0], b);
	th_run(w, 10000);
	ck_assert_uint_eq(count_from(w, 1, 0x0D) + count_from(w, 1, 0x0E) +
			  count_from(w, 1, 0x0F), 256);
	for (unsigned i = 0; i < w->nlog; i++) {
		if (w->log[i].from == 1 && w->log[i].opcode == 0x0F)
			last_at = i;
		if (w->log[i].from == 1 && w->log[i].opcode == 0x11)
			ack_at = i;
	}
	ck_assert_uint_gt(ack_at, last_at);
	ck_assert_uint_ge(w->sched_runs, 1);
	ck_assert_uint_eq(w->node[0].cqes.n, 2);
	ck_assert_int_eq(w->node[0].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(w->node[0].cqes.v[0].opcode, IBV_WC_RDMA_READ);
	ck_assert_int_eq(w->node[0].cqes.v[1].status, IBV_WC_SUCCESS);
	for (uint32_t i = 0; i < len; i++)	/* B's pattern, read */
		ck_assert_uint_eq(am[i], (uint8_t)(i * 7 + 3));
	ck_assert_uint_eq(w->node[1].cqes.n, 1);
	ck_assert_uint_eq(w->node[1].cqes.v[0].byte_len, 100);
	th_world_free(w);
}
END_TEST

/* Three duplicates of a 256-packet READ request arrive while its
 * responses are being sent: each restarts the one job from the start
 * (read_restarts) instead of queuing another full replay, so B sends the
 * range once plus what it had sent before each restart, not four times. */
START_TEST(test_read_duplicates_coalesce)
{
	struct th_world *w = th_world_new(256);
	struct xport_qp *a = th_qp(w, 0, IBV_QPT_RC, QPN_A, 16);
	struct xport_qp *b = th_qp(w, 1, IBV_QPT_RC, QPN_B, 16);
	uint32_t len = 65536;
	uint8_t *am, *bm;
	unsigned long resp;

	th_connect(w, a, b, IBV_MTU_256, PSN_A, PSN_B, TIMEOUT, 7, 7, 1);
	am = th_reg_mr(w, 0, 0x101, 1, A_ADDR, len, IBV_ACCESS_LOCAL_WRITE, 0);
	bm = th_reg_mr(w, 1, 0x201, 1, B_ADDR, len, ALL_B, 0);
	for (uint32_t i = 0; i < len; i++)
		bm[i] = (uint8_t)(i * 13 + 1);
	ck_assert_int_eq(th_post_send(a, 1, IBV_WR_RDMA_READ, A_ADDR, len, 0x101,
				      B_ADDR, 0x201, 0, 0), 0);
	ck_assert_uint_eq(w->qlen, 1);
	th_wire_repeat(w, 0, 3);
	ck_assert_uint_eq(th_run(w, 1), 1);	/* the request: one turn */
	for (int i = 0; i < 3; i++) {
		/* a duplicate arrives before B's next turn (as from the
		 * socket between two loop turns); its delivery runs one */
		ck_assert_uint_eq(w->nsched, 1);
		w->nsched = 0;
		ck_assert_uint_eq(th_run(w, 1), 1);
	}
	th_run(w, 100000);
	resp = count_from(w, 1, 0x0D) + count_from(w, 1, 0x0E) +
	       count_from(w, 1, 0x0F);
	ck_assert_uint_eq(xport_qp_stats(b)->dup_requests, 3);
	ck_assert_uint_eq(xport_qp_stats(b)->read_restarts, 3);
	/* Each turn sends XPORT_RUN_BUDGET responses; each duplicate
	 * restarts at packet 0 what had been sent (one turn's worth). */
	ck_assert_uint_eq(resp, 256 + 3 * XPORT_RUN_BUDGET);
	ck_assert_uint_eq(count_from(w, 1, 0x0D), 4);
	ck_assert_uint_eq(w->node[0].cqes.n, 1);
	ck_assert_int_eq(w->node[0].cqes.v[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(w->node[0].cqes.v[0].byte_len, len);
	ck_assert_int_eq(memcmp(am, bm, len), 0);
	th_world_free(w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("transport_errors");
	TCase *tc = tcase_create("errors");

	tcase_add_loop_test(tc, test_fatal_nak, 0,
			    sizeof(nak_cases) / sizeof(nak_cases[0]));
	tcase_add_test(tc, test_rnr_retry_0);
	tcase_add_test(tc, test_rnr_retry_3);
	tcase_add_test(tc, test_rnr_retry_infinite);
	tcase_add_test(tc, test_retry_exhausted);
	tcase_add_test(tc, test_lost_ack_duplicate_send);
	tcase_add_loop_test(tc, test_read_replay, 0, 3);
	tcase_add_test(tc, test_read_timeout_copy);
	tcase_add_test(tc, test_psn_sequence_nak);
	tcase_add_test(tc, test_uc_loss);
	tcase_add_test(tc, test_ud_qkey);
	tcase_add_test(tc, test_local_protection);
	tcase_add_test(tc, test_post_validation);
	tcase_add_test(tc, test_modify_err_flushes);
	tcase_add_test(tc, test_sqd_drain);
	tcase_add_test(tc, test_sqd_drained_event);
	tcase_add_test(tc, test_refused_wqe_order);
	tcase_add_test(tc, test_read_paced);
	tcase_add_test(tc, test_read_duplicates_coalesce);
	tcase_add_test(tc, test_self_loop);
	tcase_add_test(tc, test_malformed_input);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_main_run(suite(), CK_NORMAL);
}
