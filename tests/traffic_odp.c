/*
 * traffic_odp.c - on-demand paging and parent domains through libibverbs,
 * the provider and a running uroced (Check, run inside `uroce run` by
 * traffic_odp.sh). Two contexts on uroce0, RC at path MTU 1024, 64 KiB
 * messages.
 *
 * - odp_caps as ibv_query_device_ex reports them (exact bits);
 * - implicit ODP (ibv_reg_mr(3): addr NULL, length SIZE_MAX): buffers
 *   mmapped after the registration, 300 RDMA WRITEs and 300 RDMA READs of
 *   64 KiB each way, byte-exact, every iteration on a fresh mapping;
 * - explicit ODP over a mapping that is then munmapped: registration of
 *   unmapped memory succeeds only with ON_DEMAND (EFAULT without); a
 *   remote WRITE into the hole completes IBV_WC_REM_ACCESS_ERR at the
 *   requester, a local gather from it IBV_WC_LOC_PROT_ERR (as mlx5 after
 *   a failed page fault); remapped at the same address, WRITE and READ are
 *   byte-exact again; made read-only (mprotect), a remote WRITE fails and a
 *   READ works;
 * - ibv_advise_mr(3): every error of the man page we can produce, sync and
 *   async, and a list longer than one control message;
 * - parent domains (ibv_alloc_parent_domain(3)): the allocator is called
 *   for the QP and CQ rings with page alignment, the rings are the memfds
 *   shared with the daemon mapped at the allocator's addresses
 *   (/proc/self/maps), 1000 SENDs of 4 KiB are byte-exact, free gets every
 *   pointer back; EBUSY for a PD, parent domain or TD still in use.
 */
#include "check_main.h"
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 30000
#define MSG (64 * 1024)
#define ACC_RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define ACC_ODP (ACC_RW | IBV_ACCESS_ON_DEMAND)

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	union ibv_gid gid;
};

static void end_open(struct end *e, struct ibv_pd *pd_or_null)
{
	e->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(e->ctx);
	ck_assert_int_eq(ibv_query_gid(e->ctx, 1, 0, &e->gid), 0);
	e->pd = pd_or_null ? pd_or_null : ibv_alloc_pd(e->ctx);
	ck_assert_ptr_nonnull(e->pd);
	e->cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	ck_assert_ptr_nonnull(e->cq);
}

static struct ibv_qp *qp_new(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);

	ck_assert_ptr_nonnull(qp);
	return qp;
}

