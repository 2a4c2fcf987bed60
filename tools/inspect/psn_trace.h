/*
 * psn_trace.h - what `uroce inspect --psn-graph` records of a capture: per
 * RC/UC request flow (one direction of one QP, as --flows keys it), every
 * packet as a point (time, PSN) of one series, taken from the checker's
 * verdict on it (check.h insp_check_last), so the picture counts what
 * `--flows` counts.  docs/inspect.md, "PSN graph".
 *
 * PSNs are unwrapped across 2^24 (IBA §9.7.1): the flow's first request
 * PSN is itself, every later PSN is the one nearest (signed 24-bit
 * distance, netstack/psn.h) to the flow's last request PSN; so the y axis
 * of a flow that wraps goes on past 16777215.
 *
 * A resend's cause: the NAK it answers (PSN sequence error or RNR NAK, as
 * the checker pairs them), or the cause of the resend just before it on
 * the flow (a go-back-N run continues), or else a timeout (no NAK asked for
 * it).  An RNR wait is the time from the RNR NAK to the retry that answers
 * it (when the retry comes later in time, as --flows counts them).  The ACK line is the highest PSN acknowledged so far: an ACK or
 * ATOMIC Acknowledge acknowledges its PSN, a READ response its PSN, a NAK
 * the PSN before its own.
 */
#ifndef UROCE_TOOLS_INSPECT_PSN_TRACE_H
#define UROCE_TOOLS_INSPECT_PSN_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "decode.h"

/* The series of a PSN graph, in legend order (psn_series_names). */
enum psn_series {
	PS_REQ,		/* request sent for the first time (in order or late) */
	PS_MSG_END,	/* the last packet of a message (LAST or ONLY) */
	PS_RETX_SEQ,	/* resent after a PSN sequence error NAK */
	PS_RETX_RNR,	/* resent after an RNR NAK */
	PS_RETX_TIMEOUT,	/* resent with no NAK asking for it */
	PS_DUP,		/* the same packet back to back (a copy) */
	PS_READ_RESP,	/* READ response, first time */
	PS_READ_RETX,	/* READ response sent again */
	PS_READ_DUP,	/* READ response copied back to back */
	PS_ACK,		/* the highest PSN acknowledged (a line) */
	PS_NAK_SEQ,	/* PSN sequence error NAK, at its PSN */
	PS_NAK_RNR,	/* RNR NAK, at its PSN */
	PS_NAK_FATAL,	/* the other NAK codes */
	PS__COUNT
};

/* Short names (JSON keys, SVG classes) and legend texts, by enum psn_series. */
extern const char *const psn_series_names[PS__COUNT];
extern const char *const psn_series_legend[PS__COUNT];

struct psn_pt {
	int64_t t_ns;		/* capture time */
	int64_t y;		/* unwrapped PSN */
	uint32_t series;	/* enum psn_series */
};

/* An RNR wait: from the NAK to the retry, capture times in ns. */
struct psn_span {
	int64_t t0_ns, t1_ns;
};

/* One request flow's points. */
struct psn_flow {
	long cflow;		/* the checker's flow index */
	uint64_t first_frame;	/* its first packet */
	int64_t t0_ns;		/* its first packet's time */
	uint32_t last_psn;	/* the unwrapping reference: the last request PSN */
	int64_t last_y, acked;	/* its unwrapped value; highest acknowledged */
	int run;		/* cause of the resend run going on: a series, or -1 */
	struct psn_pt *pts;
	size_t n, cap;
	struct psn_span *rnr;
	size_t nrnr, caprnr;
	uint64_t counts[PS__COUNT];	/* points per series */
};

struct psn_trace {
	struct psn_flow *v;	/* in order of first packet */
	size_t n, cap;
	long *of;		/* checker flow index -> 1 + index into v, 0 = none */
	size_t nof;
	int nomem;		/* a point could not be kept */
};

/*
 * Record REC, which the checker C was just fed (its verdict is read with
 * insp_check_last).  Packets the checker does not follow are left out, and
 * so are responses not paired with a request flow.
 */
void psn_trace_add(struct psn_trace *t, const struct insp_check *c, const struct insp_rec *rec);

void psn_trace_free(struct psn_trace *t);

#endif /* UROCE_TOOLS_INSPECT_PSN_TRACE_H */
