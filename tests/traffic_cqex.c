/*
 * traffic_cqex.c - the extended CQ under real traffic, through the public
 * verbs API only (run by traffic_cqex.sh inside `uroce run`).
 *
 * One process, two contexts on uroce0 (A and B), one extended CQ each; the
 * daemon makes all progress. For EVERY subset of the wc_flags uroce supports
 * (IBV_WC_STANDARD_FLAGS | COMPLETION_TIMESTAMP | COMPLETION_TIMESTAMP_
 * WALLCLOCK: 9 flags, 512 subsets; provider/cq.c UROCE_SUP_WC_FLAGS) it runs
 * RC SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ, a UD
 * SEND, then an RDMA WRITE with a bad rkey (REM_ACCESS_ERR) and a SEND
 * behind it (WR_FLUSH_ERR), and checks every completion with every
 * accessor its CQ may call: wr_id, status, opcode, vendor_err, wc_flags,
 * and when requested byte_len, imm_data, qp_num, src_qp, slid, sl,
 * dlid_path_bits, completion_ts, completion_wallclock_ns. Timestamps never
 * decrease per QP and lie between ibv_query_rt_values_ex (RAW_CLOCK)
 * readings taken before the post and after the completion.
 * A wc_flag no libibverbs defines (1 << 12) must make ibv_create_cq_ex
 * fail with EOPNOTSUPP (TM_INFO: tests/traffic_tm.c).
 *
 * Expected values are mlx5's (docs/cqe-format.md §4, §5) as the
 * daemon's CQE writer fills them (emu/nic/cq_ring.c, emu/xport/xport.h):
 * requester byte_len = message length, responder sl = 2 (the RoCE packet
 * type of IPv4, as ConnectX), slid and dlid_path_bits 0, src_qp of an RC
 * receive = the connected QPN, UD receives carry IBV_WC_GRH and 40 more
 * bytes; requester CQEs have src_qp/sl 0 and imm 0; error CQEs keep only
 * the top 48 bits of the timestamp (bytes 54-55 hold vendor_err_synd and
 * the syndrome, which the raw completion_ts therefore shows).
 */
#include "config.h"

#include <arpa/inet.h>
#include "check_main.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define BUF_SIZE 8192
#define WAIT_MS 10000
/* Wall clock slack (ns): uroce's wall clock is CLOCK_MONOTONIC_RAW counted
 * from a CLOCK_REALTIME base taken when the daemon started, so it may drift
 * from CLOCK_REALTIME by the host's clock slew (ppm) since then. */
#define WALL_SLACK_NS 2000000ull

/* The supported flags, one bit of the subset number each. */
static const uint64_t sup_flags[] = {
	IBV_WC_EX_WITH_BYTE_LEN, IBV_WC_EX_WITH_IMM, IBV_WC_EX_WITH_QP_NUM,
	IBV_WC_EX_WITH_SRC_QP, IBV_WC_EX_WITH_SLID, IBV_WC_EX_WITH_SL,
	IBV_WC_EX_WITH_DLID_PATH_BITS, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
};
#define N_SUP (sizeof(sup_flags) / sizeof(sup_flags[0]))
/* CVLAN and FLOW_TAG are read on raw packet receives (tests/traffic_raw.c). */
static const uint64_t unsup_flags[] = {
	1ull << 12,
};
#define N_UNSUP (sizeof(unsup_flags) / sizeof(unsup_flags[0]))

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq_ex *cq;
	struct ibv_qp *rc, *ud;
	struct ibv_ah *ah; /* to the other side's GID */
	union ibv_gid gid;
	char *buf;
	uint64_t last_ts[2]; /* per QP: rc, ud */
};

/* What one completion must read as. */
struct expect {
	const char *what;
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	unsigned int wc_flags;
	uint32_t byte_len;
	__be32 imm;
	struct ibv_qp *qp;
	uint32_t src_qp;
	uint8_t sl;
	uint8_t syndrome; /* errors: the mlx5 syndrome (docs/cqe-format.md §2) */
};

