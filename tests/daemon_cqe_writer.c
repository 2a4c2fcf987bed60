/*
 * daemon_cqe_writer.c - unit tests of the CQE builder in emu/nic/cq_ring.c:
 * every kind of completion becomes exactly the mlx5 CQE bytes
 * docs/cqe-format.md describes
 * (opcode and SE in op_own, sop_drop_qpn with the WQE opcode, byte_cnt,
 * immediate, flags_rqpn with GRH / RoCE packet type / source QP,
 * wqe_counter, timestamp; error CQEs with syndrome, vendor syndrome and
 * s_wqe_opcode_qpn), and the syndrome table is the inverse of mlx5's.
 */
#include "config.h"
#include "emu/nic/cq_ring.h"

#include "check_main.h"
#include <endian.h>
#include <string.h>

#define TS 0x0123456789abcdefull

static const struct row {
	const char *name;
	struct xport_cqe in;
	bool ipv6;
	uint8_t op_own;
	uint32_t sop_drop_qpn, byte_cnt, imm, flags_rqpn;
	uint16_t wqe_counter;
} rows[] = {
	{ "send", { .qpn = 0x12, .wr_index = 5, .byte_len = 100, .opcode = IBV_WC_SEND, .wr_opcode = IBV_WR_SEND },
	  false, 0x00, 0x0a000012, 100, 0, 0, 5 },
	{ "write imm", { .qpn = 0xABCDEF, .wr_index = 0x12345, .byte_len = 7, .opcode = IBV_WC_RDMA_WRITE,
			 .wr_opcode = IBV_WR_RDMA_WRITE_WITH_IMM },
	  false, 0x00, 0x09ABCDEF, 7, 0, 0, 0x2345 },
	{ "read", { .qpn = 0x13, .wr_index = 1, .byte_len = 4096, .opcode = IBV_WC_RDMA_READ, .wr_opcode = IBV_WR_RDMA_READ },
	  false, 0x00, 0x10000013, 4096, 0, 0, 1 },
	{ "recv solicited", { .qpn = 0x14, .wr_index = 2, .byte_len = 64, .opcode = IBV_WC_RECV, .src_qp = 0x33,
			      .is_recv = true, .solicited = true },
	  false, 0x22, 0x14, 64, 0, 0x02000033, 2 },
	{ "recv imm", { .qpn = 0x14, .byte_len = 8, .opcode = IBV_WC_RECV, .src_qp = 0x33, .imm_data = 0x78563412,
			.wc_flags = IBV_WC_WITH_IMM, .is_recv = true },
	  false, 0x30, 0x14, 8, 0x78563412, 0x02000033, 0 },
	{ "write imm at responder", { .qpn = 0x14, .byte_len = 4096, .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
				      .src_qp = 0x33, .imm_data = 1, .wc_flags = IBV_WC_WITH_IMM, .is_recv = true },
	  false, 0x10, 0x14, 4096, 1, 0x02000033, 0 },
	{ "UD recv with GRH over IPv6", { .qpn = 0x15, .byte_len = 1064, .opcode = IBV_WC_RECV, .src_qp = 0xFFFFFF,
					  .wc_flags = IBV_WC_GRH, .is_recv = true },
	  true, 0x20, 0x15, 1064, 0, 0x11FFFFFF, 0 },
};

START_TEST(success_cqes)
{
	int i;

	for (i = 0; i < (int)(sizeof(rows) / sizeof(rows[0])); i++) {
		const struct row *r = &rows[i];
		struct mlx5_cqe64 c;
		uint32_t imm;

		memset(&c, 0xAA, sizeof(c));
		cqe_build(&r->in, TS, r->ipv6, &c);
		memcpy(&imm, &c.imm_inval_pkey, 4);
		ck_assert_msg(c.op_own == r->op_own, "%s: op_own 0x%x", r->name, c.op_own);
		ck_assert_msg(be32toh(c.sop_drop_qpn) == r->sop_drop_qpn, "%s: sop_drop_qpn 0x%x", r->name,
			      be32toh(c.sop_drop_qpn));
		ck_assert_msg(be32toh(c.byte_cnt) == r->byte_cnt, "%s: byte_cnt", r->name);
		ck_assert_msg(imm == r->imm, "%s: imm 0x%x", r->name, imm);
		ck_assert_msg(be32toh(c.flags_rqpn) == r->flags_rqpn, "%s: flags_rqpn 0x%x", r->name,
			      be32toh(c.flags_rqpn));
		ck_assert_msg(be16toh(c.wqe_counter) == r->wqe_counter, "%s: wqe_counter", r->name);
		ck_assert_msg(be64toh(c.timestamp) == TS, "%s: timestamp", r->name);
		ck_assert_msg(c.srqn_uidx == 0 && c.slid == 0 && c.ml_path == 0 && c.vlan_info == 0 &&
				      c.hds_ip_ext == 0 && c.l4_hdr_type_etc == 0 && c.signature == 0,
			      "%s: reserved fields not zero", r->name);
	}
}
END_TEST

