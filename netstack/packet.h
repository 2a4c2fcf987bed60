/*
 * packet.h - the RoCEv2 codec: opcode table, parsed-packet struct, parse and
 * build entry points, error codes.
 *
 * Users: the daemon's transport engine (builds UDP payloads to send, parses
 * UDP payloads received, checks the ICRC) and `uroce inspect` (parses IP
 * packets and RoCEv1 GRH frames read from pcap files).  Link with
 * netstack/libnetstack.la; include as "netstack/packet.h" (the build puts
 * $(top_srcdir) on the include path).
 *
 * Every parse entry point treats the buffer as hostile: it reads only inside
 * [buf, buf+len) and returns one distinct enum roce_err per kind of defect.
 * Source of the wire rules: include/uroce/roce.h and docs/wire-format.md §1-§2.
 */
#ifndef UROCE_NETSTACK_PACKET_H
#define UROCE_NETSTACK_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uroce/roce.h"

/* ---- Errors (netstack/errors.c) ----------------------------------------- */

/*
 * Result of every netstack call: ROCE_OK (0) or one defect, each distinct.
 * roce_err_name() gives the enumerator's short name ("TRUNC_RETH"),
 * roce_strerror() a one-line message.  Order: the order parsing meets them.
 */
enum roce_err {
	ROCE_OK = 0,
	/* caller errors */
	ROCE_E_INVAL, /* NULL pointer or argument out of range */
	ROCE_E_NOSPC, /* output buffer too small */
	/* IPv4 / IPv6 (entry point a) */
	ROCE_E_IP_TRUNC, /* buffer shorter than the IP header */
	ROCE_E_IP_VERSION, /* version nibble not 4 or 6 (or not the one expected) */
	ROCE_E_IP_IHL, /* IPv4 IHL != 5: options are not allowed by the ICRC rule */
	ROCE_E_IP_LEN, /* IP total/payload length exceeds the buffer or is too small */
	ROCE_E_IP_FRAG, /* IPv4 fragment (MF set or offset != 0) */
	ROCE_E_IP_PROTO, /* IPv4 protocol / IPv6 next header is not UDP (17) */
	/* UDP */
	ROCE_E_UDP_TRUNC, /* no room for the 8-byte UDP header */
	ROCE_E_UDP_LEN, /* UDP length disagrees with the IP length */
	ROCE_E_UDP_PORT, /* destination port is not the RoCEv2 port asked for */
	/* RoCEv1 GRH (entry point b) */
	ROCE_E_GRH_TRUNC, /* buffer shorter than the 40-byte GRH */
	ROCE_E_GRH_VERSION, /* GRH IPVer is not 6 */
	ROCE_E_GRH_NXTHDR, /* GRH next header is not 0x1B (BTH) */
	ROCE_E_GRH_LEN, /* GRH payload length exceeds the buffer or is too small */
	/* BTH and opcode */
	ROCE_E_TRUNC_BTH, /* fewer than 12 bytes for the BTH */
	ROCE_E_TVER, /* BTH TVer != 0 */
	ROCE_E_OPCODE_UNKNOWN, /* reserved or vendor opcode */
	ROCE_E_OPCODE_UNSUPPORTED, /* a defined opcode uroce does not speak (RD) */
	/* extended headers: truncated at each one (no room for it + ICRC);
	 * RDETH has none: its opcodes stop at OPCODE_UNSUPPORTED */
	ROCE_E_TRUNC_DETH,
	ROCE_E_TRUNC_RETH,
	ROCE_E_TRUNC_ATOMICETH,
	ROCE_E_TRUNC_AETH,
	ROCE_E_TRUNC_ATOMICACKETH,
	ROCE_E_TRUNC_IMMDT,
	ROCE_E_TRUNC_IETH,
	ROCE_E_TRUNC_FETH,
	ROCE_E_TRUNC_XRCETH,
	ROCE_E_TRUNC_CNP, /* CNP shorter than its 16 reserved bytes */
	ROCE_E_TRUNC_ICRC, /* no room for the 4-byte ICRC after the headers */
	/* payload and pad */
	ROCE_E_PAYLOAD_UNEXPECTED, /* bytes after the headers of an opcode that carries none */
	ROCE_E_PAYLOAD_TOO_BIG, /* payload + pad > ROCE_MAX_PAYLOAD (4096) */
	ROCE_E_PAYLOAD_LEN, /* payload length not the fixed one (ATOMIC_WRITE: 8) */
	ROCE_E_PAD_UNEXPECTED, /* PadCnt != 0 on an opcode that is not LAST/ONLY with payload */
	ROCE_E_PAD_TOO_BIG, /* PadCnt larger than the bytes after the headers */
	ROCE_E_PAD_ALIGN, /* payload + pad not a multiple of 4 bytes (IBA §9.2: 4-byte packets) */
	/* integrity */
	ROCE_E_ICRC, /* ICRC mismatch (the packet is otherwise fully decoded) */
	ROCE_E__COUNT
};

