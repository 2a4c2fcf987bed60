/*
 * transport_atomic.c: RC atomics and responder resources in the engine,
 * two engines back to back: CMP_SWAP success and failure, FETCH_ADD
 * across 2^64, exact packets (AtomicETH request, ATOMIC Acknowledge, one
 * PSN each, AckReq); errors with exact NAK syndromes, statuses and events
 * (misaligned VA, MR or QP without REMOTE_ATOMIC, bad R_Key, bounds, bad
 * lkey, max_dest_rd_atomic 0); a duplicate FETCH_ADD or CMP_SWAP after a
 * lost ATOMIC Acknowledge answered from the replay cache, not executed
 * again; the responder-resource limit (a READ or atomic arriving while
 * max_dest_rd_atomic READ responses are still being sent: NAK Invalid
 * Request); the requester's max_rd_atomic window; post-time checks; a
 * local SGE other than one of 8 bytes (LOC_LEN_ERR, nothing sent); 2000
 * FETCH_ADDs over a lossy, duplicating, reordering wire applied once each.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

#define QPN_A 0x11u
#define QPN_B 0x22u
#define PSN_A 0x000500u
#define PSN_B 0x000900u
#define A_ADDR 0x10000ull
#define B_ADDR 0x200000ull
#define A_REGION 4096u
#define B_REGION (256u * 1024u)
#define TIMEOUT 10
#define ATOMIC_ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC | \
		    IBV_ACCESS_REMOTE_READ)

#define OP_READ_REQ 0x0C
#define OP_READ_FIRST 0x0D
#define OP_ACK 0x11
#define OP_ATOMIC_ACK 0x12
#define OP_CMP_SWAP 0x13
#define OP_FETCH_ADD 0x14

struct pair {
	struct th_world *w;
	struct xport_qp *a, *b;
	uint8_t *amem, *bmem;
};

/* RC pair at MTU 1024: A's region key 0x101, B's key 0x201 with B_ACC;
 * B's QP allows QP_ACC and max_dest_rd_atomic DEST_RD. */
static void pair_new(struct pair *p, unsigned int b_acc, unsigned int qp_acc,
		     uint8_t dest_rd, enum ibv_mtu mtu)
{
	struct xport_qp_attr at;

	p->w = th_world_new(4096);
	p->a = th_qp(p->w, 0, IBV_QPT_RC, QPN_A, 64);
	p->b = th_qp(p->w, 1, IBV_QPT_RC, QPN_B, 64);
	th_connect(p->w, p->a, p->b, mtu, PSN_A, PSN_B, TIMEOUT, 7, 7, 1);
	memset(&at, 0, sizeof(at));
	at.qp_access_flags = qp_acc;
	at.max_dest_rd_atomic = dest_rd;
	ck_assert_int_eq(xport_qp_modify(p->b, &at, IBV_QP_ACCESS_FLAGS |
					 IBV_QP_MAX_DEST_RD_ATOMIC), 0);
	p->amem = th_reg_mr(p->w, 0, 0x101, 1, A_ADDR, A_REGION,
			    IBV_ACCESS_LOCAL_WRITE, 0xEE);
	p->bmem = th_reg_mr(p->w, 1, 0x201, 1, B_ADDR, B_REGION, b_acc, 0);
	for (unsigned i = 0; i < B_REGION; i++)
		p->bmem[i] = (uint8_t)(i * 7 + 3);
}

static void pair_free(struct pair *p)
{
	th_world_free(p->w);
}

static uint64_t get64(const uint8_t *b)
{
	uint64_t v;

	memcpy(&v, b, 8);
	return v;
}

static void put64(uint8_t *b, uint64_t v)
{
	memcpy(b, &v, 8);
}

/* Post an atomic on A: result into A's region at LOFF (lkey LKEY). */
static int post_atomic(struct pair *p, uint64_t wr_id, enum ibv_wr_opcode op,
		       uint64_t raddr, uint32_t rkey, uint64_t compare_add,
		       uint64_t swap, uint32_t loff, uint32_t lkey)
{
	struct xport_send_wqe wqe;

	memset(&wqe, 0, sizeof(wqe));
	wqe.wr_id = wr_id;
	wqe.wr_index = (uint32_t)wr_id;
	wqe.opcode = op;
	wqe.send_flags = IBV_SEND_SIGNALED;
	wqe.remote_addr = raddr;
	wqe.rkey = rkey;
	wqe.compare_add = compare_add;
	wqe.swap = swap;
	wqe.num_sge = 1;
	wqe.sg_list[0].addr = A_ADDR + loff;
	wqe.sg_list[0].length = 8;
	wqe.sg_list[0].lkey = lkey;
	return xport_post_send(p->a, &wqe);
}

