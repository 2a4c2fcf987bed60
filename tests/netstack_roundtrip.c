/*
 * netstack_roundtrip.c - build -> parse -> equal for every opcode of the
 * table, over IPv4, IPv6 (full IP packets and UDP payloads) and RoCEv1 GRH,
 * with every header field set to a distinct value; plus the IP/UDP header
 * bytes the builders write (checksums, DF, ID 0) and roce_wrap_ip.
 */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/icrc.h"
#include "netstack/packet.h"

static const uint8_t V4_SRC = 1, V4_DST = 2;

static void l3_v4(struct roce_l3 *l3)
{
	memset(l3, 0, sizeof(*l3));
	l3->kind = ROCE_L3_IPV4;
	roce_addr_from_ipv4(l3->src, 0xC0A80000u | V4_SRC);
	roce_addr_from_ipv4(l3->dst, 0xC0A80000u | V4_DST);
	l3->sport = 0xC242;
	l3->dport = ROCE_UDP_PORT;
	l3->tclass = 0x02;
	l3->hop_limit = 64;
}

static void l3_v6(struct roce_l3 *l3)
{
	memset(l3, 0, sizeof(*l3));
	l3->kind = ROCE_L3_IPV6;
	l3->src[0] = 0xfe, l3->src[1] = 0x80, l3->src[15] = 1;
	l3->dst[0] = 0xfe, l3->dst[1] = 0x80, l3->dst[15] = 2;
	l3->sport = 0xC01A;
	l3->dport = ROCE_UDP_PORT;
	l3->tclass = 0x8a;
	l3->hop_limit = 9;
	l3->flow_label = 0xabcde;
}

/* Header values derived from SEED so that every field differs per case. */
static void fill_hdrs(struct roce_hdrs *h, uint8_t opcode, uint32_t seed)
{
	memset(h, 0, sizeof(*h));
	h->opcode = opcode;
	h->se = seed & 1;
	h->mig = seed & 2;
	h->pkey = (uint16_t)(0x8000 | seed);
	h->fecn = seed & 4;
	h->becn = seed & 8;
	h->resv6 = (uint8_t)(seed & 0x3f);
	h->dqpn = (0x123456 + seed) & 0xffffff;
	h->ackreq = seed & 16;
	h->resv7 = (uint8_t)(seed & 0x7f);
	h->psn = (0xfffff0 + seed) & 0xffffff;
	h->reth.va = 0x1122334455667788ull + seed;
	h->reth.rkey = 0xa0b0c0d0u + seed;
	h->reth.dma_len = 0x10000u + seed;
	h->atomic.va = 0x8877665544332210ull + seed * 8;
	h->atomic.rkey = 0x0badf00du + seed;
	h->atomic.swap_add = 0xfedcba9876543210ull ^ seed;
	h->atomic.compare = 0x0123456789abcdefull ^ seed;
	h->aeth.syndrome = (uint8_t)(0x60 | (seed & 3));
	h->aeth.msn = (0xabcdef + seed) & 0xffffff;
	h->atomic_ack_orig = 0xdeadbeefcafef00dull + seed;
	h->imm = 0x11223344u + seed;
	h->ieth_rkey = 0x55667788u + seed;
	h->deth.qkey = ROCE_GSI_QKEY + seed;
	h->deth.sqpn = (0x000abc + seed) & 0xffffff;
	h->feth.sel = seed & 3;
	h->feth.plt = seed & 15;
	h->xrc_srqn = (0x00f00d + seed) & 0xffffff;
}

/* The payload length to test for OP: fixed, a partial LAST, a whole MTU chunk. */
static uint32_t payload_len_for(const struct roce_opcode_info *op, unsigned variant)
{
	if (op->flags & ROCE_OPF_CNP)
		return ROCE_CNP_PAD_LEN;
	if (!(op->flags & ROCE_OPF_PAYLOAD))
		return 0;
	if (op->fixed_payload >= 0)
		return (uint32_t)op->fixed_payload;
	if (!(op->flags & ROCE_OPF_LAST))
		return variant == 0 ? 256 : 4096;
	static const uint32_t lens[] = { 5, 0, 4096, 1, 1023 };
	return lens[variant % 5];
}

#define HAS(op, x) ((op)->hdrs & ROCE_HDR_BIT(ROCE_HDR_##x))