/* Short name of E without the ROCE_E_ prefix ("TRUNC_RETH", "OK"); "?" if out of range. */
const char *roce_err_name(int e);
/* One-line English message for E; "unknown netstack error" if out of range. */
const char *roce_strerror(int e);

/* ---- Opcode table (netstack/opcode.c) ----------------------------------- */

/* Headers an opcode carries after the BTH (bit mask; also indexes offsets). */
enum roce_hdr {
	ROCE_HDR_RDETH = 0,
	ROCE_HDR_DETH,
	ROCE_HDR_XRCETH,
	ROCE_HDR_FETH,
	ROCE_HDR_RETH,
	ROCE_HDR_ATOMICETH,
	ROCE_HDR_AETH,
	ROCE_HDR_ATOMICACKETH,
	ROCE_HDR_IMMDT,
	ROCE_HDR_IETH,
	ROCE_HDR__COUNT
};
#define ROCE_HDR_BIT(h) (1u << (h))

/* Opcode flags. */
enum roce_opflag {
	ROCE_OPF_FIRST = 1u << 0, /* first packet of a message (ONLY = FIRST|LAST) */
	ROCE_OPF_MIDDLE = 1u << 1,
	ROCE_OPF_LAST = 1u << 2,
	ROCE_OPF_PAYLOAD = 1u << 3, /* may carry payload (and then pad) */
	ROCE_OPF_REQUEST = 1u << 4, /* sent by a requester */
	ROCE_OPF_RESPONSE = 1u << 5, /* sent by a responder (ACK, READ response, ...) */
	ROCE_OPF_RWQE = 1u << 6, /* consumes a receive WQE at the responder (SEND*, WRITE_*_IMM) */
	ROCE_OPF_SEND = 1u << 7, /* operation class: SEND */
	ROCE_OPF_WRITE = 1u << 8, /* RDMA WRITE */
	ROCE_OPF_READ = 1u << 9, /* RDMA READ request or response */
	ROCE_OPF_ATOMIC = 1u << 10, /* CMP_SWAP / FETCH_ADD / ATOMIC_ACK / ATOMIC_WRITE */
	ROCE_OPF_IMM = 1u << 11, /* carries ImmDt */
	ROCE_OPF_INV = 1u << 12, /* carries IETH */
	ROCE_OPF_UNSUPPORTED = 1u << 13, /* named but not spoken (RD) */
	ROCE_OPF_CNP = 1u << 14, /* congestion notification: 16 reserved bytes, no pad */
};

/*
 * One row of the opcode table: everything the codec knows about an opcode.
 * offset[h] is the byte offset of header h from the start of the BTH (valid
 * when hdrs has ROCE_HDR_BIT(h)); hdr_len is BTH + all ETHs = the offset of
 * the payload.  fixed_payload: exact payload length required (-1 = any up to
 * the MTU; 0 for opcodes without ROCE_OPF_PAYLOAD; 8 for ATOMIC_WRITE; 16
 * for CNP, whose reserved bytes are reported as payload).
 * Source: docs/wire-format.md §1.4 (IBA §9.2.1; the kernel's ib_pack.h).
 */
struct roce_opcode_info {
	const char *name; /* "RC_SEND_FIRST", "RC_RDMA_WRITE_ONLY_IMM", "UD_SEND_ONLY", "CNP", ... */
	uint8_t opcode;
	uint8_t transport; /* enum roce_transport */
	uint8_t hdr_len; /* bytes */
	int8_t fixed_payload; /* bytes, or -1 */
	uint16_t hdrs; /* mask of ROCE_HDR_BIT() */
	uint16_t flags; /* mask of enum roce_opflag */
	uint8_t offset[ROCE_HDR__COUNT];
};

/* The row of OPCODE, or NULL for a reserved/vendor opcode. O(1). */
const struct roce_opcode_info *roce_opcode_info(uint8_t opcode);
/* Name of OPCODE ("RC_ACKNOWLEDGE"), or "UNKNOWN" for a reserved/vendor opcode. */
const char *roce_opcode_name(uint8_t opcode);
/*
 * Iterate the table: row I (0 <= i < roce_opcode_count()) in opcode order,
 * including unsupported (RD) rows.  Used by tests and by inspect --list.
 */
