/*
 * traffic_dm.c - device memory (ibv_alloc_dm(3)) through libibverbs, the
 * provider and a running uroced (Check, run inside `uroce run` by
 * traffic_dm.sh; docs/device-memory.md).
 *
 * api:   max_dm_size 131072; ibv_alloc_dm's EINVAL cases (length 0 and
 *        max + 1, comp_mask, log_align_req 13), the device's 128 KiB
 *        charged in 64-byte granules (65536 + 65473 fill it: ENOMEM for one
 *        more byte); ibv_memcpy_to_dm / _from_dm at offsets with exact
 *        bytes, EFAULT outside the DM and EINVAL when offset or length is
 *        not a multiple of 4 (mlx5's mlx5_access_dm); ibv_reg_dm_mr's EINVAL
 *        cases (no IBV_ACCESS_ZERO_BASED, MW_BIND, REMOTE_WRITE without
 *        LOCAL_WRITE, ranges outside the DM), ibv_free_dm EBUSY while an MR
 *        is registered on it; new device memory reads as zeros.
 * peer:  a second context's RC QP writes, reads, FETCH_ADDs and CMP_SWPs a
 *        zero-based DM MR that starts 4 KiB into its DM (64 KiB messages x
 *        100, 1000 FETCH_ADDs with every original once), the owner's 64 KiB
 *        RDMA WRITEs out of its DM (x 20), SEND/RECV with the DM on both
 *        sides of the owner, a WRITE past the MR's end
 *        IBV_WC_REM_ACCESS_ERR, and a READ of a DM MR without REMOTE_READ
 *        IBV_WC_REM_ACCESS_ERR.
 * fork:  5 fork children allocate, copy and free device memory 200 times
 *        each on their parent's context while the parent keeps using it
 *        (pyverbs' test_multi_process_alloc_dm); a child's ALLOC_PD there
 *        is EIO; a process killed holding all 128 KiB gives them back.
 * proto: traffic_dm_proto.c.
 *
 * `traffic_dm quota` (no Check; traffic_dm.sh runs it as nobody): the
 * per-uid quota of 64 KiB over two contexts, ENOMEM past it.
 */
#include "check_main.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "traffic_dm.h"
#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 60000
#define MSG 65536u
#define ACC_ALL (IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_dm *dm_alloc(struct ibv_context *ctx, uint64_t len, uint32_t log_align)
{
	struct ibv_alloc_dm_attr a = { .length = len, .log_align_req = log_align };

	return ibv_alloc_dm(ctx, &a);
}

/* errno of a failed ibv_alloc_dm (0 if it succeeded: freed again). */
static int dm_alloc_err(struct ibv_context *ctx, uint64_t len, uint32_t log_align, uint32_t comp_mask)
{
	struct ibv_alloc_dm_attr a = { .length = len, .log_align_req = log_align, .comp_mask = comp_mask };
	struct ibv_dm *dm;

	errno = 0;
	dm = ibv_alloc_dm(ctx, &a);
	if (dm) {
		ibv_free_dm(dm);
		return 0;
	}
	return errno;
}

static void fill(unsigned char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + seed * 13 + (i >> 8));
}

