/*
 * traffic_rq_refill.c - a hostile receive WQE found only when a message
 * arrives (Check, run inside `uroce run` by traffic_rq_refill.sh).
 *
 * The hostile side writes a malformed receive WQE straight into its own RQ
 * ring and publishes rq_pi without ringing the doorbell, so the daemon
 * meets the WQE only when the sender's SEND (RC: 64 KiB at MTU 1024) or
 * datagram (UD) finds no receive WQE and the engine reads the ring
 * (xport_ops.rq_refill). Sender and hostile receiver are separate device
 * contexts (separate clients of the daemon): a doorbell of the sender never
 * reads the hostile ring.
 *
 * Expected (mlx5; the doorbell path gives the same, docs/transport.md):
 *   a WQE the NIC cannot execute (SGE count above max_recv_sge, a
 *   wqe_index that is not its slot's number) completes with
 *   IBV_WC_LOC_QP_OP_ERR; a well-formed WQE whose SGE fails at data
 *   placement (lkey of another PD, SGE running past its MR) with
 *   IBV_WC_LOC_PROT_ERR. Either way the hostile QP goes to ERR with
 *   IBV_EVENT_QP_FATAL; an RC sender gets NAK Remote Operational Error
 *   (IBV_WC_REM_OP_ERR), a UD sender IBV_WC_SUCCESS. After every row a
 *   clean RC pair of two other contexts moves 200 64 KiB messages exactly.
 * Sources: ibv_poll_cq(3) (statuses), ibv_post_recv(3), IBTA 9.7.5.2 (NAK
 * codes), 11.6.3 (async events).
 */
#include "config.h"
#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "provider/uroce.h"
#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 20000
#define MSG 65536u      /* RC message bytes */
#define UD_LEN 1024u    /* UD payload bytes */
#define CLEAN_MSGS 200u
#define HOSTILE_WRID 0x600dbadull

/* One context (one client of the daemon) with a QP and a 64 KiB MR. */
struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2; /* pd2: a second PD, for the other-PD lkey */
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr, *mr2;
	unsigned char *buf, *buf2;
	union ibv_gid gid;
};

static void end_open(struct end *e, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 2 },
	};
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	memset(e, 0, sizeof(*e));
	e->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(e->ctx);
	ck_assert_int_eq(ibv_query_gid(e->ctx, 1, 0, &e->gid), 0);
	e->pd = ibv_alloc_pd(e->ctx);
	e->pd2 = ibv_alloc_pd(e->ctx);
	ck_assert(e->pd && e->pd2);
	e->buf = calloc(1, MSG);
	e->buf2 = calloc(1, MSG);
	ck_assert(e->buf && e->buf2);
	e->mr = ibv_reg_mr(e->pd, e->buf, MSG, acc);
	e->mr2 = ibv_reg_mr(e->pd2, e->buf2, MSG, acc);
	ck_assert(e->mr && e->mr2);
	e->cq = ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	ck_assert_ptr_nonnull(e->cq);
	qa.send_cq = qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	ck_assert_ptr_nonnull(e->qp);
}

