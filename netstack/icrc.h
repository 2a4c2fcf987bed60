/*
 * icrc.h - the RoCE Invariant CRC (ICRC) over IPv4, IPv6 and RoCEv1 GRH
 * packets, and over a bare UDP payload with a reconstructed IP/UDP header.
 *
 * Algorithm (docs/wire-format.md §2.1; IBA §7.8.1, Annex A17.3.3): CRC-32/IEEE
 * (zlib crc32) over 8 bytes of 0xFF (pseudo-LRH), the IP header with TOS/
 * traffic class, flow label, TTL/hop limit and header checksum set to 1s,
 * the UDP header with its checksum set to 1s, the BTH with byte 4 (F, B,
 * Resv6) set to 1s, then everything up to the ICRC.  The result is sent
 * least-significant byte first.  Verified against real captures in
 * tests/data/icrc.tsv.
 *
 * All functions return the CRC as a number: wire bytes = le32 of it.
 */
#ifndef UROCE_NETSTACK_ICRC_H
#define UROCE_NETSTACK_ICRC_H

#include <stddef.h>
#include <stdint.h>

struct roce_l3;

/*
 * roce_icrc_ipv4 / roce_icrc_ipv6 / roce_icrc_grh - ICRC of a packet.
 * @pkt,len: starting at the IPv4 header (exactly 20 bytes, no options), the
 *           IPv6 header, or the RoCEv1 GRH; LEN = bytes up to and including
 *           the ICRC (the last 4 bytes are excluded from the CRC).
 * @crc:     receives the ICRC value.
 * Only the header layout is needed, not a valid packet: lengths are taken
 * from LEN, the header length fields are hashed as found.
 * Returns ROCE_OK, ROCE_E_INVAL (NULL), or ROCE_E_TRUNC_ICRC when LEN is
 * smaller than the fixed headers (IPv4 20+8+12+4, IPv6 40+8+12+4, GRH 40+12+4).
 */
int roce_icrc_ipv4(const uint8_t *pkt, size_t len, uint32_t *crc);
int roce_icrc_ipv6(const uint8_t *pkt, size_t len, uint32_t *crc);
int roce_icrc_grh(const uint8_t *pkt, size_t len, uint32_t *crc);

/*
 * roce_icrc_udp - ICRC of a UDP payload (BTH .. ICRC, LEN bytes) as sent to
 * or received from a UDP socket, for the encapsulation described by L3
 * (kind, src, dst, sport, dport).  The IP header is reconstructed: IPv4 with
 * total length 28+LEN, ID 0, DF, protocol 17, no options; IPv6 with payload
 * length 8+LEN, next header 17.  Errors as above, plus ROCE_E_INVAL for a
 * bad l3->kind or LEN > 65507.
 */
int roce_icrc_udp(const uint8_t *bth, size_t len, const struct roce_l3 *l3, uint32_t *crc);

/* Read / write the 4 ICRC bytes at P (little-endian on the wire). */
static inline uint32_t roce_icrc_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void roce_icrc_put(uint8_t *p, uint32_t crc)
{
	p[0] = (uint8_t)crc;
	p[1] = (uint8_t)(crc >> 8);
	p[2] = (uint8_t)(crc >> 16);
	p[3] = (uint8_t)(crc >> 24);
}

#endif /* UROCE_NETSTACK_ICRC_H */
