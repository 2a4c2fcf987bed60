/*
 * traffic_mw.c - memory windows through libibverbs, the provider and a
 * running uroced (Check, run inside `uroce run` by traffic_mw.sh; IBTA
 * 10.6.7, ibv_alloc_mw(3), ibv_bind_mw(3), ibv_post_send(3)).
 *
 * Two contexts of one process, RC QPs at path MTU 1024, 64 KiB MRs:
 * device caps; alloc/dealloc of both types; a type 1 window bound with
 * ibv_bind_mw (new rkey = ibv_inc_rkey, completion IBV_WC_BIND_MW) and a
 * type 2 window bound with an IBV_WR_BIND_MW WR, then 32 KiB RDMA WRITE and
 * READ and a FETCH_AND_ADD through the window's rkey, byte-exact with guard
 * bytes around; out-of-bounds and missing-right accesses, the old rkey of a
 * rebound type 1 window, a type 2 window used from another QP, and every
 * rkey after unbind, LOCAL_INV, SEND_WITH_INV and dealloc give
 * IBV_WC_REM_ACCESS_ERR; SEND_WITH_INV gives the receiver IBV_WC_WITH_INV
 * and the exact invalidated_rkey (also through an extended CQ:
 * ibv_wc_read_invalidated_rkey); bad binds give IBV_WC_MW_BIND_ERR with
 * the QP in ERR; dereg_mr of an MR with a bound window is EBUSY; 1000
 * bind / WRITE / LOCAL_INV cycles on one QP with a new key each time.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "traffic_mw_lib.h"

/* Bind a type 2 window with an IBV_WR_BIND_MW WR on QP (CQ of S); the
 * completion's status (its opcode and wr_id are checked on success). */
static enum ibv_wc_status bind2(struct ibv_qp *qp, struct tv_side *s, struct ibv_mw *mw, uint32_t rkey,
				struct ibv_mr *mr, uint64_t addr, uint64_t len, unsigned int access)
{
	struct ibv_send_wr w = { .wr_id = 0xb1d, .opcode = IBV_WR_BIND_MW,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	w.bind_mw.mw = mw;
	w.bind_mw.rkey = rkey;
	w.bind_mw.bind_info = (struct ibv_mw_bind_info){ mr, addr, len, access };
	ck_assert_int_eq(ibv_post_send(qp, &w, &bad), 0);
	wc = mw_wait_wc(s->cq);
	ck_assert_uint_eq(wc.wr_id, 0xb1d);
	if (wc.status == IBV_WC_SUCCESS)
		ck_assert_int_eq(wc.opcode, IBV_WC_BIND_MW);
	return wc.status;
}

static enum ibv_wc_status local_inv(struct ibv_qp *qp, struct tv_side *s, uint32_t rkey)
{
	struct ibv_send_wr w = { .wr_id = 0x1e, .opcode = IBV_WR_LOCAL_INV,
				 .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey }, *bad;
	struct ibv_wc wc;

