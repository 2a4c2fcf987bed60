/*
 * fuzz_parse.c - libFuzzer harness for every netstack parse entry point.
 *
 * Input: byte 0 selects the entry point ((byte & 0x7f) mod 5): roce_parse_ip,
 * _grh, _udp over IPv4 facts, _udp over IPv6 facts, _bth; the rest is the
 * packet.  With bit 7 of byte 0 set, the harness first writes the correct
 * ICRC into the packet, so mutations get past the ICRC check and reach the
 * accepted-packet checks below through every entry point.
 * Built with clang -fsanitize=fuzzer,address,undefined from the netstack
 * sources directly (tests/netstack.mk), so ASan sees every read.
 *
 * Besides "no crash, no out-of-bounds read", it checks the parser's
 * promises on accepted packets: payload inside the buffer, lengths
 * consistent with the opcode table, ICRC good, and build(parse(x)) == x on
 * every byte the codec owns (all but reserved bytes, pad bytes and ICRC).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/icrc.h"
#include "netstack/packet.h"

static void check(int cond)
{
	if (!cond)
		abort();
}

static const uint8_t v6_src[16] = { 0xfd, [15] = 1 }, v6_dst[16] = { 0xfd, [15] = 2 };

/* Invariants of a successfully parsed packet whose BTH..ICRC is [b, b+len). */
static void check_accepted(const struct roce_pkt *p, const uint8_t *buf, size_t size)
{
	static uint8_t out[8192];
	const struct roce_opcode_info *op = p->op;
	size_t n;

	check(op != NULL && !(op->flags & ROCE_OPF_UNSUPPORTED));
	check(p->bth >= buf && p->bth + p->roce_len <= buf + size);
	check(p->payload_len <= ROCE_MAX_PAYLOAD);
	check(p->icrc_ok && p->icrc_calc == p->icrc_wire);
	check(p->roce_len == roce_packet_len(p->h.opcode, p->payload_len));
	if (p->payload_len)
		check(p->payload == p->bth + op->hdr_len);

	/* Rebuild and compare the bytes the codec owns. */
	check(roce_build_bth(out, sizeof(out), &p->h, p->payload, p->payload_len, &n) == ROCE_OK);
	check(n == p->roce_len);
	for (size_t i = 0; i < n - ROCE_ICRC_LEN; i++) {
		uint8_t mask = 0xff; /* bits of byte i the codec decodes */

		if (i >= (size_t)op->hdr_len + p->payload_len) /* pad */
			mask = 0;
		if ((op->hdrs & ROCE_HDR_BIT(ROCE_HDR_DETH)) && i == op->offset[ROCE_HDR_DETH] + 4u)
			mask = 0; /* DETH resv8 */
		if ((op->hdrs & ROCE_HDR_BIT(ROCE_HDR_XRCETH)) && i == op->offset[ROCE_HDR_XRCETH])
			mask = 0; /* XRCETH resv8 */
		if ((op->hdrs & ROCE_HDR_BIT(ROCE_HDR_FETH)) && i >= op->offset[ROCE_HDR_FETH] &&
		    i < op->offset[ROCE_HDR_FETH] + 4u)
			mask = i == op->offset[ROCE_HDR_FETH] + 3u ? 0x3f : 0; /* FETH reserved bits */
		check(((out[i] ^ p->bth[i]) & mask) == 0);
	}
}

static size_t min_len(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Write the ICRC the parser will expect for entry point SEL into B (size bytes). */
static void fix_icrc(unsigned sel, uint8_t *b, size_t size, const struct roce_l3 *l3)
{
	size_t n = 0;
	uint32_t crc;
	int err = ROCE_E_INVAL;

	if (sel == 0 && size >= 40 && b[0] >> 4 == 6) {
		n = min_len(size, 40u + (size_t)(b[4] << 8 | b[5]));
		err = roce_icrc_ipv6(b, n, &crc);
	} else if (sel == 0 && size >= 20 && b[0] >> 4 == 4) {
		n = min_len(size, (size_t)(b[2] << 8 | b[3]));
		err = roce_icrc_ipv4(b, n, &crc);
	} else if (sel == 1 && size >= 40) {
		n = min_len(size, 40u + (size_t)(b[4] << 8 | b[5]));
		err = roce_icrc_grh(b, n, &crc);
	} else if (sel == 2 || sel == 3) {
		n = size;
		err = roce_icrc_udp(b, n, l3, &crc);
	}
	if (err == ROCE_OK)
		roce_icrc_put(b + n - ROCE_ICRC_LEN, crc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_pkt pkt;
	struct roce_l3 l3 = { .sport = 0xc000, .dport = ROCE_UDP_PORT };
	const uint8_t *buf;
	uint8_t *copy;
	unsigned sel;
	int err;

	if (size < 1)
		return 0;
	/* An exact-size heap copy: any read past the end is an ASan report. */
	size -= 1;
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size);
	buf = copy;
	sel = (data[0] & 0x7fu) % 5;
	if (sel == 2) {
		l3.kind = ROCE_L3_IPV4;
		roce_addr_from_ipv4(l3.src, 0x0a000001);
		roce_addr_from_ipv4(l3.dst, 0x0a000002);
	} else if (sel == 3) {
		l3.kind = ROCE_L3_IPV6;
		memcpy(l3.src, v6_src, 16);
		memcpy(l3.dst, v6_dst, 16);
	}
	if (data[0] & 0x80)
		fix_icrc(sel, copy, size, &l3);
	switch (sel) {
	case 0:
		err = roce_parse_ip(buf, size, ROCE_UDP_PORT, &pkt);
		break;
	case 1:
		err = roce_parse_grh(buf, size, &pkt);
		break;
	case 2:
	case 3:
		err = roce_parse_udp(buf, size, &l3, &pkt);
		break;
	default:
		err = roce_parse_bth(buf, size, &pkt);
		if (err == ROCE_OK) {
			/* no ICRC check on this entry point: only the layout */
			pkt.icrc_ok = true;
			pkt.icrc_calc = pkt.icrc_wire;
		}
		break;
	}
	check(err >= 0 && err < ROCE_E__COUNT);
	check(roce_err_name(err)[0] != '?');
	if (err == ROCE_OK)
		check_accepted(&pkt, buf, size);
	free(copy);
	return 0;
}
