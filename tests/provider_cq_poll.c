/*
 * provider_cq_poll.c - the provider's CQ polling (provider/cq_poll.c) over a real ring.
 *
 * The test plays the NIC: it writes struct mlx5_cqe64 entries into a CQ ring
 * laid out as abi.h says, with the owner-bit and release-store rules of
 * docs/cqe-format.md §3, and checks what ibv_poll_cq's op and the extended-CQ
 * iterator make of them: exact wr_id (from the QP's wr_id arrays), status,
 * opcode, flags, lengths, immediate, source QP, SL, SLID, timestamps, the
 * consumer index published in dbrec[0], and the ENOENT rules.
 */
#include "config.h"

#include "check_main.h"
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/poll_yield.h"
#include "provider/uroce.h"
#include "provider_cq_ring.h"

#define NENT 8
#define fx_new(wc_flags, single_threaded) fx_new_n((wc_flags), (single_threaded), NENT)

START_TEST(test_empty)
{
	struct fixture *f = fx_new(IBV_WC_STANDARD_FLAGS, false);
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_wc wc;

	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, 4, &wc), 0);
	ck_assert_int_eq(f->cq.vcq.cq_ex.start_poll(&f->cq.vcq.cq_ex, &pa), ENOENT);
	/* ENOENT from start_poll released the lock: the next poll does not deadlock */
	ck_assert_int_eq(f->cq.vcq.cq_ex.start_poll(&f->cq.vcq.cq_ex, &pa), ENOENT);
	pa.comp_mask = 1;
	ck_assert_int_eq(f->cq.vcq.cq_ex.start_poll(&f->cq.vcq.cq_ex, &pa), EINVAL);
	fx_free(f);
}
END_TEST

/* One row: a CQE and the ibv_wc ibv_poll_cq must make of it. */
struct poll_case {
	const char *name;
	struct cqe_spec in;
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode; /* checked only for status SUCCESS */
	unsigned int wc_flags;
	uint32_t byte_len, imm_data, invalidated_rkey, src_qp, vendor_err;
	uint8_t sl, dlid_path_bits;
	uint16_t slid;
};

