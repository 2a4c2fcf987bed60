/*
 * check_flow.c - the checker's flow table (open addressing over indices, as
 * flows.c) and what a request flow remembers: the PSNs it sent, its gaps,
 * the messages waiting for completion and the message ends (for the MSN).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_state.h"
#include "netstack/psn.h"

/* ---- Flow table ----------------------------------------------------------- */

/* Slot of KEY's flow (0 = free); c->nslot > 0. */
size_t *chk_lookup(const struct insp_check *c, const struct cflow *k)
{
	size_t mask = c->nslot - 1, i = insp_flow_key_hash(&k->key) & mask;

	while (c->slot[i] && !insp_flow_key_eq(&c->v[c->slot[i] - 1].key, &k->key))
		i = (i + 1) & mask;
	return &c->slot[i];
}

static int grow_table(struct insp_check *c)
{
	size_t nslot = c->nslot ? 2 * c->nslot : 64, *old = c->slot, i;

	if (nslot > SIZE_MAX / sizeof(*old))
		return -1;
	c->slot = calloc(nslot, sizeof(*c->slot));
	if (!c->slot) {
		c->slot = old;
		return -1;
	}
	c->nslot = nslot;
	for (i = 0; i < c->n; i++)
		*chk_lookup(c, &c->v[i]) = i + 1;
	free(old);
	return 0;
}

/* "RoCEv2 a:p > b:p dqpn 0x..." into BUF; without the dqpn if !WITH_QPN. */
void chk_flow_name(const struct cflow *fl, int with_qpn, char *buf, size_t len)
{
	int n;

	n = insp_flow_key_name(&fl->key, buf, len);
	if (with_qpn && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " dqpn 0x%06" PRIx32, fl->key.dqpn);
}

/* Index of the flow of KEY, made if new; -1 when out of memory, -2 beyond MAX_FLOWS. */
long chk_find_flow(struct insp_check *c, const struct cflow *key)
{
	size_t *slot;

	if (2 * (c->n + 1) > c->nslot && grow_table(c) != 0)
		return -1;
	slot = chk_lookup(c, key);
	if (*slot)
		return (long)*slot - 1;
	if (c->n >= MAX_FLOWS)
		return -2;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct cflow *v = cap > SIZE_MAX / sizeof(*v) ? NULL : realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -1;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n] = *key;
	c->v[c->n].peer = -1;
	*slot = ++c->n;
	return (long)c->n - 1;
}

