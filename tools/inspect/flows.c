/*
 * inspect_flows.c - PSN continuity per flow (see inspect_flows.h).
 * Flows are found through an open-addressing hash table of indices into the
 * array, which keeps the order of first appearance: a hostile capture with
 * one flow per packet costs O(1) per packet, not a search of all flows.
 */
#include "config.h"

#include "flows.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json.h"
#include "netstack/psn.h"

/* Smallest path MTU (IBV_MTU_256), bytes: the most READ responses a length can need. */
#define MIN_PMTU 256u

void insp_flow_key_of(struct insp_flow_key *k, const struct insp_rec *r)
{
	memset(k, 0, sizeof(*k));
	k->version = r->version;
	memcpy(k->src, r->src, sizeof(k->src));
	memcpy(k->dst, r->dst, sizeof(k->dst));
	k->sport = r->sport;
	k->dport = r->dport;
	k->dqpn = r->pkt.h.dqpn;
	k->response = (r->pkt.op->flags & ROCE_OPF_RESPONSE) != 0;
}

int insp_flow_key_eq(const struct insp_flow_key *a, const struct insp_flow_key *b)
{
	return a->version == b->version && a->dqpn == b->dqpn && a->response == b->response &&
	       a->sport == b->sport && a->dport == b->dport &&
	       strcmp(a->src, b->src) == 0 && strcmp(a->dst, b->dst) == 0;
}

size_t insp_flow_key_hash(const struct insp_flow_key *k)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const unsigned char *s;
	uint32_t words[4] = { (uint32_t)k->version, k->dqpn, (uint32_t)k->response,
			      (uint32_t)k->sport << 16 | k->dport };

#define MIX(c) (h = (h ^ (unsigned char)(c)) * 0x100000001b3ull)
	for (s = (const unsigned char *)k->src; *s; s++)
		MIX(*s);
	MIX(0);
	for (s = (const unsigned char *)k->dst; *s; s++)
		MIX(*s);
	MIX(0);
	for (s = (const unsigned char *)words; s < (const unsigned char *)(words + 4); s++)
		MIX(*s);
#undef MIX
	return (size_t)h;
}

int insp_flow_key_name(const struct insp_flow_key *k, char *buf, size_t len)
{
	if (k->version == 2 && strchr(k->src, ':'))
		return snprintf(buf, len, "RoCEv2 [%s]:%u > [%s]:%u", k->src, k->sport, k->dst, k->dport);
	if (k->version == 2)
		return snprintf(buf, len, "RoCEv2 %s:%u > %s:%u", k->src, k->sport, k->dst, k->dport);
	return snprintf(buf, len, "RoCEv1 %s > %s", k->src, k->dst);
}

/* Slot of KEY in the table: its flow's, or the empty one where it goes. */
static size_t *lookup(const struct insp_flows *f, const struct insp_flow_key *key)
{
	size_t mask = f->nslot - 1, i = insp_flow_key_hash(key) & mask;

	while (f->slot[i] && !insp_flow_key_eq(&f->v[f->slot[i] - 1].key, key))
		i = (i + 1) & mask;
	return &f->slot[i];
}

/* Double the table (or make the first one) and put every flow back. */
static int grow_table(struct insp_flows *f)
{
	size_t nslot = f->nslot ? 2 * f->nslot : 64, *old = f->slot, i;

	if (nslot > SIZE_MAX / sizeof(*old))
		return -1;
	f->slot = calloc(nslot, sizeof(*f->slot));
	if (!f->slot) {
		f->slot = old;
		return -1;
	}
	f->nslot = nslot;
	for (i = 0; i < f->n; i++)
		*lookup(f, &f->v[i].key) = i + 1;
	free(old);
	return 0;
}

static struct insp_flow *find(struct insp_flows *f, const struct insp_flow *key)
{
	size_t *slot;

	if (2 * (f->n + 1) > f->nslot && grow_table(f) != 0) {
		f->nomem = 1;
		return NULL;
	}
	slot = lookup(f, &key->key);
	if (*slot)
		return &f->v[*slot - 1];
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		struct insp_flow *v = cap > SIZE_MAX / sizeof(*v) ? NULL : realloc(f->v, cap * sizeof(*v));

		if (!v) {
			f->nomem = 1;
			return NULL;
		}
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n] = *key;
	*slot = ++f->n;
	return &f->v[f->n - 1];
}

void insp_flows_add(struct insp_flows *f, const struct insp_rec *r)
{
	const struct roce_hdrs *h = &r->pkt.h;
	struct insp_flow key, *fl;
	uint32_t step;

	if (!r->have_all || !r->pkt.op || h->opcode == ROCE_OP_CNP)
		return;
	memset(&key, 0, sizeof(key));
	insp_flow_key_of(&key.key, r);
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
	char name[160];

	insp_flow_key_name(&fl->key, name, sizeof(name));
	fputs(name, fp);
}

