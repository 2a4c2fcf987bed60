/*
 * netstack_icrc_id.c - the receive-side ICRC check of UDP payloads, which
 * does not see the IPv4 ID (roce_icrc_udp_check, roce_icrc_ipv4_id), on
 * real frames: the ConnectX-4 Lx CNP R1 and the scapy/generated IPv4 frames
 * of tests/data/icrc.tsv, and the four kernel-rxe frames of
 * tests/data/icrc-rxe.tsv.  Frames that differ only in the IP ID (IPv6: in
 * traffic class, flow label, hop limit) are accepted with the ID recovered;
 * corrupted payloads, header fields and ICRCs are rejected, with exact
 * counts (docs/icrc.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "netstack/icrc.h"
#include "netstack/packet.h"
#include "netstack_testutil.h"

static struct icrc_vector *vecs, *rxe;
static size_t nvecs, nrxe;

static void load(void)
{
	char p[4096];

	vecs = nt_load_vectors(nt_srcdir_path(p, sizeof(p), "tests/data/icrc.tsv"), &nvecs);
	rxe = nt_load_vectors(nt_srcdir_path(p, sizeof(p), "tests/data/icrc-rxe.tsv"), &nrxe);
}

static void unload(void)
{
	free(vecs);
	free(rxe);
	vecs = rxe = NULL;
}

static const struct icrc_vector *find(const char *id)
{
	for (size_t i = 0; i < nvecs; i++)
		if (strcmp(vecs[i].id, id) == 0)
			return &vecs[i];
	for (size_t i = 0; i < nrxe; i++)
		if (strcmp(rxe[i].id, id) == 0)
			return &rxe[i];
	ck_abort_msg("vector %s missing", id);
	return NULL;
}

static unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* A frame as a receiving UDP socket sees it: the datagram and the facts. */
struct rx {
	uint8_t ip[2048]; /* IP header onwards, a private copy */
	size_t ip_len; /* IPv4 total length / IPv6 40 + payload length */
	size_t hl; /* IP + UDP header bytes */
	struct roce_l3 l3;
};

static void rx_from_frame(const struct icrc_vector *v, struct rx *r)
{
	const uint8_t *ip = v->frame + 14;

	memset(r, 0, sizeof(*r));
	memcpy(r->ip, ip, v->frame_len - 14);
	if (ip[0] >> 4 == 4) {
		r->l3.kind = ROCE_L3_IPV4;
		r->ip_len = get16(ip + 2);
		r->hl = 28;
		roce_addr_from_ipv4(r->l3.src, (uint32_t)get16(ip + 12) << 16 | get16(ip + 14));
		roce_addr_from_ipv4(r->l3.dst, (uint32_t)get16(ip + 16) << 16 | get16(ip + 18));
	} else {
		r->l3.kind = ROCE_L3_IPV6;
		r->ip_len = 40 + get16(ip + 4);
		r->hl = 48;
		memcpy(r->l3.src, ip + 8, 16);
		memcpy(r->l3.dst, ip + 24, 16);
	}
	ck_assert_uint_le(r->ip_len, v->frame_len - 14);
	r->l3.sport = (uint16_t)get16(r->ip + r->hl - 8);
	r->l3.dport = (uint16_t)get16(r->ip + r->hl - 6);
}

/* The receiver's verdict on R's UDP payload; *id = the recovered IPv4 ID. */
static int rx_check(const struct rx *r, uint16_t *id)
{
	return roce_icrc_udp_check(r->ip + r->hl, r->ip_len - r->hl, &r->l3, NULL, id);
}

/* Set the IPv4 ID of R and write the exact ICRC for it (ID known). */
static void rx_set_id(struct rx *r, uint16_t id)
{
	uint32_t crc;

	r->ip[4] = (uint8_t)(id >> 8);
	r->ip[5] = (uint8_t)id;
	ck_assert_int_eq(roce_icrc_ipv4(r->ip, r->ip_len, &crc), ROCE_OK);
	roce_icrc_put(r->ip + r->ip_len - 4, crc);
}

/*
 * Every real and generated IPv4 frame, received through a UDP socket: the
 * ICRC verifies and the ID it names is the one in the frame's header (listed
 * here, not read from the frame).
 */
