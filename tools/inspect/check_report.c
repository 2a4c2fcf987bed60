/*
 * check_report.c - the checker's findings: recording them, settling what the
 * end of the capture leaves open, and printing them with the summary.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_state.h"
#include "json.h"
#include "netstack/psn.h"

const struct chk_rule chk_rules[R__COUNT] = {
	[R_ICRC] = { "icrc", "7.8.1" },
	[R_MALFORMED] = { "malformed", "9.2-9.3" },
	[R_PSN_GAP] = { "psn.gap", "9.7.1" },
	[R_OPCODE_SEQUENCE] = { "opcode.sequence", "9.2.1" },
	[R_OPCODE_MIXED] = { "opcode.mixed", "9.2.1" },
	[R_PAYLOAD_PMTU] = { "payload.pmtu", "9.7" },
	[R_PAYLOAD_MTU] = { "payload.mtu", "9.7" },
	[R_PAYLOAD_LAST_EMPTY] = { "payload.last_empty", "9.7" },
	[R_RETH_LENGTH] = { "reth.length", "9.3" },
	[R_READ_RESPONSE_PSN] = { "read.response_psn", "9.7" },
	[R_READ_RESPONSE_COUNT] = { "read.response_count", "9.7" },
	[R_READ_RESPONSE_LENGTH] = { "read.response_length", "9.7" },
	[R_READ_RESPONSE_AETH] = { "read.response_aeth", "9.3.5" },
	[R_ACK_UNSENT_PSN] = { "ack.unsent_psn", "9.7" },
	[R_ACK_MSN] = { "ack.msn", "9.7" },
	[R_AETH_RESERVED] = { "aeth.reserved", "9.3.5" },
	[R_NAK_NO_RESEND] = { "nak.no_resend", "9.7" },
	[R_RNR_NO_RETRY] = { "rnr.no_retry", "9.7.5.2.8" },
	[R_RNR_EARLY_RETRY] = { "rnr.early_retry", "9.7.5.2.8" },
	[R_ATOMIC_ACK_PSN] = { "atomic.ack_psn", "9.7" },
	[R_ATOMIC_PLAIN_ACK] = { "atomic.plain_ack", "9.7" },
	[R_RETRANSMIT_CHANGED] = { "retransmit.changed", "9.7" },
};

/* The flow of a packet that has no flow state (bad ICRC, malformed): what was decoded of it. */
static void rec_flow_name(const struct insp_rec *r, char *buf, size_t len)
{
	struct cflow k;

	if (!r->have_addr) {
		snprintf(buf, len, "-");
		return;
	}
	memset(&k, 0, sizeof(k));
	k.key.version = r->version;
	memcpy(k.key.src, r->src, sizeof(k.key.src));
	memcpy(k.key.dst, r->dst, sizeof(k.key.dst));
	k.key.sport = r->sport;
	k.key.dport = r->dport;
	k.key.dqpn = r->have_bth ? r->pkt.h.dqpn : 0;
	chk_flow_name(&k, r->have_bth, buf, len);
}

static void finding_at(struct insp_check *c, uint64_t frame, enum rule r, const char *flow,
		       const char *fmt, va_list ap)
{
	struct finding *f;

	c->findings++;
	c->by_rule[r]++;
	if (c->nf == c->capf) {
		size_t cap = c->capf ? 2 * c->capf : 64;
		struct finding *nv = cap > SIZE_MAX / sizeof(*nv) || cap > MAX_FINDINGS ? NULL
			: realloc(c->f, cap * sizeof(*nv));

		if (!nv) {
			c->nomem = 1;
			return;
		}
		c->f = nv;
		c->capf = cap;
	}
	f = &c->f[c->nf++];
	f->frame = frame;
	f->rule = r;
	snprintf(f->flow, sizeof(f->flow), "%s", flow);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
}

/* Record a finding of rule R at FRAME on flow index FLOW. */
void chk_finding(struct insp_check *c, uint64_t frame, enum rule r, long flow, const char *fmt, ...)
{
	char name[160];
	va_list ap;

	chk_flow_name(&c->v[flow], 1, name, sizeof(name));
	va_start(ap, fmt);
	finding_at(c, frame, r, name, fmt, ap);
	va_end(ap);
}

/* Record a finding about packet REC itself (its flow named from its headers). */
void chk_finding_rec(struct insp_check *c, const struct insp_rec *rec, enum rule r, const char *fmt, ...)
{
	char name[160];
	va_list ap;

	rec_flow_name(rec, name, sizeof(name));
	va_start(ap, fmt);
	finding_at(c, rec->frame, r, name, fmt, ap);
	va_end(ap);
}