#define REQ(op) .opcode = MLX5_CQE_REQ, .wqe_op = (op)
static const struct poll_case poll_cases[] = {
	{ .name = "req SEND", .in = { REQ(MLX5_OPCODE_SEND), .wqe_counter = 2, .byte_cnt = 77 },
	  .wr_id = 0x5002, .opcode = IBV_WC_SEND, .byte_len = 77 },
	{ .name = "req SEND_IMM", .in = { REQ(MLX5_OPCODE_SEND_IMM), .wqe_counter = 3 },
	  .wr_id = 0x5003, .opcode = IBV_WC_SEND, .wc_flags = IBV_WC_WITH_IMM },
	{ .name = "req WRITE (wqe_counter wraps)", .in = { REQ(MLX5_OPCODE_RDMA_WRITE), .wqe_counter = 8 + 1 },
	  .wr_id = 0x5001, .opcode = IBV_WC_RDMA_WRITE },
	{ .name = "req WRITE_IMM", .in = { REQ(MLX5_OPCODE_RDMA_WRITE_IMM), .wqe_counter = 4 },
	  .wr_id = 0x5004, .opcode = IBV_WC_RDMA_WRITE, .wc_flags = IBV_WC_WITH_IMM },
	{ .name = "req READ", .in = { REQ(MLX5_OPCODE_RDMA_READ), .wqe_counter = 5, .byte_cnt = 4096 },
	  .wr_id = 0x5005, .opcode = IBV_WC_RDMA_READ, .byte_len = 4096 },
	{ .name = "req FETCH_ADD", .in = { REQ(MLX5_OPCODE_ATOMIC_FA), .wqe_counter = 6 },
	  .wr_id = 0x5006, .opcode = IBV_WC_FETCH_ADD, .byte_len = 8 },
	{ .name = "req COMP_SWAP", .in = { REQ(MLX5_OPCODE_ATOMIC_CS), .wqe_counter = 7 },
	  .wr_id = 0x5007, .opcode = IBV_WC_COMP_SWAP, .byte_len = 8 },
	{ .name = "resp SEND", .in = { .opcode = MLX5_CQE_RESP_SEND, .byte_cnt = 1000,
				       .flags_rqpn = 0x2a00beef, .slid = 0x1234, .ml_path = 0x85 },
	  .wr_id = 0x7000, .opcode = IBV_WC_RECV, .wc_flags = IBV_WC_GRH, .byte_len = 1000,
	  .src_qp = 0x00beef, .sl = 0xa, .dlid_path_bits = 0x05, .slid = 0x1234 },
	{ .name = "resp SEND_IMM", .in = { .opcode = MLX5_CQE_RESP_SEND_IMM, .byte_cnt = 5,
					   .imm_inval_pkey = 0x11223344, .flags_rqpn = 0x000042 },
	  .wr_id = 0x7000, .opcode = IBV_WC_RECV, .wc_flags = IBV_WC_WITH_IMM, .byte_len = 5,
	  .imm_data = 0x11223344, .src_qp = 0x42 },
	{ .name = "resp WRITE_IMM", .in = { .opcode = MLX5_CQE_RESP_WR_IMM, .byte_cnt = 9,
					    .imm_inval_pkey = 0xdeadbeef },
	  .wr_id = 0x7000, .opcode = IBV_WC_RECV_RDMA_WITH_IMM, .wc_flags = IBV_WC_WITH_IMM,
	  .byte_len = 9, .imm_data = 0xdeadbeef },
	{ .name = "resp SEND_INV", .in = { .opcode = MLX5_CQE_RESP_SEND_INV, .byte_cnt = 3,
					   .imm_inval_pkey = 0x00010203 },
	  .wr_id = 0x7000, .opcode = IBV_WC_RECV, .wc_flags = IBV_WC_WITH_INV, .byte_len = 3,
	  .invalidated_rkey = 0x03020100 },
	{ .name = "req error REM_ACCESS", .in = { .opcode = MLX5_CQE_REQ_ERR, .wqe_op = MLX5_OPCODE_RDMA_WRITE,
						  .wqe_counter = 2, .syndrome = 0x13, .vendor_err = 0x88 },
	  .wr_id = 0x5002, .status = IBV_WC_REM_ACCESS_ERR, .vendor_err = 0x88 },
	{ .name = "req error RETRY_EXC", .in = { .opcode = MLX5_CQE_REQ_ERR, .wqe_counter = 0, .syndrome = 0x15 },
	  .wr_id = 0x5000, .status = IBV_WC_RETRY_EXC_ERR },
	{ .name = "req error RNR_RETRY_EXC", .in = { .opcode = MLX5_CQE_REQ_ERR, .wqe_counter = 1, .syndrome = 0x16 },
	  .wr_id = 0x5001, .status = IBV_WC_RNR_RETRY_EXC_ERR },
	{ .name = "req error REM_INV_REQ", .in = { .opcode = MLX5_CQE_REQ_ERR, .wqe_counter = 1, .syndrome = 0x12 },
	  .wr_id = 0x5001, .status = IBV_WC_REM_INV_REQ_ERR },
	{ .name = "resp error LOC_LEN", .in = { .opcode = MLX5_CQE_RESP_ERR, .syndrome = 0x01 },
	  .wr_id = 0x7000, .status = IBV_WC_LOC_LEN_ERR },
	{ .name = "resp error WR_FLUSH", .in = { .opcode = MLX5_CQE_RESP_ERR, .syndrome = 0x05 },
	  .wr_id = 0x7000, .status = IBV_WC_WR_FLUSH_ERR },
	{ .name = "unknown syndrome", .in = { .opcode = MLX5_CQE_RESP_ERR, .syndrome = 0x77 },
	  .wr_id = 0x7000, .status = IBV_WC_GENERAL_ERR },
};

START_TEST(test_poll_case)
{
	const struct poll_case *c = &poll_cases[_i];
	struct fixture *f = fx_new(0, false);
	struct ibv_wc wc[2];

	nic_write(f, &c->in);
	memset(wc, 0xee, sizeof(wc));
	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, 2, wc), 1);
	ck_assert_msg(wc[0].wr_id == c->wr_id, "%s: wr_id 0x%llx, expected 0x%llx", c->name,
		      (unsigned long long)wc[0].wr_id, (unsigned long long)c->wr_id);
	ck_assert_msg(wc[0].status == c->status, "%s: status %s, expected %s", c->name,
		      ibv_wc_status_str(wc[0].status), ibv_wc_status_str(c->status));
	ck_assert_uint_eq(wc[0].qp_num, QPN);
	if (c->status == IBV_WC_SUCCESS) {
		ck_assert_msg(wc[0].opcode == c->opcode, "%s: opcode %d, expected %d", c->name,
			      wc[0].opcode, c->opcode);
		ck_assert_msg(wc[0].wc_flags == c->wc_flags, "%s: wc_flags 0x%x, expected 0x%x",
			      c->name, wc[0].wc_flags, c->wc_flags);
		ck_assert_uint_eq(wc[0].byte_len, c->byte_len);
		if (c->wc_flags & IBV_WC_WITH_IMM)
			ck_assert_uint_eq(wc[0].imm_data, c->imm_data);
		if (c->wc_flags & IBV_WC_WITH_INV)
			ck_assert_uint_eq(wc[0].invalidated_rkey, c->invalidated_rkey);
		ck_assert_uint_eq(wc[0].src_qp, c->src_qp);
		ck_assert_uint_eq(wc[0].sl, c->sl);
		ck_assert_uint_eq(wc[0].slid, c->slid);
		ck_assert_uint_eq(wc[0].dlid_path_bits, c->dlid_path_bits);
	} else {
		ck_assert_uint_eq(wc[0].vendor_err, c->vendor_err);
	}
	ck_assert_uint_eq(dbrec_ci(f), 1);
	/* the second slot was untouched */
	ck_assert_uint_eq(wc[1].wr_id, 0xeeeeeeeeeeeeeeeeull);
	fx_free(f);
}
END_TEST