static unsigned count_from(struct th_world *w, int from, uint8_t opcode)
{
	unsigned n = 0;

	for (unsigned i = 0; i < w->nlog; i++)
		n += w->log[i].from == from && w->log[i].opcode == opcode;
	return n;
}

static const struct th_pkt *find_from(struct th_world *w, int from,
				      uint8_t opcode, unsigned nth)
{
	for (unsigned i = 0; i < w->nlog; i++)
		if (w->log[i].from == from && w->log[i].opcode == opcode &&
		    nth-- == 0)
			return &w->log[i];
	return NULL;
}

static void check_cqe(const struct xport_cqe *c, uint64_t wr_id,
		      enum ibv_wc_status st, enum ibv_wc_opcode op)
{
	ck_assert_uint_eq(c->wr_id, wr_id);
	ck_assert_int_eq(c->status, st);
	if (st == IBV_WC_SUCCESS) {
		ck_assert_int_eq(c->opcode, op);
		ck_assert_uint_eq(c->byte_len, op == IBV_WC_RDMA_READ ? 65536 : 8);
	}
	ck_assert(!c->is_recv);
}

START_TEST(test_cmp_swap)
{
	struct pair p;
	struct th_cqe_log *la;
	const struct th_pkt *q, *r;

	pair_new(&p, ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC, 4, IBV_MTU_1024);
	put64(p.bmem + 64, 0x1122334455667788ull);
	/* equal: swapped; the original comes back */
	ck_assert_int_eq(post_atomic(&p, 1, IBV_WR_ATOMIC_CMP_AND_SWP, B_ADDR + 64,
				     0x201, 0x1122334455667788ull,
				     0xA5A5A5A5DEADBEEFull, 0, 0x101), 0);
	th_run(p.w, 1000);
	ck_assert_uint_eq(get64(p.bmem + 64), 0xA5A5A5A5DEADBEEFull);
	ck_assert_uint_eq(get64(p.amem), 0x1122334455667788ull);
	/* not equal: unchanged; the current value comes back */
	ck_assert_int_eq(post_atomic(&p, 2, IBV_WR_ATOMIC_CMP_AND_SWP, B_ADDR + 64,
				     0x201, 0x1122334455667788ull, 7, 8, 0x101), 0);
	th_run(p.w, 1000);
	ck_assert_uint_eq(get64(p.bmem + 64), 0xA5A5A5A5DEADBEEFull);
	ck_assert_uint_eq(get64(p.amem + 8), 0xA5A5A5A5DEADBEEFull);
	/* the bytes around are untouched */
	ck_assert_uint_eq(p.bmem[63], (uint8_t)(63 * 7 + 3));
	ck_assert_uint_eq(p.bmem[72], (uint8_t)(72 * 7 + 3));
	ck_assert_uint_eq(p.amem[16], 0xEE);

	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 2);
	check_cqe(&la->v[0], 1, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	check_cqe(&la->v[1], 2, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	ck_assert_int_eq(la->v[0].wr_opcode, IBV_WR_ATOMIC_CMP_AND_SWP);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 0);
	/* wire: request (AckReq, one PSN each), ATOMIC Acknowledge with the
	 * request's PSN and MSN 1, 2 */
	ck_assert_uint_eq(p.w->nlog, 4);
	q = find_from(p.w, 0, OP_CMP_SWAP, 1);
	r = find_from(p.w, 1, OP_ATOMIC_ACK, 1);
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(find_from(p.w, 0, OP_CMP_SWAP, 0)->psn, PSN_A);
	ck_assert_uint_eq(q->psn, PSN_A + 1);
	ck_assert(q->ackreq);
	ck_assert_uint_eq(q->payload_len, 0);
	ck_assert_uint_eq(r->psn, PSN_A + 1);
	ck_assert_uint_eq(r->syndrome, 0x1F);
	ck_assert_uint_eq(r->msn, 2);
	ck_assert_uint_eq(xport_qp_sq_psn(p.a), PSN_A + 2);
	ck_assert_uint_eq(xport_qp_rq_psn(p.b), PSN_A + 2);
	pair_free(&p);
}
END_TEST

