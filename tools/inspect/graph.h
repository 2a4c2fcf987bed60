/*
 * graph.h - `uroce inspect --graph FILE.svg` and `--timeline`: a capture as
 * a conversation between QP endpoints (docs/inspect.md, "Sequence graph").
 *
 * An endpoint is one QP: an address (IP, or GID for RoCEv1) and a QPN. A
 * packet's destination endpoint is its address and BTH DestQP. Its source
 * QPN is not in the BTH; it is taken, in this order, from
 *   1. the DETH's SrcQP (UD);
 *   2. the DestQP of the packets going the other way between the same two
 *      addresses with the same UDP source port (RoCEv2 senders derive the
 *      port from both QPNs, so both directions of a QP pair use one port,
 *      docs/wire-format.md §1.7), when exactly one QPN is seen there;
 *   3. RoCEv1 (no ports): the one QPN the other direction carries.
 * Otherwise the source is "qp ?" with its UDP source port. Between an
 * address and itself (loopback) the packet's own DestQP does not count.
 * A flow is the packets between one pair of endpoints (both directions),
 * numbered from 1 in the order of their first packet.
 *
 * Each packet is marked (IBA §9.7): "resend" when a request (or a READ
 * response) has a PSN not after the highest one that flow direction sent
 * before (24-bit arithmetic, netstack/psn.h); NAK and RNR NAK by its AETH;
 * a bad ICRC; malformed packets that still carry a readable BTH.
 */
#ifndef UROCE_TOOLS_INSPECT_GRAPH_H
#define UROCE_TOOLS_INSPECT_GRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "decode.h"

#define INSP_GRAPH_QPN_UNKNOWN UINT32_MAX

/* Marks of one packet (insp_gev.mark). */
enum {
	INSP_GM_RESEND = 1u << 0,	/* PSN not after the highest of its direction */
	INSP_GM_NAK = 1u << 1,		/* AETH NAK (any code) */
	INSP_GM_RNR = 1u << 2,		/* AETH RNR NAK */
	INSP_GM_BAD_ICRC = 1u << 3,
	INSP_GM_MALFORMED = 1u << 4,	/* BTH read, the rest not (err names why) */
	INSP_GM_AETH = 1u << 5,		/* carries an AETH (syndrome, msn valid) */
	INSP_GM_SE = 1u << 6,
	INSP_GM_ACKREQ = 1u << 7,
};

/* One drawn packet. */
struct insp_gev {
	uint64_t frame;			/* 1-based frame number */
	int64_t t_ns;			/* capture time, ns since the epoch */
	uint32_t src_addr, dst_addr;	/* index into the address table */
	uint16_t sport;			/* UDP source port (0 for RoCEv1) */
	uint8_t opcode;
	uint8_t syndrome;		/* AETH syndrome (with INSP_GM_AETH) */
	uint32_t dqpn, psn, msn;	/* 24 bits each */
	uint32_t srcqp;			/* DETH SrcQP, or INSP_GRAPH_QPN_UNKNOWN */
	uint32_t payload_len;		/* bytes, without pad */
	uint32_t mark;			/* INSP_GM_* */
	int err;			/* with INSP_GM_MALFORMED: insp_err_name() */
	uint32_t src_ep, dst_ep;	/* endpoint indices (after insp_graph_resolve) */
	uint32_t flow;			/* 0-based flow index (after insp_graph_resolve) */
};

/* One endpoint: address index and QPN (INSP_GRAPH_QPN_UNKNOWN with SPORT). */
struct insp_gep {
	uint32_t addr;
	uint32_t qpn;
	uint16_t sport;
};

/* One flow: its two endpoints (A sent the first packet) and its packets. */
struct insp_gflow {
	uint32_t ep_a, ep_b;
	uint64_t packets;
};

struct insp_graph;

/* An empty graph, or NULL (ENOMEM). */
struct insp_graph *insp_graph_new(void);
void insp_graph_free(struct insp_graph *g);

/*
 * Adds REC if it is a RoCE packet with addresses and a BTH (status OK,
 * BAD_ICRC, or MALFORMED with have_bth); others are ignored. Returns 0, or
 * -1 when out of memory (the graph is then incomplete; insp_graph_nomem).
 */
int insp_graph_add(struct insp_graph *g, const struct insp_rec *rec);
int insp_graph_nomem(const struct insp_graph *g);

/* Finds every packet's endpoints, flow and marks (once, after the last add). */
void insp_graph_resolve(struct insp_graph *g);

/* Number of flows (after resolve). */
uint32_t insp_graph_flows(const struct insp_graph *g);

/*
 * The SVG sequence graph of flow FLOW (1-based; 0 = every flow) into FP:
 * one lifeline per endpoint, one arrow per packet (at most MAX arrows; the
 * rest are counted in the picture and in *OMITTED). TITLE names the
 * capture. Returns the number of arrows drawn.
 */
uint64_t insp_graph_svg(struct insp_graph *g, FILE *fp, const char *title, uint32_t flow,
			uint64_t max, uint64_t *omitted);

/*
 * The text timeline of flow FLOW (1-based; 0 = every flow) into FP: per
 * flow a header line, then its packets in time order with the time in
 * microseconds since the flow's first packet (docs/inspect.md).
 */
void insp_graph_timeline(struct insp_graph *g, FILE *fp, uint32_t flow);

/* Internal to graph*.c: the resolved model. */
const struct insp_gev *insp_graph_events(const struct insp_graph *g, uint64_t *n);
const struct insp_gep *insp_graph_endpoint(const struct insp_graph *g, uint32_t ep);
const struct insp_gflow *insp_graph_flow(const struct insp_graph *g, uint32_t flow);
const char *insp_graph_addr(const struct insp_graph *g, uint32_t addr);
/* "192.168.0.1 qp 0x000011", "[fd00::1] qp 0x000123", "10.0.0.1 qp ? port 5" into BUF. */
void insp_graph_ep_name(const struct insp_graph *g, uint32_t ep, char *buf, size_t len);
/* The event's text: "RC_SEND_ONLY psn 1000 len 11" plus its marks, into BUF. */
void insp_graph_ev_label(const struct insp_gev *e, char *buf, size_t len);

#endif /* UROCE_TOOLS_INSPECT_GRAPH_H */
