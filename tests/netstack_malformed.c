/*
 * netstack_malformed.c - table-driven hostile-input test of the three parse
 * entry points.  Each row builds a valid packet, damages it (byte edits,
 * truncation, extra bytes) and names the exact error the parser must
 * return.  A final check makes sure every parse error code is produced by
 * at least one row, so no error is dead and none is shared.
 */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/icrc.h"
#include "netstack/packet.h"

enum entry { IP4, IP6, GRH, UDP4, UDP6 };

/* Edit offsets: plain = from the start of the parsed buffer; BTH(x) = from the BTH. */
#define BTH(x) (1000 + (x))
enum edit_op { NONE = 0, SET, ADD16 };

struct edit {
	int off;
	enum edit_op op;
	int val;
};

struct mcase {
	const char *name;
	enum entry entry;
	uint8_t opcode;
	uint32_t plen; /* payload bytes of the valid packet */
	int len_abs; /* > 0: parse exactly this many bytes */
	int extra; /* zero bytes appended */
	struct edit ed[3];
	int expect;
};

static const struct mcase cases[] = {
	/* IPv4 encapsulation */
	{ "ipv4 empty buffer", IP4, ROCE_OP_RC_SEND_ONLY, 4, .len_abs = 0, .ed = { { 0, NONE, 0 } },
	  .extra = -1, .expect = ROCE_E_IP_TRUNC },
	{ "ipv4 19 bytes", IP4, ROCE_OP_RC_SEND_ONLY, 4, .len_abs = 19, .expect = ROCE_E_IP_TRUNC },
	{ "ip version 5", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 0, SET, 0x55 } }, .expect = ROCE_E_IP_VERSION },
	{ "ip version 0", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 0, SET, 0x05 } }, .expect = ROCE_E_IP_VERSION },
	{ "ipv4 IHL 6 (options)", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 0, SET, 0x46 } }, .expect = ROCE_E_IP_IHL },
	{ "ipv4 IHL 4", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 0, SET, 0x44 } }, .expect = ROCE_E_IP_IHL },
	{ "ipv4 total length beyond buffer", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 2, ADD16, 1 } },
	  .expect = ROCE_E_IP_LEN },
	{ "ipv4 total length 19", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 2, SET, 0 }, { 3, SET, 19 } },
	  .expect = ROCE_E_IP_LEN },
	{ "ipv4 more-fragments", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 6, SET, 0x20 } }, .expect = ROCE_E_IP_FRAG },
	{ "ipv4 fragment offset", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 7, SET, 0x01 } }, .expect = ROCE_E_IP_FRAG },
	{ "ipv4 protocol TCP", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 9, SET, 6 } }, .expect = ROCE_E_IP_PROTO },
	{ "ipv4 no room for UDP", IP4, ROCE_OP_RC_SEND_ONLY, 4, .len_abs = 24, .ed = { { 2, SET, 0 }, { 3, SET, 24 } },
	  .expect = ROCE_E_UDP_TRUNC },
	{ "udp length +1", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 24, ADD16, 1 } }, .expect = ROCE_E_UDP_LEN },
	{ "udp length -1", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 24, ADD16, -1 } }, .expect = ROCE_E_UDP_LEN },
	{ "udp dport 4792", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 23, SET, 0xb8 } }, .expect = ROCE_E_UDP_PORT },
	{ "ipv4 bad ICRC (payload bit)", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { BTH(12), SET, 0xa5 } },
	  .expect = ROCE_E_ICRC },
	{ "ipv4 bad ICRC (ICRC byte)", IP4, ROCE_OP_RC_ACK, 0, .ed = { { BTH(16), ADD16, 1 } }, .expect = ROCE_E_ICRC },
	{ "ipv4 Ethernet padding is ignored", IP4, ROCE_OP_RC_ACK, 0, .extra = 6, .expect = ROCE_OK },
	{ "ipv4 masked TTL change keeps ICRC", IP4, ROCE_OP_RC_ACK, 0, .ed = { { 8, SET, 1 } }, .expect = ROCE_OK },
	{ "ipv4 ID change breaks ICRC", IP4, ROCE_OP_RC_ACK, 0, .ed = { { 5, SET, 1 } }, .expect = ROCE_E_ICRC },
	{ "ipv4 RD opcode", IP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { BTH(0), SET, 0x44 } },
	  .expect = ROCE_E_OPCODE_UNSUPPORTED },
	/* IPv6 encapsulation */
	{ "ipv6 39 bytes", IP6, ROCE_OP_RC_SEND_ONLY, 4, .len_abs = 39, .expect = ROCE_E_IP_TRUNC },
	{ "ipv6 payload length beyond buffer", IP6, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 4, ADD16, 1 } },
	  .expect = ROCE_E_IP_LEN },
	{ "ipv6 hop-by-hop header", IP6, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 6, SET, 0 } }, .expect = ROCE_E_IP_PROTO },
	{ "ipv6 payload length 4", IP6, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 4, SET, 0 }, { 5, SET, 4 } },
	  .expect = ROCE_E_UDP_TRUNC },
	{ "ipv6 udp length short", IP6, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 44, ADD16, -4 } }, .expect = ROCE_E_UDP_LEN },
	{ "ipv6 flow label change keeps ICRC", IP6, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 3, SET, 0x11 } },
	  .expect = ROCE_OK },
	{ "ipv6 source change breaks ICRC", IP6, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { 8, SET, 0x20 } },
	  .expect = ROCE_E_ICRC },
	/* RoCEv1 GRH */
	{ "grh 39 bytes", GRH, ROCE_OP_RC_ACK, 0, .len_abs = 39, .expect = ROCE_E_GRH_TRUNC },
	{ "grh version 4", GRH, ROCE_OP_RC_ACK, 0, .ed = { { 0, SET, 0x40 } }, .expect = ROCE_E_GRH_VERSION },
	{ "grh next header UDP", GRH, ROCE_OP_RC_ACK, 0, .ed = { { 6, SET, 17 } }, .expect = ROCE_E_GRH_NXTHDR },
	{ "grh payload length beyond buffer", GRH, ROCE_OP_RC_ACK, 0, .ed = { { 4, ADD16, 1 } },
	  .expect = ROCE_E_GRH_LEN },
	{ "grh payload length 11", GRH, ROCE_OP_RC_ACK, 0, .ed = { { 4, SET, 0 }, { 5, SET, 11 } },
	  .expect = ROCE_E_TRUNC_BTH },
	{ "grh bad ICRC", GRH, ROCE_OP_RC_ACK, 0, .ed = { { BTH(13), SET, 0x77 } }, .expect = ROCE_E_ICRC },
	/* BTH and opcode (UDP payloads) */
	{ "udp payload 11 bytes", UDP4, ROCE_OP_RC_SEND_ONLY, 4, .len_abs = 11, .expect = ROCE_E_TRUNC_BTH },
	{ "udp payload empty", UDP4, ROCE_OP_RC_SEND_ONLY, 4, .len_abs = 0, .extra = -1, .expect = ROCE_E_TRUNC_BTH },
	{ "TVer 1", UDP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { BTH(1), SET, 0x01 } }, .expect = ROCE_E_TVER },
	{ "TVer 15", UDP6, ROCE_OP_RC_ACK, 0, .ed = { { BTH(1), SET, 0x0f } }, .expect = ROCE_E_TVER },
	{ "RC reserved opcode 0x18", UDP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { BTH(0), SET, 0x18 } },
	  .expect = ROCE_E_OPCODE_UNKNOWN },
	{ "RC reserved opcode 0x15", UDP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { BTH(0), SET, 0x15 } },
	  .expect = ROCE_E_OPCODE_UNKNOWN },
	{ "UC READ REQUEST does not exist", UDP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { BTH(0), SET, 0x2c } },
	  .expect = ROCE_E_OPCODE_UNKNOWN },
	{ "UD SEND FIRST does not exist", UDP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { BTH(0), SET, 0x60 } },
	  .expect = ROCE_E_OPCODE_UNKNOWN },
	{ "CNP prefix, not 0x81", UDP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { BTH(0), SET, 0x80 } },
	  .expect = ROCE_E_OPCODE_UNKNOWN },
	{ "vendor opcode 0xE0", UDP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { BTH(0), SET, 0xe0 } },
	  .expect = ROCE_E_OPCODE_UNKNOWN },
	{ "RD SEND ONLY", UDP4, ROCE_OP_RC_SEND_ONLY, 4, .ed = { { BTH(0), SET, 0x44 } },
	  .expect = ROCE_E_OPCODE_UNSUPPORTED },
	{ "XRC SEND ONLY cut in XRCETH", UDP4, ROCE_OP_RC_SEND_ONLY, 0, .ed = { { BTH(0), SET, 0xa4 } },
	  .len_abs = 12 + 3 + 4, .expect = ROCE_E_TRUNC_XRCETH },
	/* truncated in each extended header (the last 4 bytes are the ICRC) */
	{ "WRITE ONLY cut in RETH", UDP4, ROCE_OP_RC_WRITE_ONLY, 8, .len_abs = 12 + 15 + 4, .expect = ROCE_E_TRUNC_RETH },
	{ "READ REQUEST without ICRC", UDP4, ROCE_OP_RC_READ_REQUEST, 0, .len_abs = 12 + 16,
	  .expect = ROCE_E_TRUNC_RETH },
	{ "ACK cut in AETH", UDP4, ROCE_OP_RC_ACK, 0, .len_abs = 12 + 3 + 4, .expect = ROCE_E_TRUNC_AETH },
	{ "CMP_SWAP cut in AtomicETH", UDP4, ROCE_OP_RC_CMP_SWAP, 0, .len_abs = 12 + 27 + 4,
	  .expect = ROCE_E_TRUNC_ATOMICETH },
	{ "ATOMIC ACK cut in AtomicAckETH", UDP4, ROCE_OP_RC_ATOMIC_ACK, 0, .len_abs = 12 + 4 + 7 + 4,
	  .expect = ROCE_E_TRUNC_ATOMICACKETH },
	{ "ATOMIC ACK cut in AETH", UDP4, ROCE_OP_RC_ATOMIC_ACK, 0, .len_abs = 12 + 2 + 4, .expect = ROCE_E_TRUNC_AETH },
	{ "SEND ONLY IMM cut in ImmDt", UDP4, ROCE_OP_RC_SEND_ONLY_IMM, 0, .len_abs = 12 + 2 + 4,
	  .expect = ROCE_E_TRUNC_IMMDT },
	{ "WRITE ONLY IMM cut in ImmDt", UDP4, ROCE_OP_RC_WRITE_ONLY_IMM, 0, .len_abs = 12 + 16 + 3 + 4,
	  .expect = ROCE_E_TRUNC_IMMDT },
	{ "SEND ONLY INV cut in IETH", UDP4, ROCE_OP_RC_SEND_ONLY_INV, 0, .len_abs = 12 + 1 + 4,
	  .expect = ROCE_E_TRUNC_IETH },
	{ "UD SEND ONLY cut in DETH", UDP4, ROCE_OP_UD_SEND_ONLY, 0, .len_abs = 12 + 7 + 4, .expect = ROCE_E_TRUNC_DETH },
	{ "UD SEND ONLY IMM cut in ImmDt", UDP4, ROCE_OP_UD_SEND_ONLY_IMM, 0, .len_abs = 12 + 8 + 3 + 4,
	  .expect = ROCE_E_TRUNC_IMMDT },
	{ "FLUSH cut in FETH", UDP4, ROCE_OP_RC_FLUSH, 0, .len_abs = 12 + 3 + 4, .expect = ROCE_E_TRUNC_FETH },
	{ "FLUSH cut in RETH", UDP4, ROCE_OP_RC_FLUSH, 0, .len_abs = 12 + 4 + 15 + 4, .expect = ROCE_E_TRUNC_RETH },
	{ "SEND ONLY without ICRC", UDP4, ROCE_OP_RC_SEND_ONLY, 0, .len_abs = 14, .expect = ROCE_E_TRUNC_ICRC },
	{ "CNP with 10 reserved bytes", UDP4, ROCE_OP_CNP, 16, .len_abs = 12 + 10 + 4, .expect = ROCE_E_TRUNC_CNP },
	/* payload and pad */
	{ "CNP with 20 reserved bytes", UDP4, ROCE_OP_CNP, 16, .extra = 4, .expect = ROCE_E_PAYLOAD_UNEXPECTED },
	{ "ACK with payload", UDP4, ROCE_OP_RC_ACK, 0, .extra = 4, .expect = ROCE_E_PAYLOAD_UNEXPECTED },
	{ "READ REQUEST with payload", UDP6, ROCE_OP_RC_READ_REQUEST, 0, .extra = 4, .expect = ROCE_E_PAYLOAD_UNEXPECTED },
	{ "READ REQUEST with 1 odd byte", UDP4, ROCE_OP_RC_READ_REQUEST, 0, .extra = 1, .expect = ROCE_E_PAD_ALIGN },
	{ "SEND ONLY 4100 bytes", UDP4, ROCE_OP_RC_SEND_ONLY, 4096, .extra = 4, .expect = ROCE_E_PAYLOAD_TOO_BIG },
	{ "ATOMIC WRITE with 12 bytes", UDP4, ROCE_OP_RC_ATOMIC_WRITE, 8, .extra = 4, .expect = ROCE_E_PAYLOAD_LEN },
	{ "ATOMIC WRITE with 4 bytes", UDP4, ROCE_OP_RC_ATOMIC_WRITE, 8, .len_abs = 12 + 16 + 4 + 4,
	  .expect = ROCE_E_PAYLOAD_LEN },
	{ "pad on SEND FIRST", UDP4, ROCE_OP_RC_SEND_FIRST, 256, .ed = { { BTH(1), SET, 0x10 } },
	  .expect = ROCE_E_PAD_UNEXPECTED },
	{ "pad on WRITE MIDDLE", UDP4, ROCE_OP_UC_WRITE_MIDDLE, 256, .ed = { { BTH(1), SET, 0x20 } },
	  .expect = ROCE_E_PAD_UNEXPECTED },
	{ "pad on ACK", UDP4, ROCE_OP_RC_ACK, 0, .ed = { { BTH(1), SET, 0x10 } }, .expect = ROCE_E_PAD_UNEXPECTED },
	{ "pad on CNP", UDP4, ROCE_OP_CNP, 16, .ed = { { BTH(1), SET, 0x30 } }, .expect = ROCE_E_PAD_UNEXPECTED },
	{ "pad 3 on empty SEND ONLY", UDP4, ROCE_OP_RC_SEND_ONLY, 0, .ed = { { BTH(1), SET, 0x30 } },
	  .expect = ROCE_E_PAD_TOO_BIG },
	{ "pad 1 on empty SEND ONLY", UDP4, ROCE_OP_RC_SEND_ONLY, 0, .ed = { { BTH(1), SET, 0x10 } },
	  .expect = ROCE_E_PAD_TOO_BIG },
	{ "pad 2 on empty READ RESPONSE LAST", UDP6, ROCE_OP_RC_READ_RESP_LAST, 0, .ed = { { BTH(1), SET, 0x20 } },
	  .expect = ROCE_E_PAD_TOO_BIG },
	{ "SEND ONLY 5 bytes without pad", UDP4, ROCE_OP_RC_SEND_ONLY, 5, .ed = { { BTH(1), SET, 0x00 } },
	  .extra = 0, .len_abs = 12 + 5 + 4, .expect = ROCE_E_PAD_ALIGN },
	{ "SEND MIDDLE 255 bytes", UDP4, ROCE_OP_RC_SEND_MIDDLE, 256, .len_abs = 12 + 255 + 4,
	  .expect = ROCE_E_PAD_ALIGN },
	{ "udp bad ICRC", UDP4, ROCE_OP_UD_SEND_ONLY, 3, .ed = { { BTH(21), SET, 0x01 } }, .expect = ROCE_E_ICRC },
	{ "udp masked FECN keeps ICRC", UDP4, ROCE_OP_UD_SEND_ONLY, 3, .ed = { { BTH(4), SET, 0x80 } },
	  .expect = ROCE_OK },
	{ "udp Resv7 breaks ICRC", UDP6, ROCE_OP_RC_ACK, 0, .ed = { { BTH(8), SET, 0x01 } }, .expect = ROCE_E_ICRC },
};

