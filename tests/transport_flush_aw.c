/*
 * transport_flush_aw.c: IBTA 1.5 ATOMIC WRITE and FLUSH in the engine, two
 * engines back to back at MTU 1024: the exact 8 bytes written (neighbours
 * untouched), the exact packets (0x1D with RETH and 8-byte payload, 0x1C
 * with FETH and RETH, each one PSN with AckReq, answered by an empty READ
 * Response Only with an ACK AETH and the MSN), FLUSH completing after the
 * 64 KiB WRITE posted before it, completion opcodes IBV_WC_ATOMIC_WRITE (9)
 * and IBV_WC_FLUSH (8); a table of errors with exact NAK syndromes,
 * statuses and events (misaligned VA, MR or QP without REMOTE_WRITE, MR or
 * QP without FLUSH_GLOBAL, PERSISTENT asked of a GLOBAL-only MR, range
 * beyond the MR, bad R_Key) and the post-time EINVAL of a FLUSH without a
 * placement type, of a reserved level, of a length over 32 bits (in
 * transport_atomic.c's test_post_checks); a lost response
 * answered again from the replay cache; 2000 ATOMIC WRITEs over a lossy,
 * duplicating, reordering wire, the last value in place.
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
#define A_REGION (128u * 1024u)
#define B_REGION (256u * 1024u)
#define TIMEOUT 10

#define WR_FLUSH ((enum ibv_wr_opcode)14)	/* IBV_WR_FLUSH */
#define WR_ATOMIC_WRITE ((enum ibv_wr_opcode)15) /* IBV_WR_ATOMIC_WRITE */
#define WC_FLUSH 8				/* IBV_WC_FLUSH */
#define WC_ATOMIC_WRITE 9			/* IBV_WC_ATOMIC_WRITE */
#define ACC_FLUSH_GLOBAL (1u << 8)		/* IBV_ACCESS_FLUSH_GLOBAL */
#define ACC_FLUSH_PERSISTENT (1u << 9)		/* IBV_ACCESS_FLUSH_PERSISTENT */
#define B_ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | ACC_FLUSH_GLOBAL)
#define QP_ACC (IBV_ACCESS_REMOTE_WRITE | ACC_FLUSH_GLOBAL)

#define OP_WRITE_FIRST 0x06
#define OP_READ_RESP_ONLY 0x10
#define OP_ACK 0x11
#define OP_FLUSH 0x1C
#define OP_ATOMIC_WRITE 0x1D

struct pair {
	struct th_world *w;
	struct xport_qp *a, *b;
	uint8_t *amem, *bmem;
};

/* RC pair: A's region key 0x101, B's key 0x201 with B_ACC_; B's QP
 * allows QP_ACC_ and 4 responder resources. */
static void pair_new(struct pair *p, unsigned int b_acc, unsigned int qp_acc)
{
	struct xport_qp_attr at;

	p->w = th_world_new(4096);
	p->a = th_qp(p->w, 0, IBV_QPT_RC, QPN_A, 64);
	p->b = th_qp(p->w, 1, IBV_QPT_RC, QPN_B, 64);
	th_connect(p->w, p->a, p->b, IBV_MTU_1024, PSN_A, PSN_B, TIMEOUT, 7, 7, 1);
	memset(&at, 0, sizeof(at));
	at.qp_access_flags = qp_acc;
	at.max_dest_rd_atomic = 4;
	ck_assert_int_eq(xport_qp_modify(p->b, &at, IBV_QP_ACCESS_FLAGS |
					 IBV_QP_MAX_DEST_RD_ATOMIC), 0);
	p->amem = th_reg_mr(p->w, 0, 0x101, 1, A_ADDR, A_REGION, IBV_ACCESS_LOCAL_WRITE, 0xEE);
	p->bmem = th_reg_mr(p->w, 1, 0x201, 1, B_ADDR, B_REGION, b_acc, 0);
	for (unsigned i = 0; i < B_REGION; i++)
		p->bmem[i] = (uint8_t)(i * 7 + 3);
}

static uint8_t pattern(unsigned i)
{
	return (uint8_t)(i * 7 + 3);
}

static int post_aw(struct pair *p, uint64_t wr_id, uint64_t raddr, uint32_t rkey,
		   const uint8_t bytes[8])
{
	struct xport_send_wqe wqe;

	memset(&wqe, 0, sizeof(wqe));
	wqe.wr_id = wr_id;
	wqe.wr_index = (uint32_t)wr_id;
	wqe.opcode = WR_ATOMIC_WRITE;
	wqe.send_flags = IBV_SEND_SIGNALED;
	wqe.remote_addr = raddr;
	wqe.rkey = rkey;
	memcpy(&wqe.compare_add, bytes, 8);
	return xport_post_send(p->a, &wqe);
}

