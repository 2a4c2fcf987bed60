/*
 * traffic_xrc.c - XRC through the public verbs API on uroce0 (Check, run
 * inside `uroce run` by traffic_xrc.sh against a private daemon). Sources:
 * ibv_open_xrcd(3), ibv_create_srq_ex(3), ibv_get_srq_num(3),
 * ibv_create_qp_ex(3), ibv_post_send(3) (wr.qp_type.xrc.remote_srqn),
 * ibv_wr_set_xrc_srqn(3); IBTA Annex A14; docs/xrc.md.
 * Three contexts stand for three processes: S sends through an XRC_SEND
 * QP, R owns the XRC_RECV QP, two XRC SRQs and the target memory, T opens
 * R's domain through the same file and owns a third SRQ.
 *   domains     IBV_DEVICE_XRC; open errors (EAGAIN without O_CREAT,
 *               EINVAL with O_EXCL, comp_mask), the same file gives the
 *               same domain; close EBUSY while an SRQ uses it
 *   traffic     2000 SENDs of 64 KiB at MTU 1024 spread over R's two SRQs
 *               and T's, half by ibv_post_send and half by ibv_wr_*, and
 *               1000 RDMA WRITEs of 64 KiB: every byte, and the CQ,
 *               wr_id, status, opcode, byte_len and qp_num of every
 *               completion, exact
 *   bad_srqn    a SEND naming no SRQ, an SRQ of another domain, a
 *               destroyed SRQ: IBV_WC_REM_INV_REQ_ERR at the sender,
 *               nothing received
 *   odp         xrc_odp_caps exact; 1000 SENDs and 1000 RDMA WRITEs of
 *               64 KiB between explicit ODP MRs through an XRC SRQ, every
 *               byte and completion exact; a WRITE into an ODP MR whose
 *               memory was unmapped: IBV_WC_REM_ACCESS_ERR
 *   open_qp     ibv_open_qp of R's XRC_RECV QP by T through the same file:
 *               refused for a private XRCD, an unknown number, a QP that is
 *               no XRC target, a missing comp_mask bit (EINVAL) and type RC
 *               (EOPNOTSUPP); query through it (RTR, dest QPN), 500 SENDs
 *               of 64 KiB into T's SRQ exact, a modify to ERR through it
 *               seen by R's query, R's destroy EBUSY until T's
 */
#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 20000
#define MSG 65536u        /* bytes per message */
#define SENDS 2000u
#define WRITES 1000u
#define DEPTH 16u         /* receive WQEs per SRQ */
#define NSRQ 3

static char xrcd_path[] = "/tmp/uroce-xrc-XXXXXX";

/* One context with a PD, a CQ and a buffer of NSRQ + 1 messages. */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *buf;
	union ibv_gid gid;
};

static void side_open(struct side *s)
{
	memset(s, 0, sizeof(*s));
	s->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(s->ctx);
	ck_assert_int_eq(ibv_query_gid(s->ctx, 1, 0, &s->gid), 0);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 256, NULL, NULL, 0);
	s->buf = calloc(NSRQ + 1, MSG);
	ck_assert_ptr_nonnull(s->pd);
	ck_assert_ptr_nonnull(s->cq);
	s->mr = ibv_reg_mr(s->pd, s->buf, (size_t)(NSRQ + 1) * MSG,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(s->mr);
}