static void make_l3(struct roce_l3 *l3, int v6)
{
	memset(l3, 0, sizeof(*l3));
	l3->sport = 0xc123;
	l3->dport = ROCE_UDP_PORT;
	if (v6) {
		l3->kind = ROCE_L3_IPV6;
		l3->src[0] = 0xfd, l3->src[15] = 1;
		l3->dst[0] = 0xfd, l3->dst[15] = 2;
	} else {
		l3->kind = ROCE_L3_IPV4;
		roce_addr_from_ipv4(l3->src, 0x0a000001);
		roce_addr_from_ipv4(l3->dst, 0x0a000002);
	}
}

/* Build the valid packet of C into BUF; returns its length and the BTH offset. */
static size_t build_valid(const struct mcase *c, uint8_t *buf, size_t cap, size_t *bth_off,
			  struct roce_l3 *l3)
{
	static uint8_t payload[4096];
	struct roce_hdrs h = { .opcode = c->opcode, .pkey = 0xffff, .dqpn = 0x11, .psn = 0x100,
			       .ackreq = true, .aeth.syndrome = 0x1f, .aeth.msn = 7 };
	size_t n = 0;
	uint32_t crc;
	int err;

	memset(payload, c->opcode == ROCE_OP_CNP ? 0 : 0x5a, sizeof(payload));
	make_l3(l3, c->entry == IP6 || c->entry == UDP6);
	switch (c->entry) {
	case IP4:
	case IP6:
		err = roce_build_ip(buf, cap, l3, &h, payload, c->plen, &n);
		*bth_off = roce_ip_udp_hlen(l3->kind);
		break;
	case UDP4:
	case UDP6:
		err = roce_build_udp(buf, cap, l3, &h, payload, c->plen, &n);
		*bth_off = 0;
		break;
	default: /* GRH */
		err = roce_build_bth(buf + ROCE_GRH_LEN, cap - ROCE_GRH_LEN, &h, payload, c->plen, &n);
		memset(buf, 0, ROCE_GRH_LEN);
		buf[0] = 0x60;
		buf[4] = (uint8_t)(n >> 8);
		buf[5] = (uint8_t)n;
		buf[6] = ROCE_GRH_NXTHDR_BTH;
		buf[7] = 64;
		n += ROCE_GRH_LEN;
		ck_assert_int_eq(roce_icrc_grh(buf, n, &crc), ROCE_OK);
		roce_icrc_put(buf + n - 4, crc);
		*bth_off = ROCE_GRH_LEN;
		break;
	}
	ck_assert_msg(err == ROCE_OK, "%s: building the valid packet: %s", c->name, roce_err_name(err));
	return n;
}

