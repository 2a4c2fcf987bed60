/*
 * inspect_flows.h - `uroce inspect --flows`: PSN continuity per flow.
 *
 * A flow is one direction of one QP's traffic: (version, source, destination,
 * UDP ports, dest QPN) plus whether the packets are requests or responses
 * (opcode table ROCE_OPF_REQUEST / ROCE_OPF_RESPONSE).  For each flow:
 * packets, first and highest PSN, and two counts in 24-bit PSN arithmetic
 * (IBA §9.7.1, netstack/psn.h):
 *   gaps     the PSN jumped forward by more than one (a packet missing
 *            from the capture, or lost);
 *   repeats  the PSN was not after the highest seen (a retransmission after
 *            go-back-N or RNR NAK, or a duplicate).
 * What is not a gap: after an RDMA READ request the next request PSN may
 * jump by up to ceil(DMA length / 256), the response count at the smallest
 * path MTU (docs/wire-format.md §1.6).  ACKs are coalesced (one ACK answers many
 * PSNs), so response flows with ACKs normally show gaps.  CNPs (PSN 0) are
 * not counted.  Only fully decoded packets (ICRC good or bad) count.
 */
#ifndef UROCE_TOOLS_INSPECT_FLOWS_H
#define UROCE_TOOLS_INSPECT_FLOWS_H

#include <stdint.h>
#include <stdio.h>

#include "decode.h"

/* What names a flow: one direction of a QP pair's packets. */
struct insp_flow_key {
	int version;			/* 2 or 1 */
	char src[48], dst[48];
	uint16_t sport, dport;
	uint32_t dqpn;
	int response;			/* 0 = requests, 1 = responses */
};

struct insp_flow {
	struct insp_flow_key key;
	uint64_t packets;
	uint32_t first_psn, max_psn;	/* 24 bits */
	uint32_t slack;			/* PSNs the next packet may skip (after a READ request) */
	uint64_t gaps, repeats;
};

struct insp_flows {
	struct insp_flow *v;		/* in order of first appearance */
	size_t n, cap;
	size_t *slot;			/* hash table: 1 + index into v, 0 = empty */
	size_t nslot;			/* a power of two, > 2 * n */
	int nomem;			/* a flow could not be added (counted nowhere) */
};

/* Count REC (any status; only OK/BAD_ICRC non-CNP packets are used). */
void insp_flows_add(struct insp_flows *f, const struct insp_rec *rec);

struct insp_check;

/*
 * One line / one JSON object {"flow":{...}} per flow, in order of
 * appearance.  With CHECK (the checker fed the same packets, check.h) each
 * flow also gets its statistics: a second text line "  stats: ..." or a
 * "stats" object (docs/inspect.md, "--flows").
 */
void insp_flows_print_text(FILE *fp, const struct insp_flows *f, struct insp_check *check);
void insp_flows_print_json(FILE *fp, const struct insp_flows *f, struct insp_check *check);

void insp_flows_free(struct insp_flows *f);

/*
 * The flow keys of --flows (flows.c) and --check (check_flow.c), which key
 * flows alike. insp_flow_key_of: K zeroed, then the key of REC's packet
 * (its addresses, UDP ports, destination QPN and whether it is a response).
 * insp_flow_key_eq: 1 if A and B name the same flow. insp_flow_key_hash:
 * 64-bit FNV-1a of the NUL-terminated SRC and DST, then VERSION, DQPN,
 * RESPONSE and SPORT << 16 | DPORT as four 32-bit words in host byte order.
 * insp_flow_key_name: "RoCEv2 a:p > b:p" ("[a]:p" for IPv6, "RoCEv1 a > b")
 * into BUF (LEN bytes), snprintf's return value.
 */
void insp_flow_key_of(struct insp_flow_key *k, const struct insp_rec *rec);
int insp_flow_key_eq(const struct insp_flow_key *a, const struct insp_flow_key *b);
size_t insp_flow_key_hash(const struct insp_flow_key *k);
int insp_flow_key_name(const struct insp_flow_key *k, char *buf, size_t len);

#endif /* UROCE_TOOLS_INSPECT_FLOWS_H */
