/*
 * frame.c - Ethernet / IPv4 / IPv6 / TCP / UDP decoding and checksums
 * (see frame.h). Header layouts: IEEE 802.3 and 802.1Q, RFC 791 (IPv4),
 * RFC 8200 (IPv6), RFC 9293 (TCP), RFC 768 (UDP); checksum RFC 1071.
 */
#include "config.h"
#include "emu/eth/frame.h"

#include <string.h>

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

uint32_t frame_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	while (len > 1) {
		sum += rd16(p);
		p += 2;
		len -= 2;
		if (sum & 0x80000000u)
			sum = (sum & 0xFFFF) + (sum >> 16);
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

uint16_t frame_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)sum;
}

uint32_t frame_crc32(const uint8_t *p, size_t len)
{
	static uint32_t table[256];
	uint32_t crc = 0xFFFFFFFFu;

	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	while (len--)
		crc = table[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
	return ~crc;
}

static void parse_l4(const uint8_t *f, size_t len, struct frame_info *fi, uint32_t off, uint32_t l4_len)
{
	if (off + l4_len > len)
		return;
	if (fi->proto == IP_PROTO_UDP && l4_len >= 8) {
		fi->l4 = FRAME_L4_UDP;
	} else if (fi->proto == IP_PROTO_TCP && l4_len >= 20) {
		uint32_t doff = (uint32_t)(f[off + 12] >> 4) * 4;
		bool ack = f[off + 13] & 0x10;

		if (doff < 20 || doff > l4_len)
			return;
		fi->l4 = !ack ? FRAME_L4_TCP_NO_ACK :
		         l4_len > doff ? FRAME_L4_TCP_ACK_AND_DATA : FRAME_L4_TCP_ACK_NO_DATA;
	} else {
		return;
	}
	fi->l4_off = off;
	fi->l4_len = l4_len;
}

bool frame_parse(const uint8_t *f, size_t len, struct frame_info *fi)
{
	uint32_t off = ETH_HLEN_;

	memset(fi, 0, sizeof(*fi));
	if (len < ETH_HLEN_)
		return false;
	fi->dst_mac = f;
	fi->src_mac = f + 6;
	fi->ether_type = rd16(f + 12);
	if (fi->ether_type == ETH_P_8021Q && len >= ETH_HLEN_ + ETH_VLAN_HLEN) {
		fi->has_vlan = true;
		fi->vlan_tci = rd16(f + 14);
		fi->ether_type = rd16(f + 16);
		off += ETH_VLAN_HLEN;
	}
	if (fi->ether_type == ETH_P_IPV4 && len >= off + 20 && (f[off] >> 4) == 4) {
		uint32_t ihl = (uint32_t)(f[off] & 0xF) * 4, tot = rd16(f + off + 2);

		if (ihl < 20 || off + ihl > len)
			return true;
		/* a ConnectX parses the headers whatever the length fields say;
		 * only what the frame holds is used */
		if (tot < ihl || off + tot > len) {
			fi->len_bad = true;
			tot = tot < ihl ? ihl : (uint32_t)len - off;
		}
		fi->l3 = FRAME_L3_IPV4;
		fi->l3_off = off;
		fi->l3_len = tot;
		fi->ihl = ihl;
		fi->proto = f[off + 9];
		fi->frag = (rd16(f + off + 6) & 0x3FFF) != 0;
		if (!fi->frag)
			parse_l4(f, len, fi, off + ihl, tot - ihl);
	} else if (fi->ether_type == ETH_P_IPV6 && len >= off + 40 && (f[off] >> 4) == 6) {
		uint32_t plen = rd16(f + off + 4);

		if (off + 40 + plen > len) {
			fi->len_bad = true;
			plen = (uint32_t)len - off - 40;
		}
		fi->l3 = FRAME_L3_IPV6;
		fi->l3_off = off;
		fi->l3_len = 40 + plen;
		fi->ihl = 40;
		fi->proto = f[off + 6];
		parse_l4(f, len, fi, off + 40, plen);
	}
	return true;
}

/* Checksum over the pseudo header and the L4 bytes (checksum field included
 * as it stands). */
static uint32_t l4_sum(const uint8_t *f, const struct frame_info *fi)
{
	uint32_t sum = 0;

	if (fi->l3 == FRAME_L3_IPV4)
		sum = frame_csum_add(sum, f + fi->l3_off + 12, 8);
	else
		sum = frame_csum_add(sum, f + fi->l3_off + 8, 32);
	sum += fi->proto;
	sum += fi->l4_len & 0xFFFF;
	sum += fi->l4_len >> 16;
	return frame_csum_add(sum, f + fi->l4_off, fi->l4_len);
}

static uint32_t l4_csum_off(const struct frame_info *fi)
{
	return fi->l4_off + (fi->l4 == FRAME_L4_UDP ? 6 : 16);
}

void frame_fill_csum(uint8_t *f, const struct frame_info *fi)
{
	if (fi->l3 == FRAME_L3_IPV4) {
		uint8_t *ip = (uint8_t *)f + fi->l3_off;
		uint16_t c;

		ip[10] = ip[11] = 0;
		c = (uint16_t)~frame_csum_fold(frame_csum_add(0, ip, fi->ihl));
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
	}
	if (fi->l4 != FRAME_L4_NONE) {
		uint8_t *cs = f + l4_csum_off(fi);
		uint16_t c;

		cs[0] = cs[1] = 0;
		c = (uint16_t)~frame_csum_fold(l4_sum(f, fi));
		if (c == 0 && fi->l4 == FRAME_L4_UDP)
			c = 0xFFFF;
		cs[0] = (uint8_t)(c >> 8);
		cs[1] = (uint8_t)c;
	}
}

void frame_check_csum(const uint8_t *f, const struct frame_info *fi, bool *l3_ok, bool *l4_ok)
{
	*l3_ok = fi->l3 == FRAME_L3_IPV6 ||
		 (fi->l3 == FRAME_L3_IPV4 && frame_csum_fold(frame_csum_add(0, f + fi->l3_off, fi->ihl)) == 0xFFFF);
	*l4_ok = false;
	if (fi->l4 == FRAME_L4_NONE || fi->len_bad)
		return;
	if (fi->l4 == FRAME_L4_UDP && fi->l3 == FRAME_L3_IPV4 && rd16(f + l4_csum_off(fi)) == 0) {
		*l4_ok = true;
		return;
	}
	*l4_ok = frame_csum_fold(l4_sum(f, fi)) == 0xFFFF;
}

uint32_t frame_toeplitz(const uint8_t *key, size_t key_len, const uint8_t *in, size_t n)
{
	uint32_t hash = 0, window = 0;
	size_t kbit = 32; /* next key bit to shift into the window */

	for (size_t i = 0; i < 4; i++)
		window = window << 8 | (i < key_len ? key[i] : 0);
	for (size_t i = 0; i < n; i++) {
		for (int b = 7; b >= 0; b--) {
			size_t kb = kbit / 8;

			if (in[i] >> b & 1)
				hash ^= window;
			window = window << 1 | (kb < key_len ? (uint32_t)(key[kb] >> (7 - kbit % 8)) & 1 : 0);
			kbit++;
		}
	}
	return hash;
}
