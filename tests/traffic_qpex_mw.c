/*
 * traffic_qpex_mw.c - the extended post-send API's window builders
 * (ibv_wr_bind_mw, ibv_wr_local_inv, ibv_wr_send_inv; ibv_wr_post(3),
 * ibv_bind_mw(3), IBTA 10.6.7 and 9.4.1.1) through libibverbs, the provider
 * and a running uroced (Check, run inside `uroce run` by traffic_qpex_mw.sh).
 *
 * Two contexts of one process, RC QPs at path MTU 1024 made with
 * ibv_create_qp_ex and every RC send_ops_flags bit, a 64 KiB MR per side, a
 * type 2 window over [4 KiB, 36 KiB) of the target's MR. Every window WR
 * is built with ibv_wr_start / ibv_wr_* / ibv_wr_complete; the remote
 * accesses are plain ibv_post_send. Shown: 32 KiB WRITE / READ and a
 * FETCH_AND_ADD through a window bound with ibv_wr_bind_mw, byte-exact with
 * guard bytes; the window's last 8 bytes writable, one byte past either
 * end IBV_WC_REM_ACCESS_ERR with both QPs in ERR and IBV_EVENT_QP_ACCESS_ERR
 * on the responder (as mlx5); a right not granted denied; the binds the
 * device refuses (MR without IBV_ACCESS_MW_BIND, a type 1 window, LOCAL_INV
 * of an MR key) IBV_WC_MW_BIND_ERR; ibv_wr_local_inv completing
 * IBV_WC_LOCAL_INV and the key dead after; ibv_wr_send_inv of 64 KiB giving
 * IBV_WC_WITH_INV and invalidated_rkey (ibv_poll_cq and an extended CQ) and
 * the key dead after; the three builders in batches mixed with sends, CQEs
 * in SQ order; ibv_wr_abort discarding a bind; the builders' EINVAL rules.
 */
#include "config.h"

#include <arpa/inet.h>
#include "check_main.h"
#include <errno.h>
#include <string.h>

#include "traffic_mw_lib.h"

/* Open a one-WQE batch on QP's extended form with WR_ID, signaled. */
static struct ibv_qp_ex *start_one(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);

	ck_assert_ptr_nonnull(x);
	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	return x;
}

/* Post the batch of start_one and wait on S's CQ: the completion's status;
 * wr_id and qp_num always checked, OPCODE on success. */
static enum ibv_wc_status finish_one(struct ibv_qp *qp, struct tv_side *s, uint64_t wr_id,
				     enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc;

	ck_assert_int_eq(ibv_wr_complete(ibv_qp_to_qp_ex(qp)), 0);
	wc = mw_wait_wc(s->cq);
	ck_assert_uint_eq(wc.wr_id, wr_id);
	ck_assert_uint_eq(wc.qp_num, qp->qp_num);
	if (wc.status == IBV_WC_SUCCESS)
		ck_assert_int_eq(wc.opcode, opcode);
	return wc.status;
}

/* Bind MW to [ADDR, ADDR + LEN) of MR with ACCESS by ibv_wr_bind_mw on QP
 * (CQ of S): the completion's status (IBV_WC_BIND_MW on success). */
static enum ibv_wc_status xbind(struct ibv_qp *qp, struct tv_side *s, struct ibv_mw *mw,
				uint32_t rkey, struct ibv_mr *mr, uint64_t addr, uint64_t len,
				unsigned int access)
{
	struct ibv_mw_bind_info bi = { .mr = mr, .addr = addr, .length = len,
				       .mw_access_flags = access };

	ibv_wr_bind_mw(start_one(qp, 0xb1d), mw, rkey, &bi);
	return finish_one(qp, s, 0xb1d, IBV_WC_BIND_MW);
}

/* ibv_wr_local_inv of RKEY on QP (CQ of S): the completion's status
 * (IBV_WC_LOCAL_INV on success). */
static enum ibv_wc_status xlocal_inv(struct ibv_qp *qp, struct tv_side *s, uint32_t rkey)
{
	ibv_wr_local_inv(start_one(qp, 0x1e), rkey);
	return finish_one(qp, s, 0x1e, IBV_WC_LOCAL_INV);
}

