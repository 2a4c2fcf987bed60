/*
 * traffic_mw_lib.c - the memory-window test helpers of traffic_mw_lib.h.
 */
#include "config.h"

#include "traffic_mw_lib.h"

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void mw_side_open(struct tv_side *s, unsigned int mr_access)
{
	memset(s, 0, sizeof(*s));
	s->ctx = tv_open(MW_DEV);
	ck_assert_ptr_nonnull(s->ctx);
	ck_assert_int_eq(ibv_query_gid(s->ctx, 1, 0, &s->gid), 0);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	ck_assert_int_eq(posix_memalign((void **)&s->buf, 4096, 2 * MW_BUF), 0);
	memset(s->buf, MW_GUARD, 2 * MW_BUF);
	s->mr = ibv_reg_mr(s->pd, s->buf, MW_BUF, mr_access);
	ck_assert_ptr_nonnull(s->pd);
	ck_assert_ptr_nonnull(s->cq);
	ck_assert_ptr_nonnull(s->mr);
}

void mw_side_close(struct tv_side *s)
{
	ck_assert_int_eq(ibv_dereg_mr(s->mr), 0);
	ck_assert_int_eq(ibv_destroy_cq(s->cq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(s->pd), 0);
	ck_assert_int_eq(ibv_close_device(s->ctx), 0);
	free(s->buf);
}

struct ibv_qp *mw_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = 16, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = send_ops,
	};
	struct ibv_qp *qp;

	if (send_ops)
		qp = ibv_create_qp_ex(pd->context, &qa);
	else
		qp = ibv_create_qp(pd, &(struct ibv_qp_init_attr){ .send_cq = cq, .recv_cq = cq,
								   .qp_type = IBV_QPT_RC, .cap = qa.cap });
	ck_assert_ptr_nonnull(qp);
	return qp;
}

void mw_pair_new(struct mw_pair *p, struct tv_side *i, struct tv_side *t, uint64_t send_ops)
{
	p->i = mw_rc_qp(i->pd, i->cq, send_ops);
	p->t = mw_rc_qp(t->pd, t->cq, send_ops);
	ck_assert_int_eq(tv_rc_connect(p->i, p->t->qp_num, &t->gid, IBV_MTU_1024, 12), 0);
	ck_assert_int_eq(tv_rc_connect(p->t, p->i->qp_num, &i->gid, IBV_MTU_1024, 12), 0);
	/* and remote atomics at the target (RTS -> RTS) */
	ck_assert_int_eq(ibv_modify_qp(p->t, &(struct ibv_qp_attr){ .qp_access_flags = MW_ACC_ALL },
				       IBV_QP_ACCESS_FLAGS), 0);
}

void mw_pair_free(struct mw_pair *p)
{
	ck_assert_int_eq(ibv_destroy_qp(p->i), 0);
	ck_assert_int_eq(ibv_destroy_qp(p->t), 0);
}

struct ibv_mw *mw_setup(struct tv_side *i, struct tv_side *t, struct mw_pair *p,
			enum ibv_mw_type type, uint64_t send_ops)
{
	struct ibv_mw *mw;

	mw_side_open(i, MW_ACC_ALL);
	mw_side_open(t, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mw_pair_new(p, i, t, send_ops);
	mw = ibv_alloc_mw(t->pd, type);
	ck_assert_ptr_nonnull(mw);
	return mw;
}

void mw_env_open(struct mw_env *e, enum ibv_mw_type type, uint64_t send_ops)
{
	e->mw = mw_setup(&e->i, &e->t, &e->p, type, send_ops);
	e->win = mw_win(&e->t);
	e->rkey = ibv_inc_rkey(e->mw->rkey);
}

void mw_env_close(struct mw_env *e)
{
	mw_pair_free(&e->p);
	mw_drain(&e->i);
	mw_drain(&e->t);
	ck_assert_int_eq(ibv_dealloc_mw(e->mw), 0);
	mw_side_close(&e->i);
	mw_side_close(&e->t);
}

uint64_t mw_win(const struct tv_side *t)
{
	return (uintptr_t)t->buf + MW_WIN_OFF;
}

void mw_drain(struct tv_side *s)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(s->cq, 16, wc) > 0)
		;
}

struct ibv_wc mw_wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	ck_assert_int_eq(tv_poll_one(cq, MW_WAIT_MS, &wc), 0);
	return wc;
}

enum ibv_qp_state mw_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	ck_assert_int_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

enum ibv_wc_status mw_rdma(struct ibv_qp *qp, struct tv_side *i, enum ibv_wr_opcode op,
			   uint32_t loff, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)i->buf + loff, len, i->mr->lkey };
	struct ibv_send_wr w = { .wr_id = 7, .sg_list = &sg, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w.wr.atomic.remote_addr = raddr;
		w.wr.atomic.rkey = rkey;
		w.wr.atomic.compare_add = 1;
	} else {
		w.wr.rdma.remote_addr = raddr;
		w.wr.rdma.rkey = rkey;
	}
	ck_assert_int_eq(ibv_post_send(qp, &w, &bad), 0);
	wc = mw_wait_wc(i->cq);
	ck_assert_uint_eq(wc.wr_id, 7);
	ck_assert_uint_eq(wc.qp_num, qp->qp_num);
	return wc.status;
}

void mw_expect_denied(struct tv_side *i, struct tv_side *t, enum ibv_wr_opcode op, uint64_t raddr,
		      uint32_t len, uint32_t rkey)
{
	struct mw_pair p;

	mw_pair_new(&p, i, t, 0);
	ck_assert_int_eq(mw_rdma(p.i, i, op, 0, len, raddr, rkey), IBV_WC_REM_ACCESS_ERR);
	mw_pair_free(&p);
	mw_drain(i);
	mw_drain(t);
}

void mw_traffic_through(struct mw_pair *p, struct tv_side *i, struct tv_side *t, uint32_t rkey,
			unsigned int seed)
{
	uint64_t win = mw_win(t);
	uint64_t word;

	for (uint32_t k = 0; k < MW_WIN_LEN; k++)
		i->buf[k] = (unsigned char)(k * 7 + seed);
	ck_assert_int_eq(mw_rdma(p->i, i, IBV_WR_RDMA_WRITE, 0, MW_WIN_LEN, win, rkey),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(t->buf + MW_WIN_OFF, i->buf, MW_WIN_LEN), 0);
	ck_assert_uint_eq(t->buf[MW_WIN_OFF - 1], MW_GUARD);
	ck_assert_uint_eq(t->buf[MW_WIN_OFF + MW_WIN_LEN], MW_GUARD);
	memset(i->buf + MW_WIN_LEN, 0, MW_WIN_LEN);
	ck_assert_int_eq(mw_rdma(p->i, i, IBV_WR_RDMA_READ, MW_WIN_LEN, MW_WIN_LEN, win, rkey),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(i->buf + MW_WIN_LEN, t->buf + MW_WIN_OFF, MW_WIN_LEN), 0);
	memcpy(&word, t->buf + MW_WIN_OFF, 8);
	ck_assert_int_eq(mw_rdma(p->i, i, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, win, rkey),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(i->buf, &word, 8), 0);
	word++;
	ck_assert_int_eq(memcmp(t->buf + MW_WIN_OFF, &word, 8), 0);
}