START_TEST(error_cqes)
{
	struct xport_cqe in = { .qpn = 0x44, .wr_index = 0x10007, .status = IBV_WC_RETRY_EXC_ERR,
				.wr_opcode = IBV_WR_SEND, .opcode = IBV_WC_SEND };
	struct mlx5_cqe64 c;
	struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)&c;
	unsigned char *b = (unsigned char *)&c;

	cqe_build(&in, TS, false, &c);
	ck_assert_uint_eq(c.op_own, MLX5_CQE_REQ_ERR << 4);
	ck_assert_uint_eq(e->syndrome, 0x15);
	ck_assert_uint_eq(e->vendor_err_synd, 0x81);
	ck_assert_uint_eq(be32toh(e->s_wqe_opcode_qpn), 0x0a000044);
	ck_assert_uint_eq(be16toh(e->wqe_counter), 7);
	/* the timestamp's high 48 bits, then the two syndrome bytes */
	ck_assert_uint_eq(b[48], 0x01);
	ck_assert_uint_eq(b[53], 0xab);
	ck_assert_uint_eq(be64toh(c.timestamp) & ~0xFFFFull, TS & ~0xFFFFull);

	in.is_recv = true;
	in.status = IBV_WC_LOC_LEN_ERR;
	cqe_build(&in, TS, false, &c);
	ck_assert_uint_eq(c.op_own, MLX5_CQE_RESP_ERR << 4);
	ck_assert_uint_eq(e->syndrome, 0x01);
	ck_assert_uint_eq(be32toh(e->s_wqe_opcode_qpn), 0x44);

	in.status = IBV_WC_WR_FLUSH_ERR;
	cqe_build(&in, TS, false, &c);
	ck_assert_uint_eq(e->syndrome, 0x05);
	ck_assert_uint_eq(e->vendor_err_synd, 0xf9);
}
END_TEST

/* mlx5's syndrome -> status table (docs/cqe-format.md §2), written out here:
 * cqe_syndrome must be its inverse. */
START_TEST(syndrome_table_inverse)
{
	static const struct {
		uint8_t syndrome;
		enum ibv_wc_status status;
	} mlx5[] = {
		{ 0x01, IBV_WC_LOC_LEN_ERR }, { 0x02, IBV_WC_LOC_QP_OP_ERR }, { 0x04, IBV_WC_LOC_PROT_ERR },
		{ 0x05, IBV_WC_WR_FLUSH_ERR }, { 0x06, IBV_WC_MW_BIND_ERR }, { 0x10, IBV_WC_BAD_RESP_ERR },
		{ 0x11, IBV_WC_LOC_ACCESS_ERR }, { 0x12, IBV_WC_REM_INV_REQ_ERR }, { 0x13, IBV_WC_REM_ACCESS_ERR },
		{ 0x14, IBV_WC_REM_OP_ERR }, { 0x15, IBV_WC_RETRY_EXC_ERR }, { 0x16, IBV_WC_RNR_RETRY_EXC_ERR },
		{ 0x22, IBV_WC_REM_ABORT_ERR },
	};
	int i, j;

	for (i = 0; i < (int)(sizeof(mlx5) / sizeof(mlx5[0])); i++) {
		ck_assert_uint_eq(cqe_syndrome(mlx5[i].status), mlx5[i].syndrome);
		for (j = 0; j < i; j++)
			ck_assert_uint_ne(cqe_vendor_err(mlx5[i].status), cqe_vendor_err(mlx5[j].status));
	}
	ck_assert_uint_eq(cqe_syndrome(IBV_WC_GENERAL_ERR), 0xff);
	ck_assert_uint_eq(cqe_wqe_opcode(IBV_WR_SEND_WITH_IMM), 0x0b);
	ck_assert_uint_eq(cqe_wqe_opcode(IBV_WR_BIND_MW), MLX5_OPCODE_UMR);
	ck_assert_uint_eq(cqe_wqe_opcode(IBV_WR_LOCAL_INV), MLX5_OPCODE_LOCAL_INVAL);
	ck_assert_uint_eq(cqe_wqe_opcode(IBV_WR_TSO), MLX5_OPCODE_TSO);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cqe_writer");
	TCase *tc = tcase_create("cqe");

	tcase_add_test(tc, success_cqes);
	tcase_add_test(tc, error_cqes);
	tcase_add_test(tc, syndrome_table_inverse);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