static void expect_hdrs(const struct roce_opcode_info *op, const struct roce_hdrs *want,
			const struct roce_hdrs *got, uint32_t len)
{
	ck_assert_uint_eq(got->opcode, want->opcode);
	ck_assert_int_eq(got->se, want->se);
	ck_assert_int_eq(got->mig, want->mig);
	ck_assert_uint_eq(got->pad, (-len) & 3u);
	ck_assert_uint_eq(got->tver, 0);
	ck_assert_uint_eq(got->pkey, want->pkey);
	ck_assert_int_eq(got->fecn, want->fecn);
	ck_assert_int_eq(got->becn, want->becn);
	ck_assert_uint_eq(got->resv6, want->resv6);
	ck_assert_uint_eq(got->dqpn, want->dqpn);
	ck_assert_int_eq(got->ackreq, want->ackreq);
	ck_assert_uint_eq(got->resv7, want->resv7);
	ck_assert_uint_eq(got->psn, want->psn);
	if (HAS(op, RETH)) {
		ck_assert_uint_eq(got->reth.va, want->reth.va);
		ck_assert_uint_eq(got->reth.rkey, want->reth.rkey);
		ck_assert_uint_eq(got->reth.dma_len, want->reth.dma_len);
	} else {
		ck_assert_uint_eq(got->reth.va, 0);
	}
	if (HAS(op, ATOMICETH)) {
		ck_assert_uint_eq(got->atomic.va, want->atomic.va);
		ck_assert_uint_eq(got->atomic.rkey, want->atomic.rkey);
		ck_assert_uint_eq(got->atomic.swap_add, want->atomic.swap_add);
		ck_assert_uint_eq(got->atomic.compare, want->atomic.compare);
	} else {
		ck_assert_uint_eq(got->atomic.swap_add, 0);
	}
	if (HAS(op, AETH)) {
		ck_assert_uint_eq(got->aeth.syndrome, want->aeth.syndrome);
		ck_assert_uint_eq(got->aeth.msn, want->aeth.msn);
	} else {
		ck_assert_uint_eq(got->aeth.msn, 0);
	}
	ck_assert_uint_eq(got->atomic_ack_orig, HAS(op, ATOMICACKETH) ? want->atomic_ack_orig : 0);
	ck_assert_uint_eq(got->imm, HAS(op, IMMDT) ? want->imm : 0);
	ck_assert_uint_eq(got->ieth_rkey, HAS(op, IETH) ? want->ieth_rkey : 0);
	ck_assert_uint_eq(got->deth.qkey, HAS(op, DETH) ? want->deth.qkey : 0);
	ck_assert_uint_eq(got->deth.sqpn, HAS(op, DETH) ? want->deth.sqpn : 0);
	ck_assert_uint_eq(got->feth.sel, HAS(op, FETH) ? want->feth.sel : 0);
	ck_assert_uint_eq(got->feth.plt, HAS(op, FETH) ? want->feth.plt : 0);
	ck_assert_uint_eq(got->xrc_srqn, HAS(op, XRCETH) ? want->xrc_srqn : 0);
}