static const struct {
	const char *id;
	uint16_t ip_id;
	int parse; /* roce_parse_udp result */
} ipv4_frames[] = {
	{ "R1", 0x718c, ROCE_OK }, /* ConnectX-4 Lx CNP */
	{ "S0", 0x0478, ROCE_OK }, /* scapy regression frame */
	{ "G01", 0x1234, ROCE_OK }, { "G02", 0x1234, ROCE_OK }, { "G03", 0x1234, ROCE_OK },
	{ "G04", 0x1234, ROCE_OK }, { "G05", 0x1234, ROCE_OK }, { "G06", 0x1234, ROCE_OK },
	{ "G07", 0x1234, ROCE_OK }, { "G08", 0x1234, ROCE_OK }, { "G09", 0x1234, ROCE_OK },
	{ "G10", 0x1234, ROCE_OK }, /* XRC SEND_ONLY */
	{ "X1", 0x3cc6, ROCE_OK }, /* kernel rxe: ACK */
	{ "X2", 0x3cc7, ROCE_OK }, /* SEND FIRST */
	{ "X3", 0x3cc8, ROCE_OK }, /* SEND MIDDLE */
	{ "X4", 0x3cc9, ROCE_OK }, /* SEND LAST */
};
#define N_IPV4 (sizeof(ipv4_frames) / sizeof(ipv4_frames[0]))

START_TEST(test_real_ids_recovered)
{
	unsigned accepted = 0;

	ck_assert_uint_eq(nrxe, 4);
	for (size_t i = 0; i < N_IPV4; i++) {
		const struct icrc_vector *v = find(ipv4_frames[i].id);
		struct roce_pkt pkt;
		struct rx r;
		uint32_t crc0, crc;
		uint16_t id = 0;

		rx_from_frame(v, &r);
		ck_assert_uint_eq(r.l3.kind, ROCE_L3_IPV4);
		/* the ID-0 reconstruction alone rejects it: the ID is not 0 */
		ck_assert_int_eq(roce_icrc_udp(r.ip + 28, r.ip_len - 28, &r.l3, &crc0), ROCE_OK);
		ck_assert_uint_ne(crc0, roce_icrc_get(v->icrc_wire));
		ck_assert(roce_icrc_ipv4_id(crc0, roce_icrc_get(v->icrc_wire), r.ip_len, &id));
		ck_assert_msg(id == ipv4_frames[i].ip_id, "%s: ID 0x%04x, expected 0x%04x", v->id, id,
			      ipv4_frames[i].ip_id);
		id = 0;
		ck_assert_int_eq(roce_icrc_udp_check(r.ip + 28, r.ip_len - 28, &r.l3, &crc, &id), ROCE_OK);
		ck_assert_uint_eq(id, ipv4_frames[i].ip_id);
		ck_assert_uint_eq(crc, roce_icrc_get(v->icrc_wire));
		/* the daemon's parse entry point */
		ck_assert_int_eq(roce_parse_udp(r.ip + 28, r.ip_len - 28, &r.l3, &pkt), ipv4_frames[i].parse);
		if (ipv4_frames[i].parse == ROCE_OK) {
			ck_assert(pkt.icrc_ok);
			ck_assert_uint_eq(pkt.ip_id, ipv4_frames[i].ip_id);
			ck_assert_uint_eq(pkt.icrc_calc, pkt.icrc_wire);
		}
		/* the full frame (inspect) is checked exactly, with its real ID */
		ck_assert_int_eq(roce_parse_ip(r.ip, r.ip_len, ROCE_UDP_PORT, &pkt), ipv4_frames[i].parse);
		accepted++;
	}
	ck_assert_uint_eq(accepted, 16);
}
END_TEST

