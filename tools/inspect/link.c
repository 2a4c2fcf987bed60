/*
 * inspect_link.c - link-layer framing for `uroce inspect` (see inspect_link.h).
 * Every read is checked against the captured length first.
 */
#include "config.h"

#include "link.h"

#include <pcap/pcap.h>
#include <string.h>

#define ETHERTYPE_IPV4 0x0800u
#define ETHERTYPE_IPV6 0x86DDu
#define ETHERTYPE_VLAN 0x8100u		/* IEEE 802.1Q */
#define ETHERTYPE_QINQ 0x88A8u		/* IEEE 802.1ad service tag */
#define ETHERTYPE_QINQ_OLD 0x9100u	/* pre-standard double tagging */

#define ETH_HLEN 14u
#define VLAN_HLEN 4u
#define SLL_HLEN 16u	/* pkttype 2, hatype 2, halen 2, addr 8, protocol 2 */
#define SLL2_HLEN 20u	/* protocol 2, resv 2, ifindex 4, hatype 2, pkttype 1, halen 1, addr 8 */

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static enum link_kind set(struct link_info *out, enum link_kind kind, const uint8_t *l3, size_t len)
{
	out->kind = kind;
	out->l3 = l3;
	out->l3_len = len;
	return kind;
}

/* Raw IP: the version nibble decides. */
static enum link_kind by_version(struct link_info *out, const uint8_t *p, size_t len)
{
	if (len < 1)
		return set(out, LINK_TRUNCATED, p, len);
	switch (p[0] >> 4) {
	case 4:
		return set(out, LINK_IPV4, p, len);
	case 6:
		return set(out, LINK_IPV6, p, len);
	default:
		return set(out, LINK_OTHER, p, len);
	}
}

/* After an Ethertype at p[-2..-1]: skip VLAN tags, then classify. */
static enum link_kind by_ethertype(struct link_info *out, uint16_t type, const uint8_t *p, size_t len)
{
	while (type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ || type == ETHERTYPE_QINQ_OLD) {
		if (len < VLAN_HLEN)
			return set(out, LINK_TRUNCATED, p, len);
		if (out->nvlan < LINK_MAX_VLANS)
			out->vlan[out->nvlan] = rd16(p) & 0x0FFF;
		out->nvlan++;
		type = rd16(p + 2);
		p += VLAN_HLEN;
		len -= VLAN_HLEN;
	}
	out->ethertype = type;
	switch (type) {
	case ETHERTYPE_IPV4:
		return set(out, LINK_IPV4, p, len);
	case ETHERTYPE_IPV6:
		return set(out, LINK_IPV6, p, len);
	case ETHERTYPE_ROCEV1:
		return set(out, LINK_ROCEV1, p, len);
	default:
		return set(out, LINK_OTHER, p, len);
	}
}

int link_supported(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_NULL:
	case DLT_LOOP:
		return 1;
	default:
		return 0;
	}
}

enum link_kind link_decap(int dlt, const uint8_t *frame, size_t len, struct link_info *out)
{
	memset(out, 0, sizeof(*out));
	switch (dlt) {
	case DLT_EN10MB:
		if (len < ETH_HLEN)
			return set(out, LINK_TRUNCATED, frame, len);
		return by_ethertype(out, rd16(frame + 12), frame + ETH_HLEN, len - ETH_HLEN);
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		return by_version(out, frame, len);
	case DLT_LINUX_SLL:
		if (len < SLL_HLEN)
			return set(out, LINK_TRUNCATED, frame, len);
		return by_ethertype(out, rd16(frame + 14), frame + SLL_HLEN, len - SLL_HLEN);
	case DLT_LINUX_SLL2:
		if (len < SLL2_HLEN)
			return set(out, LINK_TRUNCATED, frame, len);
		return by_ethertype(out, rd16(frame), frame + SLL2_HLEN, len - SLL2_HLEN);
	case DLT_NULL:
	case DLT_LOOP:
		/* 4-byte address family (host order for NULL, network for LOOP);
		 * the IP version nibble is simpler and just as reliable. */
		if (len < 4)
			return set(out, LINK_TRUNCATED, frame, len);
		return by_version(out, frame + 4, len - 4);
	default:
		return set(out, LINK_UNSUPPORTED, frame, len);
	}
}