static int run_case(const struct mcase *c)
{
	static uint8_t buf[8192];
	struct roce_l3 l3;
	struct roce_pkt pkt;
	size_t bth_off, n = build_valid(c, buf, sizeof(buf) - 64, &bth_off, &l3);
	uint8_t *copy;
	int err;

	for (int i = 0; i < 3 && c->ed[i].op != NONE; i++) {
		size_t off = c->ed[i].off >= 1000 ? bth_off + (size_t)(c->ed[i].off - 1000) : (size_t)c->ed[i].off;

		ck_assert_uint_lt(off + 1, n);
		if (c->ed[i].op == SET) {
			buf[off] = (uint8_t)c->ed[i].val;
		} else {
			unsigned v = (unsigned)(buf[off] << 8 | buf[off + 1]) + (unsigned)c->ed[i].val;

			buf[off] = (uint8_t)(v >> 8);
			buf[off + 1] = (uint8_t)v;
		}
	}
	if (c->extra > 0) {
		memset(buf + n, 0, (size_t)c->extra);
		n += (size_t)c->extra;
	}
	if (c->len_abs > 0 || c->extra < 0)
		n = (size_t)(c->len_abs > 0 ? c->len_abs : 0);
	/* An exact-size heap copy, so that ASan/valgrind would catch any over-read. */
	copy = malloc(n ? n : 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, buf, n);
	memset(&pkt, 0xee, sizeof(pkt));
	switch (c->entry) {
	case IP4:
	case IP6:
		err = roce_parse_ip(copy, n, ROCE_UDP_PORT, &pkt);
		break;
	case GRH:
		err = roce_parse_grh(copy, n, &pkt);
		break;
	default:
		err = roce_parse_udp(copy, n, &l3, &pkt);
		break;
	}
	free(copy);
	return err;
}

