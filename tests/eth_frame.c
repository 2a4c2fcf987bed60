/*
 * eth_frame.c - emu/eth/frame.c without a daemon: the Toeplitz hash against
 * Microsoft's RSS verification vectors ("Verifying the RSS Hash
 * Calculation", Windows driver documentation: the 40-byte key and the five
 * IPv4 flows, hashed over the addresses and over addresses and TCP ports),
 * and the header decoding steering and RSS rely on.
 */
#include "config.h"
#include "tests/check_main.h"
#include "emu/eth/frame.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static const struct {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t ip_hash, tcp_hash;
} ms_vectors[] = {
	{ "66.9.149.187", "161.142.100.80", 2794, 1766, 0x323e8fc2, 0x51ccc178 },
	{ "199.92.111.2", "65.69.140.83", 14230, 4739, 0xd718262a, 0xc626b0ea },
	{ "24.19.198.95", "12.22.207.184", 12898, 38024, 0xd2d0a5de, 0x5c2b394a },
	{ "38.27.205.30", "209.142.163.6", 48228, 2217, 0x82989176, 0xafc7327f },
	{ "153.39.163.191", "202.188.127.2", 44251, 1303, 0x5d1809c5, 0x10e828a2 },
};

START_TEST(test_toeplitz_ms_vectors)
{
	uint8_t in[12];

	ck_assert_int_eq(inet_pton(AF_INET, ms_vectors[_i].src, in), 1);
	ck_assert_int_eq(inet_pton(AF_INET, ms_vectors[_i].dst, in + 4), 1);
	in[8] = (uint8_t)(ms_vectors[_i].sport >> 8);
	in[9] = (uint8_t)ms_vectors[_i].sport;
	in[10] = (uint8_t)(ms_vectors[_i].dport >> 8);
	in[11] = (uint8_t)ms_vectors[_i].dport;
	ck_assert_uint_eq(frame_toeplitz(ms_key, sizeof(ms_key), in, 8), ms_vectors[_i].ip_hash);
	ck_assert_uint_eq(frame_toeplitz(ms_key, sizeof(ms_key), in, 12), ms_vectors[_i].tcp_hash);
}
END_TEST

/* A VLAN-tagged IPv4/UDP frame: offsets, kinds; checksums filled then
 * verified; one flipped payload bit fails L4 only. */
START_TEST(test_parse_and_csum)
{
	uint8_t f[100] = { 0x02, 0, 0x7f, 0, 0, 2, 0x02, 0, 0x7f, 0, 0, 1, 0x81, 0x00, 0x60, 0x05, 0x08, 0x00 };
	uint8_t *ip = f + 18, *u = ip + 20;
	struct frame_info fi;
	bool l3, l4;

	ip[0] = 0x45;
	ip[3] = 100 - 18;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	u[1] = 9;
	u[3] = 5;
	u[5] = 100 - 18 - 20;
	for (int i = 8; i < 62; i++)
		u[i] = (uint8_t)i;
	ck_assert(frame_parse(f, sizeof(f), &fi));
	ck_assert(fi.has_vlan);
	ck_assert_uint_eq(fi.vlan_tci, 0x6005);
	ck_assert_uint_eq(fi.ether_type, 0x0800);
	ck_assert_int_eq(fi.l3, FRAME_L3_IPV4);
	ck_assert_uint_eq(fi.l3_off, 18);
	ck_assert_int_eq(fi.l4, FRAME_L4_UDP);
	ck_assert_uint_eq(fi.l4_off, 38);
	ck_assert_uint_eq(fi.l4_len, 62);
	frame_check_csum(f, &fi, &l3, &l4);
	ck_assert(!l3);
	ck_assert(l4); /* UDP checksum 0 over IPv4: none */
	frame_fill_csum(f, &fi);
	ck_assert(ip[10] || ip[11]);
	ck_assert(u[6] || u[7]);
	frame_check_csum(f, &fi, &l3, &l4);
	ck_assert(l3 && l4);
	u[40] ^= 1;
	frame_check_csum(f, &fi, &l3, &l4);
	ck_assert(l3 && !l4);
	/* a length field past the frame: headers still decoded, L4 never OK */
	ip[2] = 0x10;
	ck_assert(frame_parse(f, sizeof(f), &fi));
	ck_assert_int_eq(fi.l3, FRAME_L3_IPV4);
	ck_assert(fi.len_bad);
	frame_check_csum(f, &fi, &l3, &l4);
	ck_assert(!l4);
	/* shorter than an Ethernet header */
	ck_assert(!frame_parse(f, 13, &fi));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eth_frame");
	TCase *tc = tcase_create("frame");

	tcase_add_loop_test(tc, test_toeplitz_ms_vectors, 0, (int)(sizeof(ms_vectors) / sizeof(ms_vectors[0])));
	tcase_add_test(tc, test_parse_and_csum);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