/* Fresh RC QPs on both ends, connected to each other. */
static void connect_pair(struct end *a, struct end *b)
{
	a->qp = qp_new(a->pd, a->cq);
	b->qp = qp_new(b->pd, b->cq);
	ck_assert_int_eq(tv_rc_connect(a->qp, b->qp->qp_num, &b->gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(b->qp, a->qp->qp_num, &a->gid, IBV_MTU_1024, 14), 0);
}

static void end_close(struct end *e, bool keep_pd)
{
	if (e->qp)
		ck_assert_int_eq(ibv_destroy_qp(e->qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(e->cq), 0);
	if (!keep_pd)
		ck_assert_int_eq(ibv_dealloc_pd(e->pd), 0);
	ck_assert_int_eq(ibv_close_device(e->ctx), 0);
}

/* One signaled RDMA op of LEN bytes; returns the completion status. */
static enum ibv_wc_status rdma(struct end *e, enum ibv_wr_opcode op, void *local, uint32_t lkey,
			       uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)local, len, lkey };
	struct ibv_send_wr w = {
		.wr_id = 7, .sg_list = &sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;

	ck_assert_int_eq(ibv_post_send(e->qp, &w, &bad), 0);
	ck_assert_int_eq(tv_poll_one(e->cq, WAIT_MS, &wc), 0);
	ck_assert_uint_eq(wc.wr_id, 7);
	return wc.status;
}

static void *map_rw(void *at, size_t len)
{
	void *p = mmap(at, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	return p;
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 131u + seed * 7u + (i >> 9));
}

START_TEST(test_odp_caps)
{
	struct ibv_context *ctx = tv_open(DEV);
	struct ibv_device_attr_ex a;

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(ibv_query_device_ex(ctx, NULL, &a), 0);
	ck_assert_uint_eq(a.odp_caps.general_caps, IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT);
	ck_assert_uint_eq(a.odp_caps.per_transport_caps.rc_odp_caps,
			  IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
			  IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV);
	ck_assert_uint_eq(a.odp_caps.per_transport_caps.uc_odp_caps,
			  IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
			  IBV_ODP_SUPPORT_SRQ_RECV);
	ck_assert_uint_eq(a.odp_caps.per_transport_caps.ud_odp_caps,
			  IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV);
	ck_assert_uint_eq(a.xrc_odp_caps, IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			  IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* Implicit ODP on both ends; every buffer mapped after the registration. */
START_TEST(test_implicit_after_mmap)
{
	struct end a = { 0 }, b = { 0 };
	struct ibv_mr *ma, *mb;

	end_open(&a, NULL);
	end_open(&b, NULL);
	ma = ibv_reg_mr(a.pd, NULL, SIZE_MAX, ACC_ODP);
	mb = ibv_reg_mr(b.pd, NULL, SIZE_MAX, ACC_ODP);
	ck_assert_ptr_nonnull(ma);
	ck_assert_ptr_nonnull(mb);
	connect_pair(&a, &b);
	for (unsigned int it = 0; it < 300; it++) {
		unsigned char *la = map_rw(NULL, MSG), *rb = map_rw(NULL, 2 * MSG);

		fill(la, MSG, it);
		ck_assert_int_eq(rdma(&a, IBV_WR_RDMA_WRITE, la, ma->lkey, (uintptr_t)rb, mb->rkey, MSG),
				 IBV_WC_SUCCESS);
		ck_assert_int_eq(memcmp(la, rb, MSG), 0);
		fill(rb + MSG, MSG, it + 1000);
		ck_assert_int_eq(rdma(&a, IBV_WR_RDMA_READ, la, ma->lkey, (uintptr_t)rb + MSG, mb->rkey, MSG),
				 IBV_WC_SUCCESS);
		ck_assert_int_eq(memcmp(la, rb + MSG, MSG), 0);
		munmap(la, MSG);
		munmap(rb, 2 * MSG);
	}
	ck_assert_int_eq(ibv_dereg_mr(ma), 0);
	ck_assert_int_eq(ibv_dereg_mr(mb), 0);
	end_close(&a, false);
	end_close(&b, false);
}
END_TEST

/* Explicit ODP over memory that goes away, comes back, becomes read-only. */
START_TEST(test_explicit_unmap_remap)
{
	struct end a = { 0 }, b = { 0 };
	unsigned char *la, *rb, *hole;
	struct ibv_mr *ma, *mb, *mhole;

	end_open(&a, NULL);
	end_open(&b, NULL);
	la = map_rw(NULL, MSG);
	rb = map_rw(NULL, MSG);
	ma = ibv_reg_mr(a.pd, la, MSG, ACC_ODP);
	mb = ibv_reg_mr(b.pd, rb, MSG, ACC_ODP);
	ck_assert_ptr_nonnull(ma);
	ck_assert_ptr_nonnull(mb);
	/* unmapped memory: only an ODP registration takes it */
	hole = map_rw(NULL, MSG);
	munmap(hole, MSG);
	errno = 0;
	ck_assert_ptr_null(ibv_reg_mr(a.pd, hole, MSG, ACC_RW));
	ck_assert_int_eq(errno, EFAULT);
	mhole = ibv_reg_mr(a.pd, hole, MSG, ACC_ODP);
	ck_assert_ptr_nonnull(mhole);
	ck_assert_int_eq(ibv_dereg_mr(mhole), 0);

	connect_pair(&a, &b);
	fill(la, MSG, 1);
	ck_assert_int_eq(rdma(&a, IBV_WR_RDMA_WRITE, la, ma->lkey, (uintptr_t)rb, mb->rkey, MSG),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(la, rb, MSG), 0);

	/* the responder's pages are gone: NAK remote access error */
	munmap(rb, MSG);
	ck_assert_int_eq(rdma(&a, IBV_WR_RDMA_WRITE, la, ma->lkey, (uintptr_t)rb, mb->rkey, MSG),
			 IBV_WC_REM_ACCESS_ERR);
	ck_assert_int_eq(ibv_destroy_qp(a.qp), 0);
	ck_assert_int_eq(ibv_destroy_qp(b.qp), 0);

	/* back at the same address: the same MR reaches the new pages */
	ck_assert_ptr_eq(map_rw(rb, MSG), rb);
	connect_pair(&a, &b);
	fill(la, MSG, 2);
	ck_assert_int_eq(rdma(&a, IBV_WR_RDMA_WRITE, la, ma->lkey, (uintptr_t)rb, mb->rkey, MSG),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(la, rb, MSG), 0);
	fill(rb, MSG, 3);
	ck_assert_int_eq(rdma(&a, IBV_WR_RDMA_READ, la, ma->lkey, (uintptr_t)rb, mb->rkey, MSG),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(la, rb, MSG), 0);

	/* read-only now: READ works, WRITE is refused (no forced write) */
	ck_assert_int_eq(mprotect(rb, MSG, PROT_READ), 0);
	memset(la, 0, MSG);
	ck_assert_int_eq(rdma(&a, IBV_WR_RDMA_READ, la, ma->lkey, (uintptr_t)rb, mb->rkey, MSG),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(la, rb, MSG), 0);
	ck_assert_int_eq(rdma(&a, IBV_WR_RDMA_WRITE, la, ma->lkey, (uintptr_t)rb, mb->rkey, MSG),
			 IBV_WC_REM_ACCESS_ERR);
	ck_assert_int_eq(ibv_destroy_qp(a.qp), 0);
	ck_assert_int_eq(ibv_destroy_qp(b.qp), 0);

	/* the requester's own source is gone: local protection error */
	ck_assert_int_eq(mprotect(rb, MSG, PROT_READ | PROT_WRITE), 0);
	connect_pair(&a, &b);
	munmap(la, MSG);
	ck_assert_int_eq(rdma(&a, IBV_WR_RDMA_WRITE, la, ma->lkey, (uintptr_t)rb, mb->rkey, MSG),
			 IBV_WC_LOC_PROT_ERR);

	ck_assert_int_eq(ibv_dereg_mr(ma), 0);
	ck_assert_int_eq(ibv_dereg_mr(mb), 0);
	munmap(rb, MSG);
	end_close(&a, false);
	end_close(&b, false);
}
END_TEST

START_TEST(test_advise_mr)
{
	struct ibv_context *ctx = tv_open(DEV);
	struct ibv_pd *pd, *pd2;
	struct ibv_mr *odp, *odp_ro, *plain;
	struct ibv_sge sg[40];
	unsigned char *buf, *gone;

	ck_assert_ptr_nonnull(ctx);
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	buf = map_rw(NULL, 2 * MSG);
	odp = ibv_reg_mr(pd, buf, MSG, ACC_ODP);
	odp_ro = ibv_reg_mr(pd, buf, MSG, IBV_ACCESS_ON_DEMAND);
	plain = ibv_reg_mr(pd, buf + MSG, MSG, IBV_ACCESS_LOCAL_WRITE);
	ck_assert(pd && pd2 && odp && odp_ro && plain);
	sg[0] = (struct ibv_sge){ (uintptr_t)buf, 4096, odp->lkey };

	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, sg, 1), 0);
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 1), 0);
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, IBV_ADVISE_MR_FLAG_FLUSH, sg, 1), 0);
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 0), EINVAL);
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 2, sg, 1), EINVAL);
	ck_assert_int_eq(ibv_advise_mr(pd, (enum ibv_advise_mr_advice)7, 0, sg, 1), EOPNOTSUPP);
	/* keys that are not an ODP MR of this PD, or not writable for _WRITE */
	ck_assert_int_eq(ibv_advise_mr(pd2, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 1), ENOENT);
	sg[0].lkey = plain->lkey;
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 1), ENOENT);
	sg[0].lkey = odp->lkey + 1;
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 1), ENOENT);
	sg[0].lkey = odp_ro->lkey;
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, sg, 1), ENOENT);
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, sg, 1), 0);
	/* ranges: outside the MR, or unmapped, only when synchronous */
	sg[0] = (struct ibv_sge){ (uintptr_t)buf + MSG - 100, 4096, odp->lkey };
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, sg, 1), EFAULT);
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 1), 0);
	gone = buf + 8192;
	munmap(gone, 4096);
	sg[0] = (struct ibv_sge){ (uintptr_t)buf, 3 * 4096, odp->lkey };
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, sg, 1), EFAULT);
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, IBV_ADVISE_MR_FLAG_FLUSH, sg, 1), 0);
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, sg, 1), 0);
	/* 40 SGEs (more than one control message); the 40th names the hole */
	for (int i = 0; i < 40; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)buf + 4096 * (i % 2), 4096, odp->lkey };
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, sg, 40), 0);
	sg[39].addr = (uintptr_t)gone;
	ck_assert_int_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, sg, 40), EFAULT);

	ck_assert_int_eq(ibv_dereg_mr(odp), 0);
	ck_assert_int_eq(ibv_dereg_mr(odp_ro), 0);
	ck_assert_int_eq(ibv_dereg_mr(plain), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
	munmap(buf, 2 * MSG);
}
END_TEST