START_TEST(test_malformed_table)
{
	unsigned failures = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = run_case(&cases[i]);

		if (got != cases[i].expect) {
			fprintf(stderr, "case %zu \"%s\": expected %s, got %s\n", i, cases[i].name,
			       roce_err_name(cases[i].expect), roce_err_name(got));
			failures++;
		}
	}
	ck_assert_msg(failures == 0, "%u malformed-input cases failed", failures);
	ck_assert_uint_ge(sizeof(cases) / sizeof(cases[0]), 20);
}
END_TEST

/* Every parse error is produced by some row: none is dead or shared. */
START_TEST(test_every_error_reached)
{
	for (int e = ROCE_E_IP_TRUNC; e < ROCE_E__COUNT; e++) {
		int seen = 0;

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			seen |= cases[i].expect == e;
		ck_assert_msg(seen, "no malformed-input case expects %s", roce_err_name(e));
	}
}
END_TEST

/* Names and messages: all present and distinct; out-of-range handled. */
START_TEST(test_error_names)
{
	for (int a = 0; a < ROCE_E__COUNT; a++) {
		ck_assert_str_ne(roce_err_name(a), "?");
		ck_assert_str_ne(roce_strerror(a), "unknown netstack error");
		for (int b = a + 1; b < ROCE_E__COUNT; b++) {
			ck_assert_str_ne(roce_err_name(a), roce_err_name(b));
			ck_assert_str_ne(roce_strerror(a), roce_strerror(b));
		}
	}
	ck_assert_str_eq(roce_err_name(ROCE_E_TRUNC_RETH), "TRUNC_RETH");
	ck_assert_str_eq(roce_err_name(ROCE_OK), "OK");
	ck_assert_str_eq(roce_err_name(-1), "?");
	ck_assert_str_eq(roce_err_name(ROCE_E__COUNT), "?");
	ck_assert_str_eq(roce_strerror(ROCE_E_ICRC), "ICRC mismatch");
	ck_assert_str_eq(roce_strerror(9999), "unknown netstack error");
}
END_TEST