/* A signalled requester CQE retires every earlier unsignalled WQE (mlx5 sq.tail rule). */
START_TEST(test_retire_unsignalled)
{
	struct fixture *f = fx_new(0, false);
	struct cqe_spec s = { .opcode = MLX5_CQE_REQ, .wqe_op = MLX5_OPCODE_SEND, .wqe_counter = 5 };
	struct ibv_wc wc;

	f->qp.sq_wqe_head[5] = 41; /* WQE 5 was posted when sq_head was 41 */
	nic_write(f, &s);
	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, 1, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 0x5005);
	ck_assert_uint_eq(f->qp.sq_tail, 42);
	fx_free(f);
}
END_TEST

/* Receive completions take the RQ's wr_ids in order, wrapping at max_recv_wr. */
START_TEST(test_rq_order)
{
	struct fixture *f = fx_new(0, false);
	struct cqe_spec s = { .opcode = MLX5_CQE_RESP_SEND, .byte_cnt = 1 };
	struct ibv_wc wc[6];

	for (int i = 0; i < 6; i++)
		nic_write(f, &s);
	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, 6, wc), 6);
	for (int i = 0; i < 6; i++)
		ck_assert_uint_eq(wc[i].wr_id, 0x7000 + (uint64_t)(i % 4));
	ck_assert_uint_eq(f->qp.rq_tail, 6);
	ck_assert_uint_eq(dbrec_ci(f), 6);
	fx_free(f);
}
END_TEST

/* Owner bit: a CQE left from the previous lap is not new; the next lap's is. */
START_TEST(test_owner_wrap)
{
	struct fixture *f = fx_new(0, false);
	struct cqe_spec s = { .opcode = MLX5_CQE_RESP_SEND, .byte_cnt = 1 };
	struct ibv_wc wc[NENT];

	for (int i = 0; i < NENT; i++)
		nic_write(f, &s);
	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, NENT, wc), NENT);
	/* slot 0 still holds lap 0's CQE (owner 0); consumer index NENT expects owner 1 */
	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, NENT, wc), 0);
	nic_write(f, &s);
	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, NENT, wc), 1);
	ck_assert_uint_eq(dbrec_ci(f), NENT + 1);
	/* a partial batch: 3 written, ask for 2, then the rest */
	for (int i = 0; i < 3; i++)
		nic_write(f, &s);
	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, 2, wc), 2);
	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, 2, wc), 1);
	ck_assert_uint_eq(dbrec_ci(f), NENT + 4);
	fx_free(f);
}
END_TEST