/* FETH byte FETH (level << 4 | placement type). */
static int post_flush(struct pair *p, uint64_t wr_id, uint64_t raddr, uint32_t rkey,
		      uint32_t len, uint8_t feth)
{
	struct xport_send_wqe wqe;

	memset(&wqe, 0, sizeof(wqe));
	wqe.wr_id = wr_id;
	wqe.wr_index = (uint32_t)wr_id;
	wqe.opcode = WR_FLUSH;
	wqe.send_flags = IBV_SEND_SIGNALED;
	wqe.remote_addr = raddr;
	wqe.rkey = rkey;
	wqe.compare_add = len;
	wqe.swap = feth;
	return xport_post_send(p->a, &wqe);
}

static unsigned count_from(struct th_world *w, int from, uint8_t opcode)
{
	unsigned n = 0;

	for (unsigned i = 0; i < w->nlog; i++)
		n += w->log[i].from == from && w->log[i].opcode == opcode;
	return n;
}

static const struct th_pkt *find_from(struct th_world *w, int from, uint8_t opcode,
				      unsigned nth)
{
	for (unsigned i = 0; i < w->nlog; i++)
		if (w->log[i].from == from && w->log[i].opcode == opcode && nth-- == 0)
			return &w->log[i];
	return NULL;
}

static const uint8_t AW_BYTES[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF };

START_TEST(test_atomic_write)
{
	struct pair p;
	const struct th_pkt *q, *r;
	struct th_cqe_log *la;

	pair_new(&p, B_ACC, QP_ACC);
	ck_assert_int_eq(post_aw(&p, 1, B_ADDR + 64, 0x201, AW_BYTES), 0);
	th_run(p.w, 1000);
	ck_assert_mem_eq(p.bmem + 64, AW_BYTES, 8);
	ck_assert_uint_eq(p.bmem[63], pattern(63));
	ck_assert_uint_eq(p.bmem[72], pattern(72));
	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 1);
	ck_assert_uint_eq(la->v[0].wr_id, 1);
	ck_assert_int_eq(la->v[0].status, IBV_WC_SUCCESS);
	ck_assert_int_eq((int)la->v[0].opcode, WC_ATOMIC_WRITE);
	ck_assert_int_eq((int)la->v[0].wr_opcode, 15);
	ck_assert_uint_eq(p.w->node[1].cqes.n, 0);
	ck_assert_uint_eq(p.w->nlog, 2);
	q = find_from(p.w, 0, OP_ATOMIC_WRITE, 0);
	r = find_from(p.w, 1, OP_READ_RESP_ONLY, 0);
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(q->psn, PSN_A);
	ck_assert(q->ackreq);
	ck_assert_uint_eq(q->payload_len, 8);
	ck_assert_uint_eq(q->dma_len, 8);
	ck_assert_uint_eq(r->psn, PSN_A);
	ck_assert_uint_eq(r->payload_len, 0);
	ck_assert_uint_eq(r->syndrome, 0x1F);
	ck_assert_uint_eq(r->msn, 1);
	ck_assert_uint_eq(xport_qp_sq_psn(p.a), PSN_A + 1);
	ck_assert_uint_eq(xport_qp_rq_psn(p.b), PSN_A + 1);
	th_world_free(p.w);
}
END_TEST

/* A 64 KiB WRITE (64 packets) then a FLUSH of its range (level RANGE, then
 * MR): both complete in order, the data in place when the FLUSH completes. */
START_TEST(test_flush_after_write)
{
	struct pair p;
	const struct th_pkt *q, *r;
	struct th_cqe_log *la;
	uint8_t sel = (uint8_t)_i;

	pair_new(&p, B_ACC, QP_ACC);
	for (unsigned i = 0; i < 65536; i++)
		p.amem[i] = (uint8_t)(i ^ 0x5A);
	ck_assert_int_eq(th_post_send(p.a, 1, IBV_WR_RDMA_WRITE, A_ADDR, 65536, 0x101,
				      B_ADDR + 4096, 0x201, 0, 0), 0);
	ck_assert_int_eq(post_flush(&p, 2, B_ADDR + 4096, 0x201, 65536, (uint8_t)(sel << 4 | 1)), 0);
	th_run(p.w, 10000);
	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 2);
	ck_assert_uint_eq(la->v[0].wr_id, 1);
	ck_assert_int_eq(la->v[0].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(la->v[0].opcode, IBV_WC_RDMA_WRITE);
	ck_assert_uint_eq(la->v[1].wr_id, 2);
	ck_assert_int_eq(la->v[1].status, IBV_WC_SUCCESS);
	ck_assert_int_eq((int)la->v[1].opcode, WC_FLUSH);
	ck_assert_mem_eq(p.bmem + 4096, p.amem, 65536);
	ck_assert_uint_eq(p.bmem[4095], pattern(4095));
	ck_assert_uint_eq(p.bmem[4096 + 65536], pattern(4096 + 65536));
	q = find_from(p.w, 0, OP_FLUSH, 0);
	r = find_from(p.w, 1, OP_READ_RESP_ONLY, 0);
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(q->psn, PSN_A + 64);
	ck_assert(q->ackreq);
	ck_assert_uint_eq(q->payload_len, 0);
	ck_assert_uint_eq(q->dma_len, 65536);
	ck_assert_uint_eq(r->psn, PSN_A + 64);
	ck_assert_uint_eq(r->payload_len, 0);
	ck_assert_uint_eq(r->syndrome, 0x1F);
	ck_assert_uint_eq(r->msn, 2);
	ck_assert_uint_eq(count_from(p.w, 0, OP_WRITE_FIRST), 1);
	ck_assert_uint_eq(count_from(p.w, 1, OP_READ_RESP_ONLY), 1);
	th_world_free(p.w);
}
END_TEST