START_TEST(test_fetch_add_wrap)
{
	struct pair p;
	struct th_cqe_log *la;

	pair_new(&p, ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC, 4, IBV_MTU_1024);
	put64(p.bmem + 8, 0xFFFFFFFFFFFFFFF0ull);
	ck_assert_int_eq(post_atomic(&p, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, B_ADDR + 8,
				     0x201, 0x20, 0x5555, 0, 0x101), 0);
	ck_assert_int_eq(post_atomic(&p, 2, IBV_WR_ATOMIC_FETCH_AND_ADD, B_ADDR + 8,
				     0x201, 0xFFFFFFFFull, 0, 8, 0x101), 0);
	th_run(p.w, 1000);
	/* 2^64 - 16 + 32 wraps to 16; + 2^32 - 1 */
	ck_assert_uint_eq(get64(p.amem), 0xFFFFFFFFFFFFFFF0ull);
	ck_assert_uint_eq(get64(p.amem + 8), 0x10);
	ck_assert_uint_eq(get64(p.bmem + 8), 0x10000000Full);
	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 2);
	check_cqe(&la->v[0], 1, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	check_cqe(&la->v[1], 2, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	ck_assert_uint_eq(count_from(p.w, 0, OP_FETCH_ADD), 2);
	ck_assert_uint_eq(count_from(p.w, 1, OP_ATOMIC_ACK), 2);
	pair_free(&p);
}
END_TEST

/* ---- errors: table ---- */

struct err_case {
	const char *name;
	uint64_t raddr;
	uint32_t rkey, lkey;
	unsigned int b_acc, qp_acc;
	uint8_t dest_rd;
	int nak;			/* syndrome B sends, -1: none */
	enum ibv_wc_status status;
	int b_event;			/* -1: none */
	bool executed;			/* the word changed */
};

static const struct err_case err_cases[] = {
	{ "misaligned VA", B_ADDR + 4, 0x201, 0x101, ATOMIC_ACC,
	  IBV_ACCESS_REMOTE_ATOMIC, 4, 0x61, IBV_WC_REM_INV_REQ_ERR,
	  IBV_EVENT_QP_REQ_ERR, false },
	{ "MR without REMOTE_ATOMIC", B_ADDR, 0x201, 0x101,
	  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
	  IBV_ACCESS_REMOTE_ATOMIC, 4, 0x62, IBV_WC_REM_ACCESS_ERR,
	  IBV_EVENT_QP_ACCESS_ERR, false },
	{ "QP without REMOTE_ATOMIC", B_ADDR, 0x201, 0x101, ATOMIC_ACC,
	  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, 4, 0x61,
	  IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR, false },
	{ "rkey+1", B_ADDR, 0x202, 0x101, ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC, 4,
	  0x62, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR, false },
	{ "misaligned at the region's end", B_ADDR + B_REGION - 4, 0x201, 0x101,
	  ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC, 4, 0x61, IBV_WC_REM_INV_REQ_ERR,
	  IBV_EVENT_QP_REQ_ERR, false },
	{ "beyond the region", B_ADDR + B_REGION, 0x201, 0x101, ATOMIC_ACC,
	  IBV_ACCESS_REMOTE_ATOMIC, 4, 0x62, IBV_WC_REM_ACCESS_ERR,
	  IBV_EVENT_QP_ACCESS_ERR, false },
	{ "max_dest_rd_atomic 0", B_ADDR, 0x201, 0x101, ATOMIC_ACC,
	  IBV_ACCESS_REMOTE_ATOMIC, 0, 0x61, IBV_WC_REM_INV_REQ_ERR,
	  IBV_EVENT_QP_REQ_ERR, false },
	{ "lkey+1 (executed remotely)", B_ADDR, 0x201, 0x102, ATOMIC_ACC,
	  IBV_ACCESS_REMOTE_ATOMIC, 4, -1, IBV_WC_LOC_PROT_ERR, -1, true },
};

START_TEST(test_atomic_errors)
{
	const struct err_case *c = &err_cases[_i];
	struct pair p;
	struct th_cqe_log *la;
	uint64_t before;
	uint64_t off = c->raddr - B_ADDR;

	pair_new(&p, c->b_acc, c->qp_acc, c->dest_rd, IBV_MTU_1024);
	before = off + 8 <= B_REGION ? get64(p.bmem + (off & ~7ull)) : 0;
	ck_assert_int_eq(post_atomic(&p, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, c->raddr,
				     c->rkey, 1, 0, 0, c->lkey), 0);
	ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_SEND, A_ADDR, 10, 0x101,
				      0, 0, 0, 0), 0);
	th_run(p.w, 10000);

	if (c->nak >= 0) {
		const struct th_pkt *nak = find_from(p.w, 1, OP_ACK, 0);

		ck_assert_msg(nak != NULL, "%s: no NAK", c->name);
		ck_assert_msg(nak->syndrome == c->nak, "%s: syndrome 0x%02x",
			      c->name, nak->syndrome);
		ck_assert_uint_eq(nak->psn, PSN_A);
		ck_assert_uint_eq(count_from(p.w, 1, OP_ATOMIC_ACK), 0);
		ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_ERR);
		ck_assert_uint_eq(p.w->node[1].events, 1);
		ck_assert_int_eq(p.w->node[1].last_event, c->b_event);
	} else {
		ck_assert_uint_eq(count_from(p.w, 1, OP_ATOMIC_ACK), 1);
		ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);
		ck_assert_uint_eq(p.w->node[1].events, 0);
	}
	if (off + 8 <= B_REGION)
		ck_assert_uint_eq(get64(p.bmem + (off & ~7ull)),
				  before + (c->executed ? 1 : 0));
	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 2);
	ck_assert_msg(la->v[0].status == c->status, "%s: status %d", c->name,
		      la->v[0].status);
	ck_assert_uint_eq(la->v[0].wr_id, 1);
	ck_assert_int_eq(la->v[0].wr_opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
	ck_assert_int_eq(la->v[1].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_ERR);
	ck_assert_uint_eq(p.w->node[0].events, 0);
	ck_assert_uint_eq(get64(p.amem), 0xEEEEEEEEEEEEEEEEull);
	pair_free(&p);
}
END_TEST