START_TEST(test_caps)
{
	struct ibv_context *ctx = tv_open(DEV);
	struct ibv_device_attr_ex a;

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(ibv_query_device_ex(ctx, NULL, &a), 0);
	ck_assert_uint_eq(a.max_dm_size, DM_DEVICE_BYTES);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_alloc_limits)
{
	struct ibv_context *ctx = tv_open(DEV);
	struct ibv_dm *a, *b, *c;

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(dm_alloc_err(ctx, 0, 0, 0), EINVAL);
	ck_assert_int_eq(dm_alloc_err(ctx, DM_DEVICE_BYTES + 1, 0, 0), EINVAL);
	ck_assert_int_eq(dm_alloc_err(ctx, 4096, 0, 1), EINVAL);
	ck_assert_int_eq(dm_alloc_err(ctx, 4096, 13, 0), EINVAL);
	ck_assert_int_eq(dm_alloc_err(ctx, 4096, 12, 0), 0);
	ck_assert_int_eq(dm_alloc_err(ctx, DM_DEVICE_BYTES, 6, 0), 0);
	/* 65536 + 65473 (charged 65536: 64-byte granules) fill the device */
	a = dm_alloc(ctx, 65536, 0);
	b = dm_alloc(ctx, 65473, 0);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(dm_alloc_err(ctx, 1, 0, 0), ENOMEM);
	ck_assert_int_eq(ibv_free_dm(b), 0);
	ck_assert_int_eq(dm_alloc_err(ctx, 65537, 0, 0), ENOMEM);
	c = dm_alloc(ctx, 65536, 0);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(dm_alloc_err(ctx, 4, 0, 0), ENOMEM);
	ck_assert_int_eq(ibv_free_dm(a), 0);
	ck_assert_int_eq(ibv_free_dm(c), 0);
	ck_assert_int_eq(dm_alloc_err(ctx, DM_DEVICE_BYTES, 0, 0), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_copy)
{
	struct ibv_context *ctx = tv_open(DEV);
	unsigned char in[MSG], out[MSG], zero[100] = { 0 };
	struct ibv_dm *dm;

	ck_assert_ptr_nonnull(ctx);
	dm = dm_alloc(ctx, 100, 0);
	ck_assert_ptr_nonnull(dm);
	memset(out, 0xee, sizeof(out));
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 0, 100), 0);
	ck_assert_mem_eq(out, zero, 100);
	fill(in, 100, 1);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 0, in, 4), 0);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 48, in + 48, 20), 0);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 96, in + 96, 4), 0);
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 0, 100), 0);
	ck_assert_mem_eq(out, in, 4);
	ck_assert_mem_eq(out + 4, zero, 44);
	ck_assert_mem_eq(out + 48, in + 48, 20);
	ck_assert_mem_eq(out + 68, zero, 28);
	ck_assert_mem_eq(out + 96, in + 96, 4);
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 52, 8), 0);
	ck_assert_mem_eq(out, in + 52, 8);
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 100, 0), 0);
	/* outside the 100 bytes: EFAULT; not multiples of 4: EINVAL */
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 96, in, 8), EFAULT);
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 104, 4), EFAULT);
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 0, 104), EFAULT);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, UINT64_MAX - 3, in, 8), EFAULT);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 3, in, 4), EINVAL);
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 4, 3), EINVAL);
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 0, 100), 0);
	ck_assert_mem_eq(out + 96, in + 96, 4);
	ck_assert_int_eq(ibv_free_dm(dm), 0);

	/* 64 KiB, 1000 copies of 64 bytes at offsets through all of it */
	dm = dm_alloc(ctx, MSG, 0);
	ck_assert_ptr_nonnull(dm);
	fill(in, MSG, 2);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 0, in, MSG), 0);
	for (unsigned int i = 0; i < 1000; i++) {
		uint64_t off = (uint64_t)i * 4036 % (MSG - 64) / 4 * 4;

		fill(in + off, 64, i + 3);
		ck_assert_int_eq(ibv_memcpy_to_dm(dm, off, in + off, 64), 0);
	}
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 0, MSG), 0);
	ck_assert_mem_eq(out, in, MSG);
	ck_assert_int_eq(ibv_free_dm(dm), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* errno of a failed ibv_reg_dm_mr (0: it succeeded, deregistered again). */
static int reg_err(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off, size_t len, unsigned int acc)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dm_mr(pd, dm, off, len, acc);
	if (mr) {
		ck_assert_int_eq(ibv_dereg_mr(mr), 0);
		return 0;
	}
	return errno;
}