/* ---- errors: table ---- */

struct err_case {
	const char *name;
	bool flush;
	uint64_t raddr;
	uint32_t rkey, len;
	uint8_t feth;
	unsigned int b_acc, qp_acc;
	uint8_t nak;
	enum ibv_wc_status status;
	enum ibv_event_type b_event;
};

#define INV 0x61, IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR
#define ACC 0x62, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR
#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static const struct err_case err_cases[] = {
	{ "AW misaligned VA", false, B_ADDR + 4, 0x201, 8, 0, B_ACC, QP_ACC, INV },
	{ "AW MR without REMOTE_WRITE", false, B_ADDR, 0x201, 8, 0,
	  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ, QP_ACC, ACC },
	{ "AW QP without REMOTE_WRITE", false, B_ADDR, 0x201, 8, 0, B_ACC,
	  IBV_ACCESS_REMOTE_ATOMIC | ACC_FLUSH_GLOBAL, INV },
	{ "AW rkey+1", false, B_ADDR, 0x202, 8, 0, B_ACC, QP_ACC, ACC },
	{ "AW beyond the region", false, B_ADDR + B_REGION, 0x201, 8, 0, B_ACC, QP_ACC, ACC },
	{ "FLUSH MR without FLUSH_GLOBAL", true, B_ADDR, 0x201, 4096, 0x01, RW, QP_ACC, ACC },
	{ "FLUSH level MR, MR without FLUSH_GLOBAL", true, B_ADDR, 0x201, 0, 0x11, RW, QP_ACC, ACC },
	{ "FLUSH QP without FLUSH_GLOBAL", true, B_ADDR, 0x201, 4096, 0x01, B_ACC,
	  IBV_ACCESS_REMOTE_WRITE, INV },
	{ "FLUSH PERSISTENT, MR and QP GLOBAL only", true, B_ADDR, 0x201, 4096, 0x02, B_ACC,
	  QP_ACC | ACC_FLUSH_PERSISTENT, ACC },
	{ "FLUSH range beyond the MR", true, B_ADDR + B_REGION - 4096, 0x201, 8192, 0x01, B_ACC,
	  QP_ACC, ACC },
	{ "FLUSH rkey+1", true, B_ADDR, 0x202, 4096, 0x11, B_ACC, QP_ACC, ACC },
};

START_TEST(test_errors)
{
	const struct err_case *c = &err_cases[_i];
	struct pair p;
	const struct th_pkt *nak;
	struct th_cqe_log *la;
	uint64_t off = c->raddr - B_ADDR;

	pair_new(&p, c->b_acc, c->qp_acc);
	if (c->flush)
		ck_assert_int_eq(post_flush(&p, 1, c->raddr, c->rkey, c->len, c->feth), 0);
	else
		ck_assert_int_eq(post_aw(&p, 1, c->raddr, c->rkey, AW_BYTES), 0);
	ck_assert_int_eq(th_post_send(p.a, 2, IBV_WR_SEND, A_ADDR, 10, 0x101, 0, 0, 0, 0), 0);
	th_run(p.w, 10000);
	nak = find_from(p.w, 1, OP_ACK, 0);
	ck_assert_msg(nak != NULL, "%s: no NAK", c->name);
	ck_assert_msg(nak->syndrome == c->nak, "%s: syndrome 0x%02x", c->name, nak->syndrome);
	ck_assert_uint_eq(nak->psn, PSN_A);
	ck_assert_uint_eq(count_from(p.w, 1, OP_READ_RESP_ONLY), 0);
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_ERR);
	ck_assert_uint_eq(p.w->node[1].events, 1);
	ck_assert_int_eq(p.w->node[1].last_event, c->b_event);
	/* nothing written */
	if (off + 8 <= B_REGION)
		for (unsigned i = 0; i < 8; i++)
			ck_assert_uint_eq(p.bmem[off + i], pattern((unsigned)off + i));
	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 2);
	ck_assert_msg(la->v[0].status == c->status, "%s: status %d", c->name, la->v[0].status);
	ck_assert_uint_eq(la->v[0].wr_id, 1);
	ck_assert_int_eq(la->v[1].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_int_eq(xport_qp_state(p.a), IBV_QPS_ERR);
	th_world_free(p.w);
}
END_TEST