static void post_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sg = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr r = { .wr_id = wr_id, .sg_list = &sg, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(qp, &r, &bad), 0);
}

/* The next completion on CQ is WR_ID with SUCCESS, OPCODE and, for a
 * receive, BYTE_LEN and exactly the flags FLAGS of IBV_WC_WITH_IMM /
 * IBV_WC_WITH_INV with VAL as imm_data (network order) or invalidated_rkey. */
static void expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_opcode opcode,
		      uint32_t byte_len, unsigned int flags, uint32_t val)
{
	struct ibv_wc wc = mw_wait_wc(cq);

	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, wr_id);
	ck_assert_int_eq(wc.opcode, opcode);
	if (!(opcode & IBV_WC_RECV))
		return;
	ck_assert_uint_eq(wc.byte_len, byte_len);
	ck_assert_uint_eq(wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV), flags);
	if (flags & IBV_WC_WITH_IMM)
		ck_assert_uint_eq(ntohl(wc.imm_data), val);
	if (flags & IBV_WC_WITH_INV)
		ck_assert_uint_eq(wc.invalidated_rkey, val);
}

/* Bind E's window over its whole range with E's key and ACCESS by
 * ibv_wr_bind_mw on the target QP: the completion's status. */
static enum ibv_wc_status bind_win(struct mw_env *e, unsigned int access)
{
	return xbind(e->p.t, &e->t, e->mw, e->rkey, e->t.mr, e->win, MW_WIN_LEN, access);
}

/* OP (mw_rdma) of LEN bytes at RADDR from I's buffer start with E's key. */
static enum ibv_wc_status access_win(struct mw_env *e, enum ibv_wr_opcode op, uint64_t raddr,
				     uint32_t len)
{
	return mw_rdma(e->p.i, &e->i, op, 0, len, raddr, e->rkey);
}

/* An access with RKEY that must be refused: REM_ACCESS_ERR at the requester,
 * both QPs in ERR (the NAK ends an RC connection at both ends). */
static void refused(struct mw_env *e, enum ibv_wr_opcode op, uint64_t raddr, uint32_t len,
		    uint32_t rkey)
{
	ck_assert_int_eq(mw_rdma(e->p.i, &e->i, op, 0, len, raddr, rkey), IBV_WC_REM_ACCESS_ERR);
	ck_assert_int_eq(mw_qp_state(e->p.i), IBV_QPS_ERR);
	ck_assert_int_eq(mw_qp_state(e->p.t), IBV_QPS_ERR);
}

/* A fresh extended pair for E (the old one freed, its CQEs drained; a type
 * 2 window bound to the old target QP goes free with it) and the next key. */
static void next_pair(struct mw_env *e)
{
	mw_pair_free(&e->p);
	mw_drain(&e->i);
	mw_drain(&e->t);
	mw_pair_new(&e->p, &e->i, &e->t, MW_OPS_RC);
	e->rkey = ibv_inc_rkey(e->rkey);
}

/* On a fresh pair: bind with ACCESS, then OP of LEN bytes at RADDR is refused. */
static void bind_then_refused(struct mw_env *e, unsigned int access, enum ibv_wr_opcode op,
			      uint64_t raddr, uint32_t len)
{
	next_pair(e);
	ck_assert_int_eq(bind_win(e, access), IBV_WC_SUCCESS);
	refused(e, op, raddr, len, e->rkey);
}