	ck_assert_int_eq(ibv_post_send(qp, &w, &bad), 0);
	wc = mw_wait_wc(s->cq);
	ck_assert_uint_eq(wc.wr_id, 0x1e);
	if (wc.status == IBV_WC_SUCCESS)
		ck_assert_int_eq(wc.opcode, IBV_WC_LOCAL_INV);
	return wc.status;
}

START_TEST(test_caps_alloc)
{
	struct tv_side s;
	struct ibv_device_attr a;
	struct ibv_mw *m1, *m2, *m3;

	mw_side_open(&s, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ck_assert_int_eq(ibv_query_device(s.ctx, &a), 0);
	ck_assert_int_eq(a.max_mw, 65535);
	ck_assert_uint_eq(a.device_cap_flags & (IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B),
			  IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	m1 = ibv_alloc_mw(s.pd, IBV_MW_TYPE_1);
	m2 = ibv_alloc_mw(s.pd, IBV_MW_TYPE_2);
	ck_assert_ptr_nonnull(m1);
	ck_assert_ptr_nonnull(m2);
	ck_assert_int_eq(m1->type, IBV_MW_TYPE_1);
	ck_assert_int_eq(m2->type, IBV_MW_TYPE_2);
	ck_assert_ptr_eq(m1->pd, s.pd);
	ck_assert_ptr_eq(m1->context, s.ctx);
	ck_assert_uint_ne(m1->rkey >> 8, 0);
	ck_assert_uint_ne(m1->rkey >> 8, m2->rkey >> 8);
	ck_assert_uint_ne(m1->rkey >> 8, s.mr->rkey >> 8);
	ck_assert_uint_ne(m1->handle, m2->handle);
	errno = 0;
	m3 = ibv_alloc_mw(s.pd, (enum ibv_mw_type)3);
	ck_assert_ptr_null(m3);
	ck_assert_int_eq(errno, EINVAL);
	/* a PD with windows is busy */
	ck_assert_int_eq(ibv_dealloc_pd(s.pd), EBUSY);
	ck_assert_int_eq(ibv_dealloc_mw(m1), 0);
	ck_assert_int_eq(ibv_dealloc_mw(m2), 0);
	mw_side_close(&s);
}
END_TEST

START_TEST(test_type1)
{
	struct tv_side i, t;
	struct mw_pair p;
	struct ibv_mw *mw;
	uint32_t k0, k1;
	uint64_t win;
	struct ibv_mw_bind b = { .wr_id = 0x71, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	mw = mw_setup(&i, &t, &p, IBV_MW_TYPE_1, 0);
	win = mw_win(&t);
	k0 = mw->rkey;
	b.bind_info = (struct ibv_mw_bind_info){ t.mr, win, MW_WIN_LEN, MW_ACC_ALL & ~IBV_ACCESS_LOCAL_WRITE };
	ck_assert_int_eq(ibv_bind_mw(p.t, mw, &b), 0);
	ck_assert_uint_eq(mw->rkey, ibv_inc_rkey(k0));
	wc = mw_wait_wc(t.cq);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_BIND_MW);
	ck_assert_uint_eq(wc.wr_id, 0x71);
	ck_assert_uint_eq(wc.qp_num, p.t->qp_num);
	/* the MR itself grants no remote access; the window does */
	mw_traffic_through(&p, &i, &t, mw->rkey, 1);
	/* a type 1 window serves every QP of its PD */
	mw_pair_free(&p);
	mw_pair_new(&p, &i, &t, 0);
	mw_traffic_through(&p, &i, &t, mw->rkey, 2);
	mw_pair_free(&p);
	mw_expect_denied(&i, &t, IBV_WR_RDMA_WRITE, win, 16, t.mr->rkey);
	mw_expect_denied(&i, &t, IBV_WR_RDMA_WRITE, win + MW_WIN_LEN - 8, 16, mw->rkey);
	mw_expect_denied(&i, &t, IBV_WR_RDMA_READ, win - 1, 8, mw->rkey);
	/* rebound read-only at the MR's start: the old key is dead, writes denied */
	mw_pair_new(&p, &i, &t, 0);
	k1 = mw->rkey;
	b.bind_info = (struct ibv_mw_bind_info){ t.mr, (uintptr_t)t.buf, 4096, IBV_ACCESS_REMOTE_READ };
	ck_assert_int_eq(ibv_bind_mw(p.t, mw, &b), 0);
	ck_assert_int_eq(mw_wait_wc(t.cq).status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(mw->rkey, ibv_inc_rkey(k1));
	ck_assert_int_eq(ibv_dereg_mr(t.mr), EBUSY);
	ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_READ, 0, 4096, (uintptr_t)t.buf, mw->rkey),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(i.buf, t.buf, 4096), 0);
	mw_pair_free(&p);
	mw_expect_denied(&i, &t, IBV_WR_RDMA_READ, (uintptr_t)t.buf, 8, k1);
	mw_expect_denied(&i, &t, IBV_WR_RDMA_WRITE, (uintptr_t)t.buf, 8, mw->rkey);
	mw_expect_denied(&i, &t, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)t.buf, 8, mw->rkey);
	/* unbind: length 0 */
	mw_pair_new(&p, &i, &t, 0);
	b.bind_info = (struct ibv_mw_bind_info){ t.mr, 0, 0, 0 };
	ck_assert_int_eq(ibv_bind_mw(p.t, mw, &b), 0);
	ck_assert_int_eq(mw_wait_wc(t.cq).status, IBV_WC_SUCCESS);
	mw_pair_free(&p);
	mw_expect_denied(&i, &t, IBV_WR_RDMA_READ, (uintptr_t)t.buf, 8, mw->rkey);
	ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
	mw_side_close(&i);
	mw_side_close(&t);
}
END_TEST

START_TEST(test_type2)
{
	struct tv_side i, t;
	struct mw_pair p, q;
	struct ibv_mw *mw;
	uint32_t rkey;
	uint64_t win;

	mw = mw_setup(&i, &t, &p, IBV_MW_TYPE_2, 0);
	win = mw_win(&t);
	/* free after alloc: its key names nothing yet */
	mw_expect_denied(&i, &t, IBV_WR_RDMA_READ, win, 8, mw->rkey);
	rkey = ibv_inc_rkey(mw->rkey);
	ck_assert_int_eq(bind2(p.t, &t, mw, rkey, t.mr, win, MW_WIN_LEN, MW_ACC_ALL), IBV_WC_SUCCESS);
	mw_traffic_through(&p, &i, &t, rkey, 3);
	/* bound to p.t: another QP of the same PD is refused (type 2B) */
	mw_pair_new(&q, &i, &t, 0);
	ck_assert_int_eq(mw_rdma(q.i, &i, IBV_WR_RDMA_READ, 0, 8, win, rkey), IBV_WC_REM_ACCESS_ERR);
	mw_pair_free(&q);
	mw_drain(&i);
	mw_drain(&t);
	ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_READ, 0, 8, win, rkey), IBV_WC_SUCCESS);
	/* a bound type 2 window cannot be bound again */
	ck_assert_int_eq(bind2(p.t, &t, mw, ibv_inc_rkey(rkey), t.mr, win, 8, MW_ACC_ALL),
			 IBV_WC_MW_BIND_ERR);
	ck_assert_int_eq(mw_qp_state(p.t), IBV_QPS_ERR);
	mw_pair_free(&p);
	mw_drain(&i);
	mw_drain(&t);
	/* the window went free with its QP; bind again, LOCAL_INV, then denied */
	mw_pair_new(&p, &i, &t, 0);
	rkey = ibv_inc_rkey(rkey);
	ck_assert_int_eq(bind2(p.t, &t, mw, rkey, t.mr, win, MW_WIN_LEN, IBV_ACCESS_REMOTE_WRITE),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_WRITE, 0, MW_WIN_LEN, win, rkey), IBV_WC_SUCCESS);
	ck_assert_int_eq(local_inv(p.t, &t, rkey), IBV_WC_SUCCESS);
	ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_WRITE, 0, 8, win, rkey), IBV_WC_REM_ACCESS_ERR);
	mw_pair_free(&p);
	mw_drain(&i);
	mw_drain(&t);
	/* a WRITE, a bind and a LOCAL_INV in one post: completions in SQ order,
	 * the bind and the invalidation wait for the WRITE's ACK */
	mw_pair_new(&p, &i, &t, 0);
	rkey = ibv_inc_rkey(rkey);
	{
		struct ibv_sge sg = { (uintptr_t)t.buf, MW_WIN_LEN, t.mr->lkey };
		struct ibv_send_wr w[3] = {
			{ .wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			  .send_flags = IBV_SEND_SIGNALED, .next = &w[1],
			  .wr.rdma = { (uintptr_t)i.buf + MW_WIN_LEN, i.mr->rkey } },
			{ .wr_id = 2, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
			  .next = &w[2] },
			{ .wr_id = 3, .opcode = IBV_WR_LOCAL_INV, .send_flags = IBV_SEND_SIGNALED,
			  .invalidate_rkey = rkey },
		}, *bad;
		static const enum ibv_wc_opcode want[3] = { IBV_WC_RDMA_WRITE, IBV_WC_BIND_MW,
							    IBV_WC_LOCAL_INV };

		w[1].bind_mw.mw = mw;
		w[1].bind_mw.rkey = rkey;
		w[1].bind_mw.bind_info = (struct ibv_mw_bind_info){ t.mr, win, 64, IBV_ACCESS_REMOTE_READ };
		ck_assert_int_eq(ibv_post_send(p.t, w, &bad), 0);
		for (unsigned k = 0; k < 3; k++) {
			struct ibv_wc wc = mw_wait_wc(t.cq);

			ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
			ck_assert_uint_eq(wc.wr_id, k + 1);
			ck_assert_int_eq(wc.opcode, want[k]);
		}
		ck_assert_int_eq(memcmp(i.buf + MW_WIN_LEN, t.buf, MW_WIN_LEN), 0);
	}
	ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_READ, 0, 8, win, rkey), IBV_WC_REM_ACCESS_ERR);
	mw_pair_free(&p);
	mw_drain(&i);
	mw_drain(&t);
	/* dealloc of a bound window: its key dies */
	mw_pair_new(&p, &i, &t, 0);
	rkey = ibv_inc_rkey(rkey);
	ck_assert_int_eq(bind2(p.t, &t, mw, rkey, t.mr, win, MW_WIN_LEN, IBV_ACCESS_REMOTE_READ),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_READ, 0, 64, win, rkey), IBV_WC_SUCCESS);
	ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
	ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_READ, 0, 64, win, rkey), IBV_WC_REM_ACCESS_ERR);
	mw_pair_free(&p);
	mw_side_close(&i);
	mw_side_close(&t);
}
END_TEST