/* The iterator over three CQEs, with every supported accessor. */
START_TEST(test_iterator)
{
	uint64_t flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	struct fixture *f = fx_new(flags, _i == 1);
	struct ibv_cq_ex *cq = &f->cq.vcq.cq_ex;
	struct ibv_poll_cq_attr pa = { 0 };
	struct cqe_spec a = { .opcode = MLX5_CQE_RESP_SEND_IMM, .byte_cnt = 64, .imm_inval_pkey = 0xa1b2c3d4,
			      .flags_rqpn = 0x1700abcd, .slid = 7, .ml_path = 0x7f, .timestamp = 1000 };
	struct cqe_spec b = { .opcode = MLX5_CQE_REQ, .wqe_op = MLX5_OPCODE_RDMA_READ, .wqe_counter = 3,
			      .byte_cnt = 300, .timestamp = 2000 };
	struct cqe_spec c = { .opcode = MLX5_CQE_REQ_ERR, .wqe_op = MLX5_OPCODE_SEND, .wqe_counter = 4,
			      .syndrome = 0x05, .vendor_err = 0xf9, .timestamp = 3000 };

	/* clock page: 1 cycle = 1 ns from wall time 5e18 ns at cycle 0 */
	f->clock.mask = ~0ull >> 1;
	f->clock.base_real_ns = 5000000000000000000ull;
	f->clock.ns_mult = 1;
	f->clock.ns_shift = 0;
	nic_write(f, &a);
	nic_write(f, &b);
	nic_write(f, &c);

	ck_assert_int_eq(cq->start_poll(cq, &pa), 0);
	ck_assert_uint_eq(cq->wr_id, 0x7000);
	ck_assert_int_eq(cq->status, IBV_WC_SUCCESS);
	ck_assert_int_eq(ibv_wc_read_opcode(cq), IBV_WC_RECV);
	ck_assert_uint_eq(ibv_wc_read_wc_flags(cq), IBV_WC_WITH_IMM | IBV_WC_GRH);
	ck_assert_uint_eq(ibv_wc_read_byte_len(cq), 64);
	ck_assert_uint_eq(ibv_wc_read_imm_data(cq), 0xa1b2c3d4);
	ck_assert_uint_eq(ibv_wc_read_qp_num(cq), QPN);
	ck_assert_uint_eq(ibv_wc_read_src_qp(cq), 0x00abcd);
	ck_assert_uint_eq(ibv_wc_read_sl(cq), 7);
	ck_assert_uint_eq(ibv_wc_read_slid(cq), 7);
	ck_assert_uint_eq(ibv_wc_read_dlid_path_bits(cq), 0x7f);
	ck_assert_uint_eq(ibv_wc_read_completion_ts(cq), 1000);
	ck_assert_uint_eq(ibv_wc_read_completion_wallclock_ns(cq), 5000000000000001000ull);
	ck_assert_uint_eq(ibv_wc_read_vendor_err(cq), 0);

	ck_assert_int_eq(cq->next_poll(cq), 0);
	ck_assert_uint_eq(cq->wr_id, 0x5003);
	ck_assert_int_eq(ibv_wc_read_opcode(cq), IBV_WC_RDMA_READ);
	ck_assert_uint_eq(ibv_wc_read_byte_len(cq), 300);
	ck_assert_uint_eq(ibv_wc_read_completion_ts(cq), 2000);

	ck_assert_int_eq(cq->next_poll(cq), 0);
	ck_assert_uint_eq(cq->wr_id, 0x5004);
	ck_assert_int_eq(cq->status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(ibv_wc_read_vendor_err(cq), 0xf9);
	ck_assert_uint_eq(ibv_wc_read_qp_num(cq), QPN);

	ck_assert_int_eq(cq->next_poll(cq), ENOENT);
	nic_write(f, &a); /* lands between next_poll's ENOENT and end_poll */
	cq->end_poll(cq);
	ck_assert_uint_eq(dbrec_ci(f), 3);
	/* not lost, not consumed twice: the next start_poll returns it */
	ck_assert_int_eq(cq->start_poll(cq, &pa), 0);
	ck_assert_uint_eq(cq->wr_id, 0x7001);
	cq->end_poll(cq); /* end_poll right after start_poll consumes that one */
	ck_assert_uint_eq(dbrec_ci(f), 4);
	ck_assert_int_eq(cq->start_poll(cq, &pa), ENOENT);
	fx_free(f);
}
END_TEST

/* Accessors exist exactly for the requested wc_flags (chosen at creation, like mlx5). */
START_TEST(test_accessor_choice)
{
	struct fixture *f = fx_new(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM, false);
	struct ibv_cq_ex *cq = &f->cq.vcq.cq_ex;

	ck_assert_ptr_nonnull(cq->read_opcode);
	ck_assert_ptr_nonnull(cq->read_vendor_err);
	ck_assert_ptr_nonnull(cq->read_wc_flags);
	ck_assert_ptr_nonnull(cq->read_byte_len);
	ck_assert_ptr_nonnull(cq->read_qp_num);
	ck_assert_ptr_null(cq->read_imm_data);
	ck_assert_ptr_null(cq->read_src_qp);
	ck_assert_ptr_null(cq->read_slid);
	ck_assert_ptr_null(cq->read_sl);
	ck_assert_ptr_null(cq->read_dlid_path_bits);
	ck_assert_ptr_null(cq->read_completion_ts);
	ck_assert_ptr_null(cq->read_completion_wallclock_ns);
	ck_assert_ptr_null(cq->read_cvlan);
	ck_assert_ptr_null(cq->read_flow_tag);
	ck_assert_ptr_null(cq->read_tm_info);
	fx_free(f);
}
END_TEST

/* The QPN table: QPs in different top-level blocks, lookups, removal. */
/* A QP for the QP-cache tests: wr_ids base + slot in its SQ (4 slots) and
 * base + 0x100 + slot in its RQ (rq slots; 0 = no RQ, as on an SRQ). */
struct test_qp {
	struct uroce_qp qp;
	uint64_t sq_wrid[4], rq_wrid[4];
	uint32_t sq_wqe_head[4];
};

static void test_qp_init(struct fixture *f, struct test_qp *t, uint32_t qpn, uint64_t base,
			 uint32_t rq)
{
	memset(t, 0, sizeof(*t));
	t->qp.vqp.qp.qp_num = qpn;
	t->qp.cap.max_send_wr = 4;
	t->qp.cap.max_recv_wr = rq;
	t->qp.sq_wrid = t->sq_wrid;
	t->qp.rq_wrid = rq ? t->rq_wrid : NULL;
	t->qp.sq_wqe_head = t->sq_wqe_head;
	for (uint32_t i = 0; i < 4; i++) {
		t->sq_wrid[i] = base + i;
		t->rq_wrid[i] = base + 0x100 + i;
		t->sq_wqe_head[i] = i;
	}
	ck_assert_int_eq(uroce_qp_table_insert(&f->ctx, &t->qp), 0);
}

/* Polls n completions, by ibv_poll_cq (iter false, one call) or by the
 * iterator (one start_poll .. end_poll). */
static void poll_n(struct fixture *f, bool iter, struct ibv_wc *wc, int n)
{
	struct ibv_cq_ex *cq = &f->cq.vcq.cq_ex;
	struct ibv_poll_cq_attr pa = { 0 };

	if (!iter) {
		ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, n + 1, wc), n);
		return;
	}
	ck_assert_int_eq(cq->start_poll(cq, &pa), 0);
	for (int i = 0; i < n; i++) {
		wc[i].wr_id = cq->wr_id;
		wc[i].status = cq->status;
		wc[i].qp_num = ibv_wc_read_qp_num(cq);
		ck_assert_int_eq(cq->next_poll(cq), i + 1 < n ? 0 : ENOENT);
	}
	cq->end_poll(cq);
}

