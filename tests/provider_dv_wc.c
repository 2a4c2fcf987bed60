/*
 * provider_dv_wc.c - urocedv_poll_cq_wc (provider/dv_wc.c, urocedv(3)) over
 * a real ring written as the NIC writes it (provider_cq_ring.h).
 *
 * For EVERY set of the 9 fields a custom WC can hold (512 sets) the same
 * 14 CQEs (every requester and responder opcode, GRH, immediate,
 * invalidate, two error CQEs; distinct timestamps, SLID, SL, path bits,
 * source QP) are written into two CQs created with those wc_flags: one is
 * read with the extended-CQ iterator and every accessor the set allows, the
 * other with urocedv_poll_cq_wc in batches of 5; each field of each custom
 * WC must equal the iterator's value exactly. The layout must follow the
 * rule of urocedv.h (64-bit fields first, then 32, 16, 8, each class in
 * flag-bit order, stride the 8-byte round-up), the consumer index must be
 * published, and an empty CQ gives 0. Also: both lock modes, num_entries
 * < 0 and a CQ without the direct-verb set-up give a negative value.
 */
#include "config.h"

#include "check_main.h"
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/uroce.h"
#include "provider_cq_ring.h"

#define RING 16
#define BATCH 5

/* The fields, one bit of the set number each (as traffic_cqex.c). */
static const uint64_t field_flag[UROCEDV_WC_NUM_FIELDS] = {
	[UROCEDV_WC_COMPLETION_TS] = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	[UROCEDV_WC_COMPLETION_WALLCLOCK_NS] = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	[UROCEDV_WC_BYTE_LEN] = IBV_WC_EX_WITH_BYTE_LEN,
	[UROCEDV_WC_IMM_DATA] = IBV_WC_EX_WITH_IMM,
	[UROCEDV_WC_QP_NUM] = IBV_WC_EX_WITH_QP_NUM,
	[UROCEDV_WC_SRC_QP] = IBV_WC_EX_WITH_SRC_QP,
	[UROCEDV_WC_SLID] = IBV_WC_EX_WITH_SLID,
	[UROCEDV_WC_SL] = IBV_WC_EX_WITH_SL,
	[UROCEDV_WC_DLID_PATH_BITS] = IBV_WC_EX_WITH_DLID_PATH_BITS,
};
static const unsigned int field_size[UROCEDV_WC_NUM_FIELDS] = { 8, 8, 4, 4, 4, 4, 2, 1, 1 };

#define REQ(op) .opcode = MLX5_CQE_REQ, .wqe_op = (op)
static const struct cqe_spec cqes[] = {
	{ REQ(MLX5_OPCODE_SEND), .wqe_counter = 0, .byte_cnt = 65536, .timestamp = 0x0102030405060708ull },
	{ REQ(MLX5_OPCODE_SEND_IMM), .wqe_counter = 1, .byte_cnt = 17, .timestamp = 0x1000 },
	{ REQ(MLX5_OPCODE_RDMA_WRITE), .wqe_counter = 2, .byte_cnt = 1024, .timestamp = 0x1001 },
	{ REQ(MLX5_OPCODE_RDMA_WRITE_IMM), .wqe_counter = 3, .byte_cnt = 4096, .timestamp = 0x1002 },
	{ REQ(MLX5_OPCODE_RDMA_READ), .wqe_counter = 4, .byte_cnt = 65536, .timestamp = 0x1003 },
	{ REQ(MLX5_OPCODE_ATOMIC_FA), .wqe_counter = 5, .timestamp = 0x1004 },
	{ REQ(MLX5_OPCODE_ATOMIC_CS), .wqe_counter = 6, .timestamp = 0x1005 },
	{ .opcode = MLX5_CQE_RESP_SEND, .byte_cnt = 65576, .flags_rqpn = 0x2a00beef, .slid = 0x1234,
	  .ml_path = 0x85, .timestamp = 0x2000 },
	{ .opcode = MLX5_CQE_RESP_SEND_IMM, .byte_cnt = 5, .imm_inval_pkey = 0x11223344,
	  .flags_rqpn = 0x07000042, .slid = 0xfffe, .ml_path = 0x7f, .timestamp = 0x2001 },
	{ .opcode = MLX5_CQE_RESP_WR_IMM, .byte_cnt = 9, .imm_inval_pkey = 0xdeadbeef,
	  .flags_rqpn = 0x00123456, .timestamp = 0x2002 },
	{ .opcode = MLX5_CQE_RESP_SEND_INV, .byte_cnt = 3, .imm_inval_pkey = 0x00010203,
	  .flags_rqpn = 0x1f000001, .slid = 1, .ml_path = 1, .timestamp = 0x2003 },
	{ .opcode = MLX5_CQE_REQ_ERR, .wqe_op = MLX5_OPCODE_RDMA_WRITE, .wqe_counter = 7,
	  .syndrome = 0x13, .vendor_err = 0x88, .timestamp = 0x3000 },
	{ .opcode = MLX5_CQE_RESP_ERR, .syndrome = 0x05, .vendor_err = 0xf9, .timestamp = 0x3001 },
	{ .opcode = MLX5_CQE_RESP_SEND, .byte_cnt = 0, .flags_rqpn = 0x10000000, .timestamp = ~0ull >> 1 },
};
#define NCQE (int)(sizeof(cqes) / sizeof(cqes[0]))