static void end_close(struct end *e)
{
	ck_assert_int_eq(ibv_destroy_qp(e->qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(e->cq), 0);
	ck_assert_int_eq(ibv_dereg_mr(e->mr), 0);
	ck_assert_int_eq(ibv_dereg_mr(e->mr2), 0);
	ck_assert_int_eq(ibv_dealloc_pd(e->pd), 0);
	ck_assert_int_eq(ibv_dealloc_pd(e->pd2), 0);
	ck_assert_int_eq(ibv_close_device(e->ctx), 0);
	free(e->buf);
	free(e->buf2);
}

static void rc_pair(struct end *a, struct end *b)
{
	end_open(a, IBV_QPT_RC);
	end_open(b, IBV_QPT_RC);
	ck_assert_int_eq(tv_rc_connect(a->qp, b->qp->qp_num, &b->gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(b->qp, a->qp->qp_num, &a->gid, IBV_MTU_1024, 14), 0);
}

/* The hostile receive WQE: header fields and up to two SGEs as written. */
struct bad_wqe {
	int index_skew; /* added to the WQE's own number in wqe_index */
	unsigned int num_sge;
	struct uroce_sge sge[2];
};

/* Writes W into QP's RQ ring and publishes rq_pi, with no doorbell (what a
 * client may do to its own ring memory; ibv_post_recv(3) would also ring). */
static void silent_post_recv(struct ibv_qp *ibqp, const struct bad_wqe *w)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	struct uroce_qp_ring_hdr *h = qp->ring;
	uint32_t slot = qp->rq_head & (qp->cap.max_recv_wr - 1);
	unsigned char *p = (unsigned char *)qp->ring + qp->layout.rq_offset +
			   (size_t)slot * qp->layout.rq_stride;
	struct uroce_recv_wqe hdr = {
		.wqe_index = (uint16_t)(qp->rq_head + w->index_skew),
		.num_sge = (uint8_t)w->num_sge,
	};

	memset(p, 0, qp->layout.rq_stride);
	memcpy(p, &hdr, sizeof(hdr));
	memcpy(p + sizeof(hdr), w->sge, sizeof(w->sge));
	qp->rq_wrid[slot] = HOSTILE_WRID;
	qp->rq_head++;
	__atomic_store_n(&h->rq_pi, qp->rq_head, __ATOMIC_RELEASE);
}

static int next_async(struct ibv_context *ctx, int ms, struct ibv_async_event *ev)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	int fl = fcntl(ctx->async_fd, F_GETFL);

	ck_assert_int_eq(fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
	if (poll(&p, 1, ms) != 1)
		return ETIMEDOUT;
	ck_assert_int_eq(ibv_get_async_event(ctx, ev), 0);
	return 0;
}

/* The hostile QP's side: one receive CQE with STATUS for the hostile
 * WQE, the QP in ERR, one QP_FATAL event on it. */
static void expect_hostile(struct end *b, enum ibv_wc_status status)
{
	struct ibv_async_event ev;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;

	ck_assert_int_eq(tv_poll_one(b->cq, WAIT_MS, &wc), 0);
	ck_assert_msg(wc.status == status, "hostile QP: status %s, expected %s",
		      ibv_wc_status_str(wc.status), ibv_wc_status_str(status));
	ck_assert_uint_eq(wc.wr_id, HOSTILE_WRID);
	ck_assert_uint_eq(wc.qp_num, b->qp->qp_num);
	ck_assert_int_eq(ibv_query_qp(b->qp, &qa, IBV_QP_STATE, &ia), 0);
	ck_assert_int_eq(qa.qp_state, IBV_QPS_ERR);
	ck_assert_int_eq(next_async(b->ctx, WAIT_MS, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_QP_FATAL);
	ck_assert_ptr_eq(ev.element.qp, b->qp);
	ibv_ack_async_event(&ev);
	ck_assert_int_eq(tv_poll_one(b->cq, 200, &wc), ETIMEDOUT);
}

static void send_one(struct end *a, uint32_t len, struct ibv_ah *ah, uint32_t dqpn)
{
	struct ibv_sge sge = { (uintptr_t)a->buf, len, a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	if (ah) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = dqpn;
		wr.wr.ud.remote_qkey = TV_QKEY;
	}
	ck_assert_int_eq(ibv_post_send(a->qp, &wr, &bad), 0);
}

static void expect_send(struct end *a, enum ibv_wc_status status)
{
	struct ibv_wc wc;

	ck_assert_int_eq(tv_poll_one(a->cq, WAIT_MS, &wc), 0);
	ck_assert_msg(wc.status == status, "sender: status %s, expected %s",
		      ibv_wc_status_str(wc.status), ibv_wc_status_str(status));
	ck_assert_uint_eq(wc.wr_id, 1);
}

/* Two other contexts: CLEAN_MSGS 64 KiB SENDs at MTU 1024, each byte-exact. */
static void clean_traffic(void)
{
	struct end c, d;

	rc_pair(&c, &d);
	for (uint32_t k = 0; k < CLEAN_MSGS; k++) {
		struct ibv_sge rs = { (uintptr_t)d.buf, MSG, d.mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = k, .sg_list = &rs, .num_sge = 1 }, *rbad = NULL;
		struct ibv_wc wc;

		for (uint32_t i = 0; i < MSG; i++)
			c.buf[i] = (unsigned char)(k * 7 + i * 13 + (i >> 8));
		ck_assert_int_eq(ibv_post_recv(d.qp, &rw, &rbad), 0);
		send_one(&c, MSG, NULL, 0);
		expect_send(&c, IBV_WC_SUCCESS);
		ck_assert_int_eq(tv_poll_one(d.cq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, k);
		ck_assert_uint_eq(wc.byte_len, MSG);
		ck_assert_int_eq(memcmp(c.buf, d.buf, MSG), 0);
	}
	end_close(&c);
	end_close(&d);
}

/* RC row: B's hostile WQE (built by MAKE from B), A's 64 KiB SEND. */
static void rc_row(void (*make)(struct end *b, struct bad_wqe *w), enum ibv_wc_status st)
{
	struct end a, b;
	struct bad_wqe w;

	rc_pair(&a, &b);
	memset(&w, 0, sizeof(w));
	make(&b, &w);
	silent_post_recv(b.qp, &w);
	send_one(&a, MSG, NULL, 0);
	expect_send(&a, IBV_WC_REM_OP_ERR);
	expect_hostile(&b, st);
	end_close(&a);
	end_close(&b);
	clean_traffic();
}

static void ud_row(void (*make)(struct end *b, struct bad_wqe *w), enum ibv_wc_status st)
{
	struct end a, b;
	struct bad_wqe w;
	struct ibv_ah *ah;

	end_open(&a, IBV_QPT_UD);
	end_open(&b, IBV_QPT_UD);
	ck_assert_int_eq(tv_ud_ready(a.qp), 0);
	ck_assert_int_eq(tv_ud_ready(b.qp), 0);
	ah = tv_ah(a.pd, &b.gid);
	ck_assert_ptr_nonnull(ah);
	memset(&w, 0, sizeof(w));
	make(&b, &w);
	silent_post_recv(b.qp, &w);
	send_one(&a, UD_LEN, ah, b.qp->qp_num);
	expect_send(&a, IBV_WC_SUCCESS);
	expect_hostile(&b, st);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
	end_close(&a);
	end_close(&b);
	clean_traffic();
}

/* One SGE more than the QP's max_recv_sge. */
static void too_many_sges(struct end *b, struct bad_wqe *w)
{
	w->num_sge = to_uqp(b->qp)->cap.max_recv_sge + 1;
	w->sge[0] = (struct uroce_sge){ (uintptr_t)b->buf, MSG, b->mr->lkey };
}

/* wqe_index of a later lap of the ring (the same slot, one depth on). */
static void index_beyond_producer(struct end *b, struct bad_wqe *w)
{
	w->index_skew = (int)to_uqp(b->qp)->cap.max_recv_wr;
	w->num_sge = 1;
	w->sge[0] = (struct uroce_sge){ (uintptr_t)b->buf, MSG, b->mr->lkey };
}

/* A buffer registered in another PD of the same client. */
static void lkey_of_other_pd(struct end *b, struct bad_wqe *w)
{
	w->num_sge = 1;
	w->sge[0] = (struct uroce_sge){ (uintptr_t)b->buf2, MSG, b->mr2->lkey };
}

/* Lengths whose sum passes 2^32 (0x400 if summed in 32 bits); the first
 * SGE starts halfway into the 64 KiB MR, so data runs past its end. */
static void length_overflow(struct end *b, struct bad_wqe *w)
{
	w->num_sge = 2;
	w->sge[0] = (struct uroce_sge){ (uintptr_t)b->buf + MSG / 2, 0xfffffc00u, b->mr->lkey };
	w->sge[1] = (struct uroce_sge){ (uintptr_t)b->buf, 0x800, b->mr->lkey };
}

START_TEST(rc_too_many_sges)
{
	rc_row(too_many_sges, IBV_WC_LOC_QP_OP_ERR);
}
END_TEST

START_TEST(rc_index_beyond_producer)
{
	rc_row(index_beyond_producer, IBV_WC_LOC_QP_OP_ERR);
}
END_TEST

START_TEST(rc_lkey_of_other_pd)
{
	rc_row(lkey_of_other_pd, IBV_WC_LOC_PROT_ERR);
}
END_TEST

START_TEST(rc_length_overflow)
{
	rc_row(length_overflow, IBV_WC_LOC_PROT_ERR);
}
END_TEST

START_TEST(ud_too_many_sges)
{
	ud_row(too_many_sges, IBV_WC_LOC_QP_OP_ERR);
}
END_TEST

START_TEST(ud_index_beyond_producer)
{
	ud_row(index_beyond_producer, IBV_WC_LOC_QP_OP_ERR);
}
END_TEST

START_TEST(ud_lkey_of_other_pd)
{
	ud_row(lkey_of_other_pd, IBV_WC_LOC_PROT_ERR);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_rq_refill");
	TCase *tc = tcase_create("rq_refill");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, rc_too_many_sges);
	tcase_add_test(tc, rc_index_beyond_producer);
	tcase_add_test(tc, rc_lkey_of_other_pd);
	tcase_add_test(tc, rc_length_overflow);
	tcase_add_test(tc, ud_too_many_sges);
	tcase_add_test(tc, ud_index_beyond_producer);
	tcase_add_test(tc, ud_lkey_of_other_pd);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