/*
 * The QP cache (the QP of the last CQE, kept across polls) as CQEs of three
 * QPs interleave on one CQ: A (the fixture's QP), B, and C without an RQ
 * (its receive CQE must not take the RQ path of the cached QP: wr_id 0).
 * An error CQE of the cached QP goes the full way (status from the
 * syndrome). By ibv_poll_cq (_i 0) and the iterator (_i 1).
 */
START_TEST(test_qp_cache_switch)
{
	struct fixture *f = fx_new_n(IBV_WC_STANDARD_FLAGS, false, 16);
	struct test_qp b, c;
	static const struct {
		uint8_t opcode;
		uint32_t qpn;
		uint16_t wqe_counter;
		uint64_t wr_id;
	} seq[] = {
		{ MLX5_CQE_RESP_SEND, QPN, 0, 0x7000 },   { MLX5_CQE_RESP_SEND, QPN, 0, 0x7001 },
		{ MLX5_CQE_RESP_SEND, 0xb0b, 0, 0xb100 }, { MLX5_CQE_REQ, QPN, 5, 0x5005 },
		{ MLX5_CQE_REQ, 0xb0b, 1, 0xb001 },       { MLX5_CQE_RESP_WR_IMM, 0xb0b, 0, 0xb101 },
		{ MLX5_CQE_REQ, 0xc0c, 2, 0xc002 },       { MLX5_CQE_RESP_SEND, 0xc0c, 0, 0 },
		{ MLX5_CQE_RESP_SEND, QPN, 0, 0x7002 },   { MLX5_CQE_RESP_ERR, QPN, 0, 0x7003 },
		{ MLX5_CQE_RESP_SEND_IMM, 0xb0b, 0, 0xb100 },
	};
	int n = (int)(sizeof(seq) / sizeof(seq[0]));
	struct ibv_wc wc[16];

	test_qp_init(f, &b, 0xb0b, 0xb000, 2);
	test_qp_init(f, &c, 0xc0c, 0xc000, 0);
	for (int i = 0; i < n; i++) {
		struct cqe_spec s = { .opcode = seq[i].opcode, .qpn = seq[i].qpn,
				      .wqe_op = MLX5_OPCODE_SEND, .wqe_counter = seq[i].wqe_counter,
				      .byte_cnt = 64, .syndrome = 0x05 };

		nic_write(f, &s);
	}
	poll_n(f, _i == 1, wc, n);
	for (int i = 0; i < n; i++) {
		ck_assert_msg(wc[i].wr_id == seq[i].wr_id, "CQE %d: wr_id 0x%llx, expected 0x%llx", i,
			      (unsigned long long)wc[i].wr_id, (unsigned long long)seq[i].wr_id);
		ck_assert_uint_eq(wc[i].qp_num, seq[i].qpn);
		ck_assert_int_eq(wc[i].status, seq[i].opcode == MLX5_CQE_RESP_ERR ?
						       IBV_WC_WR_FLUSH_ERR : IBV_WC_SUCCESS);
	}
	ck_assert_uint_eq(f->qp.rq_tail, 4);
	ck_assert_uint_eq(f->qp.sq_tail, 6);
	ck_assert_uint_eq(b.qp.rq_tail, 3);
	ck_assert_uint_eq(b.qp.sq_tail, 2);
	ck_assert_uint_eq(c.qp.sq_tail, 3);
	ck_assert_uint_eq(dbrec_ci(f), (uint32_t)n);
	uroce_qp_table_remove(&f->ctx, &b.qp);
	uroce_qp_table_remove(&f->ctx, &c.qp);
	fx_free(f);
}
END_TEST

