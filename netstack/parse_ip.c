/*
 * parse_ip.c - the three parse entry points: a full IPv4/IPv6 packet
 * (inspect), a RoCEv1 GRH packet (inspect), and a UDP payload with the
 * receiver's knowledge of the IP layer (the daemon).  Each checks its
 * encapsulation, hands BTH..ICRC to roce_parse_bth, and checks the ICRC last
 * so that a packet with a bad ICRC is still fully decoded.  IP packets are
 * checked exactly (their ID is known); UDP payloads with the ID recovered
 * from the ICRC (roce_icrc_udp_check).
 */
#include <string.h>

#include "netstack/icrc.h"
#include "netstack/packet.h"
#include "netstack/wire.h"

#define IPPROTO_UDP_NUM 17u

static void clear_pkt(struct roce_pkt *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
}

static void finish_icrc(struct roce_pkt *pkt, uint32_t crc)
{
	pkt->icrc_calc = crc;
	pkt->icrc_ok = crc == pkt->icrc_wire;
}

/* UDP header at U with AVAIL bytes of IP payload; BTH.. parsed on success. */
static int parse_udp_hdr(const uint8_t *u, size_t avail, uint16_t dport, struct roce_pkt *pkt)
{
	size_t ulen;

	if (avail < ROCE_UDP_HLEN)
		return ROCE_E_UDP_TRUNC;
	pkt->l3.sport = wire_get16(u);
	pkt->l3.dport = wire_get16(u + 2);
	ulen = wire_get16(u + 4);
	if (ulen != avail)
		return ROCE_E_UDP_LEN;
	if (pkt->l3.dport != dport)
		return ROCE_E_UDP_PORT;
	return roce_parse_bth(u + ROCE_UDP_HLEN, ulen - ROCE_UDP_HLEN, pkt);
}

static int parse_ipv4(const uint8_t *buf, size_t len, uint16_t dport, struct roce_pkt *pkt)
{
	size_t tot;
	uint16_t frag;
	int err;

	if (len < ROCE_IPV4_HLEN)
		return ROCE_E_IP_TRUNC;
	if ((buf[0] & 0x0f) != ROCE_IPV4_HLEN / 4)
		return ROCE_E_IP_IHL;
	tot = wire_get16(buf + 2);
	if (tot < ROCE_IPV4_HLEN || tot > len)
		return ROCE_E_IP_LEN;
	frag = wire_get16(buf + 6);
	if (frag & 0x3fff) /* MF or fragment offset */
		return ROCE_E_IP_FRAG;
	if (buf[9] != IPPROTO_UDP_NUM)
		return ROCE_E_IP_PROTO;

	pkt->l3.kind = ROCE_L3_IPV4;
	pkt->l3.tclass = buf[1];
	pkt->l3.hop_limit = buf[8];
	pkt->ip_id = wire_get16(buf + 4);
	pkt->ip_df = frag & 0x4000;
	pkt->ip_len = (uint32_t)tot;
	roce_addr_from_ipv4(pkt->l3.src, wire_get32(buf + 12));
	roce_addr_from_ipv4(pkt->l3.dst, wire_get32(buf + 16));

	err = parse_udp_hdr(buf + ROCE_IPV4_HLEN, tot - ROCE_IPV4_HLEN, dport, pkt);
	if (err)
		return err;
	uint32_t crc;
	err = roce_icrc_ipv4(buf, tot, &crc);
	if (err)
		return err;
	finish_icrc(pkt, crc);
	return pkt->icrc_ok ? ROCE_OK : ROCE_E_ICRC;
}

/* Fields shared by the IPv6 header and the GRH. */
static void decode_ipv6(const uint8_t *buf, uint8_t kind, struct roce_pkt *pkt)
{
	pkt->l3.kind = kind;
	pkt->l3.tclass = (uint8_t)(wire_get16(buf) >> 4);
	pkt->l3.flow_label = wire_get32(buf) & 0xFFFFF;
	pkt->l3.hop_limit = buf[7];
	pkt->ip_len = ROCE_IPV6_HLEN + wire_get16(buf + 4);
	memcpy(pkt->l3.src, buf + 8, 16);
	memcpy(pkt->l3.dst, buf + 24, 16);
}