/* Decoded kernel-rxe frames: what rxe 6.1 puts on the wire (docs/icrc.md). */
START_TEST(test_rxe_fields)
{
	static const struct {
		const char *id;
		uint8_t opcode;
		uint32_t psn, payload_len;
	} t[] = {
		{ "X1", ROCE_OP_RC_ACK, 0xbdb426, 0 },
		{ "X2", ROCE_OP_RC_SEND_FIRST, 0xca345a, 1024 },
		{ "X3", ROCE_OP_RC_SEND_MIDDLE, 0xca345b, 1024 },
		{ "X4", ROCE_OP_RC_SEND_LAST, 0xca345c, 952 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct icrc_vector *v = find(t[i].id);
		struct roce_pkt p;

		ck_assert_int_eq(roce_parse_ip(v->frame + 14, v->frame_len - 14, ROCE_UDP_PORT, &p), ROCE_OK);
		ck_assert_uint_eq(p.h.opcode, t[i].opcode);
		ck_assert_uint_eq(p.h.psn, t[i].psn);
		ck_assert_uint_eq(p.payload_len, t[i].payload_len);
		ck_assert_uint_eq(p.h.dqpn, 0x11);
		ck_assert_uint_eq(p.l3.sport, 0xc121);
		ck_assert_uint_eq(p.l3.tclass, 0);
		ck_assert_uint_eq(p.l3.hop_limit, 64);
		ck_assert(p.ip_df);
		ck_assert(!p.h.mig); /* rxe sends MigReq 0 */
		ck_assert_uint_eq(get16(v->frame + 14 + 26), 0); /* UDP checksum 0 */
	}
}
END_TEST

/* The real frames re-sent with other IDs (and the ICRC a sender computes for
 * each): accepted, naming that ID.  All 65536 IDs on the two short frames,
 * every 97th ID (676 of them, 0 to 0xffc3) on the long ones. */
START_TEST(test_every_id_accepted)
{
	static const struct {
		const char *id;
		uint32_t step;
	} t[] = { { "R1", 1 }, { "X1", 1 }, { "X2", 97 }, { "X3", 97 }, { "X4", 97 } };
	unsigned accepted = 0, tried = 0, wrong_id = 0;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rx r;

		rx_from_frame(find(t[i].id), &r);
		for (uint32_t x = 0; x <= 0xffff; x += t[i].step) {
			uint16_t got = 0;

			rx_set_id(&r, (uint16_t)x);
			if (rx_check(&r, &got) == ROCE_OK)
				accepted++;
			if (got != x)
				wrong_id++;
			tried++;
		}
	}
	ck_assert_uint_eq(tried, 2 * 65536 + 3 * 676); /* 65535 = 97 * 675 */
	ck_assert_uint_eq(accepted, tried);
	ck_assert_uint_eq(wrong_id, 0);
}
END_TEST

/* IPv6 frames that differ only in traffic class, flow label or hop limit
 * have the same ICRC; through the full-packet parser and the UDP one. */
START_TEST(test_ipv6_masked_fields)
{
	static const struct {
		uint8_t tclass, hop;
		uint32_t flow_label;
	} t[] = {
		{ 0x00, 64, 0x00000 }, { 0x02, 64, 0xabcde }, { 0xff, 1, 0xfffff }, { 0xc2, 255, 0x00001 },
		{ 0x00, 0, 0x80000 }, { 0x1a, 17, 0x3c121 }, { 0x80, 128, 0x12345 }, { 0x03, 2, 0x7fffe },
	};
	static const char *const ids[] = { "G11", "G12" };
	unsigned ip_ok = 0, udp_ok = 0;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
			struct roce_pkt p;
			struct rx r;
			uint16_t id = 1;

			rx_from_frame(find(ids[i]), &r);
			r.ip[0] = (uint8_t)(0x60 | t[k].tclass >> 4);
			r.ip[1] = (uint8_t)(t[k].tclass << 4 | t[k].flow_label >> 16);
			r.ip[2] = (uint8_t)(t[k].flow_label >> 8);
			r.ip[3] = (uint8_t)t[k].flow_label;
			r.ip[7] = t[k].hop;
			if (roce_parse_ip(r.ip, r.ip_len, ROCE_UDP_PORT, &p) == ROCE_OK &&
			    p.l3.flow_label == t[k].flow_label && p.l3.tclass == t[k].tclass)
				ip_ok++;
			if (rx_check(&r, &id) == ROCE_OK && id == 0)
				udp_ok++;
		}
	}
	ck_assert_uint_eq(ip_ok, 16);
	ck_assert_uint_eq(udp_ok, 16);
}
END_TEST

/*
 * Corruption on the real frames, as received (ID unknown):
 *  - every one-bit flip of the UDP payload outside BTH byte 4 (payload,
 *    headers, pad, ICRC) is rejected, and the 8 bits of BTH byte 4 (F, B,
 *    Resv6: masked) are accepted;
 *  - every one-bit flip of what the socket reports (source and destination
 *    address, UDP ports) is rejected;
 *  - every flip at once of two bits 16 apart in the payload is rejected.
 * A one-bit error is a polynomial x^k; it passes only if x^k times a fixed
 * inverse power of x has degree < 16, which happens at ~1 in 2^16 positions
 * (docs/icrc.md) - none in these frames, so the counts are exact.
 */
