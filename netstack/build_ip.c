/*
 * build_ip.c - IPv4/IPv6 + UDP headers in front of a RoCEv2 UDP payload, as
 * a Linux UDP socket would send them: IPv4 with DF, no options and a
 * header checksum; a real UDP checksum (rxe sends 0, which the ICRC masks,
 * but tshark flags a zero checksum over IPv6).  Used for pcap files and
 * tests; the daemon sends UDP payloads and lets the kernel do this.
 * Also the v4-mapped address helpers of struct roce_l3.
 */
#include <string.h>

#include "netstack/icrc.h"
#include "netstack/packet.h"
#include "netstack/wire.h"

static const uint8_t v4mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

void roce_addr_from_ipv4(uint8_t a16[16], uint32_t ipv4)
{
	memcpy(a16, v4mapped_prefix, sizeof(v4mapped_prefix));
	wire_put32(a16 + 12, ipv4);
}

bool roce_addr_is_v4mapped(const uint8_t a16[16])
{
	return memcmp(a16, v4mapped_prefix, sizeof(v4mapped_prefix)) == 0;
}

size_t roce_ip_udp_hlen(uint8_t kind)
{
	if (kind == ROCE_L3_IPV4)
		return ROCE_IPV4_HLEN + ROCE_UDP_HLEN;
	if (kind == ROCE_L3_IPV6)
		return ROCE_IPV6_HLEN + ROCE_UDP_HLEN;
	return 0;
}

/* Ones'-complement sum of N bytes (RFC 1071), folded later. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	for (; n > 1; n -= 2, p += 2)
		sum += wire_get16(p);
	if (n)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* UDP checksum over the pseudo-header and the UDP datagram at U (ULEN bytes). */
static uint16_t udp_csum(const struct roce_l3 *l3, const uint8_t *u, size_t ulen)
{
	uint32_t sum = 0;
	uint16_t c;

	if (l3->kind == ROCE_L3_IPV4) {
		sum = csum_add(sum, l3->src + 12, 4);
		sum = csum_add(sum, l3->dst + 12, 4);
	} else {
		sum = csum_add(sum, l3->src, 16);
		sum = csum_add(sum, l3->dst, 16);
	}
	sum += 17u + (uint32_t)ulen; /* protocol, UDP length (fits 16 bits for both) */
	sum = csum_add(sum, u, ulen);
	c = csum_fold(sum);
	return c ? c : 0xffff; /* 0 means "no checksum" (RFC 768) */
}

static int check_l3(const struct roce_l3 *l3)
{
	if (!l3)
		return ROCE_E_INVAL;
	if (l3->kind == ROCE_L3_IPV4)
		return roce_addr_is_v4mapped(l3->src) && roce_addr_is_v4mapped(l3->dst) ? ROCE_OK
											  : ROCE_E_INVAL;
	if (l3->kind == ROCE_L3_IPV6)
		return l3->flow_label <= 0xFFFFF ? ROCE_OK : ROCE_E_INVAL;
	return ROCE_E_INVAL;
}

/* Write IP + UDP headers (IPv4 identification IP_ID) for a UDP payload of
 * LEN bytes that already sits at buf + roce_ip_udp_hlen(kind); then the UDP
 * checksum over it. */
static void put_headers(uint8_t *buf, const struct roce_l3 *l3, uint16_t ip_id, size_t len)
{
	uint8_t hop = l3->hop_limit ? l3->hop_limit : 64;
	size_t hl = roce_ip_udp_hlen(l3->kind) - ROCE_UDP_HLEN;
	uint8_t *u = buf + hl;

	if (l3->kind == ROCE_L3_IPV4) {
		buf[0] = 0x45;
		buf[1] = l3->tclass;
		wire_put16(buf + 2, (uint16_t)(hl + ROCE_UDP_HLEN + len));
		wire_put16(buf + 4, ip_id);
		wire_put16(buf + 6, 0x4000); /* DF */
		buf[8] = hop;
		buf[9] = 17;
		wire_put16(buf + 10, 0);
		memcpy(buf + 12, l3->src + 12, 4);
		memcpy(buf + 16, l3->dst + 12, 4);
		wire_put16(buf + 10, csum_fold(csum_add(0, buf, ROCE_IPV4_HLEN)));
	} else {
		wire_put32(buf, 6u << 28 | (uint32_t)l3->tclass << 20 | l3->flow_label);
		wire_put16(buf + 4, (uint16_t)(ROCE_UDP_HLEN + len));
		buf[6] = 17;
		buf[7] = hop;
		memcpy(buf + 8, l3->src, 16);
		memcpy(buf + 24, l3->dst, 16);
	}
	wire_put16(u, l3->sport);
	wire_put16(u + 2, l3->dport);
	wire_put16(u + 4, (uint16_t)(ROCE_UDP_HLEN + len));
	wire_put16(u + 6, 0);
	wire_put16(u + 6, udp_csum(l3, u, ROCE_UDP_HLEN + len));
}

/* Largest UDP payload in one IPv4 datagram (65535 - 20 - 8). */
#define MAX_UDP_PAYLOAD 65507u

int roce_wrap_ip(uint8_t *buf, size_t cap, const struct roce_l3 *l3, const uint8_t *udp_payload,
		 size_t len, size_t *out_len)
{
	size_t hlen;
	int err;

	if (!buf || !udp_payload || !out_len)
		return ROCE_E_INVAL;
	err = check_l3(l3);
	if (err)
		return err;
	if (len > MAX_UDP_PAYLOAD)
		return ROCE_E_IP_LEN;
	hlen = roce_ip_udp_hlen(l3->kind);
	if (cap < hlen + len)
		return ROCE_E_NOSPC;
	memmove(buf + hlen, udp_payload, len);
	put_headers(buf, l3, l3->ip_id, len);
	*out_len = hlen + len;
	return ROCE_OK;
}

int roce_build_ip(uint8_t *buf, size_t cap, const struct roce_l3 *l3, const struct roce_hdrs *h,
		  const void *payload, uint32_t len, size_t *out_len)
{
	size_t hlen, n;
	int err;

	if (!buf || !out_len)
		return ROCE_E_INVAL;
	err = check_l3(l3);
	if (err)
		return err;
	hlen = roce_ip_udp_hlen(l3->kind);
	if (cap < hlen)
		return ROCE_E_NOSPC;
	err = roce_build_udp(buf + hlen, cap - hlen, l3, h, payload, len, &n);
	if (err)
		return err;
	put_headers(buf, l3, 0, n); /* the ICRC was computed for ID 0 */
	*out_len = hlen + n;
	return ROCE_OK;
}