static void make_payload(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

/* Checks of one parse result against what was built. */
static void expect_pkt(const struct roce_opcode_info *op, const struct roce_hdrs *h,
		       const uint8_t *payload, uint32_t len, const struct roce_pkt *p)
{
	ck_assert_ptr_eq(p->op, op);
	expect_hdrs(op, h, &p->h, len);
	ck_assert_uint_eq(p->payload_len, len);
	if (len)
		ck_assert_mem_eq(p->payload, payload, len);
	ck_assert_uint_eq(p->roce_len, roce_packet_len(op->opcode, len));
	ck_assert(p->icrc_ok);
	ck_assert_uint_eq(p->icrc_calc, p->icrc_wire);
}

static unsigned cases;

static void roundtrip_one(const struct roce_opcode_info *op, uint32_t seed, unsigned variant,
			  int kind)
{
	static uint8_t buf[8192], udp[8192], wrapped[8192], payload[4096];
	struct roce_l3 l3;
	struct roce_hdrs h;
	struct roce_pkt p;
	uint32_t len = payload_len_for(op, variant);
	size_t n, un, wn;
	int err;

	if (kind == ROCE_L3_IPV4)
		l3_v4(&l3);
	else
		l3_v6(&l3);
	fill_hdrs(&h, op->opcode, seed);
	make_payload(payload, len, seed);
	if (op->flags & ROCE_OPF_CNP)
		memset(payload, 0, len);

	/* full IP packet -> roce_parse_ip */
	err = roce_build_ip(buf, sizeof(buf), &l3, &h, payload, len, &n);
	ck_assert_msg(err == ROCE_OK, "%s len %u: build %s", op->name, len, roce_err_name(err));
	ck_assert_uint_eq(n, roce_ip_udp_hlen(l3.kind) + roce_packet_len(op->opcode, len));
	err = roce_parse_ip(buf, n, ROCE_UDP_PORT, &p);
	ck_assert_msg(err == ROCE_OK, "%s len %u v%d: parse %s", op->name, len, kind, roce_err_name(err));
	expect_pkt(op, &h, payload, len, &p);
	ck_assert_uint_eq(p.l3.kind, l3.kind);
	ck_assert_mem_eq(p.l3.src, l3.src, 16);
	ck_assert_mem_eq(p.l3.dst, l3.dst, 16);
	ck_assert_uint_eq(p.l3.sport, l3.sport);
	ck_assert_uint_eq(p.l3.dport, l3.dport);
	ck_assert_uint_eq(p.l3.tclass, l3.tclass);
	ck_assert_uint_eq(p.l3.hop_limit, l3.hop_limit);
	ck_assert_uint_eq(p.l3.flow_label, l3.flow_label);
	ck_assert_uint_eq(p.ip_len, n);

	/* UDP payload -> roce_parse_udp: same bytes as inside the IP packet */
	err = roce_build_udp(udp, sizeof(udp), &l3, &h, payload, len, &un);
	ck_assert_int_eq(err, ROCE_OK);
	ck_assert_uint_eq(un, n - roce_ip_udp_hlen(l3.kind));
	ck_assert_mem_eq(udp, buf + roce_ip_udp_hlen(l3.kind), un);
	err = roce_parse_udp(udp, un, &l3, &p);
	ck_assert_msg(err == ROCE_OK, "%s: parse_udp %s", op->name, roce_err_name(err));
	expect_pkt(op, &h, payload, len, &p);

	/* roce_wrap_ip of that UDP payload gives the same IP packet */
	err = roce_wrap_ip(wrapped, sizeof(wrapped), &l3, udp, un, &wn);
	ck_assert_int_eq(err, ROCE_OK);
	ck_assert_uint_eq(wn, n);
	ck_assert_mem_eq(wrapped, buf, n);
	cases++;
}

/* RoCEv1: GRH + BTH.. with the ICRC computed by roce_icrc_grh. */
static void roundtrip_grh(const struct roce_opcode_info *op, uint32_t seed)
{
	static uint8_t buf[8192], payload[4096];
	struct roce_hdrs h;
	struct roce_pkt p;
	uint32_t len = payload_len_for(op, 0), crc;
	size_t n;

	fill_hdrs(&h, op->opcode, seed);
	make_payload(payload, len, seed);
	if (op->flags & ROCE_OPF_CNP)
		memset(payload, 0, len);
	ck_assert_int_eq(roce_build_bth(buf + ROCE_GRH_LEN, sizeof(buf) - ROCE_GRH_LEN, &h, payload, len, &n),
			 ROCE_OK);
	memset(buf, 0, ROCE_GRH_LEN);
	buf[0] = 0x60;
	buf[4] = (uint8_t)(n >> 8);
	buf[5] = (uint8_t)n;
	buf[6] = ROCE_GRH_NXTHDR_BTH;
	buf[7] = 1;
	buf[8] = 0xfe, buf[9] = 0x80, buf[23] = 1;
	buf[24] = 0xfe, buf[25] = 0x80, buf[39] = 2;
	ck_assert_int_eq(roce_icrc_grh(buf, ROCE_GRH_LEN + n, &crc), ROCE_OK);
	roce_icrc_put(buf + ROCE_GRH_LEN + n - 4, crc);
	ck_assert_int_eq(roce_parse_grh(buf, ROCE_GRH_LEN + n, &p), ROCE_OK);
	ck_assert_uint_eq(p.l3.kind, ROCE_L3_GRH);
	ck_assert_uint_eq(p.l3.dst[39 - 24], 2);
	expect_pkt(op, &h, payload, len, &p);
	cases++;
}

START_TEST(test_roundtrip_every_opcode)
{
	unsigned supported = 0;

	cases = 0;
	for (unsigned i = 0; i < roce_opcode_count(); i++) {
		const struct roce_opcode_info *op = roce_opcode_at(i);

		if (op->flags & ROCE_OPF_UNSUPPORTED)
			continue;
		supported++;
		for (unsigned variant = 0; variant < 5; variant++) {
			roundtrip_one(op, i * 5 + variant, variant, ROCE_L3_IPV4);
			roundtrip_one(op, i * 5 + variant + 1000, variant, ROCE_L3_IPV6);
		}
		roundtrip_grh(op, i);
	}
	/* RC 25 (incl. FLUSH, ATOMIC_WRITE), UC 12, UD 2, CNP 1, XRC 23 */
	ck_assert_uint_eq(supported, 63);
	ck_assert_uint_eq(cases, 63 * 11);
}
END_TEST

/* Unsupported and unknown opcodes are refused by the builder. */
START_TEST(test_build_refuses_opcodes)
{
	uint8_t buf[256];
	struct roce_hdrs h;
	size_t n;
	unsigned unsupported = 0;

	for (unsigned op = 0; op < 256; op++) {
		const struct roce_opcode_info *info = roce_opcode_info((uint8_t)op);
		int err;

		fill_hdrs(&h, (uint8_t)op, 1);
		err = roce_build_bth(buf, sizeof(buf), &h, NULL, 0, &n);
		if (!info) {
			ck_assert_int_eq(err, ROCE_E_OPCODE_UNKNOWN);
		} else if (info->flags & ROCE_OPF_UNSUPPORTED) {
			ck_assert_int_eq(err, ROCE_E_OPCODE_UNSUPPORTED);
			unsupported++;
		} else {
			ck_assert_msg(err == ROCE_OK || err == ROCE_E_PAYLOAD_LEN, "%s: %s", info->name,
				      roce_err_name(err));
		}
	}
	/* RD: 12 + 9 + RESYNC = 22 */
	ck_assert_uint_eq(unsupported, 22);
}
END_TEST

/* Builder argument checks. */
START_TEST(test_build_errors)
{
	uint8_t buf[8192], pl[8192] = { 0 };
	struct roce_hdrs h;
	struct roce_l3 l3;
	size_t n;

	fill_hdrs(&h, ROCE_OP_RC_SEND_ONLY, 0);
	ck_assert_int_eq(roce_build_bth(NULL, 100, &h, pl, 4, &n), ROCE_E_INVAL);
	ck_assert_int_eq(roce_build_bth(buf, 100, NULL, pl, 4, &n), ROCE_E_INVAL);
	ck_assert_int_eq(roce_build_bth(buf, 100, &h, NULL, 4, &n), ROCE_E_INVAL);
	ck_assert_int_eq(roce_build_bth(buf, 19, &h, pl, 4, &n), ROCE_E_NOSPC);
	ck_assert_int_eq(roce_build_bth(buf, 20, &h, pl, 4, &n), ROCE_OK);
	ck_assert_uint_eq(n, 20);
	ck_assert_int_eq(roce_build_bth(buf, sizeof(buf), &h, pl, 4097, &n), ROCE_E_PAYLOAD_TOO_BIG);
	h.dqpn = 0x1000000;
	ck_assert_int_eq(roce_build_bth(buf, sizeof(buf), &h, pl, 4, &n), ROCE_E_INVAL);
	fill_hdrs(&h, ROCE_OP_RC_SEND_ONLY, 0);
	h.psn = 0x1000000;
	ck_assert_int_eq(roce_build_bth(buf, sizeof(buf), &h, pl, 4, &n), ROCE_E_INVAL);
	fill_hdrs(&h, ROCE_OP_RC_ACK, 0);
	ck_assert_int_eq(roce_build_bth(buf, sizeof(buf), &h, pl, 4, &n), ROCE_E_PAYLOAD_UNEXPECTED);
	h.aeth.msn = 0x1000000;
	ck_assert_int_eq(roce_build_bth(buf, sizeof(buf), &h, NULL, 0, &n), ROCE_E_INVAL);
	fill_hdrs(&h, ROCE_OP_RC_SEND_FIRST, 0);
	ck_assert_int_eq(roce_build_bth(buf, sizeof(buf), &h, pl, 255, &n), ROCE_E_PAD_UNEXPECTED);
	fill_hdrs(&h, ROCE_OP_RC_ATOMIC_WRITE, 0);
	ck_assert_int_eq(roce_build_bth(buf, sizeof(buf), &h, pl, 4, &n), ROCE_E_PAYLOAD_LEN);
	fill_hdrs(&h, ROCE_OP_UD_SEND_ONLY, 0);
	h.deth.sqpn = 0x1000000;
	ck_assert_int_eq(roce_build_bth(buf, sizeof(buf), &h, pl, 4, &n), ROCE_E_INVAL);
	/* CNP: 0 or 16 reserved bytes */
	fill_hdrs(&h, ROCE_OP_CNP, 0);
	ck_assert_int_eq(roce_build_bth(buf, sizeof(buf), &h, NULL, 0, &n), ROCE_OK);
	ck_assert_uint_eq(n, 32);
	ck_assert_int_eq(roce_build_bth(buf, sizeof(buf), &h, pl, 8, &n), ROCE_E_PAYLOAD_LEN);

	/* l3 checks */
	fill_hdrs(&h, ROCE_OP_RC_SEND_ONLY, 0);
	l3_v4(&l3);
	l3.src[10] = 0; /* not v4-mapped */
	ck_assert_int_eq(roce_build_ip(buf, sizeof(buf), &l3, &h, pl, 4, &n), ROCE_E_INVAL);
	ck_assert_int_eq(roce_build_udp(buf, sizeof(buf), &l3, &h, pl, 4, &n), ROCE_E_INVAL);
	l3.kind = 5;
	ck_assert_int_eq(roce_build_udp(buf, sizeof(buf), &l3, &h, pl, 4, &n), ROCE_E_INVAL);
	l3_v6(&l3);
	l3.flow_label = 0x100000;
	ck_assert_int_eq(roce_build_ip(buf, sizeof(buf), &l3, &h, pl, 4, &n), ROCE_E_INVAL);
	l3_v6(&l3);
	ck_assert_int_eq(roce_build_ip(buf, 47, &l3, &h, pl, 4, &n), ROCE_E_NOSPC);
	ck_assert_int_eq(roce_build_ip(buf, 48 + 19, &l3, &h, pl, 4, &n), ROCE_E_NOSPC);
	ck_assert_int_eq(roce_wrap_ip(buf, sizeof(buf), &l3, pl, 65508, &n), ROCE_E_IP_LEN);
	ck_assert_int_eq(roce_wrap_ip(buf, 100, &l3, pl, 60, &n), ROCE_E_NOSPC);
}
END_TEST

static uint16_t sum16(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Exact header bytes of a built IPv4 packet: the vector G01 with ID 0, TTL 64. */
START_TEST(test_ipv4_header_bytes)
{
	static const uint8_t want_hdr[28] = {
		0x45, 0x02, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
		0x00, 0x01, 0xc0, 0xa8, 0x00, 0x02, 0xc0, 0x00, 0x12, 0xb7, 0x00, 0x20, 0x00, 0x00,
	};
	uint8_t buf[256];
	struct roce_l3 l3;
	struct roce_hdrs h = { .opcode = ROCE_OP_RC_SEND_ONLY, .pkey = 0xffff, .dqpn = 0x11,
			       .ackreq = true, .psn = 0x100 };
	size_t n;
	uint32_t pseudo;

	l3_v4(&l3);
	l3.sport = 0xc000;
	ck_assert_int_eq(roce_build_ip(buf, sizeof(buf), &l3, &h, "hello", 5, &n), ROCE_OK);
	ck_assert_uint_eq(n, 0x34);
	/* all but the two checksums */
	ck_assert_mem_eq(buf, want_hdr, 10);
	ck_assert_mem_eq(buf + 12, want_hdr + 12, 14);
	/* IPv4 header checksum verifies */
	ck_assert_uint_eq(sum16(buf, 20, 0), 0xffff);
	/* UDP checksum verifies over the pseudo-header */
	pseudo = 0xc0a8 + 0x0001 + 0xc0a8 + 0x0002 + 17 + 0x20;
	ck_assert_uint_eq(sum16(buf + 20, 0x20, pseudo), 0xffff);
	/* BTH..payload as in vector G01 */
	static const uint8_t bth[] = { 0x04, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00,
				       0x01, 0x00, 'h', 'e', 'l', 'l', 'o', 0, 0, 0 };
	ck_assert_mem_eq(buf + 28, bth, sizeof(bth));
}
END_TEST

START_TEST(test_ipv6_header_bytes)
{
	uint8_t buf[256];
	struct roce_l3 l3;
	struct roce_hdrs h = { .opcode = ROCE_OP_RC_SEND_ONLY, .pkey = 0xffff, .dqpn = 0x11, .psn = 1 };
	size_t n;
	uint32_t pseudo = 0;

	l3_v6(&l3);
	ck_assert_int_eq(roce_build_ip(buf, sizeof(buf), &l3, &h, "abcd", 4, &n), ROCE_OK);
	ck_assert_uint_eq(n, 40 + 8 + 12 + 4 + 4);
	static const uint8_t first8[8] = { 0x68, 0xaa, 0xbc, 0xde, 0x00, 0x1c, 0x11, 0x09 };
	ck_assert_mem_eq(buf, first8, 8);
	for (int i = 8; i < 40; i += 2)
		pseudo += (uint32_t)(buf[i] << 8 | buf[i + 1]);
	pseudo += 17 + 0x1c;
	ck_assert_uint_eq(sum16(buf + 40, 0x1c, pseudo), 0xffff);
	ck_assert_uint_ne(buf[46] | buf[47], 0); /* never the "no checksum" value */
}
END_TEST

/* A payload already at its place in the packet buffer (the daemon gathers it
 * there) builds the same bytes as one copied in, for 4096-byte payloads,
 * pads, RETH and ImmDt/DETH opcodes, and stays intact. */
START_TEST(test_build_payload_in_place)
{
	static const struct {
		uint8_t opcode;
		uint32_t len;
	} inplace[] = {
		{ ROCE_OP_RC_WRITE_FIRST, 4096 },     { ROCE_OP_RC_WRITE_MIDDLE, 4096 },
		{ ROCE_OP_RC_SEND_LAST_IMM, 4093 },   { ROCE_OP_RC_READ_RESP_MIDDLE, 4096 },
		{ ROCE_OP_UD_SEND_ONLY_IMM, 1021 },   { ROCE_OP_RC_WRITE_ONLY, 7 },
	};
	static uint8_t payload[4096], a[4224], b[4224];
	struct roce_l3 l3;

	for (unsigned i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	l3_v4(&l3);
	for (unsigned c = 0; c < sizeof(inplace) / sizeof(inplace[0]); c++) {
		struct roce_hdrs h = { .opcode = inplace[c].opcode, .pkey = 0xffff, .dqpn = 0x12,
				       .psn = 0x345, .imm = 0xa1b2c3d4, .reth = { .va = 0x1000,
				       .rkey = 0x77, .dma_len = 8192 }, .deth = { .qkey = 0x11,
				       .sqpn = 0x22 }, .aeth = { .msn = 5 } };
		size_t hl = roce_opcode_info(h.opcode)->hdr_len, na, nb;

		memset(a, 0xee, sizeof(a));
		memset(b, 0xee, sizeof(b));
		memcpy(b + hl, payload, inplace[c].len);
		ck_assert_int_eq(roce_build_udp(a, sizeof(a), &l3, &h, payload, inplace[c].len, &na),
				 ROCE_OK);
		ck_assert_int_eq(roce_build_udp(b, sizeof(b), &l3, &h, b + hl, inplace[c].len, &nb),
				 ROCE_OK);
		ck_assert_uint_eq(na, roce_packet_len(h.opcode, inplace[c].len));
		ck_assert_uint_eq(nb, na);
		ck_assert_mem_eq(b + hl, payload, inplace[c].len);
		ck_assert_mem_eq(a, b, na);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netstack_roundtrip");
	TCase *tc = tcase_create("roundtrip");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_roundtrip_every_opcode);
	tcase_add_test(tc, test_build_refuses_opcodes);
	tcase_add_test(tc, test_build_errors);
	tcase_add_test(tc, test_ipv4_header_bytes);
	tcase_add_test(tc, test_ipv6_header_bytes);
	tcase_add_test(tc, test_build_payload_in_place);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