/* What the iterator read for one CQE (only the fields of the set are filled). */
struct want {
	uint64_t wr_id, ts, wall;
	uint32_t vendor_err, byte_len, imm, qpn, src_qp;
	unsigned int wc_flags;
	int status, opcode;
	uint16_t slid;
	uint8_t sl, dlid;
};

static uint64_t set_flags(unsigned int set)
{
	uint64_t f = 0;

	for (int i = 0; i < UROCEDV_WC_NUM_FIELDS; i++)
		if (set & (1u << i))
			f |= field_flag[i];
	return f;
}

static struct fixture *fx_filled(uint64_t flags, bool single_threaded)
{
	struct fixture *f = fx_new_n(flags, single_threaded, RING);

	/* 1 cycle = 1 ns from wall time 5e18 ns at cycle 0 */
	f->clock.mask = ~0ull >> 1;
	f->clock.base_real_ns = 5000000000000000000ull;
	f->clock.ns_mult = 1;
	f->clock.ns_shift = 0;
	for (int i = 0; i < NCQE; i++)
		nic_write(f, &cqes[i]);
	return f;
}

/* Reads every CQE with the iterator and the accessors flags allows. */
static void read_iterator(uint64_t flags, bool st, struct want *w)
{
	struct fixture *f = fx_filled(flags, st);
	struct ibv_cq_ex *cq = &f->cq.vcq.cq_ex;
	struct ibv_poll_cq_attr pa = { 0 };

	memset(w, 0, sizeof(*w) * NCQE);
	ck_assert_int_eq(cq->start_poll(cq, &pa), 0);
	for (int i = 0; i < NCQE; i++) {
		if (i)
			ck_assert_int_eq(cq->next_poll(cq), 0);
		w[i].wr_id = cq->wr_id;
		w[i].status = cq->status;
		w[i].opcode = ibv_wc_read_opcode(cq);
		w[i].vendor_err = ibv_wc_read_vendor_err(cq);
		w[i].wc_flags = ibv_wc_read_wc_flags(cq);
		if (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
			w[i].ts = ibv_wc_read_completion_ts(cq);
		if (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
			w[i].wall = ibv_wc_read_completion_wallclock_ns(cq);
		if (flags & IBV_WC_EX_WITH_BYTE_LEN)
			w[i].byte_len = ibv_wc_read_byte_len(cq);
		if (flags & IBV_WC_EX_WITH_IMM)
			w[i].imm = ibv_wc_read_imm_data(cq);
		if (flags & IBV_WC_EX_WITH_QP_NUM)
			w[i].qpn = ibv_wc_read_qp_num(cq);
		if (flags & IBV_WC_EX_WITH_SRC_QP)
			w[i].src_qp = ibv_wc_read_src_qp(cq);
		if (flags & IBV_WC_EX_WITH_SLID)
			w[i].slid = (uint16_t)ibv_wc_read_slid(cq);
		if (flags & IBV_WC_EX_WITH_SL)
			w[i].sl = ibv_wc_read_sl(cq);
		if (flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
			w[i].dlid = ibv_wc_read_dlid_path_bits(cq);
	}
	ck_assert_int_eq(cq->next_poll(cq), ENOENT);
	cq->end_poll(cq);
	fx_free(f);
}

/* The layout rule of urocedv.h, computed independently of dv_wc.c. */
static void check_layout(const struct urocedv_wc_layout *l, uint64_t flags)
{
	unsigned int o = sizeof(struct urocedv_wc);

	ck_assert_uint_eq(sizeof(struct urocedv_wc), 16);
	ck_assert_uint_eq(l->fields, flags);
	for (unsigned int size = 8; size >= 1; size /= 2)
		for (int i = 0; i < UROCEDV_WC_NUM_FIELDS; i++) {
			if (field_size[i] != size)
				continue;
			if (!(flags & field_flag[i])) {
				ck_assert_uint_eq(l->offset[i], 0);
				continue;
			}
			ck_assert_msg(l->offset[i] == o, "flags 0x%llx field %d at %u, expected %u",
				      (unsigned long long)flags, i, l->offset[i], o);
			ck_assert_uint_eq(o % size, 0); /* naturally aligned */
			o += size;
		}
	ck_assert_uint_eq(l->stride, (o + 7) & ~7u);
}

static void check_set(unsigned int set, bool st)
{
	uint64_t flags = set_flags(set);
	struct want w[NCQE];
	struct fixture *f;
	unsigned char buf[BATCH * 64];
	int got = 0;

	read_iterator(flags, st, w);
	f = fx_filled(flags, st);
	uroce_dv_wc_setup(&f->cq);
	check_layout(&f->cq.wc_layout, flags);
	const struct urocedv_wc_layout *l = &f->cq.wc_layout;
	while (got < NCQE) {
		int k = urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, BATCH, buf);

		ck_assert_int_eq(k, NCQE - got < BATCH ? NCQE - got : BATCH);
		ck_assert_uint_eq(dbrec_ci(f), (uint32_t)(got + k));
		for (int j = 0; j < k; j++, got++) {
			const struct urocedv_wc *h = urocedv_wc_at(l, buf, j);
			const struct want *e = &w[got];

			ck_assert_msg(h->wr_id == e->wr_id && h->status == e->status &&
					      h->opcode == e->opcode && h->vendor_err == e->vendor_err &&
					      h->wc_flags == e->wc_flags,
				      "set 0x%03x CQE %d: head %llx/%d/%d/%u/0x%x, iterator %llx/%d/%d/%u/0x%x",
				      set, got, (unsigned long long)h->wr_id, h->status, h->opcode,
				      h->vendor_err, h->wc_flags, (unsigned long long)e->wr_id, e->status,
				      e->opcode, e->vendor_err, e->wc_flags);
#define FIELD(flag, read, idx, val)                                                        \
	if (flags & (flag))                                                                \
		ck_assert_msg(read(l, h, idx) == (val), "set 0x%03x CQE %d field %d: 0x%llx, " \
			      "iterator 0x%llx", set, got, idx,                             \
			      (unsigned long long)read(l, h, idx), (unsigned long long)(val))
			FIELD(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, urocedv_wc_read_u64,
			      UROCEDV_WC_COMPLETION_TS, e->ts);
			FIELD(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, urocedv_wc_read_u64,
			      UROCEDV_WC_COMPLETION_WALLCLOCK_NS, e->wall);
			FIELD(IBV_WC_EX_WITH_BYTE_LEN, urocedv_wc_read_u32, UROCEDV_WC_BYTE_LEN, e->byte_len);
			FIELD(IBV_WC_EX_WITH_IMM, urocedv_wc_read_u32, UROCEDV_WC_IMM_DATA, e->imm);
			FIELD(IBV_WC_EX_WITH_QP_NUM, urocedv_wc_read_u32, UROCEDV_WC_QP_NUM, e->qpn);
			FIELD(IBV_WC_EX_WITH_SRC_QP, urocedv_wc_read_u32, UROCEDV_WC_SRC_QP, e->src_qp);
			FIELD(IBV_WC_EX_WITH_SLID, urocedv_wc_read_u16, UROCEDV_WC_SLID, e->slid);
			FIELD(IBV_WC_EX_WITH_SL, urocedv_wc_read_u8, UROCEDV_WC_SL, e->sl);
			FIELD(IBV_WC_EX_WITH_DLID_PATH_BITS, urocedv_wc_read_u8,
			      UROCEDV_WC_DLID_PATH_BITS, e->dlid);
#undef FIELD
		}
	}
	ck_assert_int_eq(urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, BATCH, buf), 0);
	fx_free(f);
}

/* Every field set, the locked poll (_i = set). */
START_TEST(test_every_set)
{
	check_set((unsigned int)_i, false);
}
END_TEST

/* Every field set, SINGLE_THREADED. */
START_TEST(test_every_set_single_threaded)
{
	check_set((unsigned int)_i, true);
}
END_TEST

/* The values themselves for one set, so the comparison above is not only
 * iterator == dv: the standard set plus the timestamp, CQEs 0, 5, 7, 10, 11. */
START_TEST(test_values)
{
	uint64_t flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	struct fixture *f = fx_filled(flags, false);
	struct {
		struct urocedv_wc h;
		uint64_t ts;
		uint32_t byte_len, imm, qpn, src_qp;
		uint16_t slid;
		uint8_t sl, dlid;
		uint8_t pad[4];
	} wc[NCQE];

	uroce_dv_wc_setup(&f->cq);
	ck_assert_uint_eq(f->cq.wc_layout.stride, sizeof(wc[0]));
	ck_assert_int_eq(urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, NCQE, wc), NCQE);
	ck_assert_uint_eq(wc[0].h.wr_id, 0x5000);
	ck_assert_uint_eq(wc[0].h.opcode, IBV_WC_SEND);
	ck_assert_uint_eq(wc[0].byte_len, 65536);
	ck_assert_uint_eq(wc[0].ts, 0x0102030405060708ull);
	ck_assert_uint_eq(wc[0].qpn, QPN);
	ck_assert_uint_eq(wc[5].h.opcode, IBV_WC_FETCH_ADD);
	ck_assert_uint_eq(wc[5].byte_len, 8);
	ck_assert_uint_eq(wc[7].h.wr_id, 0x7000);
	ck_assert_uint_eq(wc[7].h.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(wc[7].h.wc_flags, IBV_WC_GRH);
	ck_assert_uint_eq(wc[7].byte_len, 65576);
	ck_assert_uint_eq(wc[7].src_qp, 0xbeef);
	ck_assert_uint_eq(wc[7].sl, 0xa);
	ck_assert_uint_eq(wc[7].slid, 0x1234);
	ck_assert_uint_eq(wc[7].dlid, 0x05);
	ck_assert_uint_eq(wc[10].h.wc_flags, IBV_WC_WITH_INV | IBV_WC_GRH); /* flags_rqpn bit 28 */
	ck_assert_uint_eq(wc[10].imm, 0x03020100u); /* the rkey, host order */
	ck_assert_uint_eq(wc[11].h.status, IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(wc[11].h.vendor_err, 0x88);
	ck_assert_uint_eq(wc[11].h.wr_id, 0x5007);
	ck_assert_uint_eq(wc[12].h.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc[12].h.vendor_err, 0xf9);
	ck_assert_uint_eq(sizeof(wc[0]), 48);
	fx_free(f);
}
END_TEST

/* Bad calls: a negative value, nothing consumed. */
START_TEST(test_errors)
{
	struct fixture *f = fx_filled(IBV_WC_EX_WITH_BYTE_LEN, false);
	unsigned char buf[64];

	/* a CQ that urocedv_create_cq_wc did not set up */
	ck_assert_int_lt(urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, 1, buf), 0);
	uroce_dv_wc_setup(&f->cq);
	ck_assert_int_lt(urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, -1, buf), 0);
	ck_assert_int_eq(urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, 0, buf), 0);
	ck_assert_uint_eq(f->cq.cons_index, 0);
	ck_assert_int_eq(urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, 1, buf), 1);
	ck_assert_uint_eq(dbrec_ci(f), 1);
	fx_free(f);
}
END_TEST

