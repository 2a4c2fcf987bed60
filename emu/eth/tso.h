/*
 * tso.h - TCP segmentation as a ConnectX does it for IBV_WR_TSO (LSO): one
 * header replicated in front of every MSS-sized piece of the payload, with
 * the fields that differ per segment rewritten as the kernel's own GSO
 * rewrites them (net/ipv4/tcp_offload.c tcp_gso_segment, net/ipv4/af_inet.c
 * inet_gso_segment). No I/O; docs/raw-packet.md §3 has the rules.
 */
#ifndef UROCE_EMU_ETH_TSO_H
#define UROCE_EMU_ETH_TSO_H

#include "emu/eth/frame.h"

/*
 * tso_hdr_check - whether HDR (HDR_SZ bytes) is what a TSO header must be:
 * Ethernet (an 802.1Q tag allowed), then IPv4 without fragmentation or
 * IPv6 with TCP as next header, then TCP, ending exactly where the TCP
 * header (options included) ends. The IP length fields of HDR are ignored
 * (each segment gets its own). Fills *FI with the header's offsets.
 */
bool tso_hdr_check(const uint8_t *hdr, uint32_t hdr_sz, struct frame_info *fi);

/* Segments a payload of LEN bytes makes at MSS bytes each (at least 1:
 * an empty payload still sends the header once). */
uint32_t tso_segments(uint32_t len, uint32_t mss);

/*
 * tso_build - segment I (0-based) of the LEN-byte PAYLOAD cut at MSS,
 * written to OUT (at least HDR_SZ + MSS bytes); returns its length.
 * HDR and FI as tso_hdr_check passed them. Rewritten per segment:
 * IPv4 total length and identification (+ I), IPv6 payload length, the TCP
 * sequence number (+ I * MSS); FIN and PSH kept on the last segment only,
 * CWR on the first only. CSUM (IBV_SEND_IP_CSUM): the IPv4 header and TCP
 * checksums are computed for the segment; otherwise they are the header's.
 */
uint32_t tso_build(const uint8_t *hdr, uint32_t hdr_sz, const struct frame_info *fi, const uint8_t *payload,
		   uint32_t len, uint32_t mss, uint32_t i, bool csum, uint8_t *out);

#endif
