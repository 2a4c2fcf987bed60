/*
 * icrc.c - the RoCE Invariant CRC (CRC-32/IEEE 802.3) with libdeflate's
 * libdeflate_crc32, or zlib's crc32 where configure did not find libdeflate
 * (both take and return the CRC in zlib's convention: start value 0).
 *
 * The variant fields of the network headers are replaced by 1s in a small
 * stack copy; the rest of the packet is hashed in place.  Rule and verified
 * vectors: docs/wire-format.md §2 (IBA §7.8.1, Annex A17.3.3); tests/data/icrc.tsv.
 */
#include "config.h"

#include <string.h>
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#else
#include <zlib.h>
#endif

#include "netstack/icrc.h"
#include "netstack/packet.h"
#include "netstack/wire.h"

/* The CRC-32 state after the 8 bytes of 1s that stand for the LRH RoCE
 * replaces (the "pseudo-LRH"): every ICRC starts with them, so their CRC is
 * a constant (crc32 of ff ff ff ff ff ff ff ff; the ICRC unit tests check
 * it with every frame of tests/data/icrc.tsv, ConnectX captures among them). */
#define CRC_PSEUDO_LRH 0x2144df1cu

static uint32_t crc_add(uint32_t crc, const uint8_t *p, size_t n)
{
#ifdef HAVE_LIBDEFLATE
	return libdeflate_crc32(crc, p, n);
#else
	/* zlib takes uInt lengths; packets are < 64 KiB, so one call suffices. */
	return (uint32_t)crc32(crc, p, (uInt)n);
#endif
}

/* The BTH as the ICRC covers it: ROCE_BTH_LEN bytes of BTH into DST with
 * byte 4 (F, B, Resv6) masked. */
static void bth_masked(uint8_t *dst, const uint8_t *bth)
{
	memcpy(dst, bth, ROCE_BTH_LEN);
	dst[4] = 0xff;
}

/* CRC over BTH (byte 4 masked) .. end, excluding the 4-byte ICRC; N >= 16. */
static uint32_t crc_transport(uint32_t crc, const uint8_t *bth, size_t n)
{
	uint8_t b[ROCE_BTH_LEN];

	bth_masked(b, bth);
	crc = crc_add(crc, b, sizeof(b));
	return crc_add(crc, bth + ROCE_BTH_LEN, n - ROCE_BTH_LEN - ROCE_ICRC_LEN);
}

/* IPv6 header or GRH (40 bytes) with traffic class, flow label, hop limit masked. */
static uint32_t crc_ipv6_hdr(uint32_t crc, const uint8_t *h)
{
	uint8_t b[ROCE_IPV6_HLEN];

	memcpy(b, h, sizeof(b));
	b[0] |= 0x0f;
	b[1] = b[2] = b[3] = 0xff;
	b[7] = 0xff;
	return crc_add(crc, b, sizeof(b));
}

/* UDP header (8 bytes) with the checksum masked. */
static uint32_t crc_udp_hdr(uint32_t crc, const uint8_t *u)
{
	uint8_t b[ROCE_UDP_HLEN];

	memcpy(b, u, sizeof(b));
	b[6] = b[7] = 0xff;
	return crc_add(crc, b, sizeof(b));
}

static uint32_t crc_start(void)
{
	return CRC_PSEUDO_LRH;
}