static void side_close(struct side *s)
{
	ck_assert_int_eq(ibv_dereg_mr(s->mr), 0);
	ck_assert_int_eq(ibv_destroy_cq(s->cq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(s->pd), 0);
	ck_assert_int_eq(ibv_close_device(s->ctx), 0);
	free(s->buf);
}

static struct ibv_xrcd *xrcd_open(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xrc_srq(struct side *s, struct ibv_xrcd *x, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = DEPTH;
	a.attr.max_sge = 1;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
		      IBV_SRQ_INIT_ATTR_CQ;
	a.srq_type = IBV_SRQT_XRC;
	a.pd = s->pd;
	a.xrcd = x;
	a.cq = cq;
	return ibv_create_srq_ex(s->ctx, &a);
}

static uint32_t srq_num(struct ibv_srq *srq)
{
	uint32_t n = 0;

	ck_assert_int_eq(ibv_get_srq_num(srq, &n), 0);
	ck_assert_uint_gt(n, 0);
	return n;
}

/* An XRC pair at MTU 1024: SQP (XRC_SEND of S, with the extended post API)
 * to RQP (XRC_RECV of R in domain X), both ready. */
static void xrc_pair(struct side *s, struct side *r, struct ibv_xrcd *x, struct ibv_qp **sqp,
		     struct ibv_qp **rqp)
{
	struct ibv_qp_init_attr_ex ia;
	struct ibv_qp_attr a;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_XRC_RECV;
	ia.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	ia.xrcd = x;
	*rqp = ibv_create_qp_ex(r->ctx, &ia);
	ck_assert_ptr_nonnull(*rqp);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_XRC_SEND;
	ia.send_cq = s->cq;
	ia.cap.max_send_wr = 64;
	ia.cap.max_send_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = s->pd;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
	*sqp = ibv_create_qp_ex(s->ctx, &ia);
	ck_assert_ptr_nonnull(*sqp);
	ck_assert_int_eq(ia.cap.max_recv_wr, 0);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ck_assert_int_eq(ibv_modify_qp(*rqp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						     IBV_QP_ACCESS_FLAGS), 0);
	ck_assert_int_eq(ibv_modify_qp(*sqp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						     IBV_QP_ACCESS_FLAGS), 0);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = s->gid;
	a.dest_qp_num = (*sqp)->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	ck_assert_int_eq(ibv_modify_qp(*rqp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER), 0);
	a.ah_attr.grh.dgid = r->gid;
	a.dest_qp_num = (*rqp)->qp_num;
	ck_assert_int_eq(ibv_modify_qp(*sqp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN), 0);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	ck_assert_int_eq(ibv_modify_qp(*sqp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
						     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
						     IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

static void post_recv(struct ibv_srq *srq, struct ibv_mr *mr, unsigned char *buf, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = MSG, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
}

/* Message I's bytes: its number and offset, so no two messages agree. */
static void fill(unsigned char *p, uint32_t i)
{
	for (uint32_t k = 0; k < MSG; k++)
		p[k] = (unsigned char)(k * 13 + i * 7 + (k >> 8));
}

/* SEND (or WRITE to VA/RKEY when WRITE) of SBUF to SRQN, by ibv_post_send or
 * the extended API (EX). */
static void post_send(struct ibv_qp *qp, struct ibv_mr *mr, unsigned char *sbuf, uint32_t srqn,
		      uint64_t wr_id, bool ex, bool write, uint64_t va, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = MSG, .lkey = mr->lkey };

	if (ex) {
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);

		ibv_wr_start(x);
		x->wr_id = wr_id;
		x->wr_flags = IBV_SEND_SIGNALED;
		if (write)
			ibv_wr_rdma_write(x, rkey, va);
		else
			ibv_wr_send(x);
		ibv_wr_set_xrc_srqn(x, srqn);
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)sbuf, MSG);
		ck_assert_int_eq(ibv_wr_complete(x), 0);
	} else {
		struct ibv_send_wr wr, *bad;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = wr_id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.qp_type.xrc.remote_srqn = srqn;
		wr.wr.rdma.remote_addr = va;
		wr.wr.rdma.rkey = rkey;
		ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
	}
}

static void expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st,
		      enum ibv_wc_opcode op, uint32_t len, uint32_t qpn, uint32_t i)
{
	struct ibv_wc wc;

	ck_assert_msg(tv_poll_one(cq, WAIT_MS, &wc) == 0, "message %u: no completion", i);
	ck_assert_msg(wc.wr_id == wr_id && wc.status == st, "message %u: wr_id %llu status %s, want %llu %s",
		      i, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
		      (unsigned long long)wr_id, ibv_wc_status_str(st));
	ck_assert_uint_eq(wc.qp_num, qpn);
	if (st != IBV_WC_SUCCESS)
		return;
	ck_assert_int_eq(wc.opcode, op);
	ck_assert_uint_eq(wc.byte_len, len);
}

static void cq_empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 0);
}