/* ---- duplicates: the lost ATOMIC Acknowledge ---- */

START_TEST(test_duplicate_replayed)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_ATOMIC_FETCH_AND_ADD,
						  IBV_WR_ATOMIC_CMP_AND_SWP };
	enum ibv_wr_opcode op = ops[_i];
	struct pair p;
	struct th_cqe_log *la;
	const struct th_pkt *a1, *a2;

	pair_new(&p, ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC, 4, IBV_MTU_1024);
	put64(p.bmem, 1000);
	p.w->drop_from = 1;
	p.w->drop_rule[0].psn = PSN_A;	/* B's first ATOMIC Acknowledge */
	p.w->drop_rule[0].nth = 1;
	p.w->ndrop_rule = 1;
	ck_assert_int_eq(post_atomic(&p, 1, op, B_ADDR, 0x201,
				     op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 5 : 1000,
				     2000, 0, 0x101), 0);
	th_run(p.w, 1000);

	/* executed once; the retry got the saved original, not the new
	 * value (a CMP_SWAP executed again would fail and answer 2000) */
	ck_assert_uint_eq(get64(p.bmem),
			  op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 1005 : 2000);
	ck_assert_uint_eq(get64(p.amem), 1000);
	/* the request once, then twice after the timeout (the first packet
	 * resent after a timeout goes twice): both copies are duplicates,
	 * each answered from the saved result */
	ck_assert_uint_eq(count_from(p.w, 0, op == IBV_WR_ATOMIC_FETCH_AND_ADD ?
				     OP_FETCH_ADD : OP_CMP_SWAP), 3);
	ck_assert_uint_eq(count_from(p.w, 1, OP_ATOMIC_ACK), 3);
	a1 = find_from(p.w, 1, OP_ATOMIC_ACK, 0);
	a2 = find_from(p.w, 1, OP_ATOMIC_ACK, 2);
	ck_assert_uint_eq(a1->psn, PSN_A);
	ck_assert_uint_eq(a2->psn, PSN_A);
	ck_assert_uint_eq(a2->msn, 1);	/* MSN counts it once */
	ck_assert_uint_eq(xport_qp_stats(p.b)->dup_requests, 2);
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeouts, 1);
	ck_assert_ptr_nonnull(strstr(p.w->node[1].logtext,
				     "original value replayed"));
	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 1);
	check_cqe(&la->v[0], 1, IBV_WC_SUCCESS,
		  op == IBV_WR_ATOMIC_FETCH_AND_ADD ? IBV_WC_FETCH_ADD :
						      IBV_WC_COMP_SWAP);
	pair_free(&p);
}
END_TEST

/* A duplicate that matches no saved resource (another VA) is dropped;
 * the requester's retries run out. */
