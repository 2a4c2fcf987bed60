/*
 * frame.h - one Ethernet frame decoded once, up front, into host-order
 * offsets and fields (what steering matches on and what the CQE reports),
 * and the IPv4 / TCP / UDP checksums a ConnectX fills on send
 * (IBV_SEND_IP_CSUM) and verifies on receive (the CQE's L3/L4 OK bits).
 * No I/O; every offset is bounds-checked against the frame length.
 */
#ifndef UROCE_EMU_ETH_FRAME_H
#define UROCE_EMU_ETH_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ETH_HLEN_ 14            /* destination MAC, source MAC, ether_type */
#define ETH_VLAN_HLEN 4         /* IEEE 802.1Q tag */
#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define IP_PROTO_TCP 6
#define IP_PROTO_UDP 17

/* L3 / L4 kinds as the mlx5 CQE names them (l4_hdr_type_etc bits 3:2 and
 * 6:4; kernel drivers/net/ethernet/mellanox/mlx5/core/en.h CQE_L4_HDR_TYPE_*). */
enum frame_l3 { FRAME_L3_NONE = 0, FRAME_L3_IPV6 = 1, FRAME_L3_IPV4 = 2 };
enum frame_l4 {
	FRAME_L4_NONE = 0,
	FRAME_L4_TCP_NO_ACK = 1,
	FRAME_L4_UDP = 2,
	FRAME_L4_TCP_ACK_NO_DATA = 3,
	FRAME_L4_TCP_ACK_AND_DATA = 4,
};

struct frame_info {
	const uint8_t *dst_mac, *src_mac; /* 6 bytes each, into the frame */
	uint16_t ether_type;    /* after the VLAN tag if there is one (host order) */
	bool has_vlan;
	uint16_t vlan_tci;      /* 802.1Q TCI (host order), 0 without a tag */
	uint32_t l3_off;        /* bytes from the frame start; 0 = no IP header */
	enum frame_l3 l3;
	uint32_t l3_len;        /* IP header + payload bytes, at most what the frame holds */
	bool len_bad;           /* the IP length field runs past the frame (or below the
				 * header): the headers still count, the L4 checksum never
				 * verifies */
	uint32_t ihl;           /* IPv4 header bytes */
	uint8_t proto;          /* IPv4 protocol / IPv6 next header */
	bool frag;              /* IPv4 MF set or fragment offset != 0 */
	uint32_t l4_off;        /* 0 = no TCP/UDP header in the frame */
	enum frame_l4 l4;
	uint32_t l4_len;        /* TCP/UDP header + payload bytes */
};

/* Decode FRAME (LEN bytes). Returns false if LEN < 14 (no Ethernet header);
 * a truncated or malformed IP/TCP/UDP header leaves that layer as NONE; an
 * IP length field that disagrees with the frame sets len_bad (the headers
 * are still decoded, as a ConnectX parses them for steering). */
bool frame_parse(const uint8_t *frame, size_t len, struct frame_info *fi);

/* Fill the IPv4 header checksum (IPv4) and the TCP/UDP checksum (IPv4
 * unfragmented, IPv6 with TCP/UDP as next header) of FRAME in place, as a
 * ConnectX does for IBV_SEND_IP_CSUM (MLX5_ETH_WQE_L3_CSUM | L4_CSUM). A
 * UDP checksum that computes to 0 is sent as 0xFFFF (RFC 768). */
void frame_fill_csum(uint8_t *frame, const struct frame_info *fi);

/* Receive-side checks, as the CQE's hds_ip_ext reports them: *l3_ok for
 * an IPv4 header whose checksum verifies (IPv6: true), *l4_ok for a
 * TCP/UDP checksum that verifies (an IPv4 UDP checksum of 0: true). */
void frame_check_csum(const uint8_t *frame, const struct frame_info *fi, bool *l3_ok, bool *l4_ok);

/* The Toeplitz hash (Microsoft RSS, "Verifying the RSS Hash Calculation")
 * of N input bytes with KEY (KEY_LEN bytes; input bits past what the key
 * covers use zero key bits). */
uint32_t frame_toeplitz(const uint8_t *key, size_t key_len, const uint8_t *in, size_t n);

/* The Internet checksum (RFC 1071) of LEN bytes, folded into SUM (host order
 * 16-bit words summed in 32 bits), not complemented. */
uint32_t frame_csum_add(uint32_t sum, const uint8_t *p, size_t len);
uint16_t frame_csum_fold(uint32_t sum);

/* The Ethernet FCS of LEN bytes: CRC-32 (IEEE 802.3 clause 3.2.9;
 * polynomial 0x04C11DB7 bit-reflected, initial value and final XOR
 * 0xFFFFFFFF; the value zlib's crc32() gives). On the wire and in memory it
 * goes least significant byte first. */
uint32_t frame_crc32(const uint8_t *p, size_t len);

#endif