START_TEST(domains)
{
	struct side r;
	struct ibv_device_attr da;
	struct ibv_xrcd *x, *x2, *bad;
	struct ibv_xrcd_init_attr a = { .comp_mask = IBV_XRCD_INIT_ATTR_FD, .fd = -1 };
	struct ibv_srq *srq;
	int fd;

	side_open(&r);
	ck_assert_int_eq(ibv_query_device(r.ctx, &da), 0);
	ck_assert(da.device_cap_flags & IBV_DEVICE_XRC);
	fd = open(xrcd_path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	errno = 0;
	ck_assert_ptr_null(xrcd_open(r.ctx, fd, 0));
	ck_assert_int_eq(errno, EAGAIN);
	errno = 0;
	ck_assert_ptr_null(ibv_open_xrcd(r.ctx, &a));
	ck_assert_int_eq(errno, EINVAL);
	x = xrcd_open(r.ctx, fd, O_CREAT);
	ck_assert_ptr_nonnull(x);
	errno = 0;
	bad = xrcd_open(r.ctx, fd, O_CREAT | O_EXCL);
	ck_assert_ptr_null(bad);
	ck_assert_int_eq(errno, EINVAL);
	x2 = xrcd_open(r.ctx, fd, 0);
	ck_assert_ptr_nonnull(x2);
	srq = xrc_srq(&r, x, r.cq);
	ck_assert_ptr_nonnull(srq);
	ck_assert_int_eq(ibv_close_xrcd(x), EBUSY);
	/* an XRC SRQ without its CQ */
	{
		struct ibv_srq_init_attr_ex e;

		memset(&e, 0, sizeof(e));
		e.attr.max_wr = 4;
		e.attr.max_sge = 1;
		e.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD;
		e.srq_type = IBV_SRQT_XRC;
		e.pd = r.pd;
		e.xrcd = x;
		errno = 0;
		ck_assert_ptr_null(ibv_create_srq_ex(r.ctx, &e));
		ck_assert_int_eq(errno, EINVAL);
	}
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_close_xrcd(x), 0);
	ck_assert_int_eq(ibv_close_xrcd(x2), 0);
	close(fd);
	side_close(&r);
}
END_TEST