/* SEND_WITH_INV from I invalidates T's window: WITH_INV, invalidated_rkey. */
START_TEST(test_send_inv)
{
	struct tv_side i, t;
	struct mw_pair p;
	struct ibv_mw *mw;
	uint32_t rkey;
	uint64_t win;
	struct ibv_sge sg, rsg;
	struct ibv_send_wr w = { .wr_id = 0x5e, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr r = { .wr_id = 0x4ec, .sg_list = &rsg, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;

	mw = mw_setup(&i, &t, &p, IBV_MW_TYPE_2, 0);
	win = mw_win(&t);
	rkey = ibv_inc_rkey(mw->rkey);
	ck_assert_int_eq(bind2(p.t, &t, mw, rkey, t.mr, win, MW_WIN_LEN, MW_ACC_ALL), IBV_WC_SUCCESS);
	ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_WRITE, 0, 64, win, rkey), IBV_WC_SUCCESS);
	/* 3000 bytes: three packets at MTU 1024, IETH on the last */
	for (uint32_t k = 0; k < 3000; k++)
		i.buf[k] = (unsigned char)(k ^ 0x5a);
	sg = (struct ibv_sge){ (uintptr_t)i.buf, 3000, i.mr->lkey };
	rsg = (struct ibv_sge){ (uintptr_t)t.buf + MW_BUF - 4096, 4096, t.mr->lkey };
	w.invalidate_rkey = rkey;
	ck_assert_int_eq(ibv_post_recv(p.t, &r, &rbad), 0);
	ck_assert_int_eq(ibv_post_send(p.i, &w, &bad), 0);
	wc = mw_wait_wc(i.cq);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_SEND);
	wc = mw_wait_wc(t.cq);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 0x4ec);
	ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(wc.wc_flags & (IBV_WC_WITH_INV | IBV_WC_WITH_IMM), IBV_WC_WITH_INV);
	ck_assert_uint_eq(wc.invalidated_rkey, rkey);
	ck_assert_uint_eq(wc.byte_len, 3000);
	ck_assert_int_eq(memcmp(t.buf + MW_BUF - 4096, i.buf, 3000), 0);
	ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_WRITE, 0, 64, win, rkey), IBV_WC_REM_ACCESS_ERR);
	mw_pair_free(&p);
	mw_drain(&i);
	mw_drain(&t);
	/* the same through an extended CQ: ibv_wc_read_invalidated_rkey */
	{
		struct ibv_cq_init_attr_ex ca = { .cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS };
		struct ibv_cq_ex *cqx = ibv_create_cq_ex(t.ctx, &ca);
		struct ibv_qp_init_attr qa = {
			.send_cq = t.cq, .recv_cq = ibv_cq_ex_to_cq(cqx), .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		};

		ck_assert_ptr_nonnull(cqx);
		p.i = mw_rc_qp(i.pd, i.cq, 0);
		p.t = ibv_create_qp(t.pd, &qa);
		ck_assert_ptr_nonnull(p.t);
		ck_assert_int_eq(tv_rc_connect(p.i, p.t->qp_num, &t.gid, IBV_MTU_1024, 12), 0);
		ck_assert_int_eq(tv_rc_connect(p.t, p.i->qp_num, &i.gid, IBV_MTU_1024, 12), 0);
		rkey = ibv_inc_rkey(rkey);
		ck_assert_int_eq(bind2(p.t, &t, mw, rkey, t.mr, win, 64, IBV_ACCESS_REMOTE_READ),
				 IBV_WC_SUCCESS);
		w.invalidate_rkey = rkey;
		sg.length = 100;
		ck_assert_int_eq(ibv_post_recv(p.t, &r, &rbad), 0);
		ck_assert_int_eq(ibv_post_send(p.i, &w, &bad), 0);
		ck_assert_int_eq(mw_wait_wc(i.cq).status, IBV_WC_SUCCESS);
		ck_assert_int_eq(tv_start_poll(cqx, MW_WAIT_MS), 0);
		ck_assert_int_eq(cqx->status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(cqx->wr_id, 0x4ec);
		ck_assert_int_eq(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
		ck_assert_uint_eq(ibv_wc_read_wc_flags(cqx) & IBV_WC_WITH_INV, IBV_WC_WITH_INV);
		ck_assert_uint_eq(ibv_wc_read_invalidated_rkey(cqx), rkey);
		ck_assert_uint_eq(ibv_wc_read_byte_len(cqx), 100);
		ibv_end_poll(cqx);
		ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_READ, 0, 8, win, rkey), IBV_WC_REM_ACCESS_ERR);
		mw_pair_free(&p);
		ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
		mw_drain(&i);
		mw_drain(&t);
	}
	/* an rkey that cannot be invalidated (the MR's): Invalid Request both sides */
	mw_pair_new(&p, &i, &t, 0);
	w.invalidate_rkey = t.mr->rkey;
	ck_assert_int_eq(ibv_post_recv(p.t, &r, &rbad), 0);
	ck_assert_int_eq(ibv_post_send(p.i, &w, &bad), 0);
	ck_assert_int_eq(mw_wait_wc(i.cq).status, IBV_WC_REM_INV_REQ_ERR);
	wc = mw_wait_wc(t.cq);
	ck_assert_int_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	ck_assert_uint_eq(wc.wr_id, 0x4ec);
	ck_assert_int_eq(mw_qp_state(p.t), IBV_QPS_ERR);
	mw_pair_free(&p);
	ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
	mw_side_close(&i);
	mw_side_close(&t);
}
END_TEST