/* Bucket of the address pair (version, SRC, DST) in the pairing index. */
unsigned chk_pair_bucket(int version, const char *src, const char *dst)
{
	uint32_t h = 2166136261u ^ (uint32_t)version;
	const unsigned char *p;

	for (p = (const unsigned char *)src; *p; p++)
		h = (h ^ *p) * 16777619u;
	h = (h ^ '>') * 16777619u;
	for (p = (const unsigned char *)dst; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h % NPAIR;
}

/* ---- History -------------------------------------------------------------- */

struct hist *chk_hist_at(struct cflow *fl, uint32_t psn)
{
	struct hist *h;

	if (!fl->m)
		return NULL;
	h = &fl->m->hist[psn & (HIST - 1)];
	return h->valid && h->psn == psn ? h : NULL;
}

void chk_hist_put(struct insp_check *c, struct cflow *fl, const struct insp_rec *r)
{
	const struct roce_hdrs *h = &r->pkt.h;
	struct hist *e;

	(void)c;
	if (!fl->m)
		return;
	e = &fl->m->hist[h->psn & (HIST - 1)];
	memset(e, 0, sizeof(*e));
	e->psn = h->psn;
	e->valid = 1;
	e->opcode = h->opcode;
	e->payload_len = r->pkt.payload_len;
	if (r->pkt.op->hdrs & ROCE_HDR_BIT(ROCE_HDR_RETH)) {
		e->va = h->reth.va;
		e->rkey = h->reth.rkey;
		e->dma_len = h->reth.dma_len;
	}
	if (r->pkt.op->hdrs & ROCE_HDR_BIT(ROCE_HDR_ATOMICETH)) {
		e->va = h->atomic.va;
		e->rkey = h->atomic.rkey;
		e->swap_add = h->atomic.swap_add;
		e->compare = h->atomic.compare;
	}
}

/* ---- Message latency ------------------------------------------------------ */

/* A message (ending at END_PSN) was sent for the first time; T0 its first packet. */
void chk_pend_push(struct insp_check *c, struct cflow *fl, uint32_t end_psn, int explicit_only, int64_t t0)
{
	struct pend *e;
	unsigned i;

	(void)c;
	if (!fl->m)
		return;
	if (fl->npend == NPEND) {	/* never completed: forget the oldest */
		fl->pend_head = (fl->pend_head + 1) % NPEND;
		fl->npend--;
	}
	/* in PSN order (a late packet may finish an earlier message) */
	for (i = fl->npend; i > 0; i--) {
		struct pend *p = &fl->m->pend[(fl->pend_head + i - 1) % NPEND];

		if (p->end_psn == end_psn)
			return;
		if (roce_psn_before(p->end_psn, end_psn))
			break;
		fl->m->pend[(fl->pend_head + i) % NPEND] = *p;
	}
	e = &fl->m->pend[(fl->pend_head + i) % NPEND];
	e->end_psn = end_psn;
	e->explicit_only = (uint8_t)explicit_only;
	e->t0 = t0;
	fl->npend++;
}

/*
 * A response at time NOW completes the messages up to UPTO (an ACK's PSN,
 * a NAK's PSN - 1); READs and atomics among them only if EXPLICIT_OK (the
 * response is a READ's last response or an ATOMIC Acknowledge).
 */
void chk_pend_complete(struct cflow *fl, uint32_t upto, int explicit_ok, int64_t now)
{
	while (fl->npend) {
		struct pend *p = &fl->m->pend[fl->pend_head];

		if (roce_psn_after(p->end_psn, upto))
			break;
		if (p->explicit_only && !explicit_ok)
			break;
		if (fl->nlat == fl->caplat) {
			size_t cap = fl->caplat ? 2 * fl->caplat : 64;
			uint64_t *v = cap > SIZE_MAX / sizeof(*v) ? NULL : realloc(fl->lat, cap * sizeof(*v));

			if (!v)
				return;
			fl->lat = v;
			fl->caplat = cap;
		}
		fl->lat[fl->nlat++] = now > p->t0 ? (uint64_t)(now - p->t0) : 0;
		fl->pend_head = (fl->pend_head + 1) % NPEND;
		fl->npend--;
	}
}

/* ---- Gaps and message ends ------------------------------------------------ */

/* PSNs a request uses: a READ also those of its responses (1 while the PMTU is unknown). */
static uint32_t psns_of(const struct cflow *fl, uint8_t opcode, uint32_t dma_len)
{
	if (opcode == ROCE_OP_RC_READ_REQUEST && fl->pmtu)
		return read_npkts(dma_len, fl->pmtu);
	return 1;
}

/* PSN P (not seen before) filled part of a gap: shrink the gaps. */
void chk_gap_fill(struct insp_check *c, struct cflow *fl, uint32_t psn)
{
	unsigned i;
	struct hist *e;

	for (i = 0; i < fl->ngap; i++) {
		struct gap *g = &fl->gaps[i];

		if (!roce_psn_in_range(psn, g->first, g->count))
			continue;
		while (g->count && (e = chk_hist_at(fl, g->first)) != NULL) {
			uint32_t k = psns_of(fl, e->opcode, e->dma_len);

			if (k > g->count)
				k = g->count;
			g->first = roce_psn_add(g->first, k);
			g->count -= k;
		}
		if (!g->count) {
			c->gaps_repaired++;
			fl->gaps[i] = fl->gaps[--fl->ngap];
		}
		return;
	}
}

/* Remember that a message completes at PSN (kept in PSN order: a packet
 * that fills a gap comes after the later ones). */
void chk_end_push(struct cflow *fl, uint32_t psn)
{
	unsigned i;

	if (!fl->m)
		return;
	if (fl->nend == NENDS) {
		fl->end_head = (fl->end_head + 1) % NENDS;
		fl->nend--;
	}
	for (i = fl->nend; i > 0; i--) {
		uint32_t e = fl->m->ends[(fl->end_head + i - 1) % NENDS];

		if (e == psn)
			return;
		if (roce_psn_before(e, psn))
			break;
		fl->m->ends[(fl->end_head + i) % NENDS] = e;
	}
	fl->m->ends[(fl->end_head + i) % NENDS] = psn;
	fl->nend++;
}

/* Messages completed at PSNs in (from, to]. */
uint32_t chk_ends_between(const struct cflow *fl, uint32_t from, uint32_t to)
{
	uint32_t n = 0;
	unsigned i;

	for (i = 0; i < fl->nend; i++) {
		uint32_t e = fl->m->ends[(fl->end_head + i) % NENDS];

		if (roce_psn_after(e, to))
			break;
		if (roce_psn_after(e, from))
			n++;
	}
	return n;
}

/* Forget the message ends at or before PSN UPTO (acknowledged). */
void chk_ends_prune(struct cflow *fl, uint32_t upto)
{
	while (fl->nend && !roce_psn_after(fl->m->ends[fl->end_head], upto)) {
		fl->end_head = (fl->end_head + 1) % NENDS;
		fl->nend--;
	}
}