START_TEST(traffic)
{
	struct side s, r, t;
	struct ibv_xrcd *xr, *xt;
	struct ibv_cq *cq2;
	struct ibv_srq *srq[NSRQ];
	struct side *owner[NSRQ] = { &r, &r, &t };
	struct ibv_cq *cqs[NSRQ];
	uint32_t num[NSRQ], i;
	struct ibv_qp *sqp, *rqp;
	unsigned char *want = malloc(MSG);
	int fd;

	ck_assert_ptr_nonnull(want);
	side_open(&s);
	side_open(&r);
	side_open(&t);
	fd = open(xrcd_path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	xr = xrcd_open(r.ctx, fd, O_CREAT);
	xt = xrcd_open(t.ctx, fd, 0);
	ck_assert_ptr_nonnull(xr);
	ck_assert_ptr_nonnull(xt);
	cq2 = ibv_create_cq(r.ctx, 256, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cq2);
	cqs[0] = r.cq;
	cqs[1] = cq2;
	cqs[2] = t.cq;
	srq[0] = xrc_srq(&r, xr, cqs[0]);
	srq[1] = xrc_srq(&r, xr, cqs[1]);
	srq[2] = xrc_srq(&t, xt, cqs[2]);
	for (i = 0; i < NSRQ; i++) {
		ck_assert_ptr_nonnull(srq[i]);
		num[i] = srq_num(srq[i]);
		post_recv(srq[i], owner[i]->mr, owner[i]->buf + (size_t)i * MSG, 1000000u + i);
	}
	ck_assert_uint_ne(num[0], num[1]);
	xrc_pair(&s, &r, xr, &sqp, &rqp);

	for (i = 0; i < SENDS; i++) {
		uint32_t k = i % NSRQ;
		unsigned char *dst = owner[k]->buf + (size_t)k * MSG;

		fill(s.buf, i);
		memset(dst, 0, MSG);
		post_send(sqp, s.mr, s.buf, num[k], i, i & 1, false, 0, 0);
		expect_wc(s.cq, i, IBV_WC_SUCCESS, IBV_WC_SEND, MSG, sqp->qp_num, i);
		expect_wc(cqs[k], 1000000u + k, IBV_WC_SUCCESS, IBV_WC_RECV, MSG, rqp->qp_num, i);
		ck_assert_msg(memcmp(dst, s.buf, MSG) == 0, "SEND %u: bytes differ", i);
		post_recv(srq[k], owner[k]->mr, dst, 1000000u + k);
	}
	for (i = 0; i < NSRQ; i++)
		cq_empty(cqs[i]);
	/* WRITEs into R's memory, checked against R's PD through SRQ 0 or 1 */
	for (i = 0; i < WRITES; i++) {
		unsigned char *dst = r.buf + (size_t)NSRQ * MSG;

		fill(s.buf, i + SENDS);
		post_send(sqp, s.mr, s.buf, num[i & 1], 5000u + i, i & 2, true, (uintptr_t)dst,
			  r.mr->rkey);
		expect_wc(s.cq, 5000u + i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, MSG, sqp->qp_num, i);
		ck_assert_msg(memcmp(dst, s.buf, MSG) == 0, "WRITE %u: bytes differ", i);
	}
	for (i = 0; i < NSRQ; i++)
		cq_empty(cqs[i]);

	ck_assert_int_eq(ibv_destroy_qp(sqp), 0);
	ck_assert_int_eq(ibv_destroy_qp(rqp), 0);
	for (i = 0; i < NSRQ; i++)
		ck_assert_int_eq(ibv_destroy_srq(srq[i]), 0);
	ck_assert_int_eq(ibv_destroy_cq(cq2), 0);
	ck_assert_int_eq(ibv_close_xrcd(xr), 0);
	ck_assert_int_eq(ibv_close_xrcd(xt), 0);
	close(fd);
	side_close(&t);
	side_close(&r);
	side_close(&s);
	free(want);
}
END_TEST

/* XRC over ODP MRs (ibv_query_device_ex xrc_odp_caps): S's send buffer,
 * R's SRQ buffers and WRITE target are explicit ODP MRs; a WRITE into a
 * part of R's ODP MR that was unmapped completes IBV_WC_REM_ACCESS_ERR. */
START_TEST(odp)
{
	struct ibv_device_attr_ex da;
	struct side s, r;
	struct ibv_xrcd *x;
	struct ibv_srq *srq;
	struct ibv_qp *sqp, *rqp;
	struct ibv_mr *hole_mr;
	unsigned char *hole;
	uint32_t num, i;
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND;

	side_open(&s);
	side_open(&r);
	ck_assert_int_eq(ibv_query_device_ex(r.ctx, NULL, &da), 0);
	ck_assert_uint_eq(da.xrc_odp_caps, IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE |
					   IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |
					   IBV_ODP_SUPPORT_SRQ_RECV);
	/* both sides' memory through ODP MRs instead */
	ck_assert_int_eq(ibv_dereg_mr(s.mr), 0);
	ck_assert_int_eq(ibv_dereg_mr(r.mr), 0);
	s.mr = ibv_reg_mr(s.pd, s.buf, (size_t)(NSRQ + 1) * MSG, acc);
	r.mr = ibv_reg_mr(r.pd, r.buf, (size_t)(NSRQ + 1) * MSG, acc);
	ck_assert_ptr_nonnull(s.mr);
	ck_assert_ptr_nonnull(r.mr);
	x = xrcd_open(r.ctx, -1, O_CREAT);
	ck_assert_ptr_nonnull(x);
	srq = xrc_srq(&r, x, r.cq);
	ck_assert_ptr_nonnull(srq);
	num = srq_num(srq);
	post_recv(srq, r.mr, r.buf, 7);
	xrc_pair(&s, &r, x, &sqp, &rqp);
	for (i = 0; i < SENDS / 2; i++) {
		fill(s.buf, i);
		memset(r.buf, 0, MSG);
		post_send(sqp, s.mr, s.buf, num, i, i & 1, false, 0, 0);
		expect_wc(s.cq, i, IBV_WC_SUCCESS, IBV_WC_SEND, MSG, sqp->qp_num, i);
		expect_wc(r.cq, 7, IBV_WC_SUCCESS, IBV_WC_RECV, MSG, rqp->qp_num, i);
		ck_assert_msg(memcmp(r.buf, s.buf, MSG) == 0, "ODP SEND %u: bytes differ", i);
		post_recv(srq, r.mr, r.buf, 7);
	}
	for (i = 0; i < WRITES; i++) {
		unsigned char *dst = r.buf + MSG;

		fill(s.buf, i + SENDS);
		post_send(sqp, s.mr, s.buf, num, 5000u + i, i & 2, true, (uintptr_t)dst, r.mr->rkey);
		expect_wc(s.cq, 5000u + i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, MSG, sqp->qp_num, i);
		ck_assert_msg(memcmp(dst, s.buf, MSG) == 0, "ODP WRITE %u: bytes differ", i);
	}
	cq_empty(r.cq);
	/* an ODP MR whose memory is gone: the responder refuses the WRITE */
	hole = mmap(NULL, MSG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(hole, MAP_FAILED);
	hole_mr = ibv_reg_mr(r.pd, hole, MSG, acc);
	ck_assert_ptr_nonnull(hole_mr);
	ck_assert_int_eq(munmap(hole, MSG), 0);
	post_send(sqp, s.mr, s.buf, num, 9999, false, true, (uintptr_t)hole, hole_mr->rkey);
	expect_wc(s.cq, 9999, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, 0, sqp->qp_num, 0);
	cq_empty(r.cq);

	ck_assert_int_eq(ibv_destroy_qp(sqp), 0);
	ck_assert_int_eq(ibv_destroy_qp(rqp), 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_dereg_mr(hole_mr), 0);
	ck_assert_int_eq(ibv_close_xrcd(x), 0);
	side_close(&r);
	side_close(&s);
}
END_TEST

/* ibv_open_qp(3): T opens R's XRC_RECV QP by number through its own
 * XRCD on the same file, queries it, receives through it into its own SRQ
 * and moves it to ERR; the open's refusals. */
START_TEST(open_qp)
{
	struct side s, r, t;
	struct ibv_xrcd *xr, *xt, *priv;
	struct ibv_srq *srq;
	struct ibv_qp *sqp, *rqp, *tq;
	struct ibv_qp_open_attr oa;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	uint32_t num, i;
	int fd;

	side_open(&s);
	side_open(&r);
	side_open(&t);
	fd = open(xrcd_path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	xr = xrcd_open(r.ctx, fd, O_CREAT);
	xt = xrcd_open(t.ctx, fd, 0);
	priv = xrcd_open(t.ctx, -1, O_CREAT);
	ck_assert_ptr_nonnull(xr);
	ck_assert_ptr_nonnull(xt);
	ck_assert_ptr_nonnull(priv);
	srq = xrc_srq(&t, xt, t.cq);
	ck_assert_ptr_nonnull(srq);
	num = srq_num(srq);
	xrc_pair(&s, &r, xr, &sqp, &rqp);

	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_type = IBV_QPT_XRC_RECV;
	oa.xrcd = priv;
	oa.qp_num = rqp->qp_num;
	errno = 0;
	ck_assert_ptr_null(ibv_open_qp(t.ctx, &oa));
	ck_assert_int_eq(errno, EINVAL);
	oa.xrcd = xt;
	oa.qp_num = rqp->qp_num + 1000;
	errno = 0;
	ck_assert_ptr_null(ibv_open_qp(t.ctx, &oa));
	ck_assert_int_eq(errno, EINVAL);
	oa.qp_num = sqp->qp_num;  /* a QP, but no XRC target */
	errno = 0;
	ck_assert_ptr_null(ibv_open_qp(t.ctx, &oa));
	ck_assert_int_eq(errno, EINVAL);
	oa.qp_num = rqp->qp_num;
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD;
	errno = 0;
	ck_assert_ptr_null(ibv_open_qp(t.ctx, &oa));
	ck_assert_int_eq(errno, EINVAL);
	oa.comp_mask |= IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_type = IBV_QPT_RC;
	errno = 0;
	ck_assert_ptr_null(ibv_open_qp(t.ctx, &oa));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	oa.qp_type = IBV_QPT_XRC_RECV;
	oa.qp_context = &oa;
	tq = ibv_open_qp(t.ctx, &oa);
	ck_assert_ptr_nonnull(tq);
	ck_assert_uint_eq(tq->qp_num, rqp->qp_num);
	ck_assert_ptr_eq(tq->qp_context, &oa);
	ck_assert_int_eq(tq->qp_type, IBV_QPT_XRC_RECV);
	ck_assert_int_eq(ibv_query_qp(tq, &qa, IBV_QP_STATE | IBV_QP_DEST_QPN, &qia), 0);
	ck_assert_int_eq(qa.qp_state, IBV_QPS_RTR);
	ck_assert_uint_eq(qa.dest_qp_num, sqp->qp_num);

	for (i = 0; i < SENDS / 4; i++) {
		fill(s.buf, i);
		post_recv(srq, t.mr, t.buf, 11);
		memset(t.buf, 0, MSG);
		post_send(sqp, s.mr, s.buf, num, i, i & 1, false, 0, 0);
		expect_wc(s.cq, i, IBV_WC_SUCCESS, IBV_WC_SEND, MSG, sqp->qp_num, i);
		expect_wc(t.cq, 11, IBV_WC_SUCCESS, IBV_WC_RECV, MSG, rqp->qp_num, i);
		ck_assert_msg(memcmp(t.buf, s.buf, MSG) == 0, "SEND %u: bytes differ", i);
	}
	/* a modify through the opened handle moves the QP itself */
	qa.qp_state = IBV_QPS_ERR;
	ck_assert_int_eq(ibv_modify_qp(tq, &qa, IBV_QP_STATE), 0);
	ck_assert_int_eq(ibv_query_qp(rqp, &qa, IBV_QP_STATE, &qia), 0);
	ck_assert_int_eq(qa.qp_state, IBV_QPS_ERR);
	/* the creator cannot destroy it while it is opened */
	ck_assert_int_eq(ibv_destroy_qp(rqp), EBUSY);
	ck_assert_int_eq(ibv_destroy_qp(tq), 0);
	ck_assert_int_eq(ibv_destroy_qp(rqp), 0);
	ck_assert_int_eq(ibv_destroy_qp(sqp), 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_close_xrcd(priv), 0);
	ck_assert_int_eq(ibv_close_xrcd(xt), 0);
	ck_assert_int_eq(ibv_close_xrcd(xr), 0);
	close(fd);
	side_close(&t);
	side_close(&r);
	side_close(&s);
}
END_TEST

START_TEST(bad_srqn)
{
	struct side s, r;
	struct ibv_xrcd *x, *other;
	struct ibv_srq *good, *foreign, *gone;
	uint32_t n_foreign, n_gone, wrong;
	uint32_t target[3];

	side_open(&s);
	side_open(&r);
	x = xrcd_open(r.ctx, -1, 0);
	other = xrcd_open(r.ctx, -1, 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_nonnull(other);
	good = xrc_srq(&r, x, r.cq);
	foreign = xrc_srq(&r, other, r.cq);
	gone = xrc_srq(&r, x, r.cq);
	ck_assert_ptr_nonnull(good);
	ck_assert_ptr_nonnull(foreign);
	ck_assert_ptr_nonnull(gone);
	post_recv(good, r.mr, r.buf, 1);
	post_recv(foreign, r.mr, r.buf + MSG, 2);
	n_foreign = srq_num(foreign);
	n_gone = srq_num(gone);
	ck_assert_int_eq(ibv_destroy_srq(gone), 0);
	wrong = 0xABCDE;
	target[0] = wrong;
	target[1] = n_foreign;
	target[2] = n_gone;
	for (int c = 0; c < 3; c++) {
		struct ibv_qp *sqp, *rqp;

		xrc_pair(&s, &r, x, &sqp, &rqp);
		fill(s.buf, (uint32_t)c);
		post_send(sqp, s.mr, s.buf, target[c], 77u + (uint32_t)c, c == 1, false, 0, 0);
		expect_wc(s.cq, 77u + (uint32_t)c, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND, 0,
			  sqp->qp_num, (uint32_t)c);
		cq_empty(r.cq);
		ck_assert_int_eq(ibv_destroy_qp(sqp), 0);
		ck_assert_int_eq(ibv_destroy_qp(rqp), 0);
	}
	/* the SRQs named wrongly kept their WQEs: a good pair still delivers */
	{
		struct ibv_qp *sqp, *rqp;

		xrc_pair(&s, &r, x, &sqp, &rqp);
		fill(s.buf, 9);
		post_send(sqp, s.mr, s.buf, srq_num(good), 90, false, false, 0, 0);
		expect_wc(s.cq, 90, IBV_WC_SUCCESS, IBV_WC_SEND, MSG, sqp->qp_num, 9);
		expect_wc(r.cq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, MSG, rqp->qp_num, 9);
		ck_assert(memcmp(r.buf, s.buf, MSG) == 0);
		ck_assert_int_eq(ibv_destroy_qp(sqp), 0);
		ck_assert_int_eq(ibv_destroy_qp(rqp), 0);
	}
	ck_assert_int_eq(ibv_destroy_srq(good), 0);
	ck_assert_int_eq(ibv_destroy_srq(foreign), 0);
	ck_assert_int_eq(ibv_close_xrcd(x), 0);
	ck_assert_int_eq(ibv_close_xrcd(other), 0);
	side_close(&r);
	side_close(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_xrc");
	TCase *tc = tcase_create("xrc");
	int fd = mkstemp(xrcd_path), rc;

	if (fd < 0)
		return EXIT_FAILURE;
	close(fd);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, domains);
	tcase_add_test(tc, traffic);
	tcase_add_test(tc, bad_srqn);
	tcase_add_test(tc, odp);
	tcase_add_test(tc, open_qp);
	suite_add_tcase(s, tc);
	rc = check_main_run(s, CK_NORMAL);
	unlink(xrcd_path);
	return rc;
}