/* The empty READ Response Only of an ATOMIC WRITE (_i 0) or FLUSH (_i 1)
 * is lost: the requester times out and resends, the responder answers the
 * duplicates from its replay cache (MSN counted once), one CQE. */
START_TEST(test_lost_response)
{
	struct pair p;
	struct th_cqe_log *la;
	const struct th_pkt *r;

	pair_new(&p, B_ACC, QP_ACC);
	p.w->drop_from = 1;
	p.w->drop_rule[0].psn = PSN_A;
	p.w->drop_rule[0].nth = 1;
	p.w->ndrop_rule = 1;
	if (_i == 0)
		ck_assert_int_eq(post_aw(&p, 1, B_ADDR + 8, 0x201, AW_BYTES), 0);
	else
		ck_assert_int_eq(post_flush(&p, 1, B_ADDR, 0x201, 4096, 0x01), 0);
	th_run(p.w, 1000);
	ck_assert_uint_eq(count_from(p.w, 0, _i == 0 ? OP_ATOMIC_WRITE : OP_FLUSH), 3);
	ck_assert_uint_eq(count_from(p.w, 1, OP_READ_RESP_ONLY), 3);
	r = find_from(p.w, 1, OP_READ_RESP_ONLY, 2);
	ck_assert_uint_eq(r->psn, PSN_A);
	ck_assert_uint_eq(r->msn, 1);
	ck_assert_uint_eq(xport_qp_stats(p.b)->dup_requests, 2);
	ck_assert_uint_eq(xport_qp_stats(p.a)->timeouts, 1);
	la = &p.w->node[0].cqes;
	ck_assert_uint_eq(la->n, 1);
	ck_assert_int_eq(la->v[0].status, IBV_WC_SUCCESS);
	ck_assert_int_eq((int)la->v[0].opcode, _i == 0 ? WC_ATOMIC_WRITE : WC_FLUSH);
	if (_i == 0)
		ck_assert_mem_eq(p.bmem + 8, AW_BYTES, 8);
	ck_assert_int_eq(xport_qp_state(p.b), IBV_QPS_RTS);
	th_world_free(p.w);
}
END_TEST

/* 2000 ATOMIC WRITEs of the counter i to the same word, 4 outstanding,
 * over a wire that drops, duplicates and reorders: 2000 successful CQEs in
 * order, the word holds the last value. */
START_TEST(test_lossy)
{
	struct pair p;
	struct th_cqe_log *la;
	unsigned posted = 0;

	pair_new(&p, B_ACC, QP_ACC);
	p.w->log_on = false;
	p.w->drop_ppm = 500;
	p.w->dup_ppm = 100;
	p.w->reorder_ppm = 200;
	p.w->rng = 0x5EED0A71ull;
	la = &p.w->node[0].cqes;
	while (la->n < 2000) {
		while (posted < 2000 && posted - la->n < 4) {
			uint64_t v = 0x1000000000000000ull + posted;

			ck_assert_int_eq(post_aw(&p, posted, B_ADDR + 128, 0x201, (const uint8_t *)&v), 0);
			posted++;
		}
		th_run(p.w, 1000000);
	}
	for (unsigned i = 0; i < 2000; i++) {
		ck_assert_uint_eq(la->v[i].wr_id, i);
		ck_assert_int_eq(la->v[i].status, IBV_WC_SUCCESS);
	}
	{
		uint64_t v;

		memcpy(&v, p.bmem + 128, 8);
		ck_assert_uint_eq(v, 0x1000000000000000ull + 1999);
	}
	ck_assert_uint_gt(p.w->dropped, 0);
	th_world_free(p.w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transport_flush_aw");
	TCase *tc = tcase_create("flush_aw");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_atomic_write);
	tcase_add_loop_test(tc, test_flush_after_write, 0, 2);
	tcase_add_loop_test(tc, test_errors, 0, (int)(sizeof(err_cases) / sizeof(err_cases[0])));
	tcase_add_loop_test(tc, test_lost_response, 0, 2);
	tcase_add_test(tc, test_lossy);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