START_TEST(test_reg_dm_mr)
{
	struct ibv_context *ctx = tv_open(DEV);
	unsigned char in[4096], out[4096], zero[4096] = { 0 };
	const unsigned int zl = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE;
	struct ibv_pd *pd;
	struct ibv_dm *dm;
	struct ibv_mr *mr;

	ck_assert_ptr_nonnull(ctx);
	pd = ibv_alloc_pd(ctx);
	dm = dm_alloc(ctx, 4096, 0);
	ck_assert_ptr_nonnull(pd);
	ck_assert_ptr_nonnull(dm);
	ck_assert_int_eq(reg_err(pd, dm, 0, 4096, IBV_ACCESS_LOCAL_WRITE), EINVAL);
	ck_assert_int_eq(reg_err(pd, dm, 0, 4096, zl | IBV_ACCESS_MW_BIND), EINVAL);
	ck_assert_int_eq(reg_err(pd, dm, 0, 4096, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_REMOTE_WRITE), EINVAL);
	ck_assert_int_eq(reg_err(pd, dm, 0, 4097, zl), EINVAL);
	ck_assert_int_eq(reg_err(pd, dm, 4096, 1, zl), EINVAL);
	ck_assert_int_eq(reg_err(pd, dm, 8, SIZE_MAX, zl), EINVAL);
	ck_assert_int_eq(reg_err(pd, dm, UINT64_MAX, 2, zl), EINVAL);
	ck_assert_int_eq(reg_err(pd, dm, 0, 4096, ACC_ALL), 0);
	mr = ibv_reg_dm_mr(pd, dm, 1024, 2048, zl | IBV_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(mr);
	ck_assert_ptr_null(mr->addr);
	ck_assert_uint_eq(mr->length, 2048);
	ck_assert_uint_eq(mr->lkey, mr->rkey);
	/* the kernel's uverbs DM object: busy while an MR uses it */
	ck_assert_int_eq(ibv_free_dm(dm), EBUSY);
	ck_assert_int_eq(ibv_dealloc_pd(pd), EBUSY);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	/* freed memory does not reach the next owner */
	fill(in, sizeof(in), 9);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 0, in, sizeof(in)), 0);
	ck_assert_int_eq(ibv_free_dm(dm), 0);
	dm = dm_alloc(ctx, 4096, 0);
	ck_assert_ptr_nonnull(dm);
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 0, sizeof(out)), 0);
	ck_assert_mem_eq(out, zero, sizeof(out));
	ck_assert_int_eq(ibv_free_dm(dm), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* One end of the peer tests. */
struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	union ibv_gid gid;
};

static void end_open(struct end *e)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 64, .max_recv_wr = 16, .max_send_sge = 1,
						.max_recv_sge = 1 } };

	e->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(e->ctx);
	ck_assert_int_eq(ibv_query_gid(e->ctx, 1, 0, &e->gid), 0);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 128, NULL, NULL, 0);
	ck_assert_ptr_nonnull(e->pd);
	ck_assert_ptr_nonnull(e->cq);
	qa.send_cq = qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	ck_assert_ptr_nonnull(e->qp);
}

/* RESET -> RTS towards D: MTU 1024, PSNs 0, remote write/read/atomic
 * access, 16 reads/atomics each way. */