/*
 * A destroyed QP leaves the CQ's QP cache (uroce_cq_forget_qp, as
 * destroy_qp calls it): a new QP with the same QPN gets the next CQE, not
 * the freed one. By ibv_poll_cq (_i 0) and the iterator (_i 1).
 */
START_TEST(test_qp_cache_destroy)
{
	struct fixture *f = fx_new(IBV_WC_STANDARD_FLAGS, _i == 1);
	struct cqe_spec s = { .opcode = MLX5_CQE_RESP_SEND, .byte_cnt = 64 };
	struct test_qp d;
	struct ibv_wc wc[2];

	nic_write(f, &s);
	poll_n(f, _i == 1, wc, 1);
	ck_assert_uint_eq(wc[0].wr_id, 0x7000);
	/* destroyed: out of the table, out of the cache; its QPN reused */
	uroce_qp_table_remove(&f->ctx, &f->qp);
	uroce_cq_forget_qp(&f->cq, &f->qp);
	test_qp_init(f, &d, QPN, 0xd000, 2);
	nic_write(f, &s);
	nic_write(f, &s);
	poll_n(f, _i == 1, wc, 2);
	ck_assert_uint_eq(wc[0].wr_id, 0xd100);
	ck_assert_uint_eq(wc[1].wr_id, 0xd101);
	ck_assert_uint_eq(f->qp.rq_tail, 1);
	ck_assert_uint_eq(d.qp.rq_tail, 2);
	/* forgetting another QP keeps the cache: the same CQEs, the same QP */
	uroce_cq_forget_qp(&f->cq, &f->qp);
	nic_write(f, &s);
	poll_n(f, _i == 1, wc, 1);
	ck_assert_uint_eq(wc[0].wr_id, 0xd100);
	ck_assert_ptr_eq(f->cq.qpc.qp, &d.qp);
	uroce_qp_table_remove(&f->ctx, &d.qp);
	uroce_cq_forget_qp(&f->cq, &d.qp);
	ck_assert_uint_eq(f->cq.qpc.sq_qpn, UROCE_NO_QPN);
	ck_assert_int_eq(uroce_qp_table_insert(&f->ctx, &f->qp), 0);
	fx_free(f);
}
END_TEST

START_TEST(test_qp_table)
{
	struct fixture *f = fx_new(0, false);
	struct uroce_qp a = { 0 }, b = { 0 };
	struct cqe_spec s = { .opcode = MLX5_CQE_RESP_SEND, .byte_cnt = 1 };
	struct ibv_wc wc;

	a.vqp.qp.qp_num = 0x000002;
	b.vqp.qp.qp_num = 0xfff003;
	ck_assert_int_eq(uroce_qp_table_insert(&f->ctx, &a), 0);
	ck_assert_int_eq(uroce_qp_table_insert(&f->ctx, &b), 0);
	ck_assert_ptr_eq(uroce_find_qp(&f->ctx, 0x000002), &a);
	ck_assert_ptr_eq(uroce_find_qp(&f->ctx, 0xfff003), &b);
	ck_assert_ptr_eq(uroce_find_qp(&f->ctx, QPN), &f->qp);
	ck_assert_ptr_null(uroce_find_qp(&f->ctx, 0x000003));
	ck_assert_ptr_null(uroce_find_qp(&f->ctx, 0x7ff003));
	uroce_qp_table_remove(&f->ctx, &b);
	ck_assert_ptr_null(uroce_find_qp(&f->ctx, 0xfff003));
	ck_assert_ptr_eq(uroce_find_qp(&f->ctx, 0x000002), &a);

	/* a completion of a QP that is gone: delivered with wr_id 0, not a crash */
	uroce_qp_table_remove(&f->ctx, &f->qp);
	nic_write(f, &s);
	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, 1, &wc), 1);
	ck_assert_uint_eq(wc.wr_id, 0);
	ck_assert_uint_eq(wc.qp_num, QPN);
	ck_assert_int_eq(uroce_qp_table_insert(&f->ctx, &f->qp), 0);
	fx_free(f);
}
END_TEST

/*
 * Every mlx5 error syndrome and the ibv_wc_status it means, with the
 * syndrome values written as numbers (mlx5dv.h enum mlx5_cqe_error_syndrome;
 * meanings: ibv_poll_cq(3) status list), for a requester and a responder
 * error CQE, through ibv_poll_cq and through the ibv_start_poll iterator.
 * Values no table names are IBV_WC_GENERAL_ERR.
 */
