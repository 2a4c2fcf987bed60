/*
 * icrc_id.c - the receive-side ICRC check without the IPv4 ID (icrc.h,
 * roce_icrc_ipv4_id; derivation and cost in docs/icrc.md).
 *
 * Arithmetic is in GF(2)[x] mod the CRC-32 polynomial P, in zlib's
 * reflected representation: bit 31 of a word is the coefficient of x^0,
 * bit 0 that of x^31.  For two messages of the same length that differ only
 * in the ID field, the CRCs differ by D(x) * x^(8n + 32) mod P, where D is
 * the 16-bit difference (first bit on the wire = highest degree) and n the
 * number of bytes hashed after the ID.  x is invertible mod P (P(0) = 1), so
 * D = delta * x^-(8n + 32) mod P; a consistent ID exists iff that product
 * has degree < 16.
 */
#include <stdbool.h>

#include "netstack/icrc.h"
#include "netstack/packet.h"

#define POLY_REFLECTED 0xEDB88320u /* 0x04C11DB7 reflected (IEEE 802.3) */
#define GF_ONE 0x80000000u /* the polynomial 1 */
#define GF_X 0x40000000u   /* the polynomial x */
/* x^-1 mod P = x^31 + (P - x^32 - 1) / x: x times it is P - 1, i.e. 1 mod P. */
#define GF_X_INV ((((POLY_REFLECTED ^ GF_ONE) << 1) | 1u) & 0xFFFFFFFFu)

/* IPv4 total length bounds: IPv4 20 + UDP 8 + BTH 12 + ICRC 4 .. 65535. */
#define IP_LEN_MIN (ROCE_IPV4_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
#define IP_LEN_MAX 65535u

/* A * B mod P: B times each x^k of A, B stepping by one power of x.  Without
 * branches on the bits: A is data (the ICRC difference). */
static uint32_t gf_mul(uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	for (int k = 0; k < 32; k++) {
		r ^= b & (0u - (a >> 31));
		a <<= 1;
		b = (b >> 1) ^ (POLY_REFLECTED & (0u - (b & 1u)));
	}
	return r;
}

/* B^E mod P by square and multiply. */
static uint32_t gf_pow(uint32_t b, uint32_t e)
{
	uint32_t r = GF_ONE, s = b;

	for (; e; e >>= 1) {
		if (e & 1u)
			r = gf_mul(r, s);
		s = gf_mul(s, s);
	}
	return r;
}

/*
 * x^-(8n + 32) for an IPv4 total length L.  The CRC runs over the 8-byte
 * pseudo-LRH and L - 4 bytes of packet; the ID is IP bytes 4..5, so
 * n = 8 + L - 4 - (8 + 6) = L - 10 bytes follow it and 8n + 32 = 8L - 48.
 * Cached per length: 0 is never a power of x, so it marks "not yet".
 */
static uint32_t id_unshift(size_t ip_len)
{
	static uint32_t cache[IP_LEN_MAX + 1];
	uint32_t v = __atomic_load_n(&cache[ip_len], __ATOMIC_RELAXED);

	if (!v) {
		v = gf_pow(GF_X_INV, (uint32_t)(8 * ip_len - 48));
		__atomic_store_n(&cache[ip_len], v, __ATOMIC_RELAXED);
	}
	return v;
}

/* x^(8L - 48) for an IPv4 total length L: the forward shift of id_unshift,
 * cached the same way. */
static uint32_t id_shift(size_t ip_len)
{
	static uint32_t cache[IP_LEN_MAX + 1];
	uint32_t v = __atomic_load_n(&cache[ip_len], __ATOMIC_RELAXED);

	if (!v) {
		v = gf_pow(GF_X, (uint32_t)(8 * ip_len - 48));
		__atomic_store_n(&cache[ip_len], v, __ATOMIC_RELAXED);
	}
	return v;
}

uint32_t roce_icrc_ipv4_id_delta(size_t ip_len, uint16_t id)
{
	/* ID as a polynomial: first byte on the wire in bits 16..23 (LSB first) */
	uint32_t d = (uint32_t)(id & 0xFFu) << 24 | (uint32_t)(id >> 8) << 16;

	if (ip_len < IP_LEN_MIN || ip_len > IP_LEN_MAX)
		return 0;
	return gf_mul(d, id_shift(ip_len));
}

bool roce_icrc_ipv4_id(uint32_t crc_id0, uint32_t icrc_wire, size_t ip_len, uint16_t *id)
{
	uint32_t d;

	if (ip_len < IP_LEN_MIN || ip_len > IP_LEN_MAX)
		return false;
	d = gf_mul(crc_id0 ^ icrc_wire, id_unshift(ip_len));
	if (d & 0xFFFFu) /* a term of degree >= 16: no 16-bit ID explains it */
		return false;
	/* bits 16..23 are the first ID byte on the wire (LSB first), 24..31 the second */
	if (id)
		*id = (uint16_t)((d >> 8 & 0xFF00u) | d >> 24);
	return true;
}

int roce_icrc_udp_check(const uint8_t *bth, size_t len, const struct roce_l3 *l3, uint32_t *crc,
			uint16_t *ip_id)
{
	uint32_t c, wire;
	uint16_t id = 0;
	int err;

	err = roce_icrc_udp(bth, len, l3, &c);
	if (err)
		return err;
	wire = roce_icrc_get(bth + len - ROCE_ICRC_LEN);
	if (c != wire && l3->kind == ROCE_L3_IPV4 &&
	    roce_icrc_ipv4_id(c, wire, ROCE_IPV4_HLEN + ROCE_UDP_HLEN + len, &id))
		c = wire;
	if (crc)
		*crc = c;
	if (ip_id)
		*ip_id = id;
	return c == wire ? ROCE_OK : ROCE_E_ICRC;
}