START_TEST(test_duplicate_unknown_dropped)
{
	struct pair p;
	struct roce_hdrs h;
	uint8_t pkt[128];
	size_t len;
	struct roce_l3 l3;

	pair_new(&p, ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC, 4, IBV_MTU_1024);
	ck_assert_int_eq(post_atomic(&p, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, B_ADDR,
				     0x201, 1, 0, 0, 0x101), 0);
	th_run(p.w, 1000);
	ck_assert_uint_eq(get64(p.bmem), get64(p.amem) + 1);
	/* forge: same PSN, other VA */
	memset(&h, 0, sizeof(h));
	h.opcode = OP_FETCH_ADD;
	h.dqpn = QPN_B;
	h.psn = PSN_A;
	h.ackreq = true;
	h.atomic.va = B_ADDR + 8;
	h.atomic.rkey = 0x201;
	h.atomic.swap_add = 1;
	memset(&l3, 0, sizeof(l3));
	l3.kind = ROCE_L3_IPV4;
	memcpy(l3.src, p.w->node[0].gid.raw, 16);
	memcpy(l3.dst, p.w->node[1].gid.raw, 16);
	l3.sport = 0xC000;
	l3.dport = ROCE_UDP_PORT;
	ck_assert_int_eq(roce_build_udp(pkt, sizeof(pkt), &l3, &h, NULL, 0, &len),
			 ROCE_OK);
	/* dropped by the responder: not taken */
	ck_assert_int_eq(xport_input(p.w->node[1].dev, pkt, len,
				     &p.w->node[0].gid, &p.w->node[1].gid,
				     0xC000, ROCE_UDP_PORT), EAGAIN);
	th_run(p.w, 1000);
	ck_assert_uint_eq(count_from(p.w, 1, OP_ATOMIC_ACK), 1);
	ck_assert_uint_eq(xport_qp_stats(p.b)->dup_requests, 1);
	ck_assert_uint_eq(xport_qp_stats(p.b)->dropped, 1);
	ck_assert_uint_eq(get64(p.bmem + 8),
			  get64((const uint8_t[8]){ 59, 66, 73, 80, 87, 94, 101, 108 }));
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);
	pair_free(&p);
}
END_TEST

/* ---- responder resources ---- */

/* Deliver the packet at the head of the wire without the scheduled
 * turns th_run would run first: the responder is still sending READ
 * responses when it arrives. */
static void deliver_one(struct th_world *w)
{
	struct th_wire_pkt q = w->q[w->qhead];

	ck_assert_uint_gt(w->qlen, 0);
	w->qhead++;
	w->qlen--;
	xport_input(w->node[q.to].dev, q.data, q.len, &w->node[q.from].gid,
		    &w->node[q.to].gid, q.sport, ROCE_UDP_PORT);
	w->delivered++;
	free(q.data);
}

/* Two 64 KiB READs (64 responses each at MTU 1024, two turns), or a READ
 * then a FETCH_ADD, back to back: with max_dest_rd_atomic 1 the second
 * arrives while the first one's responses are being sent and is NAKed
 * Invalid Request; with 2 both succeed. */