START_TEST(test_corruption_rejected)
{
	static const char *const ids[] = { "R1", "X1", "X2", "X3", "X4" };
	unsigned payload_rejected = 0, masked_accepted = 0, facts_rejected = 0, pairs_rejected = 0;
	unsigned payload_bits = 0, pair_count = 0;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct rx r;
		uint8_t *u;
		size_t n;

		rx_from_frame(find(ids[i]), &r);
		ck_assert_int_eq(rx_check(&r, NULL), ROCE_OK);
		u = r.ip + r.hl;
		n = r.ip_len - r.hl;
		for (size_t off = 0; off < n; off++) {
			for (int bit = 0; bit < 8; bit++) {
				int rc;

				u[off] ^= (uint8_t)(1u << bit);
				rc = rx_check(&r, NULL);
				if (off == 4)
					masked_accepted += rc == ROCE_OK;
				else
					payload_rejected += rc == ROCE_E_ICRC;
				if (off + 2 < n - 4) {
					u[off + 2] ^= (uint8_t)(1u << bit);
					pairs_rejected += rx_check(&r, NULL) == ROCE_E_ICRC;
					u[off + 2] ^= (uint8_t)(1u << bit);
					pair_count++;
				}
				u[off] ^= (uint8_t)(1u << bit);
				payload_bits++;
			}
		}
		for (int b = 0; b < 32; b++) {
			struct roce_l3 good = r.l3;

			r.l3.src[12 + b / 8] ^= (uint8_t)(1u << (b % 8));
			facts_rejected += rx_check(&r, NULL) == ROCE_E_ICRC;
			r.l3 = good;
			r.l3.dst[12 + b / 8] ^= (uint8_t)(1u << (b % 8));
			facts_rejected += rx_check(&r, NULL) == ROCE_E_ICRC;
			r.l3 = good;
			if (b < 16) {
				r.l3.sport ^= (uint16_t)(1u << b);
				facts_rejected += rx_check(&r, NULL) == ROCE_E_ICRC;
				r.l3 = good;
				r.l3.dport ^= (uint16_t)(1u << b);
				facts_rejected += rx_check(&r, NULL) == ROCE_E_ICRC;
				r.l3 = good;
			}
		}
		ck_assert_int_eq(rx_check(&r, NULL), ROCE_OK);
	}
	/* UDP payload bytes: R1 32, X1 20, X2 1040, X3 1040, X4 968 = 3100 */
	ck_assert_uint_eq(payload_bits, 3100 * 8);
	ck_assert_uint_eq(masked_accepted, 5 * 8);
	ck_assert_uint_eq(payload_rejected, 3100 * 8 - 5 * 8);
	ck_assert_uint_eq(facts_rejected, 5 * 96);
	ck_assert_uint_eq(pair_count, (3100 - 5 * 6) * 8);
	ck_assert_uint_eq(pairs_rejected, pair_count);
}
END_TEST

/*
 * The solver against brute force: on R1 with a corrupted payload byte (each
 * of 8 values at 3 positions) and with 8 arbitrary ICRCs (the last one that
 * of ID 0xbeef), accept iff some ID in 0..65535 gives that ICRC exactly -
 * decided by computing all 65536.
 */
START_TEST(test_solver_matches_brute_force)
{
	struct rx r;
	unsigned cases = 0, agree = 0, brute_accepts = 0;
	uint32_t seed = 0x2545f491;

	rx_from_frame(find("R1"), &r);
	for (int c = 0; c < 32; c++) {
		struct rx t = r;
		uint32_t wire;
		bool brute = false, solver;
		uint16_t sid = 0;

		if (c < 24) {
			t.ip[28 + 13 + (c / 8) * 7] ^= (uint8_t)(c % 8 + 1); /* BTH/CNP bytes */
		} else {
			seed ^= seed << 13;
			seed ^= seed >> 17;
			seed ^= seed << 5;
			roce_icrc_put(t.ip + t.ip_len - 4, seed);
		}
		if (c == 31) {
			rx_set_id(&t, 0xbeef);
			t.ip[4] = t.ip[5] = 0; /* the receiver does not see it */
		}
		wire = roce_icrc_get(t.ip + t.ip_len - 4);
		for (uint32_t x = 0; x <= 0xffff && !brute; x++) {
			uint32_t crc;

			t.ip[4] = (uint8_t)(x >> 8);
			t.ip[5] = (uint8_t)x;
			ck_assert_int_eq(roce_icrc_ipv4(t.ip, t.ip_len, &crc), ROCE_OK);
			brute = crc == wire;
		}
		solver = rx_check(&t, &sid) == ROCE_OK;
		cases++;
		agree += solver == brute;
		brute_accepts += brute;
		if (c == 31)
			ck_assert_uint_eq(sid, 0xbeef);
	}
	ck_assert_uint_eq(cases, 32);
	ck_assert_uint_eq(agree, 32);
	ck_assert_uint_eq(brute_accepts, 1);
}
END_TEST

