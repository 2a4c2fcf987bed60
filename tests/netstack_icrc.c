/*
 * netstack_icrc.c - the ICRC against every frame of tests/data/icrc.tsv
 * (real ConnectX / Mellanox captures and cross-checked generated frames),
 * one-bit flips inside and outside the masked fields, the UDP-payload
 * reconstruction, and the decoded header values of each vector.
 */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/icrc.h"
#include "netstack/packet.h"
#include "netstack_testutil.h"

#define VECTORS "tests/data/icrc.tsv"

static struct icrc_vector *vecs;
static size_t nvecs;

static void load(void)
{
	char p[4096];

	vecs = nt_load_vectors(nt_srcdir_path(p, sizeof(p), VECTORS), &nvecs);
}

static void unload(void)
{
	free(vecs);
	vecs = NULL;
}

/* Network-layer kind of an Ethernet frame and the offset of the BTH in its payload. */
static int frame_kind(const struct icrc_vector *v)
{
	unsigned et = (unsigned)v->frame[12] << 8 | v->frame[13];

	if (et == 0x0800)
		return ROCE_L3_IPV4;
	if (et == 0x86dd)
		return ROCE_L3_IPV6;
	if (et == ROCE_ETHERTYPE_V1)
		return ROCE_L3_GRH;
	return -1;
}

static int icrc_of(int kind, const uint8_t *p, size_t len, uint32_t *crc)
{
	if (kind == ROCE_L3_IPV4)
		return roce_icrc_ipv4(p, len, crc);
	if (kind == ROCE_L3_IPV6)
		return roce_icrc_ipv6(p, len, crc);
	return roce_icrc_grh(p, len, crc);
}

START_TEST(test_vector_count)
{
	/* 3 real captures, the scapy regression frame, 12 generated frames. */
	ck_assert_uint_eq(nvecs, 16);
}
END_TEST

/* Exact listed ICRC for every frame, with the raw per-kind functions. */
START_TEST(test_vector_icrc)
{
	for (size_t i = 0; i < nvecs; i++) {
		const struct icrc_vector *v = &vecs[i];
		int kind = frame_kind(v);
		uint32_t crc;
		uint8_t wire[4];

		ck_assert_msg(kind > 0, "%s: unknown ethertype", v->id);
		ck_assert_int_eq(icrc_of(kind, v->frame + 14, v->frame_len - 14, &crc), ROCE_OK);
		roce_icrc_put(wire, crc);
		ck_assert_msg(memcmp(wire, v->icrc_wire, 4) == 0,
			      "%s: ICRC %02x%02x%02x%02x, expected %02x%02x%02x%02x", v->id, wire[0],
			      wire[1], wire[2], wire[3], v->icrc_wire[0], v->icrc_wire[1],
			      v->icrc_wire[2], v->icrc_wire[3]);
		/* and the frame's own trailer is that ICRC */
		ck_assert_mem_eq(v->frame + v->frame_len - 4, v->icrc_wire, 4);
	}
}
END_TEST

/* The parse entry points accept every vector and report the same ICRC. */
START_TEST(test_vector_parse)
{
	for (size_t i = 0; i < nvecs; i++) {
		const struct icrc_vector *v = &vecs[i];
		int kind = frame_kind(v), err;
		struct roce_pkt pkt;

		if (kind == ROCE_L3_GRH)
			err = roce_parse_grh(v->frame + 14, v->frame_len - 14, &pkt);
		else
			err = roce_parse_ip(v->frame + 14, v->frame_len - 14, ROCE_UDP_PORT, &pkt);
		/* BTH opcode: after IPv4+UDP (28), IPv6+UDP (48) or the GRH (40) */
		size_t bth = kind == ROCE_L3_IPV4 ? 28 : kind == ROCE_L3_IPV6 ? 48 : ROCE_GRH_LEN;

		if (v->frame[14 + bth] >> 5 == ROCE_TRANSPORT_XRC >> 5) {
			/* G10: XRC SEND_ONLY, XRCETH naming SRQ 0x000777 */
			ck_assert_str_eq(pkt.op->name, "XRC_SEND_ONLY");
			ck_assert_uint_eq(pkt.h.xrc_srqn, 0x777);
		}
		ck_assert_msg(err == ROCE_OK, "%s: %s", v->id, roce_err_name(err));
		ck_assert(pkt.icrc_ok);
		ck_assert_uint_eq(pkt.icrc_wire, roce_icrc_get(v->icrc_wire));
		ck_assert_uint_eq(pkt.icrc_calc, pkt.icrc_wire);
		ck_assert_int_eq(pkt.l3.kind, kind);
	}
}
END_TEST