static uint64_t flags; /* the CQs' wc_flags in this iteration */

static uint64_t raw_clock(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	ck_assert_int_eq(ibv_query_rt_values_ex(ctx, &v), 0);
	ck_assert_uint_eq(v.comp_mask, IBV_VALUES_MASK_RAW_CLOCK);
	ck_assert_int_eq(v.raw_clock.tv_sec, 0);
	return (uint64_t)v.raw_clock.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void side_open(struct side *s)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64, .wc_flags = flags };
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	memset(s, 0, sizeof(*s));
	s->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(s->ctx);
	ck_assert_int_eq(ibv_query_gid(s->ctx, 1, 0, &s->gid), 0);
	s->pd = ibv_alloc_pd(s->ctx);
	ck_assert_ptr_nonnull(s->pd);
	s->buf = calloc(1, BUF_SIZE);
	ck_assert_ptr_nonnull(s->buf);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(s->mr);
	s->cq = ibv_create_cq_ex(s->ctx, &ca);
	ck_assert_msg(s->cq, "ibv_create_cq_ex(wc_flags 0x%llx): %s", (unsigned long long)flags,
		      strerror(errno));
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(s->cq);
	qa.qp_type = IBV_QPT_RC;
	s->rc = ibv_create_qp(s->pd, &qa);
	ck_assert_ptr_nonnull(s->rc);
	qa.qp_type = IBV_QPT_UD;
	s->ud = ibv_create_qp(s->pd, &qa);
	ck_assert_ptr_nonnull(s->ud);
	ck_assert_int_eq(tv_ud_ready(s->ud), 0);
}

static void side_close(struct side *s)
{
	ck_assert_int_eq(ibv_destroy_ah(s->ah), 0);
	ck_assert_int_eq(ibv_destroy_qp(s->rc), 0);
	ck_assert_int_eq(ibv_destroy_qp(s->ud), 0);
	ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(s->cq)), 0);
	ck_assert_int_eq(ibv_dereg_mr(s->mr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(s->pd), 0);
	ck_assert_int_eq(ibv_close_device(s->ctx), 0);
	free(s->buf);
}

static void post_recv(struct side *s, struct ibv_qp *qp, uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + off, .length = len, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(qp, &wr, &bad), 0);
}

/* One signalled send WR from S's QP: SIZE bytes at OFF. */
static void post_send(struct side *s, struct ibv_qp *qp, struct ibv_send_wr *wr, size_t off,
		      uint32_t size)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + off, .length = size, .lkey = s->mr->lkey };
	struct ibv_send_wr *bad;

	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_SIGNALED;
	ck_assert_int_eq(ibv_post_send(qp, wr, &bad), 0);
}

/*
 * Takes the next completion from S's CQ and checks every accessor against E;
 * CLK0 / WALL0 were read before the WR was posted.
 */