/* Binds the device refuses: MW_BIND_ERR, QP in ERR (as mlx5). */
enum bad_bind { NO_MW_BIND, OUTSIDE_MR, TYPE1_BY_WR, OTHER_PD, WRITE_NO_LOCAL_WRITE, LINV_MR, N_BAD };

START_TEST(test_bind_errors)
{
	struct tv_side t;
	struct ibv_pd *pd2;
	struct ibv_cq *cq2;
	struct ibv_mr *mr = NULL;
	struct ibv_mw *mw;
	struct ibv_qp *qp;
	enum ibv_mw_type type = _i == TYPE1_BY_WR ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2;
	unsigned int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	uint64_t addr, len = 4096;
	enum ibv_wc_status st;

	if (_i == NO_MW_BIND)
		acc = IBV_ACCESS_LOCAL_WRITE;
	if (_i == WRITE_NO_LOCAL_WRITE)
		acc = IBV_ACCESS_MW_BIND;
	mw_side_open(&t, acc);
	addr = (uintptr_t)t.buf;
	if (_i == OUTSIDE_MR)
		addr += MW_BUF - 4095;
	pd2 = ibv_alloc_pd(t.ctx);
	cq2 = ibv_create_cq(t.ctx, 16, NULL, NULL, 0);
	qp = mw_rc_qp(_i == OTHER_PD ? pd2 : t.pd, t.cq, 0);
	ck_assert_int_eq(tv_rc_connect(qp, qp->qp_num, &t.gid, IBV_MTU_1024, 12), 0);
	mw = ibv_alloc_mw(t.pd, type);
	ck_assert_ptr_nonnull(mw);
	if (_i == LINV_MR)
		st = local_inv(qp, &t, t.mr->rkey);
	else
		st = bind2(qp, &t, mw, ibv_inc_rkey(mw->rkey), t.mr, addr, len,
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_int_eq(st, IBV_WC_MW_BIND_ERR);
	ck_assert_int_eq(mw_qp_state(qp), IBV_QPS_ERR);
	/* nothing was bound: the MR deregisters at once */
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
	ck_assert_int_eq(ibv_dereg_mr(t.mr), 0);
	t.mr = mr = ibv_reg_mr(t.pd, t.buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	ck_assert_int_eq(ibv_destroy_cq(cq2), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), 0);
	mw_side_close(&t);
}
END_TEST

/* 1000 cycles of bind (new variant, next 64 bytes) / WRITE / LOCAL_INV
 * on one QP pair: each cycle's data lands; the last key is dead after. */
START_TEST(test_cycles)
{
	struct tv_side i, t;
	struct mw_pair p;
	struct ibv_mw *mw;
	uint32_t rkey;
	uint64_t win;

	mw = mw_setup(&i, &t, &p, IBV_MW_TYPE_2, 0);
	win = mw_win(&t);
	rkey = mw->rkey;
	for (unsigned n = 0; n < 1000; n++) {
		uint32_t off = (n * 64) % MW_WIN_LEN;

		rkey = ibv_inc_rkey(rkey);
		ck_assert_int_eq(bind2(p.t, &t, mw, rkey, t.mr, win + off, 64, IBV_ACCESS_REMOTE_WRITE),
				 IBV_WC_SUCCESS);
		memset(i.buf, (int)(n & 0xff), 64);
		ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_WRITE, 0, 64, win + off, rkey), IBV_WC_SUCCESS);
		ck_assert_int_eq(memcmp(t.buf + MW_WIN_OFF + off, i.buf, 64), 0);
		ck_assert_int_eq(local_inv(p.t, &t, rkey), IBV_WC_SUCCESS);
	}
	ck_assert_int_eq(mw_rdma(p.i, &i, IBV_WR_RDMA_WRITE, 0, 64, win, rkey), IBV_WC_REM_ACCESS_ERR);
	mw_pair_free(&p);
	ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
	mw_side_close(&i);
	mw_side_close(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_mw");
	TCase *tc = tcase_create("mw");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_caps_alloc);
	tcase_add_test(tc, test_type1);
	tcase_add_test(tc, test_type2);
	tcase_add_test(tc, test_send_inv);
	tcase_add_loop_test(tc, test_bind_errors, 0, N_BAD);
	tcase_add_test(tc, test_cycles);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