static void end_connect(struct end *e, const struct end *d)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC };

	ck_assert_int_eq(ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = d->qp->qp_num;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = d->gid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	ck_assert_int_eq(ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	ck_assert_int_eq(ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

static void end_close(struct end *e)
{
	ck_assert_int_eq(ibv_destroy_qp(e->qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(e->cq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(e->pd), 0);
	ck_assert_int_eq(ibv_close_device(e->ctx), 0);
}

/* Posts one signaled work request and returns its completion's status;
 * *byte_len gets the completion's byte_len when not NULL. */
static enum ibv_wc_status one_wr(struct end *e, struct ibv_send_wr *w, uint32_t *byte_len)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	w->send_flags = IBV_SEND_SIGNALED;
	ck_assert_int_eq(ibv_post_send(e->qp, w, &bad), 0);
	ck_assert_int_eq(tv_poll_one(e->cq, WAIT_MS, &wc), 0);
	ck_assert_uint_eq(wc.wr_id, w->wr_id);
	if (byte_len)
		*byte_len = wc.byte_len;
	return wc.status;
}

static enum ibv_wc_status rdma(struct end *e, enum ibv_wr_opcode op, struct ibv_sge *sg,
			       uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr w = { .wr_id = op, .sg_list = sg, .num_sge = 1, .opcode = op,
				 .wr.rdma = { .remote_addr = raddr, .rkey = rkey } };

	return one_wr(e, &w, NULL);
}

static uint64_t atomic(struct end *e, enum ibv_wr_opcode op, struct ibv_sge *sg, uint64_t *res,
		       uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_send_wr w = { .wr_id = 7, .sg_list = sg, .num_sge = 1, .opcode = op,
				 .wr.atomic = { .remote_addr = raddr, .compare_add = cmp_add,
						.swap = swap, .rkey = rkey } };
	uint32_t len = 0;

	ck_assert_int_eq(one_wr(e, &w, &len), IBV_WC_SUCCESS);
	ck_assert_uint_eq(len, 8);
	return *res;
}

static uint64_t dm_word(struct ibv_dm *dm, uint64_t off)
{
	uint64_t v;

	ck_assert_int_eq(ibv_memcpy_from_dm(&v, dm, off, 8), 0);
	return v;
}

START_TEST(test_peer)
{
	static unsigned char buf[MSG + 4096], out[MSG], zero[4096];
	struct end a, b;
	struct ibv_dm *dm;
	struct ibv_mr *dmr, *bmr;
	struct ibv_sge sg;
	uint64_t v, *res = (uint64_t *)(buf + MSG);

	end_open(&a);
	end_open(&b);
	end_connect(&a, &b);
	end_connect(&b, &a);
	dm = dm_alloc(a.ctx, MSG + 4096, 0);
	ck_assert_ptr_nonnull(dm);
	dmr = ibv_reg_dm_mr(a.pd, dm, 4096, MSG, ACC_ALL);
	ck_assert_ptr_nonnull(dmr);
	bmr = ibv_reg_mr(b.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(bmr);

	/* RDMA WRITE of 64 KiB into the DM MR (remote address 0 = DM offset 4096) */
	for (unsigned int i = 0; i < 100; i++) {
		fill(buf, MSG, i);
		sg = (struct ibv_sge){ (uintptr_t)buf, MSG, bmr->lkey };
		ck_assert_int_eq(rdma(&b, IBV_WR_RDMA_WRITE, &sg, 0, dmr->rkey), IBV_WC_SUCCESS);
		ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 4096, MSG), 0);
		ck_assert_mem_eq(out, buf, MSG);
	}
	/* RDMA READ of 64 KiB out of it, after the owner's copies */
	for (unsigned int i = 0; i < 100; i++) {
		fill(out, MSG, 1000 + i);
		ck_assert_int_eq(ibv_memcpy_to_dm(dm, 4096, out, MSG), 0);
		memset(buf, 0, MSG);
		sg = (struct ibv_sge){ (uintptr_t)buf, MSG, bmr->lkey };
		ck_assert_int_eq(rdma(&b, IBV_WR_RDMA_READ, &sg, 0, dmr->rkey), IBV_WC_SUCCESS);
		ck_assert_mem_eq(buf, out, MSG);
	}
	/* the owner's RDMA WRITE of 64 KiB out of its DM (local address 0) */
	for (unsigned int i = 0; i < 20; i++) {
		fill(out, MSG, 2000 + i);
		ck_assert_int_eq(ibv_memcpy_to_dm(dm, 4096, out, MSG), 0);
		sg = (struct ibv_sge){ 0, MSG, dmr->lkey };
		ck_assert_int_eq(rdma(&a, IBV_WR_RDMA_WRITE, &sg, (uintptr_t)buf, bmr->rkey), IBV_WC_SUCCESS);
		ck_assert_mem_eq(buf, out, MSG);
	}
	/* the last word of the MR, by its zero-based address */
	v = 0x0123456789abcdefull;
	memcpy(buf, &v, 8);
	sg = (struct ibv_sge){ (uintptr_t)buf, 8, bmr->lkey };
	ck_assert_int_eq(rdma(&b, IBV_WR_RDMA_WRITE, &sg, MSG - 8, dmr->rkey), IBV_WC_SUCCESS);
	ck_assert_uint_eq(dm_word(dm, 4096 + MSG - 8), v);
	/* 1000 FETCH_ADDs of 3 on the word at address 8: every original once */
	v = 1000;
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 4096 + 8, &v, 8), 0);
	sg = (struct ibv_sge){ (uintptr_t)res, 8, bmr->lkey };
	for (uint64_t k = 0; k < 1000; k++)
		ck_assert_uint_eq(atomic(&b, IBV_WR_ATOMIC_FETCH_AND_ADD, &sg, res, 8, dmr->rkey, 3, 0),
				  1000 + 3 * k);
	ck_assert_uint_eq(dm_word(dm, 4096 + 8), 4000);
	/* CMP_SWP equal, then not equal */
	v = 0x1111;
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 4096 + 16, &v, 8), 0);
	ck_assert_uint_eq(atomic(&b, IBV_WR_ATOMIC_CMP_AND_SWP, &sg, res, 16, dmr->rkey, 0x1111, 0x2222), 0x1111);
	ck_assert_uint_eq(dm_word(dm, 4096 + 16), 0x2222);
	ck_assert_uint_eq(atomic(&b, IBV_WR_ATOMIC_CMP_AND_SWP, &sg, res, 16, dmr->rkey, 0x1111, 0x3333), 0x2222);
	ck_assert_uint_eq(dm_word(dm, 4096 + 16), 0x2222);

	/* SEND into a receive buffer in device memory, and out of it */
	{
		struct ibv_sge rs = { 32768, 4096, dmr->lkey }, ss = { (uintptr_t)buf, 4096, bmr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 11, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct ibv_send_wr sw = { .wr_id = 12, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND };
		struct ibv_wc wc;
		uint32_t len;

		fill(buf, 4096, 77);
		ck_assert_int_eq(ibv_post_recv(a.qp, &rw, &rbad), 0);
		ck_assert_int_eq(one_wr(&b, &sw, NULL), IBV_WC_SUCCESS);
		ck_assert_int_eq(tv_poll_one(a.cq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.byte_len, 4096);
		ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 4096 + 32768, 4096), 0);
		ck_assert_mem_eq(out, buf, 4096);

		rs = (struct ibv_sge){ (uintptr_t)buf + 8192, 4096, bmr->lkey };
		ck_assert_int_eq(ibv_post_recv(b.qp, &rw, &rbad), 0);
		ss = (struct ibv_sge){ 0, 4096, dmr->lkey };
		ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 4096, 4096), 0);
		ck_assert_int_eq(one_wr(&a, &sw, &len), IBV_WC_SUCCESS);
		ck_assert_int_eq(tv_poll_one(b.cq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.byte_len, 4096);
		ck_assert_mem_eq(buf + 8192, out, 4096);
	}
	/* the 4 KiB before the MR were never reachable */
	ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 0, 4096), 0);
	ck_assert_mem_eq(out, zero, 4096);
	/* 8 bytes from address MSG - 4: past the MR's end (the QP errs) */
	sg = (struct ibv_sge){ (uintptr_t)buf, 8, bmr->lkey };
	ck_assert_int_eq(rdma(&b, IBV_WR_RDMA_WRITE, &sg, MSG - 4, dmr->rkey), IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(dm_word(dm, 4096 + MSG - 8), 0x0123456789abcdefull);

	ck_assert_int_eq(ibv_dereg_mr(bmr), 0);
	ck_assert_int_eq(ibv_dereg_mr(dmr), 0);
	ck_assert_int_eq(ibv_free_dm(dm), 0);
	end_close(&a);
	end_close(&b);
}
END_TEST

