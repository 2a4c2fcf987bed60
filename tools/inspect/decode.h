/*
 * inspect_decode.h - turn one captured frame into an inspect record: strip
 * the link layer (inspect_link.h), decide whether it is RoCE (RoCEv2: UDP to
 * the RoCE port; RoCEv1: Ethertype 0x8915), decode it with the netstack
 * codec (netstack/packet.h) and verify its ICRC.
 */
#ifndef UROCE_TOOLS_INSPECT_DECODE_H
#define UROCE_TOOLS_INSPECT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "netstack/packet.h"
#include "link.h"

/* Outcome of one frame. */
enum insp_status {
	INSP_SKIPPED,	/* not RoCE (other protocol, other UDP port, non-first fragment) */
	INSP_OK,	/* RoCE, fully decoded, ICRC good */
	INSP_BAD_ICRC,	/* RoCE, fully decoded, ICRC mismatch */
	INSP_MALFORMED,	/* RoCE (or a broken frame), with a named defect */
};

/*
 * Defects found by the inspector itself, numbered after the codec's
 * enum roce_err so that one int names either (insp_err_name()).
 */
enum insp_err {
	INSP_E_CAPTURE_TRUNCATED = ROCE_E__COUNT, /* caplen < len: snaplen cut the packet */
	INSP_E_LINK_TRUNCATED,	/* frame shorter than its link-layer header */
	INSP_E_IPV6_EXTHDR,	/* UDP to the RoCE port behind IPv6 extension headers (not decoded) */
	INSP_E__END
};

/* Name ("TRUNC_RETH", "CAPTURE_TRUNCATED") and message of an error number. */
const char *insp_err_name(int e);
const char *insp_err_message(int e);

/* Everything printed about one frame. */
struct insp_rec {
	uint64_t frame;		/* 1-based frame number in the file */
	int64_t ts_sec;		/* capture time: seconds, nanoseconds */
	long ts_nsec;
	enum insp_status status;
	int version;		/* 2 = RoCEv2, 1 = RoCEv1, 0 = unknown (skipped/broken) */
	int err;		/* ROCE_OK, enum roce_err or enum insp_err */
	int have_addr;		/* src/dst (and ports for v2) are known */
	char src[48], dst[48];	/* printable addresses (IPv4, IPv6, or GID for v1) */
	uint16_t sport, dport;
	int have_bth;		/* pkt.h.opcode, dqpn, psn, flags valid */
	int have_all;		/* every header, payload and ICRC valid */
	struct link_info link;
	struct roce_pkt pkt;
};

/*
 * insp_decode - decode frame FRAME (caplen bytes of a LEN-byte original) of a
 * capture with link type DLT; PORT is the RoCEv2 UDP destination port.
 * Fills *rec (frame number and timestamp are the caller's).  Never reads
 * outside frame[0..caplen).  Returns rec->status.
 */
enum insp_status insp_decode(int dlt, const uint8_t *frame, size_t caplen, size_t len,
			     uint16_t port, struct insp_rec *rec);

#endif /* UROCE_TOOLS_INSPECT_DECODE_H */
