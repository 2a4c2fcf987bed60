/*
 * traffic_srq.c - shared receive queues through the public verbs API on
 * uroce0 (Check, run inside `uroce run` by traffic_srq.sh against a
 * private daemon). Sources: ibv_create_srq(3), ibv_modify_srq(3),
 * ibv_query_srq(3), ibv_post_srq_recv(3), ibv_get_async_event(3);
 * IBTA 10.2.9 (SRQ), 11.6.3 (SRQ limit, last WQE reached).
 *   verbs_errors      device caps, create/modify/query/destroy errors,
 *                     posting beyond max_wr, a QP on an SRQ has no RQ
 *   shared_traffic    two RC QPs (64 KiB messages, MTU 1024) and one UD QP
 *                     take 3000 messages from one SRQ: qp_num, byte_len,
 *                     contents and per-QP order of every completion exact
 *   limit_event       SRQ_LIMIT_REACHED exactly when the count drops below
 *                     the limit, once, then disarmed
 *   last_wqe_reached  QP on an SRQ to ERR: LAST_WQE_REACHED, the SRQ's WQEs
 *                     are not flushed and still serve another QP
 *   empty_srq         an empty SRQ is an empty RQ: RC waits (RNR NAK, retried)
 *                     until a WQE is posted; UD drops the datagram
 *   cqe_cleaned_at_destroy  destroying a QP removes its unpolled receive CQE
 *                     and frees its SRQ WQE (found by SRQN), as mlx5 does
 */
#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 20000
#define MSG 65536u          /* RC message bytes */
#define UD_LEN 512u         /* UD payload bytes */
#define DEPTH 256u          /* SRQ WQEs in the traffic test */
#define SEND_SLOTS 16u      /* outstanding sends per sender */
#define RC_MSGS 500u        /* per RC QP */
#define UD_MSGS 2000u

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	union ibv_gid gid;
};

static void env_open(struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(e->ctx);
	ck_assert_int_eq(ibv_query_gid(e->ctx, 1, 0, &e->gid), 0);
	e->pd = ibv_alloc_pd(e->ctx);
	ck_assert_ptr_nonnull(e->pd);
	e->scq = ibv_create_cq(e->ctx, 1024, NULL, NULL, 0);
	e->rcq = ibv_create_cq(e->ctx, 1024, NULL, NULL, 0);
	ck_assert_ptr_nonnull(e->scq);
	ck_assert_ptr_nonnull(e->rcq);
}