static void check_next(struct side *s, const struct expect *e, uint64_t clk0, uint64_t wall0)
{
	struct ibv_cq_ex *cq = s->cq;
	int qi = e->qp == s->rc ? 0 : 1;
	uint64_t ts = 0, wall = 0, clk1, wall1;
	int ret = tv_start_poll(cq, WAIT_MS);

	ck_assert_msg(ret == 0, "%s: no completion (start_poll %d)", e->what, ret);
	ck_assert_msg(cq->wr_id == e->wr_id, "%s: wr_id %llu, expected %llu", e->what,
		      (unsigned long long)cq->wr_id, (unsigned long long)e->wr_id);
	ck_assert_msg(cq->status == e->status, "%s: status %s, expected %s", e->what,
		      ibv_wc_status_str(cq->status), ibv_wc_status_str(e->status));
	ck_assert_msg(ibv_wc_read_vendor_err(cq) == e->vendor_err, "%s: vendor_err 0x%x, expected 0x%x",
		      e->what, ibv_wc_read_vendor_err(cq), e->vendor_err);
	if (e->status == IBV_WC_SUCCESS) {
		/* opcode, wc_flags, byte_len, imm, src_qp, sl are undefined for errors */
		ck_assert_msg(ibv_wc_read_opcode(cq) == e->opcode, "%s: opcode %d, expected %d", e->what,
			      ibv_wc_read_opcode(cq), e->opcode);
		ck_assert_msg(ibv_wc_read_wc_flags(cq) == e->wc_flags, "%s: wc_flags 0x%x, expected 0x%x",
			      e->what, ibv_wc_read_wc_flags(cq), e->wc_flags);
		if (flags & IBV_WC_EX_WITH_BYTE_LEN)
			ck_assert_msg(ibv_wc_read_byte_len(cq) == e->byte_len, "%s: byte_len %u, expected %u",
				      e->what, ibv_wc_read_byte_len(cq), e->byte_len);
		if (flags & IBV_WC_EX_WITH_IMM)
			ck_assert_msg(ibv_wc_read_imm_data(cq) == e->imm, "%s: imm 0x%x, expected 0x%x",
				      e->what, ntohl(ibv_wc_read_imm_data(cq)), ntohl(e->imm));
		if (flags & IBV_WC_EX_WITH_SRC_QP)
			ck_assert_msg(ibv_wc_read_src_qp(cq) == e->src_qp, "%s: src_qp 0x%x, expected 0x%x",
				      e->what, ibv_wc_read_src_qp(cq), e->src_qp);
		if (flags & IBV_WC_EX_WITH_SL)
			ck_assert_msg(ibv_wc_read_sl(cq) == e->sl, "%s: sl %u, expected %u", e->what,
				      ibv_wc_read_sl(cq), e->sl);
		if (flags & IBV_WC_EX_WITH_SLID)
			ck_assert_msg(ibv_wc_read_slid(cq) == 0, "%s: slid %u, expected 0", e->what,
				      ibv_wc_read_slid(cq));
		if (flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
			ck_assert_msg(ibv_wc_read_dlid_path_bits(cq) == 0, "%s: dlid_path_bits %u, expected 0",
				      e->what, ibv_wc_read_dlid_path_bits(cq));
	}
	if (flags & IBV_WC_EX_WITH_QP_NUM)
		ck_assert_msg(ibv_wc_read_qp_num(cq) == e->qp->qp_num, "%s: qp_num 0x%x, expected 0x%x",
			      e->what, ibv_wc_read_qp_num(cq), e->qp->qp_num);
	if (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		ts = ibv_wc_read_completion_ts(cq);
	if (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		wall = ibv_wc_read_completion_wallclock_ns(cq);
	ibv_end_poll(cq);
	clk1 = raw_clock(s->ctx);
	wall1 = wall_ns();

	if (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) {
		uint64_t lo = clk0;

		if (e->status != IBV_WC_SUCCESS) {
			/* bytes 54-55 of an error CQE are vendor_err_synd and syndrome (§4.2) */
			uint64_t low = (uint64_t)e->vendor_err << 8 | e->syndrome;

			ck_assert_msg((ts & 0xFFFF) == low, "%s: error CQE timestamp 0x%llx, low 16 bits 0x%llx expected",
				      e->what, (unsigned long long)ts, (unsigned long long)low);
			ts &= ~0xFFFFull;
			lo &= ~0xFFFFull;
		}
		ck_assert_msg(lo <= ts && ts <= clk1, "%s: completion_ts %llu outside [%llu, %llu]", e->what,
			      (unsigned long long)ts, (unsigned long long)lo, (unsigned long long)clk1);
		if (e->status == IBV_WC_SUCCESS) {
			ck_assert_msg(ts >= s->last_ts[qi], "%s: completion_ts %llu before the QP's last %llu",
				      e->what, (unsigned long long)ts, (unsigned long long)s->last_ts[qi]);
			s->last_ts[qi] = ts;
		}
	}
	if (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK) {
		uint64_t lo = wall0 - WALL_SLACK_NS;

		if (e->status != IBV_WC_SUCCESS)
			lo -= 1000000; /* the dropped low 16 bits: < 65536 cycles, < 1 ms at >= 66 MHz */
		ck_assert_msg(lo <= wall && wall <= wall1 + WALL_SLACK_NS,
			      "%s: completion_wallclock_ns %llu outside [%llu, %llu] (+-%llu ns)", e->what,
			      (unsigned long long)wall, (unsigned long long)wall0,
			      (unsigned long long)wall1, WALL_SLACK_NS);
	}
}

static void fill(char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(seed * 31 + i * 7 + (i >> 8));
}

/* One iteration: the CQs get subset _i of the supported flags. */
START_TEST(test_subset)
{
	struct side a, b;
	uint64_t c0, w0;
	const __be32 imm1 = htonl(0x01020304), imm2 = htonl(0xA1B2C3D4);
	enum { OFF_SRC = 0, OFF_DST = 4096 };

	flags = 0;
	for (unsigned int k = 0; k < N_SUP; k++)
		if (_i & (1 << k))
			flags |= sup_flags[k];
	side_open(&a);
	side_open(&b);
	ck_assert_int_eq(tv_rc_connect(a.rc, b.rc->qp_num, &b.gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(b.rc, a.rc->qp_num, &a.gid, IBV_MTU_1024, 14), 0);
	a.ah = tv_ah(a.pd, &b.gid);
	b.ah = tv_ah(b.pd, &a.gid);
	ck_assert_ptr_nonnull(a.ah);
	ck_assert_ptr_nonnull(b.ah);

	/* RC SEND, 1500 bytes (two packets at MTU 1024) */
	fill(a.buf + OFF_SRC, 1500, 1);
	post_recv(&b, b.rc, 101, OFF_DST, 4096);
	c0 = raw_clock(a.ctx), w0 = wall_ns();
	post_send(&a, a.rc, &(struct ibv_send_wr){ .wr_id = 1, .opcode = IBV_WR_SEND }, OFF_SRC, 1500);
	check_next(&a, &(struct expect){ "SEND req", 1, IBV_WC_SUCCESS, IBV_WC_SEND, 0, 0, 1500, 0, a.rc, 0, 0, 0 },
		   c0, w0);
	check_next(&b, &(struct expect){ "SEND resp", 101, IBV_WC_SUCCESS, IBV_WC_RECV, 0, 0, 1500, 0, b.rc,
					 a.rc->qp_num, 2, 0 }, c0, w0);
	ck_assert_int_eq(memcmp(a.buf + OFF_SRC, b.buf + OFF_DST, 1500), 0);

	/* RC SEND_WITH_IMM, 200 bytes */
	fill(a.buf + OFF_SRC, 200, 2);
	post_recv(&b, b.rc, 102, OFF_DST, 4096);
	c0 = raw_clock(a.ctx), w0 = wall_ns();
	post_send(&a, a.rc, &(struct ibv_send_wr){ .wr_id = 2, .opcode = IBV_WR_SEND_WITH_IMM, .imm_data = imm1 },
		  OFF_SRC, 200);
	check_next(&a, &(struct expect){ "SEND_WITH_IMM req", 2, IBV_WC_SUCCESS, IBV_WC_SEND, 0, IBV_WC_WITH_IMM,
					 200, 0, a.rc, 0, 0, 0 }, c0, w0);
	check_next(&b, &(struct expect){ "SEND_WITH_IMM resp", 102, IBV_WC_SUCCESS, IBV_WC_RECV, 0, IBV_WC_WITH_IMM,
					 200, imm1, b.rc, a.rc->qp_num, 2, 0 }, c0, w0);
	ck_assert_int_eq(memcmp(a.buf + OFF_SRC, b.buf + OFF_DST, 200), 0);

	/* RC RDMA_WRITE, 3000 bytes into B's buffer (no receive completion) */
	fill(a.buf + OFF_SRC, 3000, 3);
	c0 = raw_clock(a.ctx), w0 = wall_ns();
	post_send(&a, a.rc, &(struct ibv_send_wr){ .wr_id = 3, .opcode = IBV_WR_RDMA_WRITE,
		  .wr.rdma = { (uintptr_t)b.buf + OFF_DST, b.mr->rkey } }, OFF_SRC, 3000);
	check_next(&a, &(struct expect){ "RDMA_WRITE req", 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 0, 0, 3000, 0,
					 a.rc, 0, 0, 0 }, c0, w0);
	ck_assert_int_eq(memcmp(a.buf + OFF_SRC, b.buf + OFF_DST, 3000), 0);

	/* RC RDMA_WRITE_WITH_IMM, 700 bytes: consumes a receive WQE, no data in it */
	fill(a.buf + OFF_SRC, 700, 4);
	post_recv(&b, b.rc, 104, 0, 16);
	c0 = raw_clock(a.ctx), w0 = wall_ns();
	post_send(&a, a.rc, &(struct ibv_send_wr){ .wr_id = 4, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		  .imm_data = imm2, .wr.rdma = { (uintptr_t)b.buf + OFF_DST, b.mr->rkey } }, OFF_SRC, 700);
	check_next(&a, &(struct expect){ "RDMA_WRITE_WITH_IMM req", 4, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 0,
					 IBV_WC_WITH_IMM, 700, 0, a.rc, 0, 0, 0 }, c0, w0);
	check_next(&b, &(struct expect){ "RDMA_WRITE_WITH_IMM resp", 104, IBV_WC_SUCCESS,
					 IBV_WC_RECV_RDMA_WITH_IMM, 0, IBV_WC_WITH_IMM, 700, imm2, b.rc,
					 a.rc->qp_num, 2, 0 }, c0, w0);
	ck_assert_int_eq(memcmp(a.buf + OFF_SRC, b.buf + OFF_DST, 700), 0);

	/* RC RDMA_READ, 2500 bytes from B */
	fill(b.buf + OFF_SRC, 2500, 5);
	memset(a.buf + OFF_DST, 0, 2500);
	c0 = raw_clock(a.ctx), w0 = wall_ns();
	post_send(&a, a.rc, &(struct ibv_send_wr){ .wr_id = 5, .opcode = IBV_WR_RDMA_READ,
		  .wr.rdma = { (uintptr_t)b.buf + OFF_SRC, b.mr->rkey } }, OFF_DST, 2500);
	check_next(&a, &(struct expect){ "RDMA_READ req", 5, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 0, 0, 2500, 0,
					 a.rc, 0, 0, 0 }, c0, w0);
	ck_assert_int_eq(memcmp(b.buf + OFF_SRC, a.buf + OFF_DST, 2500), 0);

	/* UD SEND, 512 bytes: 40-byte GRH area first, IPv4 header at offset 20 */
	fill(a.buf + OFF_SRC, 512, 6);
	memset(b.buf + OFF_DST, 0, 40 + 512);
	post_recv(&b, b.ud, 106, OFF_DST, 40 + 1024);
	c0 = raw_clock(a.ctx), w0 = wall_ns();
	post_send(&a, a.ud, &(struct ibv_send_wr){ .wr_id = 6, .opcode = IBV_WR_SEND,
		  .wr.ud = { .ah = a.ah, .remote_qpn = b.ud->qp_num, .remote_qkey = TV_QKEY } }, OFF_SRC, 512);
	check_next(&a, &(struct expect){ "UD SEND req", 6, IBV_WC_SUCCESS, IBV_WC_SEND, 0, 0, 512, 0, a.ud, 0, 0, 0 },
		   c0, w0);
	check_next(&b, &(struct expect){ "UD SEND resp", 106, IBV_WC_SUCCESS, IBV_WC_RECV, 0, IBV_WC_GRH, 40 + 512,
					 0, b.ud, a.ud->qp_num, 2, 0 }, c0, w0);
	ck_assert_int_eq(memcmp(a.buf + OFF_SRC, b.buf + OFF_DST + 40, 512), 0);
	ck_assert_int_eq((unsigned char)b.buf[OFF_DST + 20], 0x45); /* IPv4, IHL 5 */

	/* RC RDMA_WRITE with a bad rkey → REM_ACCESS_ERR, QP to ERR; the next WR is flushed */
	c0 = raw_clock(a.ctx), w0 = wall_ns();
	post_send(&a, a.rc, &(struct ibv_send_wr){ .wr_id = 7, .opcode = IBV_WR_RDMA_WRITE,
		  .wr.rdma = { (uintptr_t)b.buf + OFF_DST, b.mr->rkey + 1 } }, OFF_SRC, 64);
	check_next(&a, &(struct expect){ "bad rkey req", 7, IBV_WC_REM_ACCESS_ERR, 0, 0x88, 0, 0, 0, a.rc, 0, 0, 0x13 },
		   c0, w0);
	c0 = raw_clock(a.ctx), w0 = wall_ns();
	post_send(&a, a.rc, &(struct ibv_send_wr){ .wr_id = 8, .opcode = IBV_WR_SEND }, OFF_SRC, 64);
	check_next(&a, &(struct expect){ "flushed req", 8, IBV_WC_WR_FLUSH_ERR, 0, 0xf9, 0, 0, 0, a.rc, 0, 0, 0x05 },
		   c0, w0);

	/* the responder reports the R_Key violation as an affiliated async
	 * event on its QP (IBTA 11.6.3.2 / ibv_get_async_event(3)); the
	 * requester only through its CQE */
	{
		struct pollfd pb = { .fd = b.ctx->async_fd, .events = POLLIN };
		struct pollfd pa = { .fd = a.ctx->async_fd, .events = POLLIN };
		struct ibv_async_event ev;

		ck_assert_int_eq(poll(&pb, 1, WAIT_MS), 1);
		ck_assert_int_eq(ibv_get_async_event(b.ctx, &ev), 0);
		ck_assert_int_eq(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
		ck_assert_ptr_eq(ev.element.qp, b.rc);
		ibv_ack_async_event(&ev);
		ck_assert_int_eq(poll(&pb, 1, 0), 0);
		ck_assert_int_eq(poll(&pa, 1, 0), 0);
	}

	/* nothing else completed on either side */
	ck_assert_int_eq(ibv_start_poll(a.cq, &(struct ibv_poll_cq_attr){ 0 }), ENOENT);
	ck_assert_int_eq(ibv_start_poll(b.cq, &(struct ibv_poll_cq_attr){ 0 }), ENOENT);
	side_close(&a);
	side_close(&b);
}
END_TEST

/* An unknown flag: alone or beside all supported flags, create fails with EOPNOTSUPP. */
START_TEST(test_unsupported)
{
	struct ibv_context *ctx = tv_open(DEV);
	uint64_t all = 0;

	ck_assert_ptr_nonnull(ctx);
	for (unsigned int k = 0; k < N_SUP; k++)
		all |= sup_flags[k];
	for (unsigned int k = 0; k < N_UNSUP; k++) {
		for (int with_all = 0; with_all < 2; with_all++) {
			struct ibv_cq_init_attr_ex ca = {
				.cqe = 16, .wc_flags = unsup_flags[k] | (with_all ? all : 0),
			};
			errno = 0;
			ck_assert_ptr_null(ibv_create_cq_ex(ctx, &ca));
			ck_assert_msg(errno == EOPNOTSUPP, "wc_flags 0x%llx: errno %d, expected EOPNOTSUPP",
				      (unsigned long long)ca.wc_flags, errno);
		}
	}
	/* all supported flags at once: created */
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = all };
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &ca);
	ck_assert_ptr_nonnull(cq);
	ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* Usage: traffic_cqex [FIRST END]: only subsets FIRST..END-1 (default all). */
int main(int argc, char **argv)
{
	Suite *s = suite_create("traffic_cqex");
	TCase *tc = tcase_create("cqex");
	int first = argc > 2 ? atoi(argv[1]) : 0, end = argc > 2 ? atoi(argv[2]) : 1 << N_SUP;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_unsupported);
	tcase_add_loop_test(tc, test_subset, first, end);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
