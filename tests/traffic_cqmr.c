/*
 * traffic_cqmr.c - changing live MRs and CQs through the public verbs API
 * on uroce0 (Check, run inside `uroce run` by traffic_cqmr.sh against a
 * private daemon). RC QPs over RoCE v2 at path MTU 1024. Sources:
 * ibv_rereg_mr(3), ibv_resize_cq(3), ibv_modify_cq(3), ibv_create_cq_ex(3)
 * (IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN), ibv_create_qp(3) (max_inline_data).
 *   rereg_combo      (7 runs) each non-empty set of CHANGE_TRANSLATION,
 *                    CHANGE_PD, CHANGE_ACCESS: keys kept, ibv_mr fields
 *                    updated, a 64 KiB RDMA WRITE to the old range/PD/rights
 *                    fails with REM_ACCESS_ERR, the new ones work (WRITE or
 *                    READ, bytes compared), and WRITE fails once REMOTE_WRITE
 *                    is taken away
 *   rereg_errors     ERR_INPUT / ERR_CMD with errno EINVAL, EOPNOTSUPP,
 *                    EFAULT; the MR unchanged and working after each; a PD
 *                    re-registered to is busy until the MR goes
 *   resize_held      shrink below the CQEs held: EINVAL; shrink and grow
 *                    with CQEs held after the ring wrapped: all kept, in order
 *   resize_traffic   3000 RDMA WRITEs of 16 KiB polled by a second thread
 *                    while the main thread resizes the CQ 30 times: every
 *                    completion once, in order
 *   moderate         cq_mod_caps, modify_cq errors, an event after exactly
 *                    cq_count CQEs, and by cq_period when the count is not met
 *   ignore_overrun   20 CQEs into an 8-entry IGNORE_OVERRUN CQ: no CQ_ERR,
 *                    the ring holds the last lap (imm 16..19), the CQ works on
 *   reset_cleans     a QP moved to RESET loses its unpolled CQEs from a shared,
 *                    wrapped CQ (as mlx5); the other QP's stay, in order, and
 *                    the QP's next receive completes with its own wr_id
 *   destroy_cleans   a QP destroyed with 12 unpolled CQEs (5 receives, 7
 *                    flushed) in a shared CQ: none of them is polled after
 *                    (mlx5_destroy_qp), the other QP's 5 stay in order
 *   inline_max       max_inline_data 256 (the device's limit) accepted, 257
 *                    EINVAL; 256-byte inline WRITE and SEND arrive exact
 */
#include "check_main.h"
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 20000
#define MSG 65536u
#define DEV_INLINE 256u   /* the device's max_inline_data (docs/provider.md) */
#define ACC_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define ACC_RO (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ)

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
};

/* An RC connection a -> b on one device, each with its own CQ. */
struct conn {
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;
};

static void env_open(struct env *e)
{
	e->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(e->ctx);
	ck_assert_int_eq(ibv_query_gid(e->ctx, 1, 0, &e->gid), 0);
	e->pd = ibv_alloc_pd(e->ctx);
	ck_assert_ptr_nonnull(e->pd);
}

static void env_close(struct env *e)
{
	ck_assert_int_eq(ibv_dealloc_pd(e->pd), 0);
	ck_assert_int_eq(ibv_close_device(e->ctx), 0);
}

static struct ibv_qp *mk_qp(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t inl)
{
	struct ibv_qp_init_attr qa;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = 64;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = inl;
	return ibv_create_qp(pd, &qa);
}