static void env_close(struct env *e)
{
	ck_assert_int_eq(ibv_destroy_cq(e->scq), 0);
	ck_assert_int_eq(ibv_destroy_cq(e->rcq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(e->pd), 0);
	ck_assert_int_eq(ibv_close_device(e->ctx), 0);
}

static struct ibv_srq *mk_srq(struct env *e, uint32_t max_wr, uint32_t max_sge)
{
	struct ibv_srq_init_attr a;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = max_wr;
	a.attr.max_sge = max_sge;
	return ibv_create_srq(e->pd, &a);
}

static struct ibv_qp *mk_qp(struct env *e, enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr qa;
	struct ibv_qp *qp;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.srq = srq;
	qa.qp_type = type;
	qa.cap.max_send_wr = SEND_SLOTS;
	qa.cap.max_recv_wr = srq ? 0 : 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = srq ? 0 : 1;
	qp = ibv_create_qp(e->pd, &qa);
	ck_assert_ptr_nonnull(qp);
	return qp;
}

static int post_srq_one(struct ibv_srq *srq, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

START_TEST(verbs_errors)
{
	struct ibv_device_attr da;
	struct ibv_srq_init_attr_ex ax;
	struct ibv_srq_attr sa;
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	struct ibv_recv_wr wr[130], *bad;
	struct ibv_sge sge[3];
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct env e;
	static char buf[4096];
	int i;

	env_open(&e);
	ck_assert_int_eq(ibv_query_device(e.ctx, &da), 0);
	ck_assert_int_eq(da.max_srq, 1024);
	ck_assert_int_eq(da.max_srq_wr, 16384);
	ck_assert_int_eq(da.max_srq_sge, 16);
	/* limits: what query_device says is what create enforces */
	errno = 0;
	ck_assert_ptr_null(mk_srq(&e, 16385, 1));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(mk_srq(&e, 16, 17));
	ck_assert_int_eq(errno, EINVAL);
	srq = mk_srq(&e, 16384, 16);
	ck_assert_ptr_nonnull(srq);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	/* a tag-matching SRQ without IBV_SRQ_INIT_ATTR_TM (its tm_cap), XRC
	 * without an XRCD: EINVAL (tag matching: tests/traffic_tm.c) */
	memset(&ax, 0, sizeof(ax));
	ax.attr.max_wr = 8;
	ax.attr.max_sge = 1;
	ax.pd = e.pd;
	ax.cq = e.rcq;
	ax.srq_type = IBV_SRQT_TM;
	ax.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ;
	errno = 0;
	ck_assert_ptr_null(ibv_create_srq_ex(e.ctx, &ax));
	ck_assert_int_eq(errno, EINVAL);
	ax.srq_type = IBV_SRQT_XRC;
	errno = 0;
	ck_assert_ptr_null(ibv_create_srq_ex(e.ctx, &ax));
	ck_assert_int_eq(errno, EINVAL);
	/* basic through _ex with an extra mask bit works */
	ax.srq_type = IBV_SRQT_BASIC;
	srq = ibv_create_srq_ex(e.ctx, &ax);
	ck_assert_ptr_nonnull(srq);
	ck_assert_int_eq(ax.attr.max_wr, 8);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);

	/* max_wr 100 is rounded up to 128 and written back */
	srq = mk_srq(&e, 100, 2);
	ck_assert_ptr_nonnull(srq);
	ck_assert_int_eq(ibv_query_srq(srq, &sa), 0);
	ck_assert_int_eq(sa.max_wr, 128);
	ck_assert_int_eq(sa.max_sge, 2);
	ck_assert_int_eq(sa.srq_limit, 0);
	/* resize: EINVAL as on mlx5; limit over max_wr: EINVAL */
	sa.max_wr = 256;
	ck_assert_int_eq(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL);
	sa.srq_limit = 129;
	ck_assert_int_eq(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL);
	sa.srq_limit = 10;
	ck_assert_int_eq(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
	memset(&sa, 0, sizeof(sa));
	ck_assert_int_eq(ibv_query_srq(srq, &sa), 0);
	ck_assert_int_eq(sa.srq_limit, 10);
	sa.srq_limit = 0;
	ck_assert_int_eq(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);

	/* 130 WRs in one call: 128 posted, the 129th is bad_wr with ENOMEM */
	mr = ibv_reg_mr(e.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	memset(sge, 0, sizeof(sge));
	for (i = 0; i < 3; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + 16 * i, 16, mr->lkey };
	for (i = 0; i < 130; i++)
		wr[i] = (struct ibv_recv_wr){ .wr_id = i, .next = i < 129 ? &wr[i + 1] : NULL,
					      .sg_list = sge, .num_sge = 1 };
	bad = NULL;
	ck_assert_int_eq(ibv_post_srq_recv(srq, &wr[0], &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wr[128]);
	/* num_sge over max_sge: EINVAL at that WR */
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	srq = mk_srq(&e, 4, 2);
	ck_assert_ptr_nonnull(srq);
	wr[0].next = &wr[1];
	wr[1].next = NULL;
	wr[1].num_sge = 3;
	bad = NULL;
	ck_assert_int_eq(ibv_post_srq_recv(srq, &wr[0], &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr[1]);

	/* a QP on the SRQ: no RQ of its own (mlx5: cap 0, post_recv ENOMEM),
	 * the SRQ is busy while it exists */
	qp = mk_qp(&e, IBV_QPT_RC, srq);
	ck_assert_ptr_eq(qp->srq, srq);
	ck_assert_int_eq(ibv_query_qp(qp, &qa, IBV_QP_CAP, &qia), 0);
	ck_assert_ptr_eq(qia.srq, srq);
	ck_assert_int_eq(qia.cap.max_recv_wr, 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), EBUSY);
	ck_assert_int_eq(tv_rc_connect(qp, qp->qp_num, &e.gid, IBV_MTU_1024, 14), 0);
	wr[1].num_sge = 1;
	bad = NULL;
	ck_assert_int_eq(ibv_post_recv(qp, &wr[1], &bad), ENOMEM);
	ck_assert_ptr_eq(bad, &wr[1]);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
}
END_TEST

/* One sender of the traffic test and the receiving QP it targets. */
struct sender {
	struct ibv_qp *qp, *dst;
	struct ibv_ah *ah;      /* UD only */
	uint32_t len, total;    /* message bytes, messages to send */
	uint32_t sent, done;    /* posted; send completions */
	uint32_t received;      /* receive completions at dst, in order */
	uint8_t *buf;           /* SEND_SLOTS x len */
	struct ibv_mr *mr;
};

static void send_next(struct sender *s, uint32_t id)
{
	uint32_t slot = s->sent % SEND_SLOTS;
	uint8_t *p = s->buf + (size_t)slot * s->len;
	struct ibv_sge sge = { (uintptr_t)p, s->len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id << 24 | s->sent, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	/* id, sequence number, then a pattern of both */
	memcpy(p, &id, 4);
	memcpy(p + 4, &s->sent, 4);
	for (uint32_t i = 8; i < s->len; i++)
		p[i] = (uint8_t)(i * 7 + s->sent + id);
	if (s->ah) {
		wr.wr.ud.ah = s->ah;
		wr.wr.ud.remote_qpn = s->dst->qp_num;
		wr.wr.ud.remote_qkey = TV_QKEY;
	}
	ck_assert_int_eq(ibv_post_send(s->qp, &wr, &bad), 0);
	s->sent++;
}

/* The receive completion WC of buffer RBUF: which sender, exact length,
 * in order, intact. */
static void check_recv(struct sender *snd, int n, const struct ibv_wc *wc, const uint8_t *rbuf)
{
	const uint8_t *p;
	uint32_t id, seq, hdr;
	struct sender *s;

	ck_assert_int_eq(wc->status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc->opcode, IBV_WC_RECV);
	for (id = 0; id < (uint32_t)n && snd[id].dst->qp_num != wc->qp_num; id++)
		;
	ck_assert_uint_lt(id, n);
	s = &snd[id];
	hdr = s->ah ? 40 : 0;
	ck_assert_uint_eq(wc->byte_len, hdr + s->len);
	ck_assert_uint_eq(!!(wc->wc_flags & IBV_WC_GRH), !!s->ah);
	p = rbuf + hdr;
	memcpy(&id, p, 4);
	memcpy(&seq, p + 4, 4);
	ck_assert_uint_eq(id, (uint32_t)(s - snd));
	ck_assert_uint_eq(seq, s->received);
	for (uint32_t i = 8; i < s->len; i += 509)
		ck_assert_uint_eq(p[i], (uint8_t)(i * 7 + seq + id));
	ck_assert_uint_eq(p[s->len - 1], (uint8_t)((s->len - 1) * 7 + seq + id));
	s->received++;
}

START_TEST(shared_traffic)
{
	struct env e;
	struct ibv_srq *srq;
	struct ibv_qp *rc_rx[2], *ud_rx;
	struct sender snd[3];
	struct ibv_mr *rmr;
	uint8_t *rbuf;
	uint32_t i, inflight = 0, total = 0, got = 0;
	uint64_t deadline;

	env_open(&e);
	srq = mk_srq(&e, DEPTH, 1);
	ck_assert_ptr_nonnull(srq);
	rbuf = malloc((size_t)DEPTH * MSG);
	ck_assert_ptr_nonnull(rbuf);
	rmr = ibv_reg_mr(e.pd, rbuf, (size_t)DEPTH * MSG, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(rmr);
	for (i = 0; i < DEPTH; i++)
		ck_assert_int_eq(post_srq_one(srq, i, rbuf + (size_t)i * MSG, MSG, rmr->lkey), 0);

	memset(snd, 0, sizeof(snd));
	for (i = 0; i < 2; i++) {
		rc_rx[i] = mk_qp(&e, IBV_QPT_RC, srq);
		snd[i].qp = mk_qp(&e, IBV_QPT_RC, NULL);
		snd[i].dst = rc_rx[i];
		snd[i].len = MSG;
		snd[i].total = RC_MSGS;
		ck_assert_int_eq(tv_rc_connect(rc_rx[i], snd[i].qp->qp_num, &e.gid, IBV_MTU_1024, 14), 0);
		ck_assert_int_eq(tv_rc_connect(snd[i].qp, rc_rx[i]->qp_num, &e.gid, IBV_MTU_1024, 14), 0);
	}
	ud_rx = mk_qp(&e, IBV_QPT_UD, srq);
	snd[2].qp = mk_qp(&e, IBV_QPT_UD, NULL);
	snd[2].dst = ud_rx;
	snd[2].len = UD_LEN;
	snd[2].total = UD_MSGS;
	snd[2].ah = tv_ah(e.pd, &e.gid);
	ck_assert_ptr_nonnull(snd[2].ah);
	ck_assert_int_eq(tv_ud_ready(ud_rx), 0);
	ck_assert_int_eq(tv_ud_ready(snd[2].qp), 0);
	for (i = 0; i < 3; i++) {
		snd[i].buf = malloc((size_t)SEND_SLOTS * snd[i].len);
		ck_assert_ptr_nonnull(snd[i].buf);
		snd[i].mr = ibv_reg_mr(e.pd, snd[i].buf, (size_t)SEND_SLOTS * snd[i].len, 0);
		ck_assert_ptr_nonnull(snd[i].mr);
		total += snd[i].total;
	}

	/* Never more messages in flight than the SRQ holds: no RNR wait,
	 * and no UD datagram finds the SRQ empty. */
	deadline = tv_now_ms() + 120000;
	while (got < total) {
		struct ibv_wc wc[32];
		int n, k;

		for (i = 0; i < 3; i++)
			while (snd[i].sent < snd[i].total && snd[i].sent - snd[i].done < SEND_SLOTS &&
			       inflight < DEPTH) {
				send_next(&snd[i], i);
				inflight++;
			}
		n = ibv_poll_cq(e.scq, 32, wc);
		ck_assert_int_ge(n, 0);
		for (k = 0; k < n; k++) {
			ck_assert_int_eq(wc[k].status, IBV_WC_SUCCESS);
			ck_assert_uint_eq(wc[k].wr_id & 0xFFFFFF, snd[wc[k].wr_id >> 24].done);
			snd[wc[k].wr_id >> 24].done++;
		}
		n = ibv_poll_cq(e.rcq, 32, wc);
		ck_assert_int_ge(n, 0);
		for (k = 0; k < n; k++) {
			ck_assert_uint_lt(wc[k].wr_id, DEPTH);
			check_recv(snd, 3, &wc[k], rbuf + wc[k].wr_id * MSG);
			ck_assert_int_eq(post_srq_one(srq, wc[k].wr_id, rbuf + wc[k].wr_id * MSG, MSG,
						      rmr->lkey), 0);
			inflight--;
			got++;
		}
		ck_assert_msg(tv_now_ms() < deadline, "timeout: %u of %u messages received", got, total);
	}
	for (i = 0; i < 3; i++) {
		struct ibv_wc wc;

		while (snd[i].done < snd[i].total) {
			ck_assert_int_eq(tv_poll_one(e.scq, WAIT_MS, &wc), 0);
			ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
			snd[wc.wr_id >> 24].done++;
		}
		ck_assert_uint_eq(snd[i].received, snd[i].total);
	}
	ck_assert_uint_eq(snd[0].received + snd[1].received + snd[2].received, 3000);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(ibv_destroy_qp(snd[i].dst), 0);
		ck_assert_int_eq(ibv_destroy_qp(snd[i].qp), 0);
		ck_assert_int_eq(ibv_dereg_mr(snd[i].mr), 0);
		free(snd[i].buf);
	}
	ck_assert_int_eq(ibv_destroy_ah(snd[2].ah), 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_dereg_mr(rmr), 0);
	free(rbuf);
	env_close(&e);
}
END_TEST

/* A self-connected RC sender and an RC receiver on SRQ, connected. */
static void rc_pair(struct env *e, struct ibv_srq *srq, struct ibv_qp **tx, struct ibv_qp **rx)
{
	*rx = mk_qp(e, IBV_QPT_RC, srq);
	*tx = mk_qp(e, IBV_QPT_RC, NULL);
	ck_assert_int_eq(tv_rc_connect(*rx, (*tx)->qp_num, &e->gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(*tx, (*rx)->qp_num, &e->gid, IBV_MTU_1024, 14), 0);
}

/* Send one 64-byte message on TX and wait for its receive completion. */
static void one_message(struct env *e, struct ibv_qp *tx, struct ibv_mr *mr, char *buf,
			uint32_t want_qpn)
{
	struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	ck_assert_int_eq(ibv_post_send(tx, &wr, &bad), 0);
	ck_assert_int_eq(tv_poll_one(e->scq, WAIT_MS, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(tv_poll_one(e->rcq, WAIT_MS, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.qp_num, want_qpn);
	ck_assert_uint_eq(wc.byte_len, 64);
}

START_TEST(limit_event)
{
	struct ibv_async_event ev;
	struct ibv_srq_attr sa = { .srq_limit = 8 };
	struct ibv_srq *srq;
	struct ibv_qp *tx, *rx;
	struct ibv_mr *mr;
	struct env e;
	static char buf[65 * 64];
	int i;

	env_open(&e);
	srq = mk_srq(&e, 64, 1);
	ck_assert_ptr_nonnull(srq);
	mr = ibv_reg_mr(e.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	for (i = 0; i < 64; i++)
		ck_assert_int_eq(post_srq_one(srq, i, buf + 64 + 64 * i, 64, mr->lkey), 0);
	ck_assert_int_eq(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
	rc_pair(&e, srq, &tx, &rx);
	/* 56 messages leave 8 WQEs: not below the limit */
	for (i = 0; i < 56; i++)
		one_message(&e, tx, mr, buf, rx->qp_num);
	ck_assert_int_eq(tv_next_async(e.ctx, 300, &ev), ETIMEDOUT);
	ck_assert_int_eq(ibv_query_srq(srq, &sa), 0);
	ck_assert_int_eq(sa.srq_limit, 8);
	/* the 57th leaves 7: one event, and the limit is disarmed */
	one_message(&e, tx, mr, buf, rx->qp_num);
	ck_assert_int_eq(tv_next_async(e.ctx, WAIT_MS, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	ck_assert_ptr_eq(ev.element.srq, srq);
	ibv_ack_async_event(&ev);
	ck_assert_int_eq(ibv_query_srq(srq, &sa), 0);
	ck_assert_int_eq(sa.srq_limit, 0);
	for (i = 0; i < 7; i++)
		one_message(&e, tx, mr, buf, rx->qp_num);
	ck_assert_int_eq(tv_next_async(e.ctx, 300, &ev), ETIMEDOUT);
	ck_assert_int_eq(ibv_destroy_qp(tx), 0);
	ck_assert_int_eq(ibv_destroy_qp(rx), 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
}
END_TEST

START_TEST(last_wqe_reached)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev;
	struct ibv_srq *srq;
	struct ibv_qp *tx, *rx, *tx2, *rx2, *ud;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	struct env e;
	static char buf[5 * 64];
	int i;

	env_open(&e);
	srq = mk_srq(&e, 4, 1);
	ck_assert_ptr_nonnull(srq);
	mr = ibv_reg_mr(e.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(post_srq_one(srq, 10 + i, buf + 64 + 64 * i, 64, mr->lkey), 0);
	rc_pair(&e, srq, &tx, &rx);
	rc_pair(&e, srq, &tx2, &rx2);
	ud = mk_qp(&e, IBV_QPT_UD, srq);
	ck_assert_int_eq(tv_ud_ready(ud), 0);
	one_message(&e, tx, mr, buf, rx->qp_num);

	/* RC QP on the SRQ to ERR: LAST_WQE_REACHED, nothing flushed */
	ck_assert_int_eq(ibv_modify_qp(rx, &qa, IBV_QP_STATE), 0);
	ck_assert_int_eq(tv_next_async(e.ctx, WAIT_MS, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	ck_assert_ptr_eq(ev.element.qp, rx);
	ibv_ack_async_event(&ev);
	ck_assert_int_eq(ibv_poll_cq(e.rcq, 1, &wc), 0);
	/* so does a UD QP */
	ck_assert_int_eq(ibv_modify_qp(ud, &qa, IBV_QP_STATE), 0);
	ck_assert_int_eq(tv_next_async(e.ctx, WAIT_MS, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	ck_assert_ptr_eq(ev.element.qp, ud);
	ibv_ack_async_event(&ev);
	ck_assert_int_eq(ibv_poll_cq(e.rcq, 1, &wc), 0);
	/* the three WQEs left still serve the other QP */
	for (i = 0; i < 3; i++)
		one_message(&e, tx2, mr, buf, rx2->qp_num);
	ck_assert_int_eq(tv_next_async(e.ctx, 200, &ev), ETIMEDOUT);
	ck_assert_int_eq(ibv_destroy_qp(ud), 0);
	ck_assert_int_eq(ibv_destroy_qp(tx), 0);
	ck_assert_int_eq(ibv_destroy_qp(rx), 0);
	ck_assert_int_eq(ibv_destroy_qp(tx2), 0);
	ck_assert_int_eq(ibv_destroy_qp(rx2), 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
}
END_TEST

START_TEST(empty_srq)
{
	struct ibv_srq *srq;
	struct ibv_qp *tx, *rx, *ud_tx, *ud_rx;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	struct env e;
	static char buf[4096];
	int i;

	env_open(&e);
	srq = mk_srq(&e, 4, 1);
	ck_assert_ptr_nonnull(srq);
	mr = ibv_reg_mr(e.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	rc_pair(&e, srq, &tx, &rx);
	/* RC: the SEND waits while the SRQ is empty (rnr_retry 7: forever) */
	{
		struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

		memset(buf, 0xab, 64);
		ck_assert_int_eq(ibv_post_send(tx, &wr, &bad), 0);
		ck_assert_int_eq(tv_poll_one(e.scq, 300, &wc), ETIMEDOUT);
		ck_assert_int_eq(ibv_poll_cq(e.rcq, 1, &wc), 0);
		ck_assert_int_eq(post_srq_one(srq, 77, buf + 1024, 64, mr->lkey), 0);
		ck_assert_int_eq(tv_poll_one(e.scq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_int_eq(tv_poll_one(e.rcq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, 77);
		ck_assert_uint_eq(wc.qp_num, rx->qp_num);
		ck_assert_uint_eq((uint8_t)buf[1024 + 63], 0xab);
	}
	/* UD: a datagram that finds the SRQ empty is dropped */
	ud_rx = mk_qp(&e, IBV_QPT_UD, srq);
	ud_tx = mk_qp(&e, IBV_QPT_UD, NULL);
	ck_assert_int_eq(tv_ud_ready(ud_rx), 0);
	ck_assert_int_eq(tv_ud_ready(ud_tx), 0);
	ah = tv_ah(e.pd, &e.gid);
	ck_assert_ptr_nonnull(ah);
	for (i = 0; i < 2; i++) {
		struct ibv_sge sge = { (uintptr_t)buf + 64 * i, 32, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 10 + i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = ud_rx->qp_num;
		wr.wr.ud.remote_qkey = TV_QKEY;
		memset(buf + 64 * i, 0x10 + i, 32);
		if (i == 1)
			ck_assert_int_eq(post_srq_one(srq, 78, buf + 2048, 72, mr->lkey), 0);
		ck_assert_int_eq(ibv_post_send(ud_tx, &wr, &bad), 0);
		ck_assert_int_eq(tv_poll_one(e.scq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		if (i == 0)
			ck_assert_int_eq(tv_poll_one(e.rcq, 300, &wc), ETIMEDOUT);
	}
	ck_assert_int_eq(tv_poll_one(e.rcq, WAIT_MS, &wc), 0);
	ck_assert_uint_eq(wc.wr_id, 78);
	ck_assert_uint_eq(wc.qp_num, ud_rx->qp_num);
	ck_assert_uint_eq(wc.byte_len, 40 + 32);
	ck_assert_uint_eq((uint8_t)buf[2048 + 40], 0x11);
	ck_assert_uint_eq((uint8_t)buf[2048 + 71], 0x11);
	ck_assert_int_eq(ibv_poll_cq(e.rcq, 1, &wc), 0);
	ck_assert_int_eq(ibv_destroy_qp(ud_tx), 0);
	ck_assert_int_eq(ibv_destroy_qp(ud_rx), 0);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
	ck_assert_int_eq(ibv_destroy_qp(tx), 0);
	ck_assert_int_eq(ibv_destroy_qp(rx), 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
}
END_TEST

START_TEST(cqe_cleaned_at_destroy)
{
	struct ibv_srq *srq;
	struct ibv_qp *tx, *rx;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	struct env e;
	static char buf[4096];
	struct ibv_sge sge = { 0, 64, 0 };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	env_open(&e);
	srq = mk_srq(&e, 2, 1);
	ck_assert_ptr_nonnull(srq);
	mr = ibv_reg_mr(e.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	sge.addr = (uintptr_t)buf;
	sge.lkey = mr->lkey;
	ck_assert_int_eq(post_srq_one(srq, 501, buf + 1024, 64, mr->lkey), 0);
	ck_assert_int_eq(post_srq_one(srq, 502, buf + 2048, 64, mr->lkey), 0);
	/* full: both tags are held */
	ck_assert_int_eq(post_srq_one(srq, 503, buf + 3072, 64, mr->lkey), ENOMEM);
	rc_pair(&e, srq, &tx, &rx);
	ck_assert_int_eq(ibv_post_send(tx, &wr, &bad), 0);
	ck_assert_int_eq(tv_poll_one(e.scq, WAIT_MS, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	/* the receive CQE is written (the SEND was acknowledged); destroying
	 * the QPs removes it unpolled and frees its SRQ WQE, as mlx5_destroy_qp
	 * (__mlx5_cq_clean, mlx5_free_srq_wqe) */
	ck_assert_int_eq(ibv_destroy_qp(tx), 0);
	ck_assert_int_eq(ibv_destroy_qp(rx), 0);
	ck_assert_int_eq(ibv_poll_cq(e.rcq, 1, &wc), 0);
	/* its tag is free again: one more post fits, the next does not */
	ck_assert_int_eq(post_srq_one(srq, 503, buf + 3072, 64, mr->lkey), 0);
	ck_assert_int_eq(post_srq_one(srq, 504, buf + 3072, 64, mr->lkey), ENOMEM);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_srq");
	TCase *tc = tcase_create("srq");
	/* a case of its own so inspect_check_live can draw RNR NAKs on demand */
	TCase *empty = tcase_create("empty_srq");

	tcase_set_timeout(tc, 240);
	tcase_set_timeout(empty, 60);
	tcase_add_test(tc, verbs_errors);
	tcase_add_test(tc, shared_traffic);
	tcase_add_test(tc, limit_event);
	tcase_add_test(tc, last_wqe_reached);
	tcase_add_test(empty, empty_srq);
	tcase_add_test(tc, cqe_cleaned_at_destroy);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, empty);
	return check_main_run(s, CK_NORMAL);
}
