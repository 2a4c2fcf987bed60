/*
 * inspect_decode.c - classify and decode one captured frame (see
 * inspect_decode.h).  The only bytes read here are the few that decide
 * "is this RoCE?" (IP protocol, fragment offset, UDP port) and the
 * addresses to print; every RoCE header is decoded by the netstack codec.
 */
#include "config.h"

#include "decode.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#define IPPROTO_UDP_NUM 17u

static const struct {
	const char *name;
	const char *msg;
} insp_errs[INSP_E__END - ROCE_E__COUNT] = {
	[INSP_E_CAPTURE_TRUNCATED - ROCE_E__COUNT] = {
		"CAPTURE_TRUNCATED",
		"packet cut short by the capture's snapshot length (caplen < len)" },
	[INSP_E_LINK_TRUNCATED - ROCE_E__COUNT] = {
		"LINK_TRUNCATED", "frame shorter than its link-layer header" },
	[INSP_E_IPV6_EXTHDR - ROCE_E__COUNT] = {
		"IPV6_EXTHDR",
		"IPv6 extension headers before UDP (RoCEv2 uses none; not decoded)" },
};

const char *insp_err_name(int e)
{
	if (e >= ROCE_E__COUNT && e < INSP_E__END)
		return insp_errs[e - ROCE_E__COUNT].name;
	return roce_err_name(e);
}