START_TEST(test_bind_bounds)
{
	struct mw_env e;
	struct ibv_async_event ev;
	unsigned char *end;

	mw_env_open(&e, IBV_MW_TYPE_2, MW_OPS_RC);
	end = e.t.buf + MW_WIN_OFF + MW_WIN_LEN;
	ck_assert_int_eq(bind_win(&e, MW_ACC_ALL & ~IBV_ACCESS_LOCAL_WRITE), IBV_WC_SUCCESS);
	mw_traffic_through(&e.p, &e.i, &e.t, e.rkey, 5);
	/* the window's last 8 bytes, then 8 bytes ending one byte past it */
	memset(e.i.buf, 0x3c, 16);
	ck_assert_int_eq(access_win(&e, IBV_WR_RDMA_WRITE, e.win + MW_WIN_LEN - 8, 8),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(end - 8, e.i.buf, 8), 0);
	memset(e.i.buf, 0x4d, 16);
	refused(&e, IBV_WR_RDMA_WRITE, e.win + MW_WIN_LEN - 7, 8, e.rkey);
	ck_assert_uint_eq(end[-7], 0x3c);
	ck_assert_uint_eq(end[0], MW_GUARD);
	/* the responder's QP went to ERR with IBV_EVENT_QP_ACCESS_ERR */
	ck_assert_int_eq(tv_next_async(e.t.ctx, MW_WAIT_MS, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
	ck_assert_ptr_eq(ev.element.qp, e.p.t);
	ibv_ack_async_event(&ev);
	/* a READ of the byte just past the window, and of the byte just before */
	bind_then_refused(&e, IBV_ACCESS_REMOTE_READ, IBV_WR_RDMA_READ, e.win + MW_WIN_LEN, 1);
	bind_then_refused(&e, IBV_ACCESS_REMOTE_READ, IBV_WR_RDMA_READ, e.win - 1, 1);
	mw_env_close(&e);
}
END_TEST

/* A window grants only the rights it was bound with, whatever the QP allows. */
START_TEST(test_bind_rights)
{
	struct mw_env e;

	mw_env_open(&e, IBV_MW_TYPE_2, MW_OPS_RC);
	for (uint32_t k = 0; k < MW_WIN_LEN; k++)
		e.t.buf[MW_WIN_OFF + k] = (unsigned char)(k * 13 + 1);
	ck_assert_int_eq(bind_win(&e, IBV_ACCESS_REMOTE_READ), IBV_WC_SUCCESS);
	ck_assert_int_eq(access_win(&e, IBV_WR_RDMA_READ, e.win, MW_WIN_LEN), IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(e.i.buf, e.t.buf + MW_WIN_OFF, MW_WIN_LEN), 0);
	refused(&e, IBV_WR_RDMA_WRITE, e.win, 64, e.rkey);
	bind_then_refused(&e, IBV_ACCESS_REMOTE_READ, IBV_WR_ATOMIC_FETCH_AND_ADD, e.win, 8);
	bind_then_refused(&e, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
			  IBV_WR_ATOMIC_FETCH_AND_ADD, e.win, 8);
	bind_then_refused(&e, IBV_ACCESS_REMOTE_WRITE, IBV_WR_RDMA_READ, e.win, 8);
	/* nothing of the refused WRITE and atomics landed */
	for (uint32_t k = 0; k < 64; k++)
		ck_assert_uint_eq(e.t.buf[MW_WIN_OFF + k], (unsigned char)(k * 13 + 1));
	mw_env_close(&e);
}
END_TEST

/* Window WRs the device refuses: IBV_WC_MW_BIND_ERR, the QP in ERR (mlx5). */
enum bad_xbind { X_NO_MW_BIND, X_TYPE1, X_LINV_MR, N_BAD_XBIND };

START_TEST(test_bind_errors)
{
	struct tv_side t;
	struct ibv_qp *qp;
	struct ibv_mw *mw;
	enum ibv_wc_status st;

	mw_side_open(&t, _i == X_NO_MW_BIND ? IBV_ACCESS_LOCAL_WRITE :
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	qp = mw_rc_qp(t.pd, t.cq, MW_OPS_RC);
	ck_assert_int_eq(tv_rc_connect(qp, qp->qp_num, &t.gid, IBV_MTU_1024, 12), 0);
	mw = ibv_alloc_mw(t.pd, _i == X_TYPE1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw);
	if (_i == X_LINV_MR)
		st = xlocal_inv(qp, &t, t.mr->rkey);
	else
		st = xbind(qp, &t, mw, ibv_inc_rkey(mw->rkey), t.mr, (uintptr_t)t.buf, 4096,
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_int_eq(st, IBV_WC_MW_BIND_ERR);
	ck_assert_int_eq(mw_qp_state(qp), IBV_QPS_ERR);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
	mw_side_close(&t);
}
END_TEST

START_TEST(test_local_inv)
{
	struct mw_env e;
	const unsigned int rw = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;

	mw_env_open(&e, IBV_MW_TYPE_2, MW_OPS_RC);
	for (unsigned int round = 0; round < 2; round++) {
		if (round)
			next_pair(&e);
		ck_assert_int_eq(bind_win(&e, rw), IBV_WC_SUCCESS);
		memset(e.i.buf, 0x60 + round, MW_WIN_LEN);
		ck_assert_int_eq(access_win(&e, IBV_WR_RDMA_WRITE, e.win, MW_WIN_LEN),
				 IBV_WC_SUCCESS);
		ck_assert_int_eq(memcmp(e.t.buf + MW_WIN_OFF, e.i.buf, MW_WIN_LEN), 0);
		ck_assert_int_eq(xlocal_inv(e.p.t, &e.t, e.rkey), IBV_WC_SUCCESS);
		/* round 0 writes with the dead key, round 1 reads with it */
		memset(e.i.buf, 0x70, MW_WIN_LEN);
		refused(&e, round ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, e.win, 64, e.rkey);
		ck_assert_uint_eq(e.t.buf[MW_WIN_OFF], 0x60 + round);
	}
	mw_env_close(&e);
}
END_TEST

/* Replace E's pair by one whose target receives on an extended CQ (returned). */
static struct ibv_cq_ex *pair_with_xcq(struct mw_env *e)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq_ex *xcq = ibv_create_cq_ex(e->t.ctx, &ca);
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC, .pd = e->t.pd, .send_cq = e->t.cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = MW_OPS_RC,
	};

	ck_assert_ptr_nonnull(xcq);
	qa.recv_cq = ibv_cq_ex_to_cq(xcq);
	mw_pair_free(&e->p);
	e->p.i = mw_rc_qp(e->i.pd, e->i.cq, MW_OPS_RC);
	e->p.t = ibv_create_qp_ex(e->t.ctx, &qa);
	ck_assert_ptr_nonnull(e->p.t);
	ck_assert_int_eq(tv_rc_connect(e->p.i, e->p.t->qp_num, &e->t.gid, IBV_MTU_1024, 12), 0);
	ck_assert_int_eq(tv_rc_connect(e->p.t, e->p.i->qp_num, &e->i.gid, IBV_MTU_1024, 12), 0);
	return xcq;
}

/* The receive CQE of a SEND_WITH_INV of LEN bytes with RKEY, read through
 * the extended CQ's accessors. */
static void expect_xcq_inv(struct ibv_cq_ex *xcq, struct ibv_qp *qp, uint32_t len, uint32_t rkey)
{
	ck_assert_int_eq(tv_start_poll(xcq, MW_WAIT_MS), 0);
	ck_assert_int_eq(xcq->status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(xcq->wr_id, 0x4ec);
	ck_assert_int_eq(ibv_wc_read_opcode(xcq), IBV_WC_RECV);
	ck_assert_uint_eq(ibv_wc_read_wc_flags(xcq) & (IBV_WC_WITH_INV | IBV_WC_WITH_IMM),
			  IBV_WC_WITH_INV);
	ck_assert_uint_eq(ibv_wc_read_invalidated_rkey(xcq), rkey);
	ck_assert_uint_eq(ibv_wc_read_byte_len(xcq), len);
	ck_assert_uint_eq(ibv_wc_read_qp_num(xcq), qp->qp_num);
	ck_assert_int_eq(ibv_next_poll(xcq), ENOENT);
	ibv_end_poll(xcq);
}

/* ibv_wr_send_inv of 64 KiB (64 packets, IETH on the last) from I: T's
 * receive CQE, read by ibv_poll_cq or (loop 1) through an extended CQ. */
START_TEST(test_send_inv)
{
	struct mw_env e;
	struct ibv_cq_ex *xcq = NULL;
	struct ibv_qp_ex *x;

	mw_env_open(&e, IBV_MW_TYPE_2, MW_OPS_RC);
	if (_i)
		xcq = pair_with_xcq(&e);
	ck_assert_int_eq(bind_win(&e, IBV_ACCESS_REMOTE_WRITE), IBV_WC_SUCCESS);
	ck_assert_int_eq(access_win(&e, IBV_WR_RDMA_WRITE, e.win, 64), IBV_WC_SUCCESS);
	for (uint32_t k = 0; k < MW_BUF; k++)
		e.i.buf[k] = (unsigned char)(k ^ (k >> 8) ^ 0x5a);
	post_recv(e.p.t, 0x4ec, e.t.buf, MW_BUF, e.t.mr->lkey);
	x = ibv_qp_to_qp_ex(e.p.i);
	ibv_wr_start(x);
	x->wr_id = 0x5e;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(x, e.rkey);
	ibv_wr_set_sge(x, e.i.mr->lkey, (uintptr_t)e.i.buf, MW_BUF);
	ck_assert_int_eq(ibv_wr_complete(x), 0);
	expect_wc(e.i.cq, 0x5e, IBV_WC_SEND, 0, 0, 0);
	if (xcq)
		expect_xcq_inv(xcq, e.p.t, MW_BUF, e.rkey);
	else
		expect_wc(e.t.cq, 0x4ec, IBV_WC_RECV, MW_BUF, IBV_WC_WITH_INV, e.rkey);
	ck_assert_int_eq(memcmp(e.t.buf, e.i.buf, MW_BUF), 0);
	ck_assert_uint_eq(e.t.buf[MW_BUF], MW_GUARD);
	refused(&e, IBV_WR_RDMA_WRITE, e.win, 64, e.rkey);
	ck_assert_int_eq(memcmp(e.t.buf, e.i.buf, MW_BUF), 0);
	if (xcq) {	/* the CQ outlives its QP */
		next_pair(&e);
		ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(xcq)), 0);
	}
	mw_env_close(&e);
}
END_TEST

/* Append a signaled SEND (IMM: SEND_WITH_IMM with imm_data htonl(IMM)) of
 * LEN bytes at OFF of S's buffer to the open batch of X. */
static void add_send(struct ibv_qp_ex *x, uint64_t id, struct tv_side *s, uint32_t off,
		     uint32_t len, uint32_t imm)
{
	x->wr_id = id;
	x->wr_flags = IBV_SEND_SIGNALED;
	if (imm)
		ibv_wr_send_imm(x, htonl(imm));
	else
		ibv_wr_send(x);
	ibv_wr_set_sge(x, s->mr->lkey, (uintptr_t)s->buf + off, len);
}

/* Append a signaled bind of E's window (whole range, RKEY, ACCESS). */
static void add_bind(struct ibv_qp_ex *x, uint64_t id, struct mw_env *e, uint32_t rkey,
		     unsigned int access)
{
	struct ibv_mw_bind_info bi = { e->t.mr, e->win, MW_WIN_LEN, access };

	x->wr_id = id;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, e->mw, rkey, &bi);
}