START_TEST(test_resource_limit)
{
	int second_atomic = _i / 2;
	uint8_t dest_rd = (uint8_t)(1 + _i % 2);
	struct pair p;
	struct th_cqe_log *la;

	pair_new(&p, ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ,
		 dest_rd, IBV_MTU_1024);
	th_reg_mr(p.w, 0, 0x111, 1, 0x100000, 2 * 65536, IBV_ACCESS_LOCAL_WRITE, 0);
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_RDMA_READ, 0x100000, 65536,
				      0x111, B_ADDR, 0x201, 0, 0), 0);
	if (second_atomic)
		ck_assert_int_eq(post_atomic(&p, 2, IBV_WR_ATOMIC_FETCH_AND_ADD,
					     B_ADDR + 65536, 0x201, 1, 0, 0,
					     0x101), 0);
	else
		ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_RDMA_READ,
					      0x110000, 65536, 0x111,
					      B_ADDR + 65536, 0x201, 0, 0), 0);
	ck_assert_uint_eq(p.w->qlen, 2);	/* both requests on the wire */
	deliver_one(p.w);
	deliver_one(p.w);
	ck_assert_uint_eq(p.w->nsched, 1);	/* B still owes responses */
	th_run(p.w, 10000);

	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 2);
	check_cqe(&la->v[0], 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	ck_assert_uint_eq(count_from(p.w, 1, OP_READ_FIRST), 1 + (dest_rd == 2 &&
							  !second_atomic));
	if (dest_rd == 1) {
		const struct th_pkt *nak = find_from(p.w, 1, OP_ACK, 0);

		ck_assert_ptr_nonnull(nak);
		ck_assert_uint_eq(nak->syndrome, 0x61);
		ck_assert_uint_eq(nak->psn, PSN_A + 64);
		ck_assert_uint_eq(la->v[1].wr_id, 2);
		ck_assert_int_eq(la->v[1].status, IBV_WC_REM_INV_REQ_ERR);
		ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_ERR);
		ck_assert_int_eq(p.w->node[1].last_event, IBV_EVENT_QP_REQ_ERR);
		ck_assert_ptr_nonnull(strstr(p.w->node[1].logtext,
			"no responder resource (1 in use, max_dest_rd_atomic 1)"));
		ck_assert_uint_eq(get64(p.bmem + 65536),
				  get64((const uint8_t[8]){ 3, 10, 17, 24, 31, 38, 45, 52 }));
	} else {
		check_cqe(&la->v[1], 2, IBV_WC_SUCCESS,
			  second_atomic ? IBV_WC_FETCH_ADD : IBV_WC_RDMA_READ);
		ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);
		ck_assert_uint_eq(count_from(p.w, 1, OP_ACK), 0);
	}
	pair_free(&p);
}
END_TEST

/* A copy of a queued READ holds no second resource: behind a 120 KiB READ
 * whose 120 responses are being sent (32 per delivery), READ1, a copy of
 * READ1 and READ2 wait;
 * with max_dest_rd_atomic 3 READ2 finds 2 in use (READ0's responses and
 * READ1), not 3, and all three READs complete. */
START_TEST(test_resource_copy_not_counted)
{
	struct pair p;
	struct th_wire_pkt c;
	struct th_cqe_log *la;

	pair_new(&p, ATOMIC_ACC, IBV_ACCESS_REMOTE_READ, 3, IBV_MTU_1024);
	th_reg_mr(p.w, 0, 0x111, 1, 0x100000, 2 * 65536, IBV_ACCESS_LOCAL_WRITE, 0);
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_RDMA_READ, 0x100000, 120 * 1024,
				      0x111, B_ADDR, 0x201, 0, 0), 0);
	ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_RDMA_READ, 0x11F000, 1024,
				      0x111, B_ADDR + 200 * 1024, 0x201, 0, 0), 0);
	ck_assert_int_eq(th_post_send(p.a, 3, IBV_WR_RDMA_READ, 0x11F400, 1024,
				      0x111, B_ADDR + 201 * 1024, 0x201, 0, 0), 0);
	ck_assert_uint_eq(p.w->qlen, 3);
	deliver_one(p.w);			/* READ0: responses start */
	c = p.w->q[p.w->qhead];			/* READ1, delivered twice */
	ck_assert_int_eq(xport_input(p.w->node[1].dev, c.data, c.len,
				     &p.w->node[0].gid, &p.w->node[1].gid,
				     c.sport, ROCE_UDP_PORT), 0);
	deliver_one(p.w);
	ck_assert_uint_eq(p.w->nsched, 1);	/* READ0 not done yet */
	deliver_one(p.w);			/* READ2 */
	th_run(p.w, 10000);
	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 3);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(la->v[i].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(p.w->node[0].mr[1].buf + 0x1F400, p.bmem + 201 * 1024,
				1024), 0);
	ck_assert_uint_eq(count_from(p.w, 1, OP_ACK), 0);
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);
	ck_assert_uint_eq(xport_qp_stats(p.b)->dup_requests, 1);
	pair_free(&p);
}
END_TEST

/* max_rd_atomic 1: the wire alternates request and answer; 16: all five
 * requests leave before the first answer. */