static int parse_ipv6(const uint8_t *buf, size_t len, uint16_t dport, struct roce_pkt *pkt)
{
	size_t plen;
	uint32_t crc;
	int err;

	if (len < ROCE_IPV6_HLEN)
		return ROCE_E_IP_TRUNC;
	plen = wire_get16(buf + 4);
	if (ROCE_IPV6_HLEN + plen > len)
		return ROCE_E_IP_LEN;
	if (buf[6] != IPPROTO_UDP_NUM) /* extension headers are not used by RoCEv2 */
		return ROCE_E_IP_PROTO;
	decode_ipv6(buf, ROCE_L3_IPV6, pkt);
	err = parse_udp_hdr(buf + ROCE_IPV6_HLEN, plen, dport, pkt);
	if (err)
		return err;
	err = roce_icrc_ipv6(buf, ROCE_IPV6_HLEN + plen, &crc);
	if (err)
		return err;
	finish_icrc(pkt, crc);
	return pkt->icrc_ok ? ROCE_OK : ROCE_E_ICRC;
}

int roce_parse_ip(const uint8_t *buf, size_t len, uint16_t dport, struct roce_pkt *pkt)
{
	if (!buf || !pkt)
		return ROCE_E_INVAL;
	clear_pkt(pkt);
	if (len < 1)
		return ROCE_E_IP_TRUNC;
	switch (buf[0] >> 4) {
	case 4:
		return parse_ipv4(buf, len, dport, pkt);
	case 6:
		return parse_ipv6(buf, len, dport, pkt);
	default:
		return ROCE_E_IP_VERSION;
	}
}

int roce_parse_grh(const uint8_t *buf, size_t len, struct roce_pkt *pkt)
{
	size_t plen;
	uint32_t crc;
	int err;

	if (!buf || !pkt)
		return ROCE_E_INVAL;
	clear_pkt(pkt);
	if (len < ROCE_GRH_LEN)
		return ROCE_E_GRH_TRUNC;
	if (buf[0] >> 4 != 6)
		return ROCE_E_GRH_VERSION;
	if (buf[6] != ROCE_GRH_NXTHDR_BTH)
		return ROCE_E_GRH_NXTHDR;
	plen = wire_get16(buf + 4);
	if (ROCE_GRH_LEN + plen > len)
		return ROCE_E_GRH_LEN;
	decode_ipv6(buf, ROCE_L3_GRH, pkt);
	err = roce_parse_bth(buf + ROCE_GRH_LEN, plen, pkt);
	if (err)
		return err;
	err = roce_icrc_grh(buf, ROCE_GRH_LEN + plen, &crc);
	if (err)
		return err;
	finish_icrc(pkt, crc);
	return pkt->icrc_ok ? ROCE_OK : ROCE_E_ICRC;
}

/* The part of roce_parse_udp before the ICRC. */
static int parse_udp_headers(const uint8_t *buf, size_t len, const struct roce_l3 *l3,
			     struct roce_pkt *pkt)
{
	if (!buf || !pkt || !l3 || (l3->kind != ROCE_L3_IPV4 && l3->kind != ROCE_L3_IPV6))
		return ROCE_E_INVAL;
	if (l3->kind == ROCE_L3_IPV4 &&
	    (!roce_addr_is_v4mapped(l3->src) || !roce_addr_is_v4mapped(l3->dst)))
		return ROCE_E_INVAL;
	clear_pkt(pkt);
	pkt->l3 = *l3;
	pkt->ip_df = l3->kind == ROCE_L3_IPV4;
	pkt->ip_len = (uint32_t)(roce_ip_udp_hlen(l3->kind) + (len > 65535 ? 65535 : len));
	return roce_parse_bth(buf, len, pkt);
}

int roce_parse_udp_verified(const uint8_t *buf, size_t len, const struct roce_l3 *l3,
			    struct roce_pkt *pkt)
{
	int err = parse_udp_headers(buf, len, l3, pkt);

	if (err)
		return err;
	pkt->ip_id = 0;
	finish_icrc(pkt, pkt->icrc_wire);
	return ROCE_OK;
}

int roce_parse_udp(const uint8_t *buf, size_t len, const struct roce_l3 *l3,
		   struct roce_pkt *pkt)
{
	uint32_t crc;
	int err;

	err = parse_udp_headers(buf, len, l3, pkt);
	if (err)
		return err;
	err = roce_icrc_udp_check(buf, len, l3, &crc, &pkt->ip_id);
	if (err && err != ROCE_E_ICRC)
		return err;
	finish_icrc(pkt, crc);
	return pkt->icrc_ok ? ROCE_OK : ROCE_E_ICRC;
}
