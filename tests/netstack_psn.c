/*
 * netstack_psn.c - 24-bit PSN arithmetic, the UDP source-port conventions
 * (docs/wire-format.md §1.7 examples), and the opcode table's layout facts.
 * Table-driven, exact values.
 */
#include "check_main.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/packet.h"
#include "netstack/psn.h"
#include "netstack/udp_sport.h"

START_TEST(test_psn_add_sub)
{
	static const struct { uint32_t a, b, add, sub; } t[] = {
		{ 0, 0, 0, 0 },
		{ 0xFFFFFF, 1, 0, 0xFFFFFE },
		{ 0xFFFFFE, 5, 3, 0xFFFFF9 },
		{ 5, 0x1000000, 5, 5 }, /* adding 2^24 is a full turn */
		{ 0, 0xFFFFFF, 0xFFFFFF, 1 },
		{ 3, 0xFFFFFE, 1, 5 },
		{ 0x800000, 0x800000, 0, 0 },
		{ 0x123456, 0x000100, 0x123556, 0x123356 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ck_assert_msg(roce_psn_add(t[i].a, t[i].b) == t[i].add, "row %zu add", i);
		ck_assert_msg(roce_psn_sub(t[i].a, t[i].b) == t[i].sub, "row %zu sub", i);
	}
}
END_TEST

START_TEST(test_psn_compare)
{
	static const struct { uint32_t a, b; int32_t cmp; } t[] = {
		{ 5, 5, 0 },
		{ 1, 0, 256 },
		{ 0, 1, -256 },
		{ 0, 0xFFFFFF, 256 }, /* 0 comes right after 0xFFFFFF */
		{ 0xFFFFFF, 0, -256 },
		{ 0x7FFFFF, 0, 0x7FFFFF00 }, /* 2^23 - 1 ahead: still after */
		{ 0x800000, 0, INT32_MIN }, /* exactly half the circle: before */
		{ 0x800001, 0, (int32_t)0x80000100 },
		{ 0x000010, 0xFFFFF0, 0x20 << 8 },
		{ 0xFFFFF0, 0x000010, -(0x20 << 8) },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int32_t c = roce_psn_cmp(t[i].a, t[i].b);

		ck_assert_msg(c == t[i].cmp, "row %zu: cmp(%#x, %#x) = %d, expected %d", i, t[i].a, t[i].b,
			      c, t[i].cmp);
		ck_assert_int_eq(roce_psn_before(t[i].a, t[i].b), t[i].cmp < 0);
		ck_assert_int_eq(roce_psn_after(t[i].a, t[i].b), t[i].cmp > 0);
	}
}
END_TEST

START_TEST(test_psn_in_range)
{
	static const struct { uint32_t psn, first, count; int in; } t[] = {
		{ 0xFFFFFE, 0xFFFFFE, 3, 1 }, { 0xFFFFFF, 0xFFFFFE, 3, 1 }, { 0, 0xFFFFFE, 3, 1 },
		{ 1, 0xFFFFFE, 3, 0 },	      { 0xFFFFFD, 0xFFFFFE, 3, 0 }, { 7, 7, 0, 0 },
		{ 7, 7, 1, 1 },		      { 0x123, 0, 0x1000000, 1 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_msg(roce_psn_in_range(t[i].psn, t[i].first, t[i].count) == t[i].in, "row %zu", i);
}
END_TEST

START_TEST(test_udp_sport)
{
	/* docs/wire-format.md §1.7 examples */
	ck_assert_uint_eq(roce_calc_flow_label(0x11, 0x22), 0x242);
	ck_assert_uint_eq(roce_get_udp_sport(0, 0x11, 0x22), 0xC242);
	ck_assert_uint_eq(roce_calc_flow_label(0x1234, 0x5678), 0x60002);
	ck_assert_uint_eq(roce_get_udp_sport(0, 0x1234, 0x5678), 0xC01A);
	ck_assert_uint_eq(roce_qpn_udp_sport(17), 0xDF94);
	/* kernel rxe 6.1 between QPNs 0x11 and 0x11 (tests/data/icrc-rxe.tsv) */
	ck_assert_uint_eq(roce_get_udp_sport(0, 0x11, 0x11), 0xC121);
	/* both ends choose the same port */
	ck_assert_uint_eq(roce_get_udp_sport(0, 0x22, 0x11), 0xC242);
	ck_assert_uint_eq(roce_calc_flow_label(0x5678, 0x1234), 0x60002);
	/* a configured flow label wins over the QPNs */
	ck_assert_uint_eq(roce_get_udp_sport(0xabcde, 0x11, 0x22), 0xFCF4);
	ck_assert_uint_eq(roce_flow_label_to_udp_sport(0xabcde), 0xFCF4);
	ck_assert_uint_eq(roce_flow_label_to_udp_sport(0xFFFFF), 0xFFC0);
	ck_assert_uint_eq(roce_flow_label_to_udp_sport(0), 0xC000);
	ck_assert_uint_eq(roce_calc_flow_label(0xFFFFFF, 0xFFFFFF), 0xFFF1E);
	ck_assert_uint_eq(roce_get_udp_sport(0, 0xFFFFFF, 0xFFFFFF), 0xFF21);
	ck_assert_uint_eq(roce_qpn_udp_sport(0xFFFFFF), 0xF94D);
	/* every port lands in 0xC000..0xFFFF */
	for (uint32_t fl = 0; fl < 0x100000; fl += 0x1111)
		ck_assert_uint_ge(roce_flow_label_to_udp_sport(fl), 0xC000);
}
END_TEST

/* Header offsets and lengths of representative opcodes (IBA §9.3 layouts). */
START_TEST(test_opcode_layout)
{
	static const struct {
		uint8_t opcode;
		const char *name;
		uint8_t hdr_len;
		enum roce_hdr hdr;
		uint8_t offset;
	} t[] = {
		{ ROCE_OP_RC_SEND_ONLY, "RC_SEND_ONLY", 12, ROCE_HDR__COUNT, 0 },
		{ ROCE_OP_RC_WRITE_FIRST, "RC_RDMA_WRITE_FIRST", 28, ROCE_HDR_RETH, 12 },
		{ ROCE_OP_RC_WRITE_ONLY_IMM, "RC_RDMA_WRITE_ONLY_IMM", 32, ROCE_HDR_IMMDT, 28 },
		{ ROCE_OP_UC_WRITE_ONLY_IMM, "UC_RDMA_WRITE_ONLY_IMM", 32, ROCE_HDR_RETH, 12 },
		{ ROCE_OP_RC_READ_REQUEST, "RC_RDMA_READ_REQUEST", 28, ROCE_HDR_RETH, 12 },
		{ ROCE_OP_RC_READ_RESP_MIDDLE, "RC_RDMA_READ_RESPONSE_MIDDLE", 12, ROCE_HDR__COUNT, 0 },
		{ ROCE_OP_RC_READ_RESP_ONLY, "RC_RDMA_READ_RESPONSE_ONLY", 16, ROCE_HDR_AETH, 12 },
		{ ROCE_OP_RC_ACK, "RC_ACKNOWLEDGE", 16, ROCE_HDR_AETH, 12 },
		{ ROCE_OP_RC_ATOMIC_ACK, "RC_ATOMIC_ACKNOWLEDGE", 24, ROCE_HDR_ATOMICACKETH, 16 },
		{ ROCE_OP_RC_CMP_SWAP, "RC_COMPARE_SWAP", 40, ROCE_HDR_ATOMICETH, 12 },
		{ ROCE_OP_RC_FETCH_ADD, "RC_FETCH_ADD", 40, ROCE_HDR_ATOMICETH, 12 },
		{ ROCE_OP_RC_SEND_LAST_INV, "RC_SEND_LAST_INVALIDATE", 16, ROCE_HDR_IETH, 12 },
		{ ROCE_OP_RC_SEND_LAST_IMM, "RC_SEND_LAST_IMM", 16, ROCE_HDR_IMMDT, 12 },
		{ ROCE_OP_RC_FLUSH, "RC_FLUSH", 32, ROCE_HDR_RETH, 16 },
		{ ROCE_OP_RC_ATOMIC_WRITE, "RC_ATOMIC_WRITE", 28, ROCE_HDR_RETH, 12 },
		{ ROCE_OP_UD_SEND_ONLY, "UD_SEND_ONLY", 20, ROCE_HDR_DETH, 12 },
		{ ROCE_OP_UD_SEND_ONLY_IMM, "UD_SEND_ONLY_IMM", 24, ROCE_HDR_IMMDT, 20 },
		{ ROCE_OP_CNP, "CNP", 12, ROCE_HDR__COUNT, 0 },
		{ 0xA4, "XRC_SEND_ONLY", 16, ROCE_HDR_XRCETH, 12 },
		{ 0xAB, "XRC_RDMA_WRITE_ONLY_IMM", 36, ROCE_HDR_IMMDT, 32 },
		{ 0xAD, "XRC_RDMA_READ_RESPONSE_FIRST", 16, ROCE_HDR_AETH, 12 },
		{ 0x4A, "RD_RDMA_WRITE_ONLY", 40, ROCE_HDR_RETH, 24 },
		{ 0x51, "RD_ACKNOWLEDGE", 20, ROCE_HDR_AETH, 16 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct roce_opcode_info *op = roce_opcode_info(t[i].opcode);

		ck_assert_msg(op != NULL, "row %zu", i);
		ck_assert_str_eq(op->name, t[i].name);
		ck_assert_str_eq(roce_opcode_name(t[i].opcode), t[i].name);
		ck_assert_uint_eq(op->opcode, t[i].opcode);
		ck_assert_msg(op->hdr_len == t[i].hdr_len, "%s: hdr_len %u", op->name, op->hdr_len);
		if (t[i].hdr != ROCE_HDR__COUNT) {
			ck_assert(op->hdrs & ROCE_HDR_BIT(t[i].hdr));
			ck_assert_msg(op->offset[t[i].hdr] == t[i].offset, "%s: offset %u", op->name,
				      op->offset[t[i].hdr]);
		}
	}
}
END_TEST

/* Table-wide invariants. */
START_TEST(test_opcode_table_invariants)
{
	unsigned n = roce_opcode_count(), rc = 0, uc = 0, ud = 0, cnp = 0, rd = 0, xrc = 0;

	ck_assert_uint_eq(n, 40 + 22 + 23);
	ck_assert_ptr_null(roce_opcode_at(n));
	for (unsigned i = 0; i < n; i++) {
		const struct roce_opcode_info *op = roce_opcode_at(i);
		unsigned pos = op->flags & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE | ROCE_OPF_LAST);

		ck_assert_ptr_eq(roce_opcode_info(op->opcode), op);
		ck_assert_uint_eq(op->transport, op->opcode & 0xE0);
		/* exactly one of FIRST, MIDDLE, LAST, ONLY */
		ck_assert(pos == ROCE_OPF_FIRST || pos == ROCE_OPF_MIDDLE || pos == ROCE_OPF_LAST ||
			  pos == (ROCE_OPF_FIRST | ROCE_OPF_LAST));
		/* requests vs responses: at most one (CNP is neither) */
		ck_assert(!((op->flags & ROCE_OPF_REQUEST) && (op->flags & ROCE_OPF_RESPONSE)));
		/* headers end where the payload starts, and never overlap */
		unsigned end = ROCE_BTH_LEN;
		for (unsigned h = 0; h < ROCE_HDR__COUNT; h++)
			if (op->hdrs & ROCE_HDR_BIT(h)) {
				ck_assert_uint_eq(op->offset[h], end);
				static const uint8_t sz[] = { 4, 8, 4, 4, 16, 28, 4, 8, 4, 4 };
				end += sz[h];
			}
		ck_assert_uint_eq(op->hdr_len, end);
		/* ImmDt / IETH only on LAST or ONLY; RETH never on MIDDLE/LAST */
		if (op->hdrs & (ROCE_HDR_BIT(ROCE_HDR_IMMDT) | ROCE_HDR_BIT(ROCE_HDR_IETH)))
			ck_assert(op->flags & ROCE_OPF_LAST);
		if ((op->hdrs & ROCE_HDR_BIT(ROCE_HDR_RETH)))
			ck_assert(op->flags & ROCE_OPF_FIRST);
		ck_assert_int_eq(!!(op->flags & ROCE_OPF_IMM), !!(op->hdrs & ROCE_HDR_BIT(ROCE_HDR_IMMDT)));
		ck_assert_int_eq(!!(op->flags & ROCE_OPF_INV), !!(op->hdrs & ROCE_HDR_BIT(ROCE_HDR_IETH)));
		switch (op->transport) {
		case ROCE_TRANSPORT_RC: rc++; break;
		case ROCE_TRANSPORT_UC: uc++; break;
		case ROCE_TRANSPORT_UD: ud++; break;
		case ROCE_TRANSPORT_CNP: cnp++; break;
		case ROCE_TRANSPORT_RD: rd++; ck_assert(op->flags & ROCE_OPF_UNSUPPORTED); break;
		case ROCE_TRANSPORT_XRC: xrc++; ck_assert(!(op->flags & ROCE_OPF_UNSUPPORTED)); break;
		default: ck_abort_msg("%s: bad transport", op->name);
		}
	}
	ck_assert_uint_eq(rc, 25);
	ck_assert_uint_eq(uc, 12);
	ck_assert_uint_eq(ud, 2);
	ck_assert_uint_eq(cnp, 1);
	ck_assert_uint_eq(rd, 22);
	ck_assert_uint_eq(xrc, 23);
	/* receive WQE consumers: SEND* and WRITE*_IMM */
	ck_assert(roce_opcode_info(ROCE_OP_RC_WRITE_LAST_IMM)->flags & ROCE_OPF_RWQE);
	ck_assert(!(roce_opcode_info(ROCE_OP_RC_WRITE_LAST)->flags & ROCE_OPF_RWQE));
	ck_assert(roce_opcode_info(ROCE_OP_UD_SEND_ONLY)->flags & ROCE_OPF_RWQE);
	ck_assert(!(roce_opcode_info(ROCE_OP_RC_READ_REQUEST)->flags & ROCE_OPF_RWQE));
	/* reserved and vendor opcodes */
	ck_assert_ptr_null(roce_opcode_info(0x15));
	ck_assert_ptr_null(roce_opcode_info(0x1E));
	ck_assert_ptr_null(roce_opcode_info(0x2C));
	ck_assert_ptr_null(roce_opcode_info(0x63));
	ck_assert_ptr_null(roce_opcode_info(0x80));
	ck_assert_ptr_null(roce_opcode_info(0xB5));
	ck_assert_ptr_null(roce_opcode_info(0xFF));
	ck_assert_str_eq(roce_opcode_name(0xFF), "UNKNOWN");
	ck_assert_str_eq(roce_transport_name(0x81), "CNP");
	ck_assert_str_eq(roce_transport_name(0x64), "UD");
	ck_assert_str_eq(roce_transport_name(0xE5), "VENDOR");
	ck_assert_str_eq(roce_transport_name(0xC0), "RSVD");
	/* packet lengths */
	ck_assert_uint_eq(roce_packet_len(ROCE_OP_RC_SEND_ONLY, 5), 12 + 5 + 3 + 4);
	ck_assert_uint_eq(roce_packet_len(ROCE_OP_RC_ACK, 0), 20);
	ck_assert_uint_eq(roce_packet_len(0xFF, 0), 0);
	/* CNP: the builder writes the 16 reserved bytes for LEN 0 too */
	ck_assert_uint_eq(roce_packet_len(ROCE_OP_CNP, 0), 12 + 16 + 4);
	ck_assert_uint_eq(roce_packet_len(ROCE_OP_CNP, 16), 12 + 16 + 4);
}
END_TEST

/* A buffer sized by roce_packet_len is what roce_build_bth needs, exactly:
 * every opcode it builds, payload lengths 0 (CNP's short form) and its own. */
START_TEST(test_packet_len_sizes_builder)
{
	static uint8_t buf[4200], payload[4096];

	for (unsigned i = 0; i < roce_opcode_count(); i++) {
		const struct roce_opcode_info *op = roce_opcode_at(i);
		struct roce_hdrs h = { .opcode = op->opcode, .pkey = 0xffff };
		uint32_t len = op->flags & ROCE_OPF_CNP ? 0
			       : op->fixed_payload >= 0 ? (uint32_t)op->fixed_payload
			       : op->flags & ROCE_OPF_PAYLOAD ? 256 : 0;
		size_t want = roce_packet_len(op->opcode, len), n = 0;

		if (op->flags & ROCE_OPF_UNSUPPORTED)
			continue;
		ck_assert_msg(roce_build_bth(buf, want, &h, payload, len, &n) == ROCE_OK, "%s", op->name);
		ck_assert_uint_eq(n, want);
		ck_assert_int_eq(roce_build_bth(buf, want - 1, &h, payload, len, &n), ROCE_E_NOSPC);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netstack_psn");
	TCase *tc = tcase_create("psn_sport_opcode");

	tcase_add_test(tc, test_psn_add_sub);
	tcase_add_test(tc, test_psn_compare);
	tcase_add_test(tc, test_psn_in_range);
	tcase_add_test(tc, test_udp_sport);
	tcase_add_test(tc, test_opcode_layout);
	tcase_add_test(tc, test_opcode_table_invariants);
	tcase_add_test(tc, test_packet_len_sizes_builder);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