START_TEST(test_max_rd_atomic_window)
{
	uint8_t max_rd = _i ? 16 : 1;
	struct pair p;
	struct xport_qp_attr at;
	unsigned k = 0;

	pair_new(&p, ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC, 16, IBV_MTU_1024);
	memset(&at, 0, sizeof(at));
	at.max_rd_atomic = max_rd;
	ck_assert_int_eq(xport_qp_modify(p.a, &at, IBV_QP_MAX_QP_RD_ATOMIC), 0);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(post_atomic(&p, i, IBV_WR_ATOMIC_FETCH_AND_ADD,
					     B_ADDR, 0x201, 1, 0, 8 * i, 0x101), 0);
	th_run(p.w, 1000);
	ck_assert_uint_eq(p.w->nlog, 10);
	for (unsigned i = 0; i < 10; i++) {
		uint8_t want = max_rd == 1 ? (i % 2 ? OP_ATOMIC_ACK : OP_FETCH_ADD) :
				(i < 5 ? OP_FETCH_ADD : OP_ATOMIC_ACK);

		ck_assert_uint_eq(p.w->log[i].opcode, want);
	}
	for (unsigned i = 0; i < 5; i++)
		k += get64(p.amem + 8 * i) == get64(p.amem) + i;
	ck_assert_uint_eq(k, 5);
	ck_assert_uint_eq(p.w->node[0].cqes.n, 5);
	pair_free(&p);
}
END_TEST

START_TEST(test_post_checks)
{
	struct pair p;
	struct xport_send_wqe wqe;
	struct xport_qp *uc_a, *uc_b;

	pair_new(&p, ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC, 4, IBV_MTU_1024);
	memset(&wqe, 0, sizeof(wqe));
	wqe.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wqe.remote_addr = B_ADDR;
	wqe.rkey = 0x201;
	wqe.num_sge = XPORT_MAX_SGE + 1;
	ck_assert_int_eq(xport_post_send(p.a, &wqe), EINVAL);
	wqe.num_sge = 0;
	wqe.send_flags = IBV_SEND_INLINE;
	ck_assert_int_eq(xport_post_send(p.a, &wqe), EINVAL);
	wqe.send_flags = IBV_SEND_SIGNALED;
	/* ATOMIC_WRITE and FLUSH take no local buffer, FLUSH a placement
	 * type (abi_ring.h) */
	wqe.opcode = (enum ibv_wr_opcode)15;	/* ATOMIC_WRITE */
	wqe.num_sge = 1;
	ck_assert_int_eq(xport_post_send(p.a, &wqe), EINVAL);
	wqe.num_sge = 0;
	wqe.opcode = (enum ibv_wr_opcode)14;	/* FLUSH */
	ck_assert_int_eq(xport_post_send(p.a, &wqe), EINVAL);	/* swap 0: no type */
	wqe.swap = 0x21;	/* level 2: reserved */
	ck_assert_int_eq(xport_post_send(p.a, &wqe), EINVAL);
	wqe.swap = 1;
	wqe.compare_add = 1ull << 32;	/* beyond the RETH's DMA length */
	ck_assert_int_eq(xport_post_send(p.a, &wqe), EINVAL);
	/* UC and UD carry no atomics */
	wqe.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	uc_a = th_qp(p.w, 0, IBV_QPT_UC, 0x33, 4);
	uc_b = th_qp(p.w, 1, IBV_QPT_UC, 0x44, 4);
	th_connect(p.w, uc_a, uc_b, IBV_MTU_1024, 1, 1, 0, 0, 0, 0);
	ck_assert_int_eq(xport_post_send(uc_a, &wqe), EINVAL);
	pair_free(&p);
}
END_TEST

/* An atomic whose local data is not one 8-byte SGE (num_sge 0, one SGE
 * of 4 or 16 bytes, two of 4 + 4), CMP_SWAP and FETCH_ADD, then a good
 * FETCH_ADD: the first completes with LOC_LEN_ERR in SQ order, the second
 * with WR_FLUSH_ERR, the QP in ERR without an async event (a local error's
 * report is its CQE); no packet leaves, neither the target nor the 16
 * local bytes at the SGE change. */