/*
 * The sender's side: the ICRC for another ID is the ICRC for ID 0 XOR
 * roce_icrc_ipv4_id_delta, on every IPv4 frame, for the IDs a UDP_SEGMENT
 * send gives its segments (0..127) and for the frame's own ID; the real
 * rxe and ConnectX ICRCs are reached from ID 0 exactly.
 */
START_TEST(test_delta_sets_id)
{
	unsigned cases = 0, wire_hits = 0;

	for (size_t i = 0; i < N_IPV4; i++) {
		const struct icrc_vector *v = find(ipv4_frames[i].id);
		struct rx r;
		uint32_t crc0, exact;

		rx_from_frame(v, &r);
		rx_set_id(&r, 0);
		crc0 = roce_icrc_get(r.ip + r.ip_len - 4);
		for (unsigned id = 0; id <= 128; id++) {
			uint16_t want = id == 128 ? ipv4_frames[i].ip_id : (uint16_t)id;

			rx_set_id(&r, want);
			exact = roce_icrc_get(r.ip + r.ip_len - 4);
			ck_assert_msg((crc0 ^ roce_icrc_ipv4_id_delta(r.ip_len, want)) == exact,
				      "%s ID 0x%04x", v->id, want);
			/* applied twice: back to ID 0 */
			ck_assert_uint_eq(exact ^ roce_icrc_ipv4_id_delta(r.ip_len, want), crc0);
			cases++;
		}
		if ((crc0 ^ roce_icrc_ipv4_id_delta(r.ip_len, ipv4_frames[i].ip_id)) ==
		    roce_icrc_get(v->icrc_wire))
			wire_hits++;
	}
	ck_assert_uint_eq(cases, 16 * 129);
	ck_assert_uint_eq(wire_hits, 16);
	ck_assert_uint_eq(roce_icrc_ipv4_id_delta(44, 0), 0);
	ck_assert_uint_eq(roce_icrc_ipv4_id_delta(43, 1), 0);
	ck_assert_uint_eq(roce_icrc_ipv4_id_delta(65536, 1), 0);
}
END_TEST

START_TEST(test_bad_args)
{
	uint16_t id = 7;

	/* IP lengths outside 44..65535 have no solution */
	ck_assert(!roce_icrc_ipv4_id(1, 2, 43, &id));
	ck_assert(!roce_icrc_ipv4_id(1, 2, 65536, &id));
	ck_assert_uint_eq(id, 7);
	/* equal ICRCs: ID 0 at any length */
	ck_assert(roce_icrc_ipv4_id(0x12345678, 0x12345678, 44, &id));
	ck_assert_uint_eq(id, 0);
	ck_assert(roce_icrc_ipv4_id(0x12345678, 0x12345678, 65535, NULL));
	ck_assert_int_eq(roce_icrc_udp_check(NULL, 16, NULL, NULL, NULL), ROCE_E_INVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netstack_icrc_id");
	TCase *tc = tcase_create("ip_id");

	tcase_add_checked_fixture(tc, load, unload);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_real_ids_recovered);
	tcase_add_test(tc, test_rxe_fields);
	tcase_add_test(tc, test_every_id_accepted);
	tcase_add_test(tc, test_ipv6_masked_fields);
	tcase_add_test(tc, test_corruption_rejected);
	tcase_add_test(tc, test_solver_matches_brute_force);
	tcase_add_test(tc, test_delta_sets_id);
	tcase_add_test(tc, test_bad_args);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