static const struct {
	uint8_t syndrome;
	enum ibv_wc_status status;
} syndrome_cases[] = {
	{ 0x01, IBV_WC_LOC_LEN_ERR },
	{ 0x02, IBV_WC_LOC_QP_OP_ERR },
	{ 0x04, IBV_WC_LOC_PROT_ERR },
	{ 0x05, IBV_WC_WR_FLUSH_ERR },
	{ 0x06, IBV_WC_MW_BIND_ERR },
	{ 0x10, IBV_WC_BAD_RESP_ERR },
	{ 0x11, IBV_WC_LOC_ACCESS_ERR },
	{ 0x12, IBV_WC_REM_INV_REQ_ERR },
	{ 0x13, IBV_WC_REM_ACCESS_ERR },
	{ 0x14, IBV_WC_REM_OP_ERR },
	{ 0x15, IBV_WC_RETRY_EXC_ERR },
	{ 0x16, IBV_WC_RNR_RETRY_EXC_ERR },
	{ 0x22, IBV_WC_REM_ABORT_ERR },
	{ 0x00, IBV_WC_GENERAL_ERR },
	{ 0x03, IBV_WC_GENERAL_ERR },
	{ 0x07, IBV_WC_GENERAL_ERR },
	{ 0x17, IBV_WC_GENERAL_ERR },
	{ 0x21, IBV_WC_GENERAL_ERR },
	{ 0xff, IBV_WC_GENERAL_ERR },
};

START_TEST(test_error_syndrome)
{
	unsigned row = (unsigned)_i / 2;
	bool req = _i % 2 == 0;
	struct fixture *f = fx_new(IBV_WC_STANDARD_FLAGS, false);
	struct ibv_cq_ex *cq = &f->cq.vcq.cq_ex;
	struct ibv_poll_cq_attr pa = { 0 };
	struct cqe_spec s = { .opcode = req ? MLX5_CQE_REQ_ERR : MLX5_CQE_RESP_ERR,
			      .wqe_op = MLX5_OPCODE_SEND, .wqe_counter = 2,
			      .syndrome = syndrome_cases[row].syndrome, .vendor_err = 0x5a };
	enum ibv_wc_status want = syndrome_cases[row].status;
	uint64_t want_wr_id = req ? 0x5002 : 0x7000;
	struct ibv_wc wc;

	nic_write(f, &s);
	ck_assert_int_eq(uroce_poll_cq(&f->cq.vcq.cq, 1, &wc), 1);
	ck_assert_msg(wc.status == want, "syndrome 0x%02x (%s): %s, expected %s",
		      s.syndrome, req ? "req" : "resp", ibv_wc_status_str(wc.status),
		      ibv_wc_status_str(want));
	ck_assert_uint_eq(wc.wr_id, want_wr_id);
	ck_assert_uint_eq(wc.vendor_err, 0x5a);
	ck_assert_uint_eq(wc.qp_num, QPN);

	s.wqe_counter = 3;
	nic_write(f, &s);
	ck_assert_int_eq(cq->start_poll(cq, &pa), 0);
	ck_assert_msg(cq->status == want, "syndrome 0x%02x (%s, iterator): %s, expected %s",
		      s.syndrome, req ? "req" : "resp", ibv_wc_status_str(cq->status),
		      ibv_wc_status_str(want));
	ck_assert_uint_eq(ibv_wc_read_vendor_err(cq), 0x5a);
	cq->end_poll(cq);
	fx_free(f);
}
END_TEST

/* One poll of f's CQ through ibv_poll_cq (way 0) or the iterator (1, 2):
 * the number of completions it found (0 or 1). */
static int poll_one(struct fixture *f, int way)
{
	struct ibv_cq_ex *cq = &f->cq.vcq.cq_ex;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_wc wc;
	int ret;

	if (way == 0)
		return uroce_poll_cq(&f->cq.vcq.cq, 1, &wc);
	ret = cq->start_poll(cq, &pa);
	if (ret == ENOENT)
		return 0;
	ck_assert_int_eq(ret, 0);
	cq->end_poll(cq);
	return 1;
}

/* An empty CQ polled again and again: one sched_yield every poll_yield
 * empty polls, exactly; a completion found restarts the count; 0 never
 * yields. Loop: ibv_poll_cq, iterator locked, iterator SINGLE_THREADED. */