#define SRC (MW_BUF - 4096)	/* a send source outside the window */
#define RCV (40 * 1024)		/* receive buffers of T (outside the window) */
#define RCV_I (MW_BUF - 12288)	/* receive buffers of I (past its WRITE sources) */

/* T: SEND, BIND_MW, SEND_WITH_IMM in one batch; I then WRITEs through it. */
static void batch_send_bind(struct mw_env *e)
{
	struct ibv_qp_ex *xt = ibv_qp_to_qp_ex(e->p.t);

	post_recv(e->p.i, 0xa1, e->i.buf + RCV_I, 4096, e->i.mr->lkey);
	post_recv(e->p.i, 0xa2, e->i.buf + RCV_I + 4096, 4096, e->i.mr->lkey);
	ibv_wr_start(xt);
	add_send(xt, 1, &e->t, SRC, 1000, 0);
	add_bind(xt, 2, e, e->rkey, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	add_send(xt, 3, &e->t, SRC + 1000, 500, 0x1234);
	ck_assert_int_eq(ibv_wr_complete(xt), 0);
	expect_wc(e->t.cq, 1, IBV_WC_SEND, 0, 0, 0);
	expect_wc(e->t.cq, 2, IBV_WC_BIND_MW, 0, 0, 0);
	expect_wc(e->t.cq, 3, IBV_WC_SEND, 0, 0, 0);
	expect_wc(e->i.cq, 0xa1, IBV_WC_RECV, 1000, 0, 0);
	expect_wc(e->i.cq, 0xa2, IBV_WC_RECV, 500, IBV_WC_WITH_IMM, 0x1234);
	ck_assert_int_eq(memcmp(e->i.buf + RCV_I, e->t.buf + SRC, 1000), 0);
	ck_assert_int_eq(memcmp(e->i.buf + RCV_I + 4096, e->t.buf + SRC + 1000, 500), 0);
	memset(e->i.buf, 0x81, MW_WIN_LEN);
	ck_assert_int_eq(access_win(e, IBV_WR_RDMA_WRITE, e->win, MW_WIN_LEN), IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(e->t.buf + MW_WIN_OFF, e->i.buf, MW_WIN_LEN), 0);
}

/* I: SEND, SEND_WITH_INV of E's key, SEND in one batch. */
static void batch_send_inv(struct mw_env *e)
{
	struct ibv_qp_ex *xi = ibv_qp_to_qp_ex(e->p.i);

	for (unsigned int n = 0; n < 3; n++)
		post_recv(e->p.t, 0xb1 + n, e->t.buf + RCV + n * 1024, 1024, e->t.mr->lkey);
	ibv_wr_start(xi);
	add_send(xi, 4, &e->i, SRC, 100, 0);
	xi->wr_id = 5;
	ibv_wr_send_inv(xi, e->rkey);
	ibv_wr_set_sge(xi, e->i.mr->lkey, (uintptr_t)e->i.buf + SRC + 100, 200);
	add_send(xi, 6, &e->i, SRC + 300, 300, 0);
	ck_assert_int_eq(ibv_wr_complete(xi), 0);
	expect_wc(e->i.cq, 4, IBV_WC_SEND, 0, 0, 0);
	expect_wc(e->i.cq, 5, IBV_WC_SEND, 0, 0, 0);
	expect_wc(e->i.cq, 6, IBV_WC_SEND, 0, 0, 0);
	expect_wc(e->t.cq, 0xb1, IBV_WC_RECV, 100, 0, 0);
	expect_wc(e->t.cq, 0xb2, IBV_WC_RECV, 200, IBV_WC_WITH_INV, e->rkey);
	expect_wc(e->t.cq, 0xb3, IBV_WC_RECV, 300, 0, 0);
	ck_assert_int_eq(memcmp(e->t.buf + RCV, e->i.buf + SRC, 100), 0);
	ck_assert_int_eq(memcmp(e->t.buf + RCV + 1024, e->i.buf + SRC + 100, 200), 0);
	ck_assert_int_eq(memcmp(e->t.buf + RCV + 2048, e->i.buf + SRC + 300, 300), 0);
}

/* The three window builders in ibv_wr_start/complete batches with sends:
 * every CQE in SQ order with its opcode, byte_len, flags and key. */
START_TEST(test_batch)
{
	struct mw_env e;
	struct ibv_qp_ex *xt;
	uint32_t k1, k2;

	mw_env_open(&e, IBV_MW_TYPE_2, MW_OPS_RC);
	xt = ibv_qp_to_qp_ex(e.p.t);
	k1 = e.rkey;
	k2 = ibv_inc_rkey(k1);
	for (uint32_t k = 0; k < 4096; k++) {
		e.t.buf[SRC + k] = (unsigned char)(k * 3 + 1);
		e.i.buf[SRC + k] = (unsigned char)(k * 5 + 2);
	}
	batch_send_bind(&e);
	batch_send_inv(&e);
	/* T: BIND_MW (k2), LOCAL_INV (k2), SEND */
	post_recv(e.p.i, 0xc1, e.i.buf + RCV_I, 4096, e.i.mr->lkey);
	ibv_wr_start(xt);
	add_bind(xt, 7, &e, k2, IBV_ACCESS_REMOTE_READ);
	xt->wr_id = 8;
	ibv_wr_local_inv(xt, k2);
	add_send(xt, 9, &e.t, SRC + 2000, 64, 0);
	ck_assert_int_eq(ibv_wr_complete(xt), 0);
	expect_wc(e.t.cq, 7, IBV_WC_BIND_MW, 0, 0, 0);
	expect_wc(e.t.cq, 8, IBV_WC_LOCAL_INV, 0, 0, 0);
	expect_wc(e.t.cq, 9, IBV_WC_SEND, 0, 0, 0);
	expect_wc(e.i.cq, 0xc1, IBV_WC_RECV, 64, 0, 0);
	ck_assert_int_eq(memcmp(e.i.buf + RCV_I, e.t.buf + SRC + 2000, 64), 0);
	/* both keys are dead: k1 on this pair, k2 on the next */
	refused(&e, IBV_WR_RDMA_WRITE, e.win, 64, k1);
	next_pair(&e);
	refused(&e, IBV_WR_RDMA_READ, e.win, 64, k2);
	ck_assert_uint_eq(e.t.buf[MW_WIN_OFF], 0x81);
	mw_env_close(&e);
}
END_TEST

/* ibv_wr_abort discards a bind, and batches with a bad window WR post
 * nothing (EINVAL at wr_complete): the marker SEND is the first CQE and the
 * window is still free (a bound type 2 window could not be bound again). */
START_TEST(test_abort_errors)
{
	struct mw_env e;
	struct ibv_qp_ex *xt;
	struct ibv_mw_bind_info no_mr = { NULL, 0, 64, IBV_ACCESS_REMOTE_WRITE };
	struct ibv_wc wc;
	char in[8] = "inline!";

	mw_env_open(&e, IBV_MW_TYPE_2, MW_OPS_RC);
	xt = ibv_qp_to_qp_ex(e.p.t);
	ibv_wr_start(xt);
	add_send(xt, 0x10, &e.t, SRC, 64, 0);
	add_bind(xt, 0x11, &e, e.rkey, IBV_ACCESS_REMOTE_WRITE);
	ibv_wr_abort(xt);
	ibv_wr_start(xt);
	ibv_wr_bind_mw(xt, e.mw, e.rkey, &no_mr);
	ck_assert_int_eq(ibv_wr_complete(xt), EINVAL);
	ibv_wr_start(xt);
	add_bind(xt, 0x12, &e, e.rkey, IBV_ACCESS_REMOTE_WRITE);
	ibv_wr_set_sge(xt, e.t.mr->lkey, (uintptr_t)e.t.buf, 8);
	ck_assert_int_eq(ibv_wr_complete(xt), EINVAL);
	ibv_wr_start(xt);
	add_bind(xt, 0x13, &e, e.rkey, IBV_ACCESS_REMOTE_WRITE);
	ibv_wr_local_inv(xt, e.rkey);
	ibv_wr_set_inline_data(xt, in, sizeof(in));
	ck_assert_int_eq(ibv_wr_complete(xt), EINVAL);
	post_recv(e.p.i, 0xd1, e.i.buf + RCV_I, 4096, e.i.mr->lkey);
	ibv_wr_start(xt);
	add_send(xt, 0x14, &e.t, SRC + 64, 64, 0);
	ck_assert_int_eq(ibv_wr_complete(xt), 0);
	expect_wc(e.t.cq, 0x14, IBV_WC_SEND, 0, 0, 0);
	expect_wc(e.i.cq, 0xd1, IBV_WC_RECV, 64, 0, 0);
	ck_assert_int_eq(memcmp(e.i.buf + RCV_I, e.t.buf + SRC + 64, 64), 0);
	ck_assert_int_eq(ibv_poll_cq(e.t.cq, 1, &wc), 0);
	ck_assert_int_eq(ibv_poll_cq(e.i.cq, 1, &wc), 0);
	ck_assert_int_eq(bind_win(&e, IBV_ACCESS_REMOTE_WRITE), IBV_WC_SUCCESS);
	memset(e.i.buf, 0x92, MW_WIN_LEN);
	ck_assert_int_eq(access_win(&e, IBV_WR_RDMA_WRITE, e.win, MW_WIN_LEN), IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(e.t.buf + MW_WIN_OFF, e.i.buf, MW_WIN_LEN), 0);
	mw_env_close(&e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_qpex_mw");
	TCase *tc = tcase_create("qpex_mw");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_bind_bounds);
	tcase_add_test(tc, test_bind_rights);
	tcase_add_loop_test(tc, test_bind_errors, 0, N_BAD_XBIND);
	tcase_add_test(tc, test_local_inv);
	tcase_add_loop_test(tc, test_send_inv, 0, 2);
	tcase_add_test(tc, test_batch);
	tcase_add_test(tc, test_abort_errors);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