/* Connection with A on PDA and B on PDB; CQB NULL: a new CQ of 256. */
static void conn_open(struct env *e, struct conn *c, struct ibv_pd *pda, struct ibv_pd *pdb,
		      struct ibv_cq *cqb)
{
	c->cqa = ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	c->cqb = cqb ? cqb : ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	ck_assert_ptr_nonnull(c->cqa);
	ck_assert_ptr_nonnull(c->cqb);
	c->a = mk_qp(pda, c->cqa, 0);
	c->b = mk_qp(pdb, c->cqb, 0);
	ck_assert_ptr_nonnull(c->a);
	ck_assert_ptr_nonnull(c->b);
	ck_assert_int_eq(tv_rc_connect(c->a, c->b->qp_num, &e->gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(c->b, c->a->qp_num, &e->gid, IBV_MTU_1024, 14), 0);
}

static void conn_close(struct conn *c, bool keep_cqb)
{
	ck_assert_int_eq(ibv_destroy_qp(c->a), 0);
	ck_assert_int_eq(ibv_destroy_qp(c->b), 0);
	ck_assert_int_eq(ibv_destroy_cq(c->cqa), 0);
	if (!keep_cqb)
		ck_assert_int_eq(ibv_destroy_cq(c->cqb), 0);
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, void *buf, uint32_t len,
		uint32_t lkey, uint64_t raddr, uint32_t rkey, unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	wr.imm_data = htobe32((uint32_t)wr_id);
	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

/* One RDMA op on a new connection (B on PDB); the completion status. */
static enum ibv_wc_status one_rdma(struct env *e, struct ibv_pd *pdb, enum ibv_wr_opcode op,
				   void *buf, uint32_t lkey, void *raddr, uint32_t rkey)
{
	struct conn c;
	struct ibv_wc wc;

	conn_open(e, &c, e->pd, pdb, NULL);
	ck_assert_int_eq(post(c.a, op, 7, buf, MSG, lkey, (uintptr_t)raddr, rkey, 0), 0);
	ck_assert_int_eq(tv_poll_one(c.cqa, WAIT_MS, &wc), 0);
	ck_assert_uint_eq(wc.wr_id, 7);
	conn_close(&c, false);
	return wc.status;
}

static void fill(unsigned char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + seed);
}

START_TEST(rereg_combo)
{
	int fl = _i;
	struct env e;
	struct ibv_pd *pd2;
	struct ibv_mr *mr, *smr;
	unsigned char *b1 = aligned_alloc(4096, MSG), *b2 = aligned_alloc(4096, MSG);
	unsigned char *src = aligned_alloc(4096, MSG);
	struct ibv_pd *npd;
	unsigned char *nbuf;
	uint32_t key;

	env_open(&e);
	pd2 = ibv_alloc_pd(e.ctx);
	ck_assert_ptr_nonnull(pd2);
	mr = ibv_reg_mr(e.pd, b1, MSG, ACC_ALL);
	smr = ibv_reg_mr(e.pd, src, MSG, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	ck_assert_ptr_nonnull(smr);
	key = mr->rkey;
	npd = fl & IBV_REREG_MR_CHANGE_PD ? pd2 : e.pd;
	nbuf = fl & IBV_REREG_MR_CHANGE_TRANSLATION ? b2 : b1;
	ck_assert_int_eq(ibv_rereg_mr(mr, fl, fl & IBV_REREG_MR_CHANGE_PD ? pd2 : NULL,
				      fl & IBV_REREG_MR_CHANGE_TRANSLATION ? b2 : NULL,
				      fl & IBV_REREG_MR_CHANGE_TRANSLATION ? MSG : 0,
				      fl & IBV_REREG_MR_CHANGE_ACCESS ? ACC_RO : 0), 0);
	ck_assert_uint_eq(mr->lkey, key);
	ck_assert_uint_eq(mr->rkey, key);
	ck_assert_ptr_eq(mr->pd, npd);
	ck_assert_ptr_eq(mr->addr, nbuf);
	ck_assert_uint_eq(mr->length, MSG);
	/* old range, PD and rights: the write is refused whichever changed */
	fill(src, MSG, 1);
	memset(b1, 0, MSG);
	ck_assert_int_eq(one_rdma(&e, e.pd, IBV_WR_RDMA_WRITE, src, smr->lkey, b1, key),
			 IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(b1[0] | b1[MSG - 1], 0);
	/* the new ones work */
	if (fl & IBV_REREG_MR_CHANGE_ACCESS) {
		fill(nbuf, MSG, 3);
		memset(src, 0, MSG);
		ck_assert_int_eq(one_rdma(&e, npd, IBV_WR_RDMA_READ, src, smr->lkey, nbuf, key),
				 IBV_WC_SUCCESS);
		ck_assert_int_eq(memcmp(src, nbuf, MSG), 0);
		ck_assert_int_eq(one_rdma(&e, npd, IBV_WR_RDMA_WRITE, src, smr->lkey, nbuf, key),
				 IBV_WC_REM_ACCESS_ERR);
	} else {
		fill(src, MSG, 5);
		memset(nbuf, 0, MSG);
		ck_assert_int_eq(one_rdma(&e, npd, IBV_WR_RDMA_WRITE, src, smr->lkey, nbuf, key),
				 IBV_WC_SUCCESS);
		ck_assert_int_eq(memcmp(src, nbuf, MSG), 0);
	}
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_dereg_mr(smr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), 0);
	env_close(&e);
	free(b1);
	free(b2);
	free(src);
}
END_TEST

/* ibv_rereg_mr's result and errno in one value: ret * 1000 - errno. */
static int rereg(struct ibv_mr *mr, int fl, struct ibv_pd *pd, void *addr, size_t len, int acc)
{
	int ret;

	errno = 0;
	ret = ibv_rereg_mr(mr, fl, pd, addr, len, acc);
	return ret ? ret * 1000 - errno : 0;
}

START_TEST(rereg_errors)
{
	struct env e, other;
	struct ibv_mr *mr, *smr;
	struct ibv_pd *pd2;
	unsigned char *b = aligned_alloc(4096, MSG), *src = aligned_alloc(4096, MSG);
	void *none = mmap(NULL, MSG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *ro = mmap(NULL, MSG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const int cmd = IBV_REREG_MR_ERR_CMD * 1000;

	ck_assert_ptr_ne(none, MAP_FAILED);
	ck_assert_ptr_ne(ro, MAP_FAILED);
	env_open(&e);
	env_open(&other);
	mr = ibv_reg_mr(e.pd, b, MSG, ACC_ALL);
	smr = ibv_reg_mr(e.pd, src, MSG, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	ck_assert_ptr_nonnull(smr);
	ck_assert_int_eq(rereg(mr, 8, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT * 1000 - EINVAL);
	ck_assert_int_eq(rereg(mr, 0, NULL, NULL, 0, ACC_ALL), IBV_REREG_MR_ERR_INPUT * 1000 - EINVAL);
	ck_assert_int_eq(rereg(mr, 0, NULL, NULL, 0, 0), cmd - EINVAL);
	ck_assert_int_eq(rereg(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE),
			 cmd - EINVAL);
	ck_assert_int_eq(rereg(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND), cmd - EOPNOTSUPP);
	ck_assert_int_eq(rereg(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, none, MSG, 0), cmd - EFAULT);
	/* read-only memory for an MR that keeps LOCAL_WRITE */
	ck_assert_int_eq(rereg(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, ro, MSG, 0), cmd - EFAULT);
	ck_assert_int_eq(rereg(mr, IBV_REREG_MR_CHANGE_PD, other.pd, NULL, 0, 0), cmd - EINVAL);
	/* ... but with read-only rights it may cover read-only memory */
	ck_assert_int_eq(rereg(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, NULL,
			       ro, MSG, IBV_ACCESS_REMOTE_READ), 0);
	ck_assert_int_eq(rereg(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, NULL,
			       b, MSG, ACC_ALL), 0);
	/* after all that the MR is what it was: a write lands */
	fill(src, MSG, 9);
	ck_assert_int_eq(one_rdma(&e, e.pd, IBV_WR_RDMA_WRITE, src, smr->lkey, b, mr->rkey),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(src, b, MSG), 0);
	/* the PD an MR moved to is in use until the MR goes */
	pd2 = ibv_alloc_pd(e.ctx);
	ck_assert_ptr_nonnull(pd2);
	ck_assert_int_eq(rereg(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), EBUSY);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), 0);
	ck_assert_int_eq(ibv_dereg_mr(smr), 0);
	env_close(&other);
	env_close(&e);
	munmap(none, MSG);
	munmap(ro, MSG);
	free(b);
	free(src);
}
END_TEST

/* N SENDs with immediate FIRST.. from A (waiting for A's completions, so B's
 * receive CQEs are written); B has receives posted. */
static void sends(struct conn *c, uint32_t first, uint32_t n, void *buf, uint32_t lkey)
{
	struct ibv_wc wc;

	for (uint32_t i = 0; i < n; i++)
		ck_assert_int_eq(post(c->a, IBV_WR_SEND_WITH_IMM, first + i, buf, 64, lkey, 0, 0, 0), 0);
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_int_eq(tv_poll_one(c->cqa, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, first + i);
	}
}

/* Polls N receive completions from CQ: immediates FIRST.. in order. */
static void expect_imm(struct ibv_cq *cq, uint32_t first, uint32_t n)
{
	struct ibv_wc wc;

	for (uint32_t i = 0; i < n; i++) {
		ck_assert_int_eq(tv_poll_one(cq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
		ck_assert_uint_eq(be32toh(wc.imm_data), first + i);
	}
}

static void post_recvs(struct conn *c, uint32_t n, void *buf, uint32_t lkey)
{
	for (uint32_t i = 0; i < n; i++)
		ck_assert_int_eq(post_recv(c->b, i, buf, 64, lkey), 0);
}

START_TEST(resize_held)
{
	struct env e;
	struct conn c;
	struct ibv_cq *cqb;
	struct ibv_mr *mr;
	unsigned char *buf = calloc(1, 4096);
	uint32_t i;

	env_open(&e);
	mr = ibv_reg_mr(e.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	cqb = ibv_create_cq(e.ctx, 31, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cqb);
	ck_assert_int_eq(cqb->cqe, 31);
	conn_open(&e, &c, e.pd, e.pd, cqb);
	/* 100 CQEs through the 32-entry ring: the indices are past three laps */
	for (i = 0; i < 100; i += 10) {
		post_recvs(&c, 10, buf, mr->lkey);
		sends(&c, i, 10, buf, mr->lkey);
		expect_imm(cqb, i, 10);
	}
	post_recvs(&c, 30, buf, mr->lkey);
	sends(&c, 100, 10, buf, mr->lkey);
	/* 10 held: not below them */
	ck_assert_int_eq(ibv_resize_cq(cqb, 4), EINVAL);
	ck_assert_int_eq(ibv_resize_cq(cqb, 9), EINVAL);
	ck_assert_int_eq(cqb->cqe, 31);
	ck_assert_int_eq(ibv_resize_cq(cqb, 10), 0);
	ck_assert_int_eq(cqb->cqe, 15);
	sends(&c, 110, 5, buf, mr->lkey);
	expect_imm(cqb, 100, 15);
	sends(&c, 115, 10, buf, mr->lkey);
	ck_assert_int_eq(ibv_resize_cq(cqb, 1000), 0);
	ck_assert_int_eq(cqb->cqe, 1023);
	sends(&c, 125, 5, buf, mr->lkey);
	expect_imm(cqb, 115, 15);
	ck_assert_int_eq(ibv_resize_cq(cqb, 0), EINVAL);
	ck_assert_int_eq(ibv_resize_cq(cqb, 4194304), EINVAL); /* max_cqe + 1 */
	conn_close(&c, false);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
	free(buf);
}
END_TEST

#define RT_TOTAL 3000u
#define RT_LEN 16384u
#define RT_WINDOW 48u

struct poller {
	struct ibv_cq *cq;
	uint32_t got;     /* completions seen, in order (atomic) */
	uint32_t bad;     /* first wrong wr_id / status, + 1 */
};

static void *poll_thread(void *arg)
{
	struct poller *p = arg;
	uint64_t deadline = tv_now_ms() + 120000;
	struct ibv_wc wc[16];

	while (p->got < RT_TOTAL && tv_now_ms() < deadline) {
		int n = ibv_poll_cq(p->cq, 16, wc);

		for (int i = 0; i < n; i++) {
			if (wc[i].wr_id != p->got || wc[i].status != IBV_WC_SUCCESS) {
				p->bad = p->got + 1;
				return NULL;
			}
			__atomic_store_n(&p->got, p->got + 1, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

START_TEST(resize_traffic)
{
	static const int sizes[] = { 100, 300, 64, 1000, 128 };
	struct env e;
	struct conn c;
	struct poller p = { 0 };
	pthread_t th;
	unsigned char *src = malloc(RT_LEN), *dst = calloc(1, RT_LEN);
	struct ibv_mr *smr, *dmr;
	uint32_t posted = 0, resizes = 0;
	uint64_t deadline = tv_now_ms() + 120000;

	env_open(&e);
	smr = ibv_reg_mr(e.pd, src, RT_LEN, IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(e.pd, dst, RT_LEN, ACC_ALL);
	conn_open(&e, &c, e.pd, e.pd, NULL);
	fill(src, RT_LEN, 11);
	p.cq = c.cqa;
	ck_assert_int_eq(pthread_create(&th, NULL, poll_thread, &p), 0);
	while (posted < RT_TOTAL && !p.bad && tv_now_ms() < deadline) {
		if (posted - __atomic_load_n(&p.got, __ATOMIC_ACQUIRE) >= RT_WINDOW) {
			sched_yield();
			continue;
		}
		ck_assert_int_eq(post(c.a, IBV_WR_RDMA_WRITE, posted, src, RT_LEN, smr->lkey,
				      (uintptr_t)dst, dmr->rkey, 0), 0);
		if (++posted % 100 == 0) {
			/* every size holds the window: the resize cannot be refused */
			ck_assert_int_eq(ibv_resize_cq(c.cqa, sizes[resizes % 5]), 0);
			resizes++;
		}
	}
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_uint_eq(p.bad, 0);
	ck_assert_uint_eq(p.got, RT_TOTAL);
	ck_assert_uint_eq(resizes, RT_TOTAL / 100);
	ck_assert_int_eq(c.cqa->cqe, 255); /* the last size, 128, rounded up */
	ck_assert_int_eq(memcmp(src, dst, RT_LEN), 0);
	/* nothing more: no duplicate behind the last */
	ck_assert_int_eq(ibv_poll_cq(c.cqa, 1, (struct ibv_wc[1]){ 0 }), 0);
	conn_close(&c, false);
	ck_assert_int_eq(ibv_dereg_mr(smr), 0);
	ck_assert_int_eq(ibv_dereg_mr(dmr), 0);
	env_close(&e);
	free(src);
	free(dst);
}
END_TEST

static int chan_ready(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

	return poll(&pfd, 1, ms);
}

static void take_event(struct ibv_comp_channel *ch, struct ibv_cq *want)
{
	struct ibv_cq *cq;
	void *ctx;

	ck_assert_int_eq(chan_ready(ch, WAIT_MS), 1);
	ck_assert_int_eq(ibv_get_cq_event(ch, &cq, &ctx), 0);
	ck_assert_ptr_eq(cq, want);
	ibv_ack_cq_events(cq, 1);
}

static int moderate(struct ibv_cq *cq, uint32_t mask, uint16_t count, uint16_t period)
{
	struct ibv_modify_cq_attr a = { .attr_mask = mask, .moderate = { count, period } };

	return ibv_modify_cq(cq, &a);
}

START_TEST(moderate_events)
{
	struct env e;
	struct conn c;
	struct ibv_device_attr_ex dx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cqb;
	struct ibv_mr *mr;
	unsigned char *buf = calloc(1, 4096);

	env_open(&e);
	ck_assert_int_eq(ibv_query_device_ex(e.ctx, NULL, &dx), 0);
	ck_assert_uint_eq(dx.cq_mod_caps.max_cq_count, 65535);
	ck_assert_uint_eq(dx.cq_mod_caps.max_cq_period, 4095);
	mr = ibv_reg_mr(e.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ch = ibv_create_comp_channel(e.ctx);
	ck_assert_ptr_nonnull(ch);
	cqb = ibv_create_cq(e.ctx, 64, NULL, ch, 0);
	ck_assert_ptr_nonnull(cqb);
	ck_assert_int_eq(moderate(cqb, 0, 8, 0), EINVAL);
	ck_assert_int_eq(moderate(cqb, IBV_CQ_ATTR_RESERVED, 8, 0), EINVAL);
	ck_assert_int_eq(moderate(cqb, IBV_CQ_ATTR_MODERATE, 8, 4096), EINVAL);
	conn_open(&e, &c, e.pd, e.pd, cqb);
	post_recvs(&c, 32, buf, mr->lkey);
	/* count 8: 7 CQEs do not fire, the 8th does */
	ck_assert_int_eq(moderate(cqb, IBV_CQ_ATTR_MODERATE, 8, 0), 0);
	ck_assert_int_eq(ibv_req_notify_cq(cqb, 0), 0);
	sends(&c, 0, 7, buf, mr->lkey);
	ck_assert_int_eq(chan_ready(ch, 300), 0);
	sends(&c, 7, 1, buf, mr->lkey);
	take_event(ch, cqb);
	expect_imm(cqb, 0, 8);
	/* count 1000: one CQE does not fire; the period does, once a CQE starts it */
	ck_assert_int_eq(moderate(cqb, IBV_CQ_ATTR_MODERATE, 1000, 0), 0);
	ck_assert_int_eq(ibv_req_notify_cq(cqb, 0), 0);
	sends(&c, 8, 1, buf, mr->lkey);
	ck_assert_int_eq(chan_ready(ch, 300), 0);
	ck_assert_int_eq(moderate(cqb, IBV_CQ_ATTR_MODERATE, 1000, 4000), 0);
	ck_assert_int_eq(chan_ready(ch, 100), 0);
	sends(&c, 9, 1, buf, mr->lkey);
	take_event(ch, cqb);
	expect_imm(cqb, 8, 2);
	/* 0/0: the first CQE fires again */
	ck_assert_int_eq(moderate(cqb, IBV_CQ_ATTR_MODERATE, 0, 0), 0);
	ck_assert_int_eq(ibv_req_notify_cq(cqb, 0), 0);
	sends(&c, 10, 1, buf, mr->lkey);
	take_event(ch, cqb);
	expect_imm(cqb, 10, 1);
	conn_close(&c, false);
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
	free(buf);
}
END_TEST

START_TEST(ignore_overrun)
{
	struct env e;
	struct conn c;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4, .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN,
	};
	struct ibv_cq_ex *cqx;
	struct ibv_mr *mr;
	struct ibv_wc wc[8];
	struct pollfd pfd;
	unsigned char *buf = calloc(1, 4096);

	env_open(&e);
	mr = ibv_reg_mr(e.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	cqx = ibv_create_cq_ex(e.ctx, &ca);
	ck_assert_ptr_nonnull(cqx);
	ck_assert_int_eq(ibv_cq_ex_to_cq(cqx)->cqe, 7);
	conn_open(&e, &c, e.pd, e.pd, ibv_cq_ex_to_cq(cqx));
	post_recvs(&c, 32, buf, mr->lkey);
	/* 20 CQEs into 8 slots, none polled: the daemon overwrites */
	sends(&c, 0, 20, buf, mr->lkey);
	pfd = (struct pollfd){ .fd = e.ctx->async_fd, .events = POLLIN };
	ck_assert_int_eq(poll(&pfd, 1, 300), 0);
	/* slots 0-3 hold CQEs 16-19 of the current lap; slot 4 holds 12, a lap behind */
	ck_assert_int_eq(ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 8, wc), 4);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(be32toh(wc[i].imm_data), 16 + i);
	sends(&c, 20, 3, buf, mr->lkey);
	expect_imm(ibv_cq_ex_to_cq(cqx), 20, 3);
	ck_assert_int_eq(ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 8, wc), 0);
	conn_close(&c, false);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
	free(buf);
}
END_TEST

START_TEST(reset_cleans)
{
	struct env e;
	struct conn c1, c2;
	struct ibv_cq *cqb;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	unsigned char *buf = calloc(1, 4096);

	env_open(&e);
	mr = ibv_reg_mr(e.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	cqb = ibv_create_cq(e.ctx, 15, NULL, NULL, 0);
	conn_open(&e, &c1, e.pd, e.pd, cqb);
	conn_open(&e, &c2, e.pd, e.pd, cqb);
	post_recvs(&c1, 12, buf, mr->lkey);
	post_recvs(&c2, 12, buf, mr->lkey);
	/* 8 CQEs polled, then 10 of two QPs interleaved: they straddle the wrap */
	for (uint32_t i = 0; i < 4; i++) {
		sends(&c1, 200 + i, 1, buf, mr->lkey);
		sends(&c2, 300 + i, 1, buf, mr->lkey);
		expect_imm(cqb, 200 + i, 1);
		expect_imm(cqb, 300 + i, 1);
	}
	for (uint32_t i = 0; i < 5; i++) {
		sends(&c1, i, 1, buf, mr->lkey);
		sends(&c2, 100 + i, 1, buf, mr->lkey);
	}
	/* RESET: B1's CQEs and its 3 remaining receives are gone, B2's stay in order */
	ck_assert_int_eq(ibv_modify_qp(c1.b, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
				       IBV_QP_STATE), 0);
	expect_imm(cqb, 100, 5);
	ck_assert_int_eq(ibv_poll_cq(cqb, 1, &wc), 0);
	/* B1 again: its next receive completes with its own wr_id */
	ck_assert_int_eq(ibv_modify_qp(c1.a, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
				       IBV_QP_STATE), 0);
	ck_assert_int_eq(tv_rc_connect(c1.a, c1.b->qp_num, &e.gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(c1.b, c1.a->qp_num, &e.gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(post_recv(c1.b, 77, buf, 64, mr->lkey), 0);
	sends(&c1, 7, 1, buf, mr->lkey);
	ck_assert_int_eq(tv_poll_one(cqb, WAIT_MS, &wc), 0);
	ck_assert_uint_eq(wc.wr_id, 77);
	ck_assert_uint_eq(wc.qp_num, c1.b->qp_num);
	ck_assert_uint_eq(be32toh(wc.imm_data), 7);
	conn_close(&c1, true);
	conn_close(&c2, false);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
	free(buf);
}
END_TEST

START_TEST(destroy_cleans)
{
	struct env e;
	struct conn c1, c2;
	struct ibv_cq *cqb;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	unsigned char *buf = calloc(1, 4096);

	env_open(&e);
	mr = ibv_reg_mr(e.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	cqb = ibv_create_cq(e.ctx, 63, NULL, NULL, 0);
	conn_open(&e, &c1, e.pd, e.pd, cqb);
	conn_open(&e, &c2, e.pd, e.pd, cqb);
	post_recvs(&c1, 12, buf, mr->lkey);
	post_recvs(&c2, 12, buf, mr->lkey);
	for (uint32_t i = 0; i < 5; i++) {
		sends(&c1, i, 1, buf, mr->lkey);
		sends(&c2, 100 + i, 1, buf, mr->lkey);
	}
	/* B1 to ERR flushes its 7 other receives: 12 CQEs of B1 unpolled, 5 of B2 */
	ck_assert_int_eq(ibv_modify_qp(c1.b, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_ERR },
				       IBV_QP_STATE), 0);
	ck_assert_int_eq(ibv_destroy_qp(c1.b), 0);
	/* none of B1's CQEs (their wr_ids name freed work) is polled any more */
	expect_imm(cqb, 100, 5);
	ck_assert_int_eq(ibv_poll_cq(cqb, 1, &wc), 0);
	ck_assert_int_eq(ibv_destroy_qp(c1.a), 0);
	ck_assert_int_eq(ibv_destroy_cq(c1.cqa), 0);
	conn_close(&c2, false);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
	free(buf);
}
END_TEST

START_TEST(inline_max)
{
	struct env e;
	struct conn c;
	struct ibv_qp_init_attr qa;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	unsigned char src[DEV_INLINE], *dst = calloc(1, 8192);

	env_open(&e);
	cq = ibv_create_cq(e.ctx, 16, NULL, NULL, 0);
	ck_assert_ptr_null(mk_qp(e.pd, cq, DEV_INLINE + 1));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	conn_open(&e, &c, e.pd, e.pd, NULL);
	/* A again with the device's inline limit; B back to RESET to pair with it */
	ck_assert_int_eq(ibv_destroy_qp(c.a), 0);
	ck_assert_int_eq(ibv_modify_qp(c.b, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
				       IBV_QP_STATE), 0);
	c.a = mk_qp(e.pd, c.cqa, DEV_INLINE);
	ck_assert_ptr_nonnull(c.a);
	ck_assert_int_eq(ibv_query_qp(c.a, &(struct ibv_qp_attr){ 0 }, IBV_QP_CAP, &qa), 0);
	ck_assert_uint_ge(qa.cap.max_inline_data, DEV_INLINE);
	ck_assert_int_eq(tv_rc_connect(c.a, c.b->qp_num, &e.gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(c.b, c.a->qp_num, &e.gid, IBV_MTU_1024, 14), 0);
	mr = ibv_reg_mr(e.pd, dst, 8192, ACC_ALL);
	fill(src, DEV_INLINE, 21);
	/* inline: no lkey, the bytes were copied at post time */
	ck_assert_int_eq(post(c.a, IBV_WR_RDMA_WRITE, 1, src, DEV_INLINE, 0, (uintptr_t)dst, mr->rkey,
			      IBV_SEND_INLINE), 0);
	memset(src, 0, DEV_INLINE);
	ck_assert_int_eq(tv_poll_one(c.cqa, WAIT_MS, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	fill(src, DEV_INLINE, 21);
	ck_assert_int_eq(memcmp(dst, src, DEV_INLINE), 0);
	ck_assert_int_eq(post_recv(c.b, 2, dst + 4096, 4096, mr->lkey), 0);
	fill(src, DEV_INLINE, 22);
	ck_assert_int_eq(post(c.a, IBV_WR_SEND, 3, src, DEV_INLINE, 0, 0, 0, IBV_SEND_INLINE), 0);
	ck_assert_int_eq(tv_poll_one(c.cqb, WAIT_MS, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.byte_len, DEV_INLINE);
	ck_assert_int_eq(memcmp(dst + 4096, src, DEV_INLINE), 0);
	ck_assert_int_eq(tv_poll_one(c.cqa, WAIT_MS, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	conn_close(&c, false);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	env_close(&e);
	free(dst);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_cqmr");
	TCase *tc = tcase_create("cqmr");

	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, rereg_combo, 1, 8);
	tcase_add_test(tc, rereg_errors);
	tcase_add_test(tc, resize_held);
	tcase_add_test(tc, resize_traffic);
	tcase_add_test(tc, moderate_events);
	tcase_add_test(tc, ignore_overrun);
	tcase_add_test(tc, reset_cleans);
	tcase_add_test(tc, destroy_cleans);
	tcase_add_test(tc, inline_max);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
