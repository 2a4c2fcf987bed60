/*
 * psn_trace.c - the points of the PSN graph, one request flow at a time
 * (see psn_trace.h).  Kept as points until the capture ends: only then is a
 * flow's time span known, and with it the pixel column of each point.
 */
#include "config.h"

#include "psn_trace.h"

#include <stdlib.h>
#include <string.h>

const char *const psn_series_names[PS__COUNT] = {
	"req", "msg_end", "retx_seq", "retx_rnr", "retx_timeout", "dup", "read_resp", "read_retx", "read_dup",
	"ack", "nak_seq", "nak_rnr", "nak_fatal",
};

const char *const psn_series_legend[PS__COUNT] = {
	"request", "message end", "resend: sequence NAK", "resend: RNR NAK", "resend: timeout",
	"duplicate", "READ response", "READ response again", "READ response duplicate",
	"highest PSN acknowledged",
	"NAK: PSN sequence error", "RNR NAK", "NAK: fatal",
};

/* A - B as a signed 24-bit distance. */
static int64_t psn_delta(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/*
 * The flow of checker flow CF; if it has none and MAKE is set, a new one
 * starting at REC (its first request).  NULL when there is none, or out of
 * memory.
 */
static struct psn_flow *flow_of(struct psn_trace *t, long cf, const struct insp_rec *r, int make)
{
	struct psn_flow *f;

	if ((size_t)cf < t->nof && t->of[cf])
		return &t->v[t->of[cf] - 1];
	if (!make)
		return NULL;
	if ((size_t)cf >= t->nof) {
		size_t n = t->nof ? t->nof : 64;
		long *of;

		while (n <= (size_t)cf)
			n *= 2;
		of = realloc(t->of, n * sizeof(*of));
		if (!of)
			return NULL;
		memset(of + t->nof, 0, (n - t->nof) * sizeof(*of));
		t->of = of;
		t->nof = n;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct psn_flow *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	f = &t->v[t->n];
	memset(f, 0, sizeof(*f));
	f->cflow = cf;
	f->first_frame = r->frame;
	f->t0_ns = r->ts_sec * 1000000000ll + r->ts_nsec;
	f->last_psn = r->pkt.h.psn;
	f->last_y = r->pkt.h.psn;
	f->acked = f->last_y - 1;
	f->run = -1;
	t->of[cf] = (long)++t->n;
	return f;
}

static void point(struct psn_trace *t, struct psn_flow *f, int64_t ns, int64_t y, unsigned s)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 256;
		struct psn_pt *v = cap > SIZE_MAX / sizeof(*v) ? NULL : realloc(f->pts, cap * sizeof(*v));

		if (!v) {
			t->nomem = 1;
			return;
		}
		f->pts = v;
		f->cap = cap;
	}
	f->pts[f->n].t_ns = ns;
	f->pts[f->n].y = y;
	f->pts[f->n].series = s;
	f->n++;
	f->counts[s]++;
}

static void rnr_wait(struct psn_trace *t, struct psn_flow *f, int64_t t0, int64_t t1)
{
	if (f->nrnr == f->caprnr) {
		size_t cap = f->caprnr ? 2 * f->caprnr : 16;
		struct psn_span *v = cap > SIZE_MAX / sizeof(*v) ? NULL : realloc(f->rnr, cap * sizeof(*v));

		if (!v) {
			t->nomem = 1;
			return;
		}
		f->rnr = v;
		f->caprnr = cap;
	}
	f->rnr[f->nrnr].t0_ns = t0;
	f->rnr[f->nrnr].t1_ns = t1;
	f->nrnr++;
}

/* A request of F at Y (time NS), as verdict V has it. */
static void request(struct psn_trace *t, struct psn_flow *f, const struct insp_check_verdict *v,
		    const struct insp_rec *r, int64_t ns, int64_t y)
{
	unsigned s = PS_REQ;

	if (v->nak_answered == INSP_NAK_RNR && ns > v->nak_t_ns)	/* as --flows counts RNR waits */
		rnr_wait(t, f, v->nak_t_ns, ns);
	if (v->nak_answered >= 0)
		f->run = v->nak_answered == INSP_NAK_RNR ? PS_RETX_RNR : PS_RETX_SEQ;
	switch (v->kind) {
	case INSP_CK_NEW:
		f->run = -1;	/* a new PSN ends a resend run */
		break;
	case INSP_CK_RESEND:
		if (f->run < 0)
			f->run = PS_RETX_TIMEOUT;
		s = (unsigned)f->run;
		break;
	case INSP_CK_DUP:
		s = PS_DUP;
		break;
	default:	/* LATE: sent for the first time, after a higher PSN */
		break;
	}
	point(t, f, ns, y, s);
	if ((v->kind == INSP_CK_NEW || v->kind == INSP_CK_LATE) && (r->pkt.op->flags & ROCE_OPF_LAST))
		point(t, f, ns, y, PS_MSG_END);
	if (y > f->last_y || v->kind == INSP_CK_NEW) {
		f->last_y = y;
		f->last_psn = r->pkt.h.psn;
	}
}

/* A response of F at Y: READ response, ACK, NAK or ATOMIC Acknowledge. */
static void response(struct psn_trace *t, struct psn_flow *f, const struct insp_check_verdict *v,
		     const struct insp_rec *r, int64_t ns, int64_t y)
{
	uint8_t syn = r->pkt.h.aeth.syndrome;
	int64_t acked = y;

	if (v->kind != INSP_CK_ACK) {
		point(t, f, ns, y, v->kind == INSP_CK_NEW ? PS_READ_RESP
			: v->kind == INSP_CK_DUP ? PS_READ_DUP : PS_READ_RETX);
	} else if (r->pkt.h.opcode == ROCE_OP_RC_ACK && (syn & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK) {
		unsigned s = (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK ? PS_NAK_RNR
			: (syn & ROCE_AETH_VALUE_MASK) == 0 ? PS_NAK_SEQ : PS_NAK_FATAL;

		point(t, f, ns, y, s);
		acked = y - 1;	/* a NAK acknowledges the PSNs before its own */
	}
	if (acked > f->acked) {
		f->acked = acked;
		point(t, f, ns, acked, PS_ACK);
	}
}

void psn_trace_add(struct psn_trace *t, const struct insp_check *c, const struct insp_rec *r)
{
	const struct insp_check_verdict *v = insp_check_last(c);
	int64_t ns = r->ts_sec * 1000000000ll + r->ts_nsec, y;
	struct psn_flow *f;

	if (v->kind == INSP_CK_OTHER || v->req_flow < 0)
		return;
	f = flow_of(t, v->req_flow, r, !v->response);
	if (!f) {
		t->nomem |= !v->response;
		return;
	}
	y = f->last_y + psn_delta(r->pkt.h.psn, f->last_psn);
	if (v->response)
		response(t, f, v, r, ns, y);
	else
		request(t, f, v, r, ns, y);
}

void psn_trace_free(struct psn_trace *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].pts);
		free(t->v[i].rnr);
	}
	free(t->v);
	free(t->of);
	memset(t, 0, sizeof(*t));
}