/* The parent domain allocator's log. */
#define MAX_ALLOC 8
static struct {
	void *ptr[MAX_ALLOC];
	uint64_t type[MAX_ALLOC];
	size_t size[MAX_ALLOC];
	int n_alloc, n_free;
	void *freed[MAX_ALLOC];
} alog;
static int pd_context_tag;

static void *log_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t resource_type)
{
	void *p;

	(void)pd;
	if (pd_context != &pd_context_tag || alog.n_alloc == MAX_ALLOC ||
	    posix_memalign(&p, alignment, size))
		return NULL;
	alog.ptr[alog.n_alloc] = p;
	alog.type[alog.n_alloc] = resource_type;
	alog.size[alog.n_alloc++] = size;
	return p;
}

static void log_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type)
{
	(void)pd;
	(void)pd_context;
	(void)resource_type;
	if (alog.n_free < MAX_ALLOC)
		alog.freed[alog.n_free++] = ptr;
	free(ptr);
}

/* Is ADDR the start of a mapping of the memfd called NAME in /proc/self/maps? */
static bool mapped_memfd_at(void *addr, const char *name)
{
	char line[512], want[64];
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)addr);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)) && strstr(line, name))
			found = true;
	if (f)
		fclose(f);
	return found;
}

START_TEST(test_parent_domain)
{
	struct end a = { 0 }, b = { 0 };
	struct ibv_context *ctx = tv_open(DEV);
	struct ibv_td_init_attr tda = { 0 };
	struct ibv_parent_domain_init_attr pda = { 0 };
	struct ibv_cq_init_attr_ex cqa = { .cqe = 64, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD };
	struct ibv_td *td;
	struct ibv_pd *base, *pdom;
	struct ibv_cq_ex *cqx;
	unsigned char *sbuf, *rbuf;
	struct ibv_mr *smr, *rmr;

	ck_assert_ptr_nonnull(ctx);
	memset(&alog, 0, sizeof(alog));
	base = ibv_alloc_pd(ctx);
	td = ibv_alloc_td(ctx, &tda);
	ck_assert(base && td);
	pda.pd = base;
	pda.td = td;
	pda.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pda.alloc = log_alloc;
	pda.free = log_free;
	pda.pd_context = &pd_context_tag;
	pdom = ibv_alloc_parent_domain(ctx, &pda);
	ck_assert_ptr_nonnull(pdom);
	ck_assert_int_eq(ibv_dealloc_pd(base), EBUSY);
	ck_assert_int_eq(ibv_dealloc_td(td), EBUSY);
	/* a CQ on a plain PD through MASK_PD: EINVAL, as mlx5 */
	cqa.parent_domain = base;
	errno = 0;
	ck_assert_ptr_null(ibv_create_cq_ex(ctx, &cqa));
	ck_assert_int_eq(errno, EINVAL);

	/* A: CQ and QP on the parent domain; B: plain */
	a.ctx = ctx;
	a.pd = pdom;
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &a.gid), 0);
	cqa.parent_domain = pdom;
	cqx = ibv_create_cq_ex(ctx, &cqa);
	ck_assert_ptr_nonnull(cqx);
	a.cq = ibv_cq_ex_to_cq(cqx);
	end_open(&b, NULL);
	connect_pair(&a, &b);
	ck_assert_int_eq(alog.n_alloc, 2);
	ck_assert_uint_eq(alog.type[0], 2); /* CQ */
	ck_assert_uint_eq(alog.type[1], 1); /* QP */
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(alog.size[i] % 4096, 0);
		ck_assert_uint_eq((uintptr_t)alog.ptr[i] % 4096, 0);
	}
	ck_assert(mapped_memfd_at(alog.ptr[0], "uroce-cq"));
	ck_assert(mapped_memfd_at(alog.ptr[1], "uroce-qp"));
	ck_assert_int_eq(ibv_dealloc_pd(pdom), EBUSY);

	/* 1000 SENDs of 4 KiB from A (rings in the allocator's memory) to B */
	sbuf = map_rw(NULL, MSG);
	rbuf = map_rw(NULL, MSG);
	smr = ibv_reg_mr(pdom, sbuf, MSG, ACC_RW);
	rmr = ibv_reg_mr(b.pd, rbuf, MSG, ACC_RW);
	ck_assert(smr && rmr);
	for (unsigned int it = 0; it < 1000; it++) {
		struct ibv_sge rs = { (uintptr_t)rbuf, 4096, rmr->lkey }, ss = { (uintptr_t)sbuf, 4096, smr->lkey };
		struct ibv_recv_wr rw = { .wr_id = it, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct ibv_send_wr sw = { .wr_id = it, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *sbad;
		struct ibv_wc wc;

		fill(sbuf, 4096, it);
		ck_assert_int_eq(ibv_post_recv(b.qp, &rw, &rbad), 0);
		ck_assert_int_eq(ibv_post_send(a.qp, &sw, &sbad), 0);
		ck_assert_int_eq(tv_poll_one(a.cq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_int_eq(tv_poll_one(b.cq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.byte_len, 4096);
		ck_assert_int_eq(memcmp(sbuf, rbuf, 4096), 0);
	}
	ck_assert_int_eq(ibv_dereg_mr(smr), 0);
	ck_assert_int_eq(ibv_dereg_mr(rmr), 0);
	ck_assert_int_eq(ibv_destroy_qp(a.qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(a.cq), 0);
	ck_assert_int_eq(alog.n_free, 2);
	ck_assert_ptr_eq(alog.freed[0], alog.ptr[1]);
	ck_assert_ptr_eq(alog.freed[1], alog.ptr[0]);
	ck_assert_int_eq(ibv_dealloc_pd(pdom), 0);
	ck_assert_int_eq(ibv_dealloc_td(td), 0);
	ck_assert_int_eq(ibv_dealloc_pd(base), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
	end_close(&b, false);
	munmap(sbuf, MSG);
	munmap(rbuf, MSG);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_odp");
	TCase *tc = tcase_create("odp");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_odp_caps);
	tcase_add_test(tc, test_implicit_after_mmap);
	tcase_add_test(tc, test_explicit_unmap_remap);
	tcase_add_test(tc, test_advise_mr);
	tcase_add_test(tc, test_parent_domain);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