unsigned roce_opcode_count(void);
const struct roce_opcode_info *roce_opcode_at(unsigned i);

/* Name of the transport prefix of OPCODE: "RC", "UC", "RD", "UD", "CNP", "XRC", "VENDOR", "RSVD". */
const char *roce_transport_name(uint8_t opcode);

/* ---- Header values (host order) ----------------------------------------- */

/*
 * Decoded transport headers: the BTH and every ETH, in host order.  Input of
 * the builders, part of the parsed packet.  Only the ETHs the opcode carries
 * (its table row's hdrs) are meaningful.
 */
struct roce_hdrs {
	/* BTH */
	uint8_t opcode;
	bool se; /* solicited event */
	bool mig; /* MigReq; rxe sends 0, Mellanox 1; ignored on receive */
	uint8_t pad; /* PadCnt 0..3 (the builder computes it; parse reports it) */
	uint8_t tver; /* 0 */
	uint16_t pkey;
	bool fecn, becn; /* BTH byte 4 bits 7, 6 */
	uint8_t resv6; /* BTH byte 4 bits 5:0 (sent 0) */
	uint32_t dqpn; /* 24 bits */
	bool ackreq; /* A */
	uint8_t resv7; /* sent 0 */
	uint32_t psn; /* 24 bits */
	/* ETHs */
	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t dma_len; /* bytes, whole message */
	} reth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap_add;
		uint64_t compare;
	} atomic;
	struct {
		uint8_t syndrome; /* type | value; see ROCE_AETH_* */
		uint32_t msn; /* 24 bits */
	} aeth;
	uint64_t atomic_ack_orig; /* AtomicAckETH original remote data */
	uint32_t imm; /* ImmDt as a host-order number: ibv_wc.imm_data = htobe32(imm) */
	uint32_t ieth_rkey; /* IETH: R_Key to invalidate */
	struct {
		uint32_t qkey;
		uint32_t sqpn; /* 24 bits */
	} deth;
	uint32_t rdeth_eecn; /* RDETH EE context: stays 0 while RD is unsupported */
	uint32_t xrc_srqn; /* XRCETH XRC SRQ number, 24 bits (IBTA Annex A14.3.2) */
	struct {
		uint8_t sel; /* selectivity level, 2 bits */
		uint8_t plt; /* placement type, 4 bits */
	} feth;
};

/* ---- Network-layer facts ------------------------------------------------ */

/* Network header kind of a packet. */
enum roce_l3_kind {
	ROCE_L3_IPV4 = 4,
	ROCE_L3_IPV6 = 6,
	ROCE_L3_GRH = 1, /* RoCEv1: GRH directly after Ethernet, no UDP */
};

/*
 * What a sender or receiver knows of the IP/UDP encapsulation.  Addresses
 * are 16 bytes, IPv4 as v4-mapped ::ffff:a.b.c.d (the GID form).
 * tclass/hop_limit/flow_label are masked by the ICRC and only used by the
 * header builders.  For IPv4 the ICRC reconstruction assumes DF set and no
 * options (what RoCEv2 senders send); the IP ID is 0 when building (what
 * Linux sends from an unconnected UDP socket with IP_PMTUDISC_DO) and
 * recovered from the ICRC when receiving (docs/icrc.md).
 */
struct roce_l3 {
	uint8_t kind; /* enum roce_l3_kind (IPV4 or IPV6 for UDP) */
	uint8_t src[16], dst[16];
	uint16_t sport, dport; /* UDP ports, host order */
	uint8_t tclass; /* IPv4 TOS / IPv6 traffic class */
	uint8_t hop_limit; /* IPv4 TTL / IPv6 hop limit; 0 = 64 */
	uint32_t flow_label; /* IPv6 only, 20 bits */
	uint16_t ip_id; /* IPv4 identification written by roce_wrap_ip (0 elsewhere) */
};

/* Store a host-order IPv4 address (e.g. 0x7F000001) as v4-mapped into A16. */
void roce_addr_from_ipv4(uint8_t a16[16], uint32_t ipv4);
/* True if A16 is v4-mapped (::ffff:0:0/96). */
bool roce_addr_is_v4mapped(const uint8_t a16[16]);

/* ---- Parsed packet ------------------------------------------------------ */