START_TEST(test_peer_no_access)
{
	static unsigned char buf[4096];
	struct end a, b;
	struct ibv_dm *dm;
	struct ibv_mr *dmr, *bmr;
	struct ibv_sge sg;

	end_open(&a);
	end_open(&b);
	end_connect(&a, &b);
	end_connect(&b, &a);
	dm = dm_alloc(a.ctx, 4096, 0);
	ck_assert_ptr_nonnull(dm);
	dmr = ibv_reg_dm_mr(a.pd, dm, 0, 4096, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	bmr = ibv_reg_mr(b.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(dmr);
	ck_assert_ptr_nonnull(bmr);
	sg = (struct ibv_sge){ (uintptr_t)buf, 64, bmr->lkey };
	ck_assert_int_eq(rdma(&b, IBV_WR_RDMA_READ, &sg, 0, dmr->rkey), IBV_WC_REM_ACCESS_ERR);
	ck_assert_int_eq(ibv_dereg_mr(bmr), 0);
	ck_assert_int_eq(ibv_dereg_mr(dmr), 0);
	ck_assert_int_eq(ibv_free_dm(dm), 0);
	end_close(&a);
	end_close(&b);
}
END_TEST

/* A fork child's work on its parent's context: ITERS x (alloc 4 KiB, copy
 * in and out, free), then ALLOC_PD, which must fail with EIO. Returns the
 * number of failures. */
static int child_dm_work(struct ibv_context *ctx, unsigned int seed)
{
	unsigned char in[4096], out[4096];
	int bad = 0;

	for (unsigned int i = 0; i < 200; i++) {
		struct ibv_dm *dm = dm_alloc(ctx, 4096, 0);

		if (!dm) {
			fprintf(stderr, "child %u: alloc_dm %u: %s\n", seed, i, strerror(errno));
			bad++;
			continue;
		}
		fill(in, sizeof(in), seed * 1000 + i);
		if (ibv_memcpy_to_dm(dm, 0, in, sizeof(in)) || ibv_memcpy_from_dm(out, dm, 0, sizeof(out)) ||
		    memcmp(in, out, sizeof(in)))
			bad++;
		if (ibv_free_dm(dm))
			bad++;
	}
	errno = 0;
	if (ibv_alloc_pd(ctx) || errno != EIO)
		bad++;
	return bad;
}

START_TEST(test_fork_children)
{
	struct ibv_context *ctx = tv_open(DEV);
	unsigned char in[4096], out[4096];
	pid_t kids[5];
	int status;

	ck_assert_ptr_nonnull(ctx);
	for (unsigned int k = 0; k < 5; k++) {
		kids[k] = fork();
		ck_assert_int_ge(kids[k], 0);
		if (kids[k] == 0)
			_exit(child_dm_work(ctx, k + 1) ? 1 : 0);
	}
	for (unsigned int i = 0; i < 200; i++) {
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_dm *dm = dm_alloc(ctx, 4096, 0);

		ck_assert_ptr_nonnull(pd);
		ck_assert_ptr_nonnull(dm);
		fill(in, sizeof(in), i);
		ck_assert_int_eq(ibv_memcpy_to_dm(dm, 0, in, sizeof(in)), 0);
		ck_assert_int_eq(ibv_memcpy_from_dm(out, dm, 0, sizeof(out)), 0);
		ck_assert_mem_eq(in, out, sizeof(in));
		ck_assert_int_eq(ibv_free_dm(dm), 0);
		ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	}
	for (unsigned int k = 0; k < 5; k++) {
		ck_assert_int_eq(waitpid(kids[k], &status, 0), kids[k]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %u failed", k);
	}
	/* every child's device memory was freed: all 128 KiB are there */
	ck_assert_int_eq(dm_alloc_err(ctx, DM_DEVICE_BYTES, 0, 0), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_killed_holder)
{
	struct ibv_context *ctx;
	uint64_t deadline;
	int p[2], status, err;
	char c;
	pid_t kid;

	ck_assert_int_eq(pipe(p), 0);
	kid = fork();
	ck_assert_int_ge(kid, 0);
	if (kid == 0) {
		struct ibv_context *own = tv_open(DEV);

		if (!own || !dm_alloc(own, DM_DEVICE_BYTES, 0))
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(dm_alloc_err(ctx, 4, 0, 0), ENOMEM);
	ck_assert_int_eq(kill(kid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(kid, &status, 0), kid);
	/* the daemon frees it when it sees the connection close */
	deadline = tv_now_ms() + WAIT_MS;
	while ((err = dm_alloc_err(ctx, DM_DEVICE_BYTES, 0, 0)) == ENOMEM && tv_now_ms() < deadline)
		usleep(10000);
	ck_assert_int_eq(err, 0);
	close(p[0]);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* As an unprivileged user: the uid's 64 KiB across two contexts. */
static int quota_main(void)
{
	struct ibv_context *c1 = tv_open(DEV), *c2 = tv_open(DEV);
	struct ibv_dm *a, *b, *c;
	int bad = 0;

#define EXPECT(what, cond) do { if (cond) printf("ok: %s\n", what); else { printf("FAIL: %s\n", what); bad++; } } while (0)
	if (!c1 || !c2)
		return 1;
	a = dm_alloc(c1, DM_USER_BYTES, 0);
	EXPECT("alloc 65536 in context 1", a != NULL);
	EXPECT("alloc 4 more in context 1: ENOMEM", dm_alloc_err(c1, 4, 0, 0) == ENOMEM);
	EXPECT("alloc 4 in context 2 (same uid): ENOMEM", dm_alloc_err(c2, 4, 0, 0) == ENOMEM);
	EXPECT("free 65536", a && ibv_free_dm(a) == 0);
	b = dm_alloc(c1, 32768, 0);
	c = dm_alloc(c2, 32705, 0); /* charged 32768 */
	EXPECT("alloc 32768 + 32705 over both contexts", b && c);
	EXPECT("alloc 1 more: ENOMEM", dm_alloc_err(c2, 1, 0, 0) == ENOMEM);
	EXPECT("free both", b && c && ibv_free_dm(b) == 0 && ibv_free_dm(c) == 0);
	EXPECT("alloc 65537: ENOMEM", dm_alloc_err(c1, DM_USER_BYTES + 1, 0, 0) == ENOMEM);
	EXPECT("alloc 65536 again", dm_alloc_err(c2, DM_USER_BYTES, 0, 0) == 0);
	ibv_close_device(c1);
	ibv_close_device(c2);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	Suite *s;
	TCase *tc;

	if (argc == 2 && !strcmp(argv[1], "quota"))
		return quota_main();
	s = suite_create("traffic_dm");
	tc = tcase_create("api");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_caps);
	tcase_add_test(tc, test_alloc_limits);
	tcase_add_test(tc, test_copy);
	tcase_add_test(tc, test_reg_dm_mr);
	suite_add_tcase(s, tc);
	tc = tcase_create("peer");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_peer);
	tcase_add_test(tc, test_peer_no_access);
	suite_add_tcase(s, tc);
	tc = tcase_create("fork");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_fork_children);
	tcase_add_test(tc, test_killed_holder);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, dm_proto_tcase());
	return check_main_run(s, CK_NORMAL);
}
