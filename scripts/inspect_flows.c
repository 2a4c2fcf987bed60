/*
 * inspect_flows.c - PSN continuity per flow (see inspect_flows.h).
 * Flows are found by a linear search with a last-hit shortcut: captures have
 * few flows (one per QP and direction), and consecutive packets usually
 * belong to the same one.
 */
#include "config.h"

#include "inspect_flows.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_json.h"
#include "netstack/psn.h"

/* Smallest path MTU (IBV_MTU_256), bytes: the most READ responses a length can need. */
#define MIN_PMTU 256u

static int same_key(const struct insp_flow *a, const struct insp_flow *b)
{
	return a->version == b->version && a->dqpn == b->dqpn && a->response == b->response &&
	       a->sport == b->sport && a->dport == b->dport &&
	       strcmp(a->src, b->src) == 0 && strcmp(a->dst, b->dst) == 0;
}

static struct insp_flow *find(struct insp_flows *f, const struct insp_flow *key)
{
	static size_t last;
	size_t i;

	if (last < f->n && same_key(&f->v[last], key))
		return &f->v[last];
	for (i = 0; i < f->n; i++) {
		if (same_key(&f->v[i], key)) {
			last = i;
			return &f->v[i];
		}
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		struct insp_flow *v = realloc(f->v, cap * sizeof(*v));

		if (!v) {
			f->nomem = 1;
			return NULL;
		}
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n] = *key;
	last = f->n;
	return &f->v[f->n++];
}

void insp_flows_add(struct insp_flows *f, const struct insp_rec *r)
{
	const struct roce_hdrs *h = &r->pkt.h;
	struct insp_flow key, *fl;
	uint32_t step;

	if (!r->have_all || !r->pkt.op || h->opcode == ROCE_OP_CNP)
		return;
	memset(&key, 0, sizeof(key));
	key.version = r->version;
	memcpy(key.src, r->src, sizeof(key.src));
	memcpy(key.dst, r->dst, sizeof(key.dst));
	key.sport = r->sport;
	key.dport = r->dport;
	key.dqpn = h->dqpn;
	key.response = (r->pkt.op->flags & ROCE_OPF_RESPONSE) != 0;
	fl = find(f, &key);
	if (!fl)
		return;

	if (fl->packets++ == 0) {
		fl->first_psn = fl->max_psn = h->psn;
	} else if (!roce_psn_after(h->psn, fl->max_psn)) {
		fl->repeats++;
	} else {
		step = roce_psn_sub(h->psn, fl->max_psn);
		if (step > 1 + fl->slack)
			fl->gaps++;
		fl->max_psn = h->psn;
	}
	/* After a READ request the next request may skip its response PSNs. */
	fl->slack = 0;
	if (h->opcode == ROCE_OP_RC_READ_REQUEST && h->reth.dma_len > MIN_PMTU)
		fl->slack = (h->reth.dma_len + MIN_PMTU - 1) / MIN_PMTU - 1;
}

static void where(FILE *fp, const struct insp_flow *fl)
{
	if (fl->version == 2 && strchr(fl->src, ':'))
		fprintf(fp, "RoCEv2 [%s]:%u > [%s]:%u", fl->src, fl->sport, fl->dst, fl->dport);
	else if (fl->version == 2)
		fprintf(fp, "RoCEv2 %s:%u > %s:%u", fl->src, fl->sport, fl->dst, fl->dport);
	else
		fprintf(fp, "RoCEv1 %s > %s", fl->src, fl->dst);
}

void insp_flows_print_text(FILE *fp, const struct insp_flows *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct insp_flow *fl = &f->v[i];

		fputs("flow ", fp);
		where(fp, fl);
		fprintf(fp, " dqpn 0x%06" PRIx32 " %s: packets %" PRIu64 ", psn %" PRIu32 "..%" PRIu32
			", gaps %" PRIu64 ", repeats %" PRIu64 "\n",
			fl->dqpn, fl->response ? "responses" : "requests", fl->packets,
			fl->first_psn, fl->max_psn, fl->gaps, fl->repeats);
	}
	if (f->nomem)
		fputs("flows: out of memory, some flows are missing\n", fp);
}

void insp_flows_print_json(FILE *fp, const struct insp_flows *f)
{
	struct jsonw j;
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct insp_flow *fl = &f->v[i];

		jsonw_begin(&j, fp);
		jsonw_obj(&j, "flow");
		jsonw_u64(&j, "version", (uint64_t)fl->version);
		jsonw_str(&j, "src", fl->src);
		jsonw_str(&j, "dst", fl->dst);
		if (fl->version == 2) {
			jsonw_u64(&j, "sport", fl->sport);
			jsonw_u64(&j, "dport", fl->dport);
		}
		jsonw_u64(&j, "destqp", fl->dqpn);
		jsonw_str(&j, "kind", fl->response ? "responses" : "requests");
		jsonw_u64(&j, "packets", fl->packets);
		jsonw_u64(&j, "first_psn", fl->first_psn);
		jsonw_u64(&j, "max_psn", fl->max_psn);
		jsonw_u64(&j, "gaps", fl->gaps);
		jsonw_u64(&j, "repeats", fl->repeats);
		jsonw_end(&j);
	}
	if (f->nomem) {
		jsonw_begin(&j, fp);
		jsonw_str(&j, "error", "flows: out of memory, some flows are missing");
		jsonw_end(&j);
	}
}

void insp_flows_free(struct insp_flows *f)
{
	free(f->v);
	f->v = NULL;
	f->n = f->cap = 0;
}