START_TEST(test_local_sge_not_8)
{
	static const struct { uint32_t num_sge, len0, len1; } shape[4] = {
		{ 0, 0, 0 }, { 1, 4, 0 }, { 1, 16, 0 }, { 2, 4, 4 },
	};
	struct pair p;
	struct xport_send_wqe wqe;
	struct th_cqe_log *la;

	pair_new(&p, ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC, 4, IBV_MTU_1024);
	memset(&wqe, 0, sizeof(wqe));
	wqe.wr_id = 1;
	wqe.wr_index = 1;
	wqe.opcode = _i & 1 ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
	wqe.send_flags = IBV_SEND_SIGNALED;
	wqe.remote_addr = B_ADDR + 64;
	wqe.rkey = 0x201;
	wqe.compare_add = get64(p.bmem + 64);
	wqe.swap = 7;
	wqe.num_sge = shape[_i / 2].num_sge;
	wqe.sg_list[0] = (struct ibv_sge){ A_ADDR + 256, shape[_i / 2].len0, 0x101 };
	wqe.sg_list[1] = (struct ibv_sge){ A_ADDR + 256 + shape[_i / 2].len0,
					   shape[_i / 2].len1, 0x101 };
	ck_assert_int_eq(xport_post_send(p.a, &wqe), 0);
	ck_assert_int_eq(post_atomic(&p, 2, IBV_WR_ATOMIC_FETCH_AND_ADD, B_ADDR + 64, 0x201, 1,
				     0, 512, 0x101), 0);
	th_run(p.w, 1000);
	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 2);
	check_cqe(&la->v[0], 1, IBV_WC_LOC_LEN_ERR, IBV_WC_FETCH_ADD);
	check_cqe(&la->v[1], 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_FETCH_ADD);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_ERR);
	ck_assert_uint_eq(p.w->node[0].events, 0);
	ck_assert_uint_eq(p.w->nlog, 0);
	for (unsigned i = 0; i < 16; i++)
		ck_assert_uint_eq(p.bmem[64 + i], (uint8_t)((64 + i) * 7 + 3));
	for (unsigned i = 256; i < 272; i++)
		ck_assert_uint_eq(p.amem[i], 0xEE);
	ck_assert_uint_eq(get64(p.amem + 512), 0xEEEEEEEEEEEEEEEEull);
	pair_free(&p);
}
END_TEST

/* 2000 FETCH_ADDs of 3 under 5 % drop, 1 % duplication, 2 % reordering:
 * the word ends at exactly 6000 and the originals are 0, 3, ... 5997, each
 * once (a re-executed duplicate would skip or repeat one). */
START_TEST(test_lossy_fetch_add)
{
	struct pair p;
	static uint8_t seen[2000];
	unsigned done = 0, posted = 0;

	pair_new(&p, ATOMIC_ACC, IBV_ACCESS_REMOTE_ATOMIC, 16, IBV_MTU_1024);
	p.w->log_on = false;
	p.w->drop_ppm = 500;
	p.w->dup_ppm = 100;
	p.w->reorder_ppm = 200;
	p.w->rng = 0x5EED0A70ull;
	put64(p.bmem, 0);
	memset(seen, 0, sizeof(seen));
	while (done < 2000) {
		while (posted < 2000 && posted - done < 32) {
			ck_assert_int_eq(post_atomic(&p, posted,
				IBV_WR_ATOMIC_FETCH_AND_ADD, B_ADDR, 0x201, 3, 0,
				8 * (posted % 64), 0x101), 0);
			posted++;
		}
		th_run(p.w, 1000000);
		for (; done < p.w->node[0].cqes.n; done++) {
			const struct xport_cqe *c = &p.w->node[0].cqes.v[done];
			uint64_t orig = get64(p.amem + 8 * (c->wr_id % 64));

			ck_assert_int_eq(c->status, IBV_WC_SUCCESS);
			ck_assert_uint_eq(c->wr_id, done);
			ck_assert_uint_eq(orig % 3, 0);
			ck_assert_uint_lt(orig / 3, 2000);
			ck_assert_uint_eq(seen[orig / 3], 0);
			seen[orig / 3] = 1;
		}
	}
	ck_assert_uint_eq(get64(p.bmem), 6000);
	ck_assert_uint_gt(p.w->dropped, 0);
	ck_assert_uint_gt(xport_qp_stats(p.b)->dup_requests, 0);
	pair_free(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transport_atomic");
	TCase *tc = tcase_create("atomic");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_cmp_swap);
	tcase_add_test(tc, test_fetch_add_wrap);
	tcase_add_loop_test(tc, test_atomic_errors, 0,
			    (int)(sizeof(err_cases) / sizeof(err_cases[0])));
	tcase_add_loop_test(tc, test_duplicate_replayed, 0, 2);
	tcase_add_test(tc, test_duplicate_unknown_dropped);
	tcase_add_loop_test(tc, test_resource_limit, 0, 4);
	tcase_add_test(tc, test_resource_copy_not_counted);
	tcase_add_loop_test(tc, test_max_rd_atomic_window, 0, 2);
	tcase_add_test(tc, test_post_checks);
	tcase_add_loop_test(tc, test_local_sge_not_8, 0, 8);
	tcase_add_test(tc, test_lossy_fetch_add);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