/* NULL arguments. */
START_TEST(test_null_args)
{
	struct roce_pkt p;
	struct roce_l3 l3;
	uint8_t b[64] = { 0 };

	make_l3(&l3, 0);
	ck_assert_int_eq(roce_parse_ip(NULL, 10, ROCE_UDP_PORT, &p), ROCE_E_INVAL);
	ck_assert_int_eq(roce_parse_ip(b, 10, ROCE_UDP_PORT, NULL), ROCE_E_INVAL);
	ck_assert_int_eq(roce_parse_grh(NULL, 10, &p), ROCE_E_INVAL);
	ck_assert_int_eq(roce_parse_udp(b, 20, NULL, &p), ROCE_E_INVAL);
	ck_assert_int_eq(roce_parse_bth(NULL, 20, &p), ROCE_E_INVAL);
	l3.kind = 0;
	ck_assert_int_eq(roce_parse_udp(b, 20, &l3, &p), ROCE_E_INVAL);
	make_l3(&l3, 0);
	l3.dst[10] = 0; /* IPv4 facts with a non-v4-mapped address */
	ck_assert_int_eq(roce_parse_udp(b, 20, &l3, &p), ROCE_E_INVAL);
}
END_TEST

/* What is valid after a late error: BTH and opcode row; after ICRC: everything. */
START_TEST(test_partial_fill)
{
	const struct mcase pad = { "pad", UDP4, ROCE_OP_RC_SEND_FIRST, 256,
				   .ed = { { BTH(1), SET, 0x10 } }, .expect = ROCE_E_PAD_UNEXPECTED };
	static uint8_t buf[1024];
	struct roce_l3 l3;
	struct roce_pkt p;
	size_t off, n = build_valid(&pad, buf, sizeof(buf), &off, &l3);

	buf[1] = 0x10;
	ck_assert_int_eq(roce_parse_udp(buf, n, &l3, &p), ROCE_E_PAD_UNEXPECTED);
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_RC_SEND_FIRST);
	ck_assert_uint_eq(p.h.psn, 0x100);
	ck_assert_uint_eq(p.h.dqpn, 0x11);
	ck_assert_str_eq(p.op->name, "RC_SEND_FIRST");
	ck_assert_ptr_null(p.payload);
	ck_assert(!p.icrc_ok);
	buf[1] = 0;
	buf[12] ^= 1;
	ck_assert_int_eq(roce_parse_udp(buf, n, &l3, &p), ROCE_E_ICRC);
	ck_assert_uint_eq(p.payload_len, 256);
	ck_assert_ptr_eq(p.payload, buf + 12);
	ck_assert_uint_ne(p.icrc_calc, p.icrc_wire);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netstack_malformed");
	TCase *tc = tcase_create("malformed");

	tcase_add_test(tc, test_malformed_table);
	tcase_add_test(tc, test_every_error_reached);
	tcase_add_test(tc, test_error_names);
	tcase_add_test(tc, test_null_args);
	tcase_add_test(tc, test_partial_fill);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
