/*
 * inspect_check.h - `uroce inspect --check`: follow every RC/UC/UD flow of a
 * capture and report each packet that breaks a transport rule of IBA Vol. 1
 * chapter 9 (the rules as docs/wire-format.md §1.5-§1.6 states them; the
 * rule list with ids and sections is in docs/inspect.md, "Checking the
 * transport rules").
 *
 * A flow is one direction of one QP's traffic (as in flows.h); a request
 * flow and the response flow of the same RC QP pair are joined the first
 * time a response names a PSN the requester sent (or, before that, by
 * matching addresses and UDP source port).  Packets are taken in capture
 * order.  Losses, duplicates and reordering that the requester repairs (a
 * resend of every missing PSN, NAKs answered as the rules say) are legal and
 * only counted; what is never repaired is a finding.
 *
 * Findings are kept and printed sorted by frame number at the end (a gap is
 * known to be unrepaired only when the capture ends).
 */
#ifndef UROCE_TOOLS_INSPECT_CHECK_H
#define UROCE_TOOLS_INSPECT_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "decode.h"
#include "flows.h"

struct insp_check;

/*
 * Make a checker.  PMTU: the path MTU in force, bytes (256, 512, 1024,
 * 2048 or 4096), or 0 to learn it per QP pair from the first packet of a
 * multi-packet message (FIRST/MIDDLE packets carry exactly the PMTU).
 * Returns NULL when out of memory.
 */
struct insp_check *insp_check_new(uint32_t pmtu);

/* Feed the next frame of the capture (any status). */
void insp_check_add(struct insp_check *c, const struct insp_rec *rec);

/*
 * End of the capture: settle what was left open (unrepaired gaps,
 * unanswered NAKs), print every finding sorted by frame and a summary:
 * text "frame N: RULE (IBA §S) FLOW: MESSAGE" lines and one "check:" line,
 * or with JSON one object {"frame","rule","section","flow","message"} per
 * finding and one {"check":{...}} object.  Returns the number of findings.
 */
uint64_t insp_check_finish(struct insp_check *c, FILE *fp, int json);

/* NAK counts by AETH value (IBA §9.3.5 Table 44; docs/wire-format.md §1.3), then RNR. */
enum insp_nak {
	INSP_NAK_SEQ = 0,	/* PSN sequence error */
	INSP_NAK_INVALID_REQ,
	INSP_NAK_REM_ACCESS,
	INSP_NAK_REM_OP,
	INSP_NAK_INVALID_RD,
	INSP_NAK_RNR,
	INSP_NAK__COUNT
};

/*
 * Statistics of one flow (`--flows`).  Times come from the capture's
 * timestamps, in ns.
 *   goodput_bytes   payload bytes sent for the first time (requests; READ
 *                   responses on a response flow); goodput_bps = that * 8
 *                   per duration_ns, the time from the flow's first to its
 *                   last packet (0 when they are one instant)
 *   retransmitted   packets with a PSN already sent, and their payload
 *                   bytes; a back-to-back copy of the packet just before is a
 *                   duplicate instead (a network copy, not a resend)
 *   out_of_order    packets that came after a higher PSN and were not seen before
 *   naks            NAKs sent on this (response) flow, by enum insp_nak
 *   rnr_waits       retries after an RNR NAK (request flow) and the total
 *                   time from each NAK to its retry
 *   messages, latency_*  messages completed (RC: from the first packet of a
 *                   message to the response that completes it: the ACK
 *                   covering its last PSN, a READ's last response, the
 *                   ATOMIC Acknowledge), nearest-rank p50, p99 and max
 */
struct insp_flow_stats {
	uint64_t goodput_bytes, duration_ns, goodput_bps;
	uint64_t retransmitted, retransmitted_bytes, duplicates, out_of_order;
	uint64_t naks[INSP_NAK__COUNT];
	uint64_t rnr_waits, rnr_wait_ns;
	uint64_t messages, latency_p50_ns, latency_p99_ns, latency_max_ns;
};

/* Fill *ST for the flow with KEY's key fields; -1 (and zeros) when the checker never saw it. */
int insp_check_flow_stats(struct insp_check *c, const struct insp_flow *key, struct insp_flow_stats *st);

/*
 * What the checker made of the last frame fed to insp_check_add (for the
 * PSN graph, psn_trace.h): the same decisions the statistics count, so a
 * picture and `--flows` agree.  KIND of a request: NEW (a PSN sent for the
 * first time, in order or after a jump), LATE (first seen after a higher
 * one: out_of_order), RESEND (sent before: retransmitted), DUP (the same
 * PSN back to back: duplicates).  A READ response gets NEW, RESEND or DUP
 * the same way (response set); any other response (ACK, NAK, RNR NAK,
 * ATOMIC Acknowledge) ACK.  OTHER: not followed (skipped, malformed, bad
 * ICRC, CNP, UD, flows beyond the limit).  NAK_ANSWERED: the request
 * answered a pending NAK (INSP_NAK_SEQ or INSP_NAK_RNR; -1 none), sent at
 * NAK_T_NS (capture time).  FLOW: the packet's checker flow (-1 none);
 * REQ_FLOW: the request flow it belongs to (itself for a request, the
 * paired request flow for a response, -1 when unpaired).
 */
enum insp_check_kind {
	INSP_CK_OTHER = 0,
	INSP_CK_NEW,
	INSP_CK_LATE,
	INSP_CK_RESEND,
	INSP_CK_DUP,
	INSP_CK_ACK,
};

struct insp_check_verdict {
	long flow, req_flow;
	int kind;		/* enum insp_check_kind */
	int response;		/* a response packet */
	int nak_answered;	/* INSP_NAK_SEQ, INSP_NAK_RNR, or -1 */
	int64_t nak_t_ns;
};

/* The verdict on the frame last fed (valid until the next insp_check_add). */
const struct insp_check_verdict *insp_check_last(const struct insp_check *c);

/*
 * Checker flow FLOW (an index of a verdict): its key name with the dqpn,
 * "RoCEv2 a:p > b:p dqpn 0x000022", into BUF (LEN bytes).
 */
void insp_check_flow_name(const struct insp_check *c, long flow, char *buf, size_t len);

/*
 * The message latencies of request flow FLOW (ns, in no set order;
 * what `--flows` takes its p50/p99/max from); *N their count.  NULL when
 * there are none.  The array belongs to the checker.
 */
const uint64_t *insp_check_flow_latency(const struct insp_check *c, long flow, size_t *n);

void insp_check_free(struct insp_check *c);

#endif /* UROCE_TOOLS_INSPECT_CHECK_H */