/*
 * A decoded packet.  Fields are host order; pointers point into the caller's
 * buffer, which must outlive the struct.  What is valid after a parse call:
 *   ROCE_OK, ROCE_E_ICRC: everything.
 *   errors at or after the BTH (TVER, OPCODE_*, TRUNC_<ETH>, PAYLOAD_*, PAD_*):
 *     l3, udp ports, bth and hdrs.opcode/flags/psn/dqpn; op is set for
 *     known opcodes; ETHs and payload are not.
 *   earlier errors: nothing.
 */
struct roce_pkt {
	struct roce_l3 l3; /* for GRH: src/dst GIDs, tclass, hop_limit, flow_label */
	uint16_t ip_id; /* IPv4 identification (UDP payloads: recovered from the ICRC, 0 if bad) */
	bool ip_df; /* IPv4 DF */
	uint32_t ip_len; /* IP total length (v4) / header + payload length (v6, GRH), bytes */
	const struct roce_opcode_info *op; /* table row, NULL if unknown opcode */
	struct roce_hdrs h;
	const uint8_t *bth; /* start of BTH in the buffer */
	uint32_t roce_len; /* BTH .. ICRC inclusive, bytes */
	const uint8_t *payload; /* after the ETHs (NULL if none) */
	uint32_t payload_len; /* bytes, without pad */
	uint32_t icrc_wire; /* ICRC as carried (wire bytes read little-endian) */
	uint32_t icrc_calc; /* ICRC computed over the packet */
	bool icrc_ok; /* icrc_wire == icrc_calc */
};

/*
 * roce_parse_ip - parse a full IPv4 or IPv6 packet (entry point a: inspect).
 * @buf,len: starting at the IP header; bytes beyond the IP length (Ethernet
 *           padding) are ignored.
 * @dport:   UDP destination port that identifies RoCEv2 (ROCE_UDP_PORT).
 * Checks IP version/IHL/fragment/protocol/length, UDP length and port, then
 * the transport headers (roce_parse_bth) and finally the ICRC over the IP
 * header as found (its real ID and flags; docs/wire-format.md §2.1).
 * Returns ROCE_OK or the first defect (enum roce_err); PKT is filled as
 * described at struct roce_pkt.
 */
int roce_parse_ip(const uint8_t *buf, size_t len, uint16_t dport, struct roce_pkt *pkt);

/*
 * roce_parse_grh - parse a RoCEv1 packet: the Ethernet payload of ethertype
 * 0x8915 (entry point b).  @buf,len start at the 40-byte GRH; bytes beyond
 * the GRH payload length are ignored.  ICRC as in docs/wire-format.md §2.1 (RoCEv1).
 * pkt->l3.kind = ROCE_L3_GRH, src/dst = SGID/DGID, ports 0.
 */
int roce_parse_grh(const uint8_t *buf, size_t len, struct roce_pkt *pkt);

/*
 * roce_parse_udp - parse a UDP payload as received from a UDP socket (entry
 * point c: the daemon).  @buf,len: BTH .. ICRC exactly.  @l3: what the
 * receiver knows (kind, src, dst, sport, dport; from recvmsg's address and
 * IP_PKTINFO / IPV6_PKTINFO).  The ICRC is checked over a reconstructed
 * IP+UDP header (roce_icrc_udp_check): IPv6 exactly; IPv4 with DF=1, no
 * options and any IP ID, which is recovered into pkt->ip_id.  icrc_calc is
 * the ICRC for that ID (for ID 0 when none matches).
 */
int roce_parse_udp(const uint8_t *buf, size_t len, const struct roce_l3 *l3,
		   struct roce_pkt *pkt);

/*
 * roce_parse_udp_verified - roce_parse_udp for a payload whose ICRC is
 * known to be the one computed over exactly these bytes and L3 (the
 * receiver built it itself: a device's internal loopback, with no fault
 * injected since). Nothing is checked against the ICRC: icrc_calc =
 * icrc_wire, icrc_ok, ip_id 0 (as RoCEv2 senders with DF use). Returns
 * what roce_parse_udp returns short of ROCE_E_ICRC.
 */
int roce_parse_udp_verified(const uint8_t *buf, size_t len, const struct roce_l3 *l3,
			    struct roce_pkt *pkt);

/*
 * roce_parse_bth - decode BTH .. ICRC (no ICRC check).  Used by the entry
 * points above; exposed for tools that find the BTH themselves.
 * @buf,len: BTH .. ICRC inclusive.  Fills pkt->h, op, bth, roce_len,
 * payload, payload_len, icrc_wire; leaves l3/icrc_calc/icrc_ok alone.
 */