/* Which bytes of the packet (from the IP header / GRH) the ICRC masks. */
static int masked(int kind, size_t off, int bit)
{
	if (kind == ROCE_L3_IPV4)
		return off == 1 || off == 8 || off == 10 || off == 11 || off == 26 || off == 27 ||
		       off == 28 + 4;
	/* IPv6 / GRH: traffic class + flow label (byte 0 low nibble, 1..3), hop limit */
	if (off == 0)
		return bit < 4;
	if (off == 1 || off == 2 || off == 3 || off == 7)
		return 1;
	if (kind == ROCE_L3_IPV6)
		return off == 46 || off == 47 || off == 48 + 4;
	return off == 40 + 4;
}

START_TEST(test_vector_bit_flips)
{
	unsigned changed = 0, unchanged = 0;

	for (size_t i = 0; i < nvecs; i++) {
		const struct icrc_vector *v = &vecs[i];
		int kind = frame_kind(v);
		size_t len = v->frame_len - 14;
		uint8_t p[2048];
		uint32_t base, crc;

		memcpy(p, v->frame + 14, len);
		ck_assert_int_eq(icrc_of(kind, p, len, &base), ROCE_OK);
		for (size_t off = 0; off < len - 4; off++) {
			for (int bit = 0; bit < 8; bit++) {
				p[off] ^= (uint8_t)(1u << bit);
				ck_assert_int_eq(icrc_of(kind, p, len, &crc), ROCE_OK);
				p[off] ^= (uint8_t)(1u << bit);
				if (masked(kind, off, bit)) {
					ck_assert_msg(crc == base, "%s: flip at byte %zu bit %d (masked) changed the ICRC",
						      v->id, off, bit);
					unchanged++;
				} else {
					ck_assert_msg(crc != base, "%s: flip at byte %zu bit %d left the ICRC unchanged",
						      v->id, off, bit);
					changed++;
				}
			}
		}
	}
	/* Masked bits: IPv4 7 bytes (56), IPv6 4+24+8+16+8 = 60, GRH 4+24+8+8 = 44;
	 * 12 IPv4, 2 IPv6 and 2 GRH frames. */
	ck_assert_uint_eq(unchanged, 12 * 56 + 2 * 60 + 2 * 44);
	ck_assert_uint_eq(changed, 6512);
}
END_TEST

/* The ICRC of a UDP payload with a reconstructed header: IPv6 needs nothing
 * else, so it must give the listed value; IPv4 equals the ICRC of the same
 * packet with ID 0 (what Linux sends with DF). */
START_TEST(test_vector_udp_reconstruction)
{
	unsigned v4 = 0, v6 = 0;

	for (size_t i = 0; i < nvecs; i++) {
		const struct icrc_vector *v = &vecs[i];
		int kind = frame_kind(v);
		struct roce_l3 l3 = { 0 };
		const uint8_t *ip = v->frame + 14;
		size_t len = v->frame_len - 14, hl;
		uint32_t crc, ref;
		uint8_t p[2048];

		if (kind == ROCE_L3_GRH)
			continue;
		l3.kind = (uint8_t)kind;
		if (kind == ROCE_L3_IPV4) {
			hl = 28;
			roce_addr_from_ipv4(l3.src, (uint32_t)ip[12] << 24 | ip[13] << 16 | ip[14] << 8 | ip[15]);
			roce_addr_from_ipv4(l3.dst, (uint32_t)ip[16] << 24 | ip[17] << 16 | ip[18] << 8 | ip[19]);
		} else {
			hl = 48;
			memcpy(l3.src, ip + 8, 16);
			memcpy(l3.dst, ip + 24, 16);
		}
		l3.sport = (uint16_t)(ip[hl - 8] << 8 | ip[hl - 7]);
		l3.dport = (uint16_t)(ip[hl - 6] << 8 | ip[hl - 5]);
		ck_assert_int_eq(roce_icrc_udp(ip + hl, len - hl, &l3, &crc), ROCE_OK);
		if (kind == ROCE_L3_IPV6) {
			ck_assert_uint_eq(crc, roce_icrc_get(v->icrc_wire));
			v6++;
		} else {
			ck_assert(ip[6] & 0x40); /* every IPv4 vector has DF */
			memcpy(p, ip, len);
			p[4] = p[5] = 0;
			ck_assert_int_eq(roce_icrc_ipv4(p, len, &ref), ROCE_OK);
			ck_assert_uint_eq(crc, ref);
			/* and the real ID matters: with it the ICRC differs */
			ck_assert_uint_ne(crc, roce_icrc_get(v->icrc_wire));
			v4++;
		}
	}
	ck_assert_uint_eq(v4, 12);
	ck_assert_uint_eq(v6, 2);
}
END_TEST

static const struct icrc_vector *find(const char *id)
{
	for (size_t i = 0; i < nvecs; i++)
		if (strcmp(vecs[i].id, id) == 0)
			return &vecs[i];
	ck_abort_msg("vector %s missing", id);
	return NULL;
}