static int cmp_finding(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

/* Close what the end of the capture leaves open. */
static void settle(struct insp_check *c)
{
	size_t i;
	unsigned k;

	for (i = 0; i < c->n; i++) {
		struct cflow *fl = &c->v[i];

		for (k = 0; k < fl->nnak; k++) {
			struct nak *n = &fl->naks[k];

			/* only a requester that went on sending after the NAK broke the rule:
			 * one that stopped may have run out of retries */
			if (!roce_psn_after(fl->max_sent, n->max_at))
				continue;
			chk_finding(c, n->frame, n->rnr ? R_RNR_NO_RETRY : R_NAK_NO_RESEND,
				fl->peer >= 0 ? fl->peer : (long)i,
				"%s NAK for PSN %" PRIu32 " never answered by a resend of that PSN; the requester "
				"went on to PSN %" PRIu32, n->rnr ? "RNR" : "PSN sequence error", n->psn, fl->max_sent);
		}
		for (k = 0; k < fl->ngap; k++) {
			struct gap *g = &fl->gaps[k];
			unsigned m;
			int named = 0;

			for (m = 0; m < fl->nnak; m++)
				named |= roce_psn_in_range(fl->naks[m].psn, g->first, g->count);
			if (named)
				continue;	/* the unanswered NAK is the finding */
			/* a capture that only misses packets (an excerpt, a mirror
			 * port's drops) shows no acknowledgement past the gap */
			if (fl->peer < 0 || !c->v[fl->peer].have_ack ||
			    roce_psn_before(c->v[fl->peer].ack_psn, g->first))
				continue;
			chk_finding(c, g->frame, R_PSN_GAP, (long)i,
				"request PSN(s) %" PRIu32 "..%" PRIu32 " skipped here and never sent, yet "
				"acknowledged up to PSN %" PRIu32, g->first, roce_psn_add(g->first, g->count - 1),
				c->v[fl->peer].ack_psn);
		}
	}
}

uint64_t insp_check_finish(struct insp_check *c, FILE *fp, int json)
{
	struct jsonw j;
	size_t i;
	int r;

	settle(c);
	if (c->nf) /* qsort's base must not be NULL, even for no element */
		qsort(c->f, c->nf, sizeof(*c->f), cmp_finding);
	for (i = 0; i < c->nf; i++) {
		const struct finding *f = &c->f[i];
		const char *flow = f->flow;

		if (json) {
			jsonw_begin(&j, fp);
			jsonw_u64(&j, "frame", f->frame);
			jsonw_str(&j, "rule", chk_rules[f->rule].id);
			jsonw_str(&j, "section", chk_rules[f->rule].section);
			jsonw_str(&j, "flow", flow);
			jsonw_str(&j, "message", f->msg);
			jsonw_end(&j);
		} else {
			fprintf(fp, "frame %" PRIu64 ": %s (IBA §%s) %s: %s\n", f->frame, chk_rules[f->rule].id,
				chk_rules[f->rule].section, flow, f->msg);
		}
	}
	if (json) {
		jsonw_begin(&j, fp);
		jsonw_obj(&j, "check");
		jsonw_u64(&j, "packets", c->packets);
		jsonw_u64(&j, "checked", c->checked);
		jsonw_u64(&j, "flows", c->n);
		jsonw_u64(&j, "findings", c->findings);
		jsonw_obj(&j, "rules");
		for (r = 0; r < R__COUNT; r++)
			if (c->by_rule[r])
				jsonw_u64(&j, chk_rules[r].id, c->by_rule[r]);
		jsonw_obj_end(&j);
		jsonw_u64(&j, "retransmitted", c->retransmitted);
		jsonw_u64(&j, "retransmitted_bytes", c->retransmitted_bytes);
		jsonw_u64(&j, "duplicates", c->duplicates);
		jsonw_u64(&j, "out_of_order", c->out_of_order);
		jsonw_u64(&j, "gaps_repaired", c->gaps_repaired);
		jsonw_u64(&j, "naks_seq", c->naks_seq);
		jsonw_u64(&j, "naks_rnr", c->naks_rnr);
		jsonw_u64(&j, "naks_fatal", c->naks_fatal);
		jsonw_u64(&j, "unpaired_responses", c->unpaired);
		jsonw_u64(&j, "unfollowed", c->unfollowed);
		jsonw_bool(&j, "complete", !c->nomem && !c->unfollowed);
		jsonw_obj_end(&j);
		jsonw_end(&j);
	} else {
		fprintf(fp, "check: %" PRIu64 " packets, %" PRIu64 " checked, %zu flows, findings %" PRIu64,
			c->packets, c->checked, c->n, c->findings);
		for (r = 0; r < R__COUNT; r++)
			if (c->by_rule[r])
				fprintf(fp, "%s %s %" PRIu64, r == 0 || !c->findings ? "," : ",", chk_rules[r].id,
					c->by_rule[r]);
		fprintf(fp, "\ncheck: retransmitted %" PRIu64 " packets %" PRIu64 " bytes, duplicates %" PRIu64
			", out-of-order %" PRIu64
			", gaps repaired %" PRIu64 ", NAKs: sequence %" PRIu64 " RNR %" PRIu64 " fatal %" PRIu64
			", unpaired responses %" PRIu64 "\n",
			c->retransmitted, c->retransmitted_bytes, c->duplicates, c->out_of_order, c->gaps_repaired, c->naks_seq,
			c->naks_rnr, c->naks_fatal, c->unpaired);
		if (c->unfollowed)
			fprintf(fp, "check: %" PRIu64 " packets of flows beyond the first %u not followed\n",
				c->unfollowed, MAX_FLOWS);
		if (c->nomem)
			fputs("check: out of memory, some packets or findings are missing\n", fp);
	}
	return c->findings;
}