/* urocedv_poll_cq_wc on an empty CQ yields every poll_yield empty polls;
 * a poll that finds a completion restarts the count. */
START_TEST(test_poll_yield)
{
	struct fixture *f = fx_new_n(IBV_WC_EX_WITH_BYTE_LEN, false, 8);
	struct cqe_spec req = { .opcode = MLX5_CQE_REQ, .wqe_op = MLX5_OPCODE_SEND };
	unsigned char buf[64];

	uroce_dv_wc_setup(&f->cq);
	f->cq.poll_yield = 3;
	fx_yields = 0;
	for (int i = 0; i < 7; i++)
		ck_assert_int_eq(urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, 1, buf), 0);
	ck_assert_uint_eq(fx_yields, 2);
	nic_write(f, &req);
	ck_assert_int_eq(urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, 1, buf), 1);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, 1, buf), 0);
	ck_assert_uint_eq(fx_yields, 2);
	ck_assert_int_eq(urocedv_poll_cq_wc(&f->cq.vcq.cq_ex, 1, buf), 0);
	ck_assert_uint_eq(fx_yields, 3);
	fx_free(f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("provider_dv_wc");
	TCase *tc = tcase_create("dv_wc");

	tcase_add_loop_test(tc, test_every_set, 0, 1 << UROCEDV_WC_NUM_FIELDS);
	tcase_add_loop_test(tc, test_every_set_single_threaded, 0, 1 << UROCEDV_WC_NUM_FIELDS);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_poll_yield);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_ENV);
}