static void parse_vec(const char *id, struct roce_pkt *pkt)
{
	const struct icrc_vector *v = find(id);
	int err = frame_kind(v) == ROCE_L3_GRH ? roce_parse_grh(v->frame + 14, v->frame_len - 14, pkt)
					       : roce_parse_ip(v->frame + 14, v->frame_len - 14, ROCE_UDP_PORT, pkt);

	ck_assert_msg(err == ROCE_OK, "%s: %s", id, roce_err_name(err));
}

/* Decoded values of the real captures (docs/wire-format.md §2.3). */
START_TEST(test_vector_fields_real)
{
	struct roce_pkt p;

	parse_vec("R1", &p); /* CNP from a ConnectX-4 Lx */
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_CNP);
	ck_assert(p.h.becn && !p.h.fecn && !p.h.ackreq);
	ck_assert_uint_eq(p.h.dqpn, 0x118);
	ck_assert_uint_eq(p.h.psn, 0);
	ck_assert_uint_eq(p.h.pkey, 0xffff);
	ck_assert_uint_eq(p.payload_len, 16);
	ck_assert_uint_eq(p.l3.tclass, 0xc2);
	ck_assert_uint_eq(p.l3.hop_limit, 64);
	ck_assert_uint_eq(p.l3.sport, 0);
	ck_assert_uint_eq(p.ip_id, 0x718c);
	ck_assert(p.ip_df);
	ck_assert_uint_eq(p.icrc_wire, 0x2a00fd82);

	parse_vec("R2", &p); /* RoCEv1 RDMA WRITE ONLY, pad 3 */
	ck_assert_uint_eq(p.l3.kind, ROCE_L3_GRH);
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_RC_WRITE_ONLY);
	ck_assert(p.h.mig && p.h.ackreq && !p.h.se);
	ck_assert_uint_eq(p.h.pad, 3);
	ck_assert_uint_eq(p.h.dqpn, 0x10a);
	ck_assert_uint_eq(p.h.psn, 0xa788bc);
	ck_assert_uint_eq(p.h.reth.va, 0x000055d4c0726000ull);
	ck_assert_uint_eq(p.h.reth.rkey, 0x000047b3);
	ck_assert_uint_eq(p.h.reth.dma_len, 5);
	ck_assert_uint_eq(p.payload_len, 5);
	ck_assert_uint_eq(p.payload[4], 0x01);

	parse_vec("R3", &p); /* RoCEv1 ACK */
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_RC_ACK);
	ck_assert_uint_eq(p.h.aeth.syndrome, 0x00);
	ck_assert_uint_eq(p.h.aeth.msn, 5);
	ck_assert_uint_eq(p.h.psn, 0xa788c0);
	ck_assert_ptr_null(p.payload);
	ck_assert_uint_eq(p.payload_len, 0);

	parse_vec("S0", &p); /* scapy UC SEND ONLY */
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_UC_SEND_ONLY);
	ck_assert(p.h.mig);
	ck_assert_uint_eq(p.h.pad, 2);
	ck_assert_uint_eq(p.payload_len, 18);
	ck_assert_uint_eq(p.h.dqpn, 0xd3);
	ck_assert_uint_eq(p.h.psn, 0xcf1710);
}
END_TEST

