/*
 * tso.c - TCP segmentation of an IBV_WR_TSO send (see tso.h). Header
 * layouts: RFC 791 (IPv4), RFC 8200 (IPv6), RFC 9293 (TCP).
 */
#include "config.h"
#include "emu/eth/tso.h"

#include <string.h>

#define TCP_FIN 0x01
#define TCP_PSH 0x08
#define TCP_CWR 0x80

static void wr16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The IP length field of the L3 header at F + FI->l3_off for L4_BYTES of
 * TCP header and payload. */
static void set_ip_len(uint8_t *f, const struct frame_info *fi, uint32_t l4_bytes)
{
	if (fi->l3 == FRAME_L3_IPV4)
		wr16(f + fi->l3_off + 2, fi->ihl + l4_bytes);
	else
		wr16(f + fi->l3_off + 4, l4_bytes);
}

bool tso_hdr_check(const uint8_t *hdr, uint32_t hdr_sz, struct frame_info *fi)
{
	uint8_t tmp[ETH_HLEN_ + ETH_VLAN_HLEN + 60 + 60];
	struct frame_info probe;

	if (hdr_sz > sizeof(tmp))
		return false;
	memcpy(tmp, hdr, hdr_sz);
	/* the lengths as if the frame were the header alone, so that parsing
	 * finds the TCP header whatever the application put there */
	if (!frame_parse(tmp, hdr_sz, &probe) || probe.l3 == FRAME_L3_NONE)
		return false;
	set_ip_len(tmp, &probe, hdr_sz - probe.l3_off - probe.ihl);
	if (!frame_parse(tmp, hdr_sz, fi) || fi->frag || fi->proto != IP_PROTO_TCP || fi->l4_off == 0)
		return false;
	return fi->l4_off + (uint32_t)(tmp[fi->l4_off + 12] >> 4) * 4 == hdr_sz;
}

uint32_t tso_segments(uint32_t len, uint32_t mss)
{
	return len <= mss ? 1 : (len + mss - 1) / mss;
}

uint32_t tso_build(const uint8_t *hdr, uint32_t hdr_sz, const struct frame_info *fi, const uint8_t *payload,
		   uint32_t len, uint32_t mss, uint32_t i, bool csum, uint8_t *out)
{
	uint32_t n = tso_segments(len, mss), off = i * mss;
	uint32_t seg = len - off < mss ? len - off : mss;
	uint8_t *tcp = out + fi->l4_off, *ip = out + fi->l3_off;
	uint32_t seq;

	memcpy(out, hdr, hdr_sz);
	memcpy(out + hdr_sz, payload + off, seg);
	set_ip_len(out, fi, hdr_sz - fi->l4_off + seg);
	if (fi->l3 == FRAME_L3_IPV4)
		wr16(ip + 4, (uint32_t)(ip[4] << 8 | ip[5]) + i);
	seq = (uint32_t)tcp[4] << 24 | (uint32_t)tcp[5] << 16 | (uint32_t)tcp[6] << 8 | tcp[7];
	seq += off;
	wr16(tcp + 4, seq >> 16);
	wr16(tcp + 6, seq & 0xFFFF);
	if (i + 1 < n)
		tcp[13] &= (uint8_t)~(TCP_FIN | TCP_PSH);
	if (i > 0)
		tcp[13] &= (uint8_t)~TCP_CWR;
	if (csum) {
		struct frame_info sfi;

		if (frame_parse(out, hdr_sz + seg, &sfi))
			frame_fill_csum(out, &sfi);
	}
	return hdr_sz + seg;
}