static const char *const nak_names[INSP_NAK__COUNT] = {
	"PSN_SEQ_ERR", "INVALID_REQ", "REM_ACCESS_ERR", "REM_OP_ERR", "INVALID_RD_REQ", "RNR",
};

static void stats_text(FILE *fp, const struct insp_flow_stats *st)
{
	int k;

	fprintf(fp, "  stats: goodput %" PRIu64 " bytes in %" PRIu64 " ns = %" PRIu64 " bit/s, retransmitted %"
		PRIu64 " packets %" PRIu64 " bytes, duplicates %" PRIu64 ", out-of-order %" PRIu64 ", NAKs",
		st->goodput_bytes, st->duration_ns, st->goodput_bps, st->retransmitted, st->retransmitted_bytes,
		st->duplicates, st->out_of_order);
	for (k = 0; k < INSP_NAK__COUNT; k++)
		fprintf(fp, " %s %" PRIu64, nak_names[k], st->naks[k]);
	fprintf(fp, ", RNR waits %" PRIu64 " total %" PRIu64 " ns, messages %" PRIu64 " latency p50 %" PRIu64
		" p99 %" PRIu64 " max %" PRIu64 " ns\n", st->rnr_waits, st->rnr_wait_ns, st->messages,
		st->latency_p50_ns, st->latency_p99_ns, st->latency_max_ns);
}

static void stats_json(struct jsonw *j, const struct insp_flow_stats *st)
{
	int k;

	jsonw_obj(j, "stats");
	jsonw_u64(j, "goodput_bytes", st->goodput_bytes);
	jsonw_u64(j, "duration_ns", st->duration_ns);
	jsonw_u64(j, "goodput_bps", st->goodput_bps);
	jsonw_u64(j, "retransmitted", st->retransmitted);
	jsonw_u64(j, "retransmitted_bytes", st->retransmitted_bytes);
	jsonw_u64(j, "duplicates", st->duplicates);
	jsonw_u64(j, "out_of_order", st->out_of_order);
	jsonw_obj(j, "naks");
	for (k = 0; k < INSP_NAK__COUNT; k++)
		jsonw_u64(j, nak_names[k], st->naks[k]);
	jsonw_obj_end(j);
	jsonw_u64(j, "rnr_waits", st->rnr_waits);
	jsonw_u64(j, "rnr_wait_ns", st->rnr_wait_ns);
	jsonw_u64(j, "messages", st->messages);
	jsonw_u64(j, "latency_p50_ns", st->latency_p50_ns);
	jsonw_u64(j, "latency_p99_ns", st->latency_p99_ns);
	jsonw_u64(j, "latency_max_ns", st->latency_max_ns);
	jsonw_obj_end(j);
}

void insp_flows_print_text(FILE *fp, const struct insp_flows *f, struct insp_check *check)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct insp_flow *fl = &f->v[i];
		struct insp_flow_stats st;

		fputs("flow ", fp);
		where(fp, fl);
		fprintf(fp, " dqpn 0x%06" PRIx32 " %s: packets %" PRIu64 ", psn %" PRIu32 "..%" PRIu32
			", gaps %" PRIu64 ", repeats %" PRIu64 "\n",
			fl->key.dqpn, fl->key.response ? "responses" : "requests", fl->packets,
			fl->first_psn, fl->max_psn, fl->gaps, fl->repeats);
		if (check) {
			insp_check_flow_stats(check, fl, &st);
			stats_text(fp, &st);
		}
	}
	if (f->nomem)
		fputs("flows: out of memory, some flows are missing\n", fp);
}

void insp_flows_print_json(FILE *fp, const struct insp_flows *f, struct insp_check *check)
{
	struct jsonw j;
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct insp_flow *fl = &f->v[i];
		struct insp_flow_stats st;

		jsonw_begin(&j, fp);
		jsonw_obj(&j, "flow");
		jsonw_u64(&j, "version", (uint64_t)fl->key.version);
		jsonw_str(&j, "src", fl->key.src);
		jsonw_str(&j, "dst", fl->key.dst);
		if (fl->key.version == 2) {
			jsonw_u64(&j, "sport", fl->key.sport);
			jsonw_u64(&j, "dport", fl->key.dport);
		}
		jsonw_u64(&j, "destqp", fl->key.dqpn);
		jsonw_str(&j, "kind", fl->key.response ? "responses" : "requests");
		jsonw_u64(&j, "packets", fl->packets);
		jsonw_u64(&j, "first_psn", fl->first_psn);
		jsonw_u64(&j, "max_psn", fl->max_psn);
		jsonw_u64(&j, "gaps", fl->gaps);
		jsonw_u64(&j, "repeats", fl->repeats);
		if (check) {
			insp_check_flow_stats(check, fl, &st);
			stats_json(&j, &st);
		}
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
	free(f->slot);
	f->v = NULL;
	f->slot = NULL;
	f->n = f->cap = f->nslot = 0;
}
