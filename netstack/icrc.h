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

#include <stdbool.h>
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

/*
 * roce_icrc_ipv4_id - the IPv4 identification a sender used, recovered from
 * the ICRC it sent.  A UDP socket does not deliver the IP ID, but the ICRC
 * covers it (docs/wire-format.md §2.1); CRC-32 is affine over GF(2), so for a fixed
 * length the ICRC with ID x is the ICRC with ID 0 plus a linear, injective
 * function of x.  docs/icrc.md derives it and gives the cost.
 * @crc_id0:   ICRC of the packet computed with ID 0 (roce_icrc_udp).
 * @icrc_wire: ICRC the packet carries (roce_icrc_get of its last 4 bytes).
 * @ip_len:    IPv4 total length in bytes: 20 + 8 + BTH..ICRC, 44..65535.
 * @id:        receives the ID (host order) on success; may be NULL.
 * Returns true iff some 16-bit ID makes the ICRC match; that ID is then
 * unique.  A random corruption passes with probability 2^-16 (2^16 of the
 * 2^32 ICRC differences are IDs).  False for an IP_LEN out of range.
 * O(1): one 32x32-bit carry-less product mod P, plus a per-length constant
 * computed once (cached; safe from several threads).
 */
bool roce_icrc_ipv4_id(uint32_t crc_id0, uint32_t icrc_wire, size_t ip_len, uint16_t *id);

/*
 * roce_icrc_ipv4_id_delta - what changing the IPv4 identification by ID
 * (XOR) does to a packet's ICRC: ICRC with ID a XOR b = ICRC with ID a XOR
 * roce_icrc_ipv4_id_delta(ip_len, b), for any a (CRC-32 is affine over
 * GF(2); docs/icrc.md).  A sender whose kernel gives consecutive IDs to the
 * segments of one UDP_SEGMENT send (docs/gso.md) fixes each segment's ICRC
 * with it; applied twice it restores the ICRC.
 * @ip_len: IPv4 total length in bytes, 44..65535 (out of range: returns 0).
 * @id:     the ID difference, host order.
 * O(1) after the first call for a length (a per-length constant, cached).
 */
uint32_t roce_icrc_ipv4_id_delta(size_t ip_len, uint16_t id);

/*
 * roce_icrc_udp_check - the receive-side check of a UDP payload (BTH ..
 * ICRC, LEN bytes) against what the receiver knows of L3: IPv6 exactly
 * (traffic class, flow label and hop limit are masked); IPv4 with any IP ID
 * (roce_icrc_ipv4_id; DF set and no options assumed, as RoCEv2 senders do).
 * @crc:   receives the ICRC computed for the packet: with the recovered ID
 *         when one exists, else with ID 0.  May be NULL.
 * @ip_id: receives the recovered IPv4 ID (0 for IPv6 or on mismatch).  May
 *         be NULL.
 * Returns ROCE_OK, ROCE_E_ICRC on mismatch, or the errors of roce_icrc_udp.
 */
int roce_icrc_udp_check(const uint8_t *bth, size_t len, const struct roce_l3 *l3, uint32_t *crc,
			uint16_t *ip_id);

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