int roce_parse_bth(const uint8_t *buf, size_t len, struct roce_pkt *pkt);

/* ---- Builders (netstack/build.c) ---------------------------------------- */

/* Bytes BTH..ICRC that roce_build_bth writes for OPCODE with LEN payload bytes
 * (headers + payload + pad + 4), or 0 for an unknown opcode.  CNP: 32 for
 * LEN 0 or 16 (the builder always writes the 16 reserved bytes). */
size_t roce_packet_len(uint8_t opcode, uint32_t payload_len);

/*
 * roce_build_bth - write BTH + ETHs + payload + pad + ICRC slot into BUF.
 * @h:       header values; h->pad is ignored and computed as (-len) & 3;
 *           only the ETHs of h->opcode's table row are written.
 * @payload: LEN bytes (may be NULL when LEN is 0); may already be in place
 *           at BUF + the opcode's header bytes (then not copied).  LEN must suit the opcode
 *           (0 without ROCE_OPF_PAYLOAD, the fixed length if any, <= 4096, a
 *           multiple of 4 unless the opcode is LAST/ONLY).  CNP: LEN 16 (the
 *           reserved bytes as given) or 0 (16 zero bytes).
 * @out_len: receives bytes written (= roce_packet_len), ICRC slot included
 *           but zero: fill it with roce_build_udp / roce_build_ip, or
 *           roce_icrc_* + roce_icrc_put.
 * Errors: ROCE_E_INVAL (NULL, dqpn/psn/msn/sqpn/xrc_srqn over 24 bits, tver/resv6/
 * resv7/FETH fields out of range), ROCE_E_OPCODE_UNKNOWN,
 * ROCE_E_OPCODE_UNSUPPORTED, ROCE_E_PAYLOAD_UNEXPECTED, ROCE_E_PAYLOAD_LEN,
 * ROCE_E_PAYLOAD_TOO_BIG, ROCE_E_PAD_UNEXPECTED (FIRST/MIDDLE length not a
 * multiple of 4), ROCE_E_NOSPC (cap too small).
 */
int roce_build_bth(uint8_t *buf, size_t cap, const struct roce_hdrs *h, const void *payload,
		   uint32_t len, size_t *out_len);

/*
 * roce_build_udp - build a complete UDP payload for sendmsg(): BTH..payload
 * as roce_build_bth, plus the ICRC computed for L3 (kind, src, dst, sport,
 * dport; IPv4 with DF, ID 0 as Linux sends it).  Same errors, plus
 * ROCE_E_INVAL for a bad l3->kind.
 */
int roce_build_udp(uint8_t *buf, size_t cap, const struct roce_l3 *l3, const struct roce_hdrs *h,
		   const void *payload, uint32_t len, size_t *out_len);

/*
 * roce_build_ip - build a complete IPv4 or IPv6 packet (for pcap files and
 * tests): IP header (IPv4: DF, ID 0, TTL/TOS from l3, header checksum;
 * IPv6: traffic class, flow label, hop limit from l3), UDP header with a
 * real checksum (as the kernel's UDP socket would send), then as
 * roce_build_udp.  Errors as roce_build_udp.
 */
int roce_build_ip(uint8_t *buf, size_t cap, const struct roce_l3 *l3, const struct roce_hdrs *h,
		  const void *payload, uint32_t len, size_t *out_len);

/*
 * roce_wrap_ip - prepend IP+UDP headers to an already built UDP payload (as
 * captured at sendmsg/recvmsg time) for a pcap file.  @udp_payload,len: BTH..ICRC.
 * Writes IP header + UDP header + a copy of the payload into BUF (cap bytes).
 * Same header rules as roce_build_ip, except that the IPv4 ID is l3->ip_id
 * (for a received packet: the one roce_icrc_udp_check recovered, so the
 * frame's ICRC verifies); the ICRC is copied, not recomputed.
 * Errors: ROCE_E_INVAL, ROCE_E_NOSPC, ROCE_E_IP_LEN (len > 65507).
 */
int roce_wrap_ip(uint8_t *buf, size_t cap, const struct roce_l3 *l3, const uint8_t *udp_payload,
		 size_t len, size_t *out_len);

/* Size of the IP+UDP headers roce_wrap_ip / roce_build_ip prepend for KIND: 28 or 48, 0 if bad. */
size_t roce_ip_udp_hlen(uint8_t kind);

#endif /* UROCE_NETSTACK_PACKET_H */
