/*
 * inspect_link.h - strip the link layer of a captured frame and classify what
 * is underneath (IPv4, IPv6, RoCEv1 GRH, or something else), for
 * `uroce inspect`.  This is framing only: the RoCE headers themselves are
 * decoded by the netstack codec.
 *
 * Link types (pcap_datalink() values, https://www.tcpdump.org/linktypes.html):
 *   DLT_EN10MB       Ethernet II, with any number of 802.1Q / 802.1ad tags
 *   DLT_RAW, DLT_IPV4, DLT_IPV6   raw IP (version from the first nibble)
 *   DLT_LINUX_SLL    Linux cooked v1 (16-byte header)
 *   DLT_LINUX_SLL2   Linux cooked v2 (20-byte header)
 *   DLT_NULL, DLT_LOOP  BSD loopback (4-byte address family)
 */
#ifndef UROCE_TOOLS_INSPECT_LINK_H
#define UROCE_TOOLS_INSPECT_LINK_H

#include <stddef.h>
#include <stdint.h>

#define ETHERTYPE_ROCEV1 0x8915u	/* IBTA Annex A16: RoCE (v1), GRH follows */

/* What the frame carries after the link layer. */
enum link_kind {
	LINK_IPV4,		/* l3 is an IPv4 header */
	LINK_IPV6,		/* l3 is an IPv6 header */
	LINK_ROCEV1,		/* l3 is a 40-byte IB GRH (Ethertype 0x8915) */
	LINK_OTHER,		/* another protocol: not RoCE, skipped */
	LINK_TRUNCATED,		/* the link header itself is cut short */
	LINK_UNSUPPORTED,	/* the file's link type is not one we read */
};

/* Up to this many VLAN tags are reported (more are skipped, not kept). */
#define LINK_MAX_VLANS 4

/*
 * Result of link_decap().  l3/l3_len point into the caller's frame and cover
 * everything after the link header (including any Ethernet trailer: the
 * network layer's own length field says where the packet ends).
 */
struct link_info {
	enum link_kind kind;
	const uint8_t *l3;
	size_t l3_len;			/* bytes */
	uint16_t ethertype;		/* last Ethertype seen (0 for raw IP) */
	unsigned nvlan;			/* VLAN tags seen (may exceed LINK_MAX_VLANS) */
	uint16_t vlan[LINK_MAX_VLANS];	/* VLAN IDs (12 bits), outermost first */
};

/*
 * link_decap - classify one frame of a capture with pcap link type DLT.
 * @dlt:   pcap_datalink() of the file.
 * @frame: captured bytes (caplen of them in @len).
 * Fills *out; never reads beyond frame[len-1].  Returns out->kind.
 */
enum link_kind link_decap(int dlt, const uint8_t *frame, size_t len, struct link_info *out);

/* Whether link_decap() understands link type DLT (1) or not (0). */
int link_supported(int dlt);

#endif /* UROCE_TOOLS_INSPECT_LINK_H */