const char *insp_err_message(int e)
{
	if (e >= ROCE_E__COUNT && e < INSP_E__END)
		return insp_errs[e - ROCE_E__COUNT].msg;
	return roce_strerror(e);
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_addr(char *out, size_t cap, int af, const uint8_t *a)
{
	if (!inet_ntop(af, a, out, (socklen_t)cap))
		snprintf(out, cap, "?");
}

/* IPv6 next-header values of extension headers (RFC 8200 §4, RFC 4302). */
#define IP6_HOPOPTS 0u
#define IP6_ROUTING 43u
#define IP6_FRAGMENT 44u
#define IP6_AH 51u
#define IP6_DSTOPTS 60u
#define IP6_MAX_EXT 8u	/* more than this many is not a sender we decode */

/*
 * Walk the extension headers of the IPv6 packet P (LEN bytes) to the upper
 * layer.  Returns its offset in bytes and stores its protocol in *NH, or 0
 * if the chain is cut short, too long, or the packet is a later fragment
 * (then there is no UDP header to look at).
 */
static size_t ipv6_upper(const uint8_t *p, size_t len, unsigned *nh)
{
	size_t off = 40, hl;
	unsigned n;

	*nh = p[6];
	for (n = 0; n <= IP6_MAX_EXT; n++) {
		switch (*nh) {
		case IP6_HOPOPTS:
		case IP6_ROUTING:
		case IP6_DSTOPTS:
		case IP6_FRAGMENT:
		case IP6_AH:
			break;
		default:
			return off;
		}
		if (len < off + 8)
			return 0;
		if (*nh == IP6_FRAGMENT) {
			if (rd16(p + off + 2) & 0xFFF8u)
				return 0;	/* a later fragment */
			hl = 8;
		} else if (*nh == IP6_AH) {
			hl = ((size_t)p[off + 1] + 2) * 4;	/* 4-byte units, minus 2 */
		} else {
			hl = ((size_t)p[off + 1] + 1) * 8;	/* 8-byte units, minus 1 */
		}
		*nh = p[off];
		off += hl;
	}
	return 0;
}

/*
 * Is this IP packet UDP to PORT?  1 yes (a RoCEv2 candidate), 0 no (skip),
 * 2 yes but behind IPv6 extension headers, which the codec does not take.
 * Packets too short to tell are candidates: the codec names their defect.
 * Also fills the printable addresses and ports when the bytes are there.
 */
static int ip_candidate(const struct link_info *l, uint16_t port, struct insp_rec *rec)
{
	const uint8_t *p = l->l3;
	size_t len = l->l3_len, l4;
	unsigned proto;

	if (l->kind == LINK_IPV4) {
		if (len < 20)
			return 1;
		put_addr(rec->src, sizeof(rec->src), AF_INET, p + 12);
		put_addr(rec->dst, sizeof(rec->dst), AF_INET, p + 16);
		rec->have_addr = 1;
		proto = p[9];
		l4 = (size_t)(p[0] & 0x0F) * 4;
		if (proto != IPPROTO_UDP_NUM)
			return 0;
		if ((rd16(p + 6) & 0x1FFF) != 0)
			return 0;	/* a later fragment: no UDP header in it */
		if (l4 < 20 || len < l4 + 4)
			return 1;
	} else {
		if (len < 40)
			return 1;
		put_addr(rec->src, sizeof(rec->src), AF_INET6, p + 8);
		put_addr(rec->dst, sizeof(rec->dst), AF_INET6, p + 24);
		rec->have_addr = 1;
		if (p[6] != IPPROTO_UDP_NUM) {
			/* RoCEv2 senders use no extension headers, but a UDP
			 * packet to PORT behind some is reported, not hidden. */
			l4 = ipv6_upper(p, len, &proto);
			if (!l4 || proto != IPPROTO_UDP_NUM || len < l4 + 4)
				return 0;
			rec->sport = rd16(p + l4);
			rec->dport = rd16(p + l4 + 2);
			return rec->dport == port ? 2 : 0;
		}
		l4 = 40;
		if (len < l4 + 4)
			return 1;
	}
	rec->sport = rd16(p + l4);
	rec->dport = rd16(p + l4 + 2);
	return rec->dport == port;
}

/* Which roce_pkt fields the codec filled for result RC (packet.h, struct roce_pkt). */
static void validity(struct insp_rec *rec, int rc)
{
	rec->have_all = rc == ROCE_OK || rc == ROCE_E_ICRC;
	rec->have_bth = rec->have_all || (rc >= ROCE_E_TVER && rc <= ROCE_E_PAD_TOO_BIG);
}

/*
 * A RoCE packet cut by the snapshot length (tcpdump -s 128 is a common way
 * to record only headers): fill the BTH fields when the capture holds the
 * whole BTH.  Only the BTH: the codec takes the last captured bytes for the
 * ICRC, so nothing after the BTH is trusted.
 */
static void cut_bth(const struct link_info *l, struct insp_rec *rec)
{
	const uint8_t *p = l->l3;
	struct roce_pkt pkt;
	size_t off;

	if (rec->version == 1)
		off = ROCE_GRH_LEN;
	else if (l->kind == LINK_IPV4)
		off = ROCE_IPV4_HLEN + ROCE_UDP_HLEN;
	else
		off = ROCE_IPV6_HLEN + ROCE_UDP_HLEN;
	if (l->l3_len < off + ROCE_BTH_LEN)
		return;
	/* The encapsulation must be the plain one the codec knows. */
	if (rec->version == 1 ? p[0] >> 4 != 6 || p[6] != ROCE_GRH_NXTHDR_BTH
	    : l->kind == LINK_IPV4 ? p[0] != 0x45 || p[9] != IPPROTO_UDP_NUM
				   : p[0] >> 4 != 6 || p[6] != IPPROTO_UDP_NUM)
		return;
	if (roce_parse_bth(p + off, l->l3_len - off, &pkt) == ROCE_E_INVAL)
		return;
	rec->pkt.h = pkt.h;
	rec->pkt.op = pkt.op;
	rec->have_bth = 1;
}

enum insp_status insp_decode(int dlt, const uint8_t *frame, size_t caplen, size_t len,
			     uint16_t port, struct insp_rec *rec)
{
	struct link_info *l = &rec->link;
	int rc;

	rec->status = INSP_SKIPPED;
	rec->version = 0;
	rec->err = ROCE_OK;
	rec->have_addr = rec->have_bth = rec->have_all = 0;
	rec->src[0] = rec->dst[0] = '\0';
	rec->sport = rec->dport = 0;
	memset(&rec->pkt, 0, sizeof(rec->pkt));

	switch (link_decap(dlt, frame, caplen, l)) {
	case LINK_IPV4:
	case LINK_IPV6:
		rc = ip_candidate(l, port, rec);
		if (!rc)
			return rec->status;
		rec->version = 2;
		if (rc == 2) {
			rec->status = INSP_MALFORMED;
			rec->err = INSP_E_IPV6_EXTHDR;
			return rec->status;
		}
		/* The codec goes by the version nibble; the Ethertype must agree,
		 * or the addresses above were read at the wrong offsets. */
		if (l->l3_len && l->l3[0] >> 4 != (l->kind == LINK_IPV4 ? 4 : 6))
			rc = ROCE_E_IP_VERSION;
		else
			rc = roce_parse_ip(l->l3, l->l3_len, port, &rec->pkt);
		break;
	case LINK_ROCEV1:
		rec->version = 1;
		if (l->l3_len >= ROCE_GRH_LEN) {
			put_addr(rec->src, sizeof(rec->src), AF_INET6, l->l3 + 8);
			put_addr(rec->dst, sizeof(rec->dst), AF_INET6, l->l3 + 24);
			rec->have_addr = 1;
		}
		rc = roce_parse_grh(l->l3, l->l3_len, &rec->pkt);
		break;
	case LINK_TRUNCATED:
		rec->status = INSP_MALFORMED;
		rec->err = caplen < len ? INSP_E_CAPTURE_TRUNCATED : INSP_E_LINK_TRUNCATED;
		return rec->status;
	case LINK_OTHER:
	case LINK_UNSUPPORTED:
	default:
		return rec->status;
	}

	validity(rec, rc);
	rec->err = rc;
	if (rc == ROCE_OK) {
		rec->status = INSP_OK;
	} else if (rc == ROCE_E_ICRC) {
		rec->status = INSP_BAD_ICRC;
	} else {
		rec->status = INSP_MALFORMED;
		/* The real reason a packet is short is the snapshot length. */
		if (caplen < len) {
			rec->err = INSP_E_CAPTURE_TRUNCATED;
			if (!rec->have_bth)
				cut_bth(l, rec);
		}
	}
	return rec->status;
}
