/*
 * eth_tso.c - emu/eth/tso.c and frame_vxlan_inner without a daemon: which
 * TSO headers are accepted (table), the fields tso_build rewrites per
 * segment, and which frames count as VXLAN (table).
 */
#include "config.h"
#include "tests/check_main.h"
#include "emu/eth/tso.h"

#include <stdint.h>
#include <string.h>

/* Ethernet / IPv4 (IHL 5) / TCP (doff 5) header of 54 bytes in H. */
static void hdr4(uint8_t *h)
{
	memset(h, 0, 54);
	h[12] = 0x08;
	h[14] = 0x45;
	h[14 + 9] = 6;
	h[34 + 12] = 0x50;
}

static const struct {
	const char *what;
	int mutate;              /* what to change in the header of hdr4 */
	uint32_t hdr_sz;
	bool ok;
} hdr_cases[] = {
	{ "IPv4 TCP, exact", 0, 54, true },
	{ "one byte short of the TCP header", 0, 53, false },
	{ "one byte past the TCP header", 0, 55, false },
	{ "UDP", 1, 54, false },
	{ "an IPv4 fragment (MF)", 2, 54, false },
	{ "not IP (ARP)", 3, 54, false },
	{ "doff 8 (options) needs 66 bytes", 4, 66, true },
	{ "doff 8 with 54 bytes", 4, 54, false },
	{ "IP length field junk: ignored", 5, 54, true },
};

START_TEST(test_hdr_check)
{
	uint8_t h[80];
	struct frame_info fi;
	bool got;

	memset(h, 0, sizeof(h));
	hdr4(h);
	switch (hdr_cases[_i].mutate) {
	case 1: h[14 + 9] = 17; break;
	case 2: h[14 + 6] = 0x20; break;
	case 3: h[13] = 0x06; break;
	case 4: h[34 + 12] = 0x80; break;
	case 5: h[16] = 0xff; h[17] = 0xff; break;
	}
	got = tso_hdr_check(h, hdr_cases[_i].hdr_sz, &fi);
	ck_assert_msg(got == hdr_cases[_i].ok, "%s: %d, expected %d", hdr_cases[_i].what, got, hdr_cases[_i].ok);
}
END_TEST

/* 3000 bytes at MSS 1000 with FIN|PSH|CWR|ACK: the per-segment fields. */
START_TEST(test_build)
{
	uint8_t h[54], pl[3000], out[1100];
	struct frame_info fi;

	hdr4(h);
	h[18] = 0xff; /* IP ID 0xfffe: wraps */
	h[19] = 0xfe;
	memset(h + 38, 0xff, 4); /* sequence 0xffffffff: wraps */
	h[47] = 0x80 | 0x10 | 0x08 | 0x01;
	for (int i = 0; i < 3000; i++)
		pl[i] = (uint8_t)i;
	ck_assert(tso_hdr_check(h, 54, &fi));
	ck_assert_uint_eq(tso_segments(3000, 1000), 3);
	ck_assert_uint_eq(tso_segments(3001, 1000), 4);
	ck_assert_uint_eq(tso_segments(0, 1000), 1);
	for (uint32_t i = 0; i < 3; i++) {
		static const uint8_t flags[3] = { 0x90, 0x10, 0x19 };
		static const uint16_t id[3] = { 0xfffe, 0xffff, 0x0000 };
		uint32_t seq = 0xffffffffu + i * 1000;

		ck_assert_uint_eq(tso_build(h, 54, &fi, pl, 3000, 1000, i, true, out), 1054);
		ck_assert_uint_eq(out[16] << 8 | out[17], 1040);
		ck_assert_uint_eq(out[18] << 8 | out[19], id[i]);
		ck_assert_uint_eq((uint32_t)out[38] << 24 | (uint32_t)out[39] << 16 | (uint32_t)out[40] << 8 | out[41],
				  seq);
		ck_assert_uint_eq(out[47], flags[i]);
		ck_assert(!memcmp(out + 54, pl + i * 1000, 1000));
		{
			struct frame_info sfi;
			bool l3, l4;

			ck_assert(frame_parse(out, 1054, &sfi));
			frame_check_csum(out, &sfi, &l3, &l4);
			ck_assert(l3 && l4);
		}
	}
}
END_TEST

static const struct {
	const char *what;
	uint16_t dport;
	uint8_t flags;
	uint32_t len;
	bool vxlan;
} vx_cases[] = {
	{ "VXLAN", 4789, 0x08, 80, true },
	{ "port 4790", 4790, 0x08, 80, false },
	{ "I flag clear", 4789, 0x00, 80, false },
	{ "no room for the inner Ethernet header", 4789, 0x08, 14 + 20 + 8 + 8 + 13, false },
	{ "inner Ethernet header alone", 4789, 0x08, 14 + 20 + 8 + 8 + 14, true },
};

START_TEST(test_vxlan_inner)
{
	uint8_t f[80];
	struct frame_info fi, in;
	uint32_t off, vni, len = vx_cases[_i].len;
	bool got;

	memset(f, 0, sizeof(f));
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = (uint8_t)((len - 14) >> 8);
	f[17] = (uint8_t)(len - 14);
	f[14 + 9] = 17;
	f[36] = (uint8_t)(vx_cases[_i].dport >> 8);
	f[37] = (uint8_t)vx_cases[_i].dport;
	f[38] = (uint8_t)((len - 34) >> 8);
	f[39] = (uint8_t)(len - 34);
	f[42] = vx_cases[_i].flags;
	f[46] = 0xab;
	f[47] = 0xcd;
	f[48] = 0xef;
	f[50 + 12] = 0x08;
	ck_assert(frame_parse(f, len, &fi));
	got = frame_vxlan_inner(f, &fi, &in, &off, &vni);
	ck_assert_msg(got == vx_cases[_i].vxlan, "%s: %d", vx_cases[_i].what, got);
	if (got) {
		ck_assert_uint_eq(vni, 0xabcdef);
		ck_assert_uint_eq(off, 50);
		ck_assert_uint_eq(in.ether_type, 0x0800);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eth_tso");
	TCase *tc = tcase_create("tso");

	tcase_add_loop_test(tc, test_hdr_check, 0, (int)(sizeof(hdr_cases) / sizeof(hdr_cases[0])));
	tcase_add_test(tc, test_build);
	tcase_add_loop_test(tc, test_vxlan_inner, 0, (int)(sizeof(vx_cases) / sizeof(vx_cases[0])));
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