START_TEST(test_poll_yield)
{
	struct fixture *f = fx_new(IBV_WC_STANDARD_FLAGS, _i == 2);
	struct cqe_spec req = { .opcode = MLX5_CQE_REQ, .wqe_op = MLX5_OPCODE_SEND };

	f->cq.poll_yield = 4;
	fx_yields = 0;
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(poll_one(f, _i), 0);
	ck_assert_uint_eq(fx_yields, 0);
	ck_assert_int_eq(poll_one(f, _i), 0);
	ck_assert_uint_eq(fx_yields, 1);
	for (int i = 0; i < 7; i++)
		ck_assert_int_eq(poll_one(f, _i), 0);
	ck_assert_uint_eq(fx_yields, 2); /* 11 empty polls: the 8th yielded, 3 counted */
	nic_write(f, &req);
	ck_assert_int_eq(poll_one(f, _i), 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(poll_one(f, _i), 0);
	ck_assert_uint_eq(fx_yields, 2); /* the completion restarted the count */
	ck_assert_int_eq(poll_one(f, _i), 0);
	ck_assert_uint_eq(fx_yields, 3);
	/* polls that find completions never yield */
	for (int i = 0; i < 20; i++) {
		req.wqe_counter = (uint16_t)(i + 1);
		nic_write(f, &req);
		ck_assert_int_eq(poll_one(f, _i), 1);
	}
	ck_assert_uint_eq(fx_yields, 3);
	f->cq.poll_yield = 0;
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(poll_one(f, _i), 0);
	ck_assert_uint_eq(fx_yields, 3);
	f->cq.poll_yield = 1;
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(poll_one(f, _i), 0);
	ck_assert_uint_eq(fx_yields, 8);
	fx_free(f);
}
END_TEST

/* UROCE_POLL_YIELD: 0..UROCE_POLL_YIELD_MAX as given (digits only); unset,
 * empty or anything else the default; uroce_env_num's warn-once flag. */
START_TEST(test_poll_yield_setting)
{
	static const struct {
		const char *env; /* NULL: unset */
		uint32_t want;
	} cases[] = {
		{ NULL, UROCE_POLL_YIELD_DEFAULT }, { "", UROCE_POLL_YIELD_DEFAULT },
		{ "0", 0 },			     { "1", 1 },
		{ "1000000", 1000000 },		     { "1000001", UROCE_POLL_YIELD_DEFAULT },
		{ "-1", UROCE_POLL_YIELD_DEFAULT },  { "12x", UROCE_POLL_YIELD_DEFAULT },
		{ " 64", UROCE_POLL_YIELD_DEFAULT }, { "+5", UROCE_POLL_YIELD_DEFAULT },
		{ "99999999999999999999", UROCE_POLL_YIELD_DEFAULT }, { "12\nx", UROCE_POLL_YIELD_DEFAULT },
	};
	bool warned = false;

	ck_assert_uint_eq(UROCE_POLL_YIELD_DEFAULT, 64);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].env)
			setenv("UROCE_POLL_YIELD", cases[i].env, 1);
		else
			unsetenv("UROCE_POLL_YIELD");
		ck_assert_msg(uroce_poll_yield_setting() == cases[i].want, "UROCE_POLL_YIELD=%s: %u, want %u",
			      cases[i].env ? cases[i].env : "(unset)", uroce_poll_yield_setting(), cases[i].want);
	}
	/* the caller's flag: set by the first refused value only */
	setenv("UROCE_TEST_NUM", "7", 1);
	ck_assert_int_eq(uroce_env_num("UROCE_TEST_NUM", 0, 9, 3, &warned), 7);
	ck_assert(!warned);
	setenv("UROCE_TEST_NUM", "10", 1);
	ck_assert_int_eq(uroce_env_num("UROCE_TEST_NUM", 0, 9, 3, &warned), 3);
	ck_assert(warned);
	ck_assert_int_eq(uroce_env_num("UROCE_TEST_NUM", 0, 9, 3, &warned), 3);
	setenv("UROCE_TEST_NUM", "", 1);
	ck_assert_int_eq(uroce_env_num("UROCE_TEST_NUM", 0, 9, 3, &warned), 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("provider_cq_poll");
	TCase *tc = tcase_create("poll");

	tcase_add_test(tc, test_empty);
	tcase_add_loop_test(tc, test_poll_case, 0, (int)(sizeof(poll_cases) / sizeof(poll_cases[0])));
	tcase_add_test(tc, test_retire_unsignalled);
	tcase_add_test(tc, test_rq_order);
	tcase_add_test(tc, test_owner_wrap);
	tcase_add_loop_test(tc, test_iterator, 0, 2); /* locked, SINGLE_THREADED */
	tcase_add_test(tc, test_accessor_choice);
	tcase_add_test(tc, test_qp_table);
	tcase_add_loop_test(tc, test_qp_cache_switch, 0, 2);  /* ibv_poll_cq, iterator */
	tcase_add_loop_test(tc, test_qp_cache_destroy, 0, 2); /* ibv_poll_cq, iterator */
	tcase_add_loop_test(tc, test_error_syndrome, 0,
			    (int)(2 * sizeof(syndrome_cases) / sizeof(syndrome_cases[0])));
	tcase_add_loop_test(tc, test_poll_yield, 0, 3); /* ibv_poll_cq, iterator, iterator SINGLE_THREADED */
	tcase_add_test(tc, test_poll_yield_setting);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_ENV);
}