/* Decoded values of the generated frames (docs/wire-format.md §2.2). */
START_TEST(test_vector_fields_generated)
{
	struct roce_pkt p;
	static const uint8_t fe80_1[16] = { 0xfe, 0x80, [15] = 1 };

	parse_vec("G01", &p);
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_RC_SEND_ONLY);
	ck_assert_uint_eq(p.h.pad, 3);
	ck_assert_uint_eq(p.payload_len, 5);
	ck_assert_mem_eq(p.payload, "hello", 5);
	ck_assert_uint_eq(p.l3.sport, 0xc000);
	ck_assert_uint_eq(p.ip_id, 0x1234);

	parse_vec("G02", &p);
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_RC_WRITE_ONLY_IMM);
	ck_assert_uint_eq(p.h.reth.va, 0x1000);
	ck_assert_uint_eq(p.h.reth.rkey, 0x42);
	ck_assert_uint_eq(p.h.reth.dma_len, 7);
	ck_assert_uint_eq(p.h.imm, 0xcafe);
	ck_assert_uint_eq(p.payload_len, 7);
	ck_assert_uint_eq(p.h.pad, 1);

	parse_vec("G03", &p);
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_RC_READ_REQUEST);
	ck_assert_uint_eq(p.h.reth.va, 0x2000);
	ck_assert_uint_eq(p.h.reth.rkey, 0x43);
	ck_assert_uint_eq(p.h.reth.dma_len, 600);
	ck_assert_uint_eq(p.payload_len, 0);

	parse_vec("G04", &p);
	ck_assert_uint_eq(p.h.aeth.syndrome, ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID));
	ck_assert_uint_eq(p.h.aeth.msn, 6);
	parse_vec("G05", &p);
	ck_assert_uint_eq(p.h.aeth.syndrome, ROCE_AETH_SYN_RNR(14));
	parse_vec("G06", &p);
	ck_assert_uint_eq(p.h.aeth.syndrome, ROCE_AETH_SYN_NAK(ROCE_NAK_PSN_SEQ_ERR));

	parse_vec("G07", &p);
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_RC_CMP_SWAP);
	ck_assert_uint_eq(p.h.atomic.va, 0x3000);
	ck_assert_uint_eq(p.h.atomic.rkey, 0x44);
	ck_assert_uint_eq(p.h.atomic.swap_add, 0x1111);
	ck_assert_uint_eq(p.h.atomic.compare, 0x2222);

	parse_vec("G08", &p);
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_RC_ATOMIC_ACK);
	ck_assert_uint_eq(p.h.aeth.msn, 7);
	ck_assert_uint_eq(p.h.atomic_ack_orig, 0x99);

	parse_vec("G09", &p);
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_UD_SEND_ONLY);
	ck_assert_uint_eq(p.h.deth.qkey, 0x11111111);
	ck_assert_uint_eq(p.h.deth.sqpn, 0x45);
	ck_assert_uint_eq(p.payload_len, 3);
	ck_assert_mem_eq(p.payload, "ud!", 3);

	parse_vec("G11", &p);
	ck_assert_uint_eq(p.l3.kind, ROCE_L3_IPV6);
	ck_assert_uint_eq(p.l3.tclass, 0x02);
	ck_assert_uint_eq(p.l3.flow_label, 0xabcde);
	ck_assert_mem_eq(p.l3.src, fe80_1, 16);
	ck_assert_uint_eq(p.payload_len, 5);

	parse_vec("G12", &p);
	ck_assert_uint_eq(p.h.opcode, ROCE_OP_RC_WRITE_ONLY);
	ck_assert_mem_eq(p.payload, "12345678", 8);
	ck_assert_uint_eq(p.h.pad, 0);
}
END_TEST

/* A UDP payload received with the right facts parses with a good ICRC;
 * with any fact wrong (address, port) the ICRC fails. */
START_TEST(test_udp_facts_matter)
{
	const struct icrc_vector *v = find("G11");
	const uint8_t *ip = v->frame + 14;
	size_t len = v->frame_len - 14 - 48;
	struct roce_l3 l3 = { .kind = ROCE_L3_IPV6, .sport = 0xc000, .dport = ROCE_UDP_PORT };
	struct roce_pkt p;

	memcpy(l3.src, ip + 8, 16);
	memcpy(l3.dst, ip + 24, 16);
	ck_assert_int_eq(roce_parse_udp(ip + 48, len, &l3, &p), ROCE_OK);
	ck_assert(p.icrc_ok);
	l3.sport++;
	ck_assert_int_eq(roce_parse_udp(ip + 48, len, &l3, &p), ROCE_E_ICRC);
	ck_assert(!p.icrc_ok);
	ck_assert_uint_eq(p.payload_len, 5); /* still fully decoded */
	l3.sport--;
	l3.dst[15] ^= 1;
	ck_assert_int_eq(roce_parse_udp(ip + 48, len, &l3, &p), ROCE_E_ICRC);
}
END_TEST

START_TEST(test_icrc_bad_args)
{
	/* Bad arguments and short buffers get errors, never a read past the end. */
	struct roce_l3 l3 = { 0 };
	uint32_t crc;

	ck_assert_int_eq(roce_icrc_udp((const uint8_t *)"0123456789abcdef", 16, &l3, &crc), ROCE_E_INVAL);
	ck_assert_int_eq(roce_icrc_ipv4((const uint8_t *)"short", 5, &crc), ROCE_E_TRUNC_ICRC);
	ck_assert_int_eq(roce_icrc_ipv6(NULL, 100, &crc), ROCE_E_INVAL);
	ck_assert_int_eq(roce_icrc_grh((const uint8_t *)"x", 55, &crc), ROCE_E_TRUNC_ICRC);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netstack_icrc");
	TCase *tc = tcase_create("vectors");

	tcase_add_checked_fixture(tc, load, unload);
	tcase_add_test(tc, test_vector_count);
	tcase_add_test(tc, test_vector_icrc);
	tcase_add_test(tc, test_vector_parse);
	tcase_add_test(tc, test_vector_bit_flips);
	tcase_add_test(tc, test_vector_udp_reconstruction);
	tcase_add_test(tc, test_vector_fields_real);
	tcase_add_test(tc, test_vector_fields_generated);
	tcase_add_test(tc, test_udp_facts_matter);
	tcase_add_test(tc, test_icrc_bad_args);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