int roce_icrc_ipv4(const uint8_t *pkt, size_t len, uint32_t *crc)
{
	uint8_t b[ROCE_IPV4_HLEN];
	uint32_t c;

	if (!pkt || !crc)
		return ROCE_E_INVAL;
	if (len < ROCE_IPV4_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return ROCE_E_TRUNC_ICRC;
	memcpy(b, pkt, sizeof(b));
	b[1] = 0xff; /* TOS: DSCP + ECN */
	b[8] = 0xff; /* TTL */
	b[10] = b[11] = 0xff; /* header checksum */
	c = crc_add(crc_start(), b, sizeof(b));
	c = crc_udp_hdr(c, pkt + ROCE_IPV4_HLEN);
	*crc = crc_transport(c, pkt + ROCE_IPV4_HLEN + ROCE_UDP_HLEN,
			     len - ROCE_IPV4_HLEN - ROCE_UDP_HLEN);
	return ROCE_OK;
}

int roce_icrc_ipv6(const uint8_t *pkt, size_t len, uint32_t *crc)
{
	uint32_t c;

	if (!pkt || !crc)
		return ROCE_E_INVAL;
	if (len < ROCE_IPV6_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return ROCE_E_TRUNC_ICRC;
	c = crc_ipv6_hdr(crc_start(), pkt);
	c = crc_udp_hdr(c, pkt + ROCE_IPV6_HLEN);
	*crc = crc_transport(c, pkt + ROCE_IPV6_HLEN + ROCE_UDP_HLEN,
			     len - ROCE_IPV6_HLEN - ROCE_UDP_HLEN);
	return ROCE_OK;
}

int roce_icrc_grh(const uint8_t *pkt, size_t len, uint32_t *crc)
{
	if (!pkt || !crc)
		return ROCE_E_INVAL;
	if (len < ROCE_GRH_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return ROCE_E_TRUNC_ICRC;
	*crc = crc_transport(crc_ipv6_hdr(crc_start(), pkt), pkt + ROCE_GRH_LEN, len - ROCE_GRH_LEN);
	return ROCE_OK;
}

int roce_icrc_udp(const uint8_t *bth, size_t len, const struct roce_l3 *l3, uint32_t *crc)
{
	uint8_t h[ROCE_IPV6_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN];
	size_t hl;
	uint32_t c;

	if (!bth || !l3 || !crc)
		return ROCE_E_INVAL;
	if (len < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return ROCE_E_TRUNC_ICRC;
	if (len > 65535 - ROCE_IPV4_HLEN - ROCE_UDP_HLEN)
		return ROCE_E_INVAL;
	/* Only the fields the ICRC includes matter; masked ones are 1s already. */
	memset(h, 0xff, sizeof(h));
	if (l3->kind == ROCE_L3_IPV4) {
		if (!roce_addr_is_v4mapped(l3->src) || !roce_addr_is_v4mapped(l3->dst))
			return ROCE_E_INVAL;
		h[0] = 0x45;
		wire_put16(h + 2, (uint16_t)(ROCE_IPV4_HLEN + ROCE_UDP_HLEN + len));
		wire_put16(h + 4, 0); /* ID: Linux sends 0 for DF datagrams */
		wire_put16(h + 6, 0x4000); /* DF, offset 0 */
		h[9] = 17;
		memcpy(h + 12, l3->src + 12, 4);
		memcpy(h + 16, l3->dst + 12, 4);
		hl = ROCE_IPV4_HLEN;
	} else if (l3->kind == ROCE_L3_IPV6) {
		h[0] = 0x6f;
		wire_put16(h + 4, (uint16_t)(ROCE_UDP_HLEN + len));
		h[6] = 17;
		memcpy(h + 8, l3->src, 16);
		memcpy(h + 24, l3->dst, 16);
		hl = ROCE_IPV6_HLEN;
	} else {
		return ROCE_E_INVAL;
	}
	wire_put16(h + hl, l3->sport);
	wire_put16(h + hl + 2, l3->dport);
	wire_put16(h + hl + 4, (uint16_t)(ROCE_UDP_HLEN + len));
	/* h[hl+6..7] (checksum) stay 0xff; the masked BTH follows: headers
	 * in one call, the rest in a second */
	bth_masked(h + hl + ROCE_UDP_HLEN, bth);
	c = crc_add(crc_start(), h, hl + ROCE_UDP_HLEN + ROCE_BTH_LEN);
	*crc = crc_add(c, bth + ROCE_BTH_LEN, len - ROCE_BTH_LEN - ROCE_ICRC_LEN);
	return ROCE_OK;
}
