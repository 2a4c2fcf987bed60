/*
 * graph.c - the model behind `--graph` and `--timeline` (see graph.h):
 * the packets kept in capture order, then their endpoints, flows and marks
 * found in one pass after the last packet (the source QPN of a packet may
 * only be known from a later packet going the other way). Lookups go
 * through one open-addressing hash table, so a hostile capture with a new
 * address or QP per packet still costs O(1) per packet.
 */
#include "config.h"

#include "graph.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/psn.h"
#include "print.h"

/* Key spaces of the hash table (the first word of a key). */
enum { K_ADDR, K_PAIR, K_EP, K_FLOW, K_DIR };

struct slot {
	uint64_t k[3];
	uint32_t val;
	int used;
};

/* QPNs seen going from one address to another with one UDP source port. */
struct pair {
	uint32_t q[3];
	uint32_t n;		/* distinct QPNs, saturating at 4 */
};

struct addr {
	char s[48];
	int version;
};

struct insp_graph {
	struct insp_gev *ev;
	uint64_t nev, capev;
	struct addr *addr;
	uint32_t naddr, capaddr;
	struct pair *pair;
	uint32_t npair, cappair;
	struct insp_gep *ep;
	uint32_t nep, capep;
	struct insp_gflow *flow;
	uint32_t nflow, capflow;
	struct slot *tab;
	size_t ntab, captab;	/* captab: a power of two, > 2 * ntab */
	int nomem;
};

static int grow(void **v, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	p = realloc(*v, (size_t)c * size);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

static uint64_t mix(uint64_t h, uint64_t w)
{
	h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static size_t hash3(const uint64_t k[3])
{
	return (size_t)mix(mix(mix(0xcbf29ce484222325ull, k[0]), k[1]), k[2]);
}

static int tab_rehash(struct insp_graph *g)
{
	size_t cap = g->captab ? g->captab * 2 : 1024, i, j;
	struct slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (i = 0; i < g->captab; i++) {
		if (!g->tab[i].used)
			continue;
		for (j = hash3(g->tab[i].k) & (cap - 1); t[j].used; j = (j + 1) & (cap - 1))
			;
		t[j] = g->tab[i];
	}
	free(g->tab);
	g->tab = t;
	g->captab = cap;
	return 0;
}

/*
 * The slot of key K; a new slot gets *ADDED = 1 and val UINT32_MAX for the
 * caller to fill. For K_ADDR the caller compares the strings itself: k[1]
 * is the string's hash, k[2] a probe counter it raises on a mismatch.
 * NULL when out of memory.
 */
static struct slot *tab_get(struct insp_graph *g, const uint64_t k[3], int *added)
{
	size_t j;

	*added = 0;
	if (2 * (g->ntab + 1) >= g->captab && tab_rehash(g) != 0)
		return NULL;
	for (j = hash3(k) & (g->captab - 1); g->tab[j].used; j = (j + 1) & (g->captab - 1))
		if (!memcmp(g->tab[j].k, k, sizeof(g->tab[j].k)))
			return &g->tab[j];
	memcpy(g->tab[j].k, k, sizeof(g->tab[j].k));
	g->tab[j].used = 1;
	g->tab[j].val = UINT32_MAX;
	g->ntab++;
	*added = 1;
	return &g->tab[j];
}

struct insp_graph *insp_graph_new(void)
{
	return calloc(1, sizeof(struct insp_graph));
}

void insp_graph_free(struct insp_graph *g)
{
	if (!g)
		return;
	free(g->ev);
	free(g->addr);
	free(g->pair);
	free(g->ep);
	free(g->flow);
	free(g->tab);
	free(g);
}

int insp_graph_nomem(const struct insp_graph *g)
{
	return g->nomem;
}

/* Index of address S of VERSION, added if new; UINT32_MAX when out of memory. */
static uint32_t addr_index(struct insp_graph *g, const char *s, int version)
{
	uint64_t h = 0xcbf29ce484222325ull, k[3];
	const unsigned char *p;
	struct slot *sl;
	int added;

	for (p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	k[0] = K_ADDR;
	k[1] = h ^ (uint64_t)version << 60;
	for (k[2] = 0;; k[2]++) {
		sl = tab_get(g, k, &added);
		if (!sl)
			return UINT32_MAX;
		if (!added) {
			if (g->addr[sl->val].version == version && !strcmp(g->addr[sl->val].s, s))
				return sl->val;
			continue;	/* a hash collision: the next probe */
		}
		if (grow((void **)&g->addr, &g->capaddr, g->naddr, sizeof(*g->addr)) != 0) {
			sl->val = UINT32_MAX;	/* never matches: every lookup compares */
			return UINT32_MAX;
		}
		snprintf(g->addr[g->naddr].s, sizeof(g->addr[g->naddr].s), "%s", s);
		g->addr[g->naddr].version = version;
		sl->val = g->naddr;
		return g->naddr++;
	}
}

int insp_graph_add(struct insp_graph *g, const struct insp_rec *r)
{
	struct insp_gev *e;
	uint32_t flags;

	if (!r->have_addr || !r->have_bth || r->status == INSP_SKIPPED)
		return 0;
	if (g->nev == g->capev) {
		uint64_t c = g->capev ? g->capev * 2 : 1024;
		void *p = realloc(g->ev, c * sizeof(*g->ev));

		if (!p) {
			g->nomem = 1;
			return -1;
		}
		g->ev = p;
		g->capev = c;
	}
	e = &g->ev[g->nev];
	memset(e, 0, sizeof(*e));
	e->frame = r->frame;
	e->t_ns = r->ts_sec * 1000000000 + r->ts_nsec;
	e->src_addr = addr_index(g, r->src, r->version);
	e->dst_addr = addr_index(g, r->dst, r->version);
	if (e->src_addr == UINT32_MAX || e->dst_addr == UINT32_MAX) {
		g->nomem = 1;
		return -1;
	}
	e->sport = r->version == 2 ? r->sport : 0;
	e->opcode = r->pkt.h.opcode;
	e->dqpn = r->pkt.h.dqpn;
	e->psn = r->pkt.h.psn;
	e->srcqp = INSP_GRAPH_QPN_UNKNOWN;
	if (r->pkt.h.se)
		e->mark |= INSP_GM_SE;
	if (r->pkt.h.ackreq)
		e->mark |= INSP_GM_ACKREQ;
	if (!r->have_all) {
		e->mark |= INSP_GM_MALFORMED;
		e->err = r->err;
		g->nev++;
		return 0;
	}
	if (r->status == INSP_BAD_ICRC)
		e->mark |= INSP_GM_BAD_ICRC;
	e->payload_len = r->pkt.payload_len;
	flags = r->pkt.op ? r->pkt.op->hdrs : 0;
	if (flags & ROCE_HDR_BIT(ROCE_HDR_DETH))
		e->srcqp = r->pkt.h.deth.sqpn;
	if (flags & ROCE_HDR_BIT(ROCE_HDR_AETH)) {
		e->mark |= INSP_GM_AETH;
		e->syndrome = r->pkt.h.aeth.syndrome;
		e->msn = r->pkt.h.aeth.msn;
		if ((e->syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK)
			e->mark |= INSP_GM_NAK;
		else if ((e->syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
			e->mark |= INSP_GM_RNR;
	}
	g->nev++;
	return 0;
}

/* Records that QPN Q went from address FROM to TO with source port SPORT. */
static int pair_note(struct insp_graph *g, uint32_t from, uint32_t to, uint16_t sport, uint32_t q)
{
	uint64_t k[3] = { K_PAIR, (uint64_t)from << 32 | to, sport };
	struct slot *sl;
	struct pair *p;
	uint32_t i;
	int added;

	sl = tab_get(g, k, &added);
	if (!sl)
		return -1;
	if (added) {
		if (grow((void **)&g->pair, &g->cappair, g->npair, sizeof(*g->pair)) != 0)
			return -1;
		sl->val = g->npair;
		memset(&g->pair[g->npair++], 0, sizeof(*g->pair));
	}
	if (sl->val == UINT32_MAX)
		return -1;
	p = &g->pair[sl->val];
	for (i = 0; i < p->n && i < 3; i++)
		if (p->q[i] == q)
			return 0;
	if (p->n < 3)
		p->q[p->n] = q;
	if (p->n < 4)
		p->n++;
	return 0;
}

/* The source QPN of E (graph.h, rules 2 and 3), or INSP_GRAPH_QPN_UNKNOWN. */
static uint32_t pair_source(struct insp_graph *g, const struct insp_gev *e)
{
	uint64_t k[3] = { K_PAIR, (uint64_t)e->dst_addr << 32 | e->src_addr, e->sport };
	uint32_t found = INSP_GRAPH_QPN_UNKNOWN, i, n = 0;
	struct slot *sl;
	int added;

	sl = tab_get(g, k, &added);
	if (!sl || added || sl->val == UINT32_MAX)
		return INSP_GRAPH_QPN_UNKNOWN;	/* a new slot stays empty: harmless */
	if (g->pair[sl->val].n > 3)
		return INSP_GRAPH_QPN_UNKNOWN;
	for (i = 0; i < g->pair[sl->val].n; i++) {
		uint32_t q = g->pair[sl->val].q[i];

		if (e->src_addr == e->dst_addr && q == e->dqpn)
			continue;
		found = q;
		n++;
	}
	return n == 1 ? found : INSP_GRAPH_QPN_UNKNOWN;
}

static uint32_t ep_index(struct insp_graph *g, uint32_t addr, uint32_t qpn, uint16_t sport)
{
	uint64_t k[3] = { K_EP, (uint64_t)addr << 32 | qpn,
			  qpn == INSP_GRAPH_QPN_UNKNOWN ? sport : 0 };
	struct slot *sl;
	int added;

	sl = tab_get(g, k, &added);
	if (!sl)
		return UINT32_MAX;
	if (added) {
		if (grow((void **)&g->ep, &g->capep, g->nep, sizeof(*g->ep)) != 0)
			return UINT32_MAX;
		g->ep[g->nep].addr = addr;
		g->ep[g->nep].qpn = qpn;
		g->ep[g->nep].sport = (uint16_t)k[2];
		sl->val = g->nep++;
	}
	return sl->val;
}

static uint32_t flow_index(struct insp_graph *g, uint32_t a, uint32_t b)
{
	uint64_t k[3] = { K_FLOW, a < b ? a : b, a < b ? b : a };
	struct slot *sl;
	int added;

	sl = tab_get(g, k, &added);
	if (!sl)
		return UINT32_MAX;
	if (added) {
		if (grow((void **)&g->flow, &g->capflow, g->nflow, sizeof(*g->flow)) != 0)
			return UINT32_MAX;
		g->flow[g->nflow].ep_a = a;
		g->flow[g->nflow].ep_b = b;
		g->flow[g->nflow].packets = 0;
		sl->val = g->nflow++;
	}
	return sl->val;
}

/*
 * Marks E as a resend when its PSN is not after the highest PSN its
 * direction (requests, or READ responses) sent before. Only trusted
 * packets (good ICRC) set the highest PSN.
 */
static void mark_resend(struct insp_graph *g, struct insp_gev *e)
{
	const struct roce_opcode_info *op = roce_opcode_info(e->opcode);
	uint64_t k[3];
	struct slot *sl;
	int cls, added;

	if (!op || (e->mark & (INSP_GM_MALFORMED | INSP_GM_BAD_ICRC)))
		return;
	if (op->flags & ROCE_OPF_REQUEST)
		cls = 0;
	else if ((op->flags & ROCE_OPF_RESPONSE) && (op->flags & ROCE_OPF_READ))
		cls = 1;
	else
		return;
	k[0] = K_DIR;
	k[1] = (uint64_t)e->src_ep << 32 | e->dst_ep;
	k[2] = (uint64_t)cls;
	sl = tab_get(g, k, &added);
	if (!sl) {
		g->nomem = 1;
		return;
	}
	if (added) {
		sl->val = e->psn;
		return;
	}
	if (!roce_psn_after(e->psn, sl->val))
		e->mark |= INSP_GM_RESEND;
	else
		sl->val = e->psn;
}

void insp_graph_resolve(struct insp_graph *g)
{
	uint64_t i;

	for (i = 0; i < g->nev; i++)
		if (pair_note(g, g->ev[i].src_addr, g->ev[i].dst_addr, g->ev[i].sport,
			      g->ev[i].dqpn) != 0)
			g->nomem = 1;
	for (i = 0; i < g->nev; i++) {
		struct insp_gev *e = &g->ev[i];
		uint32_t sq = e->srcqp != INSP_GRAPH_QPN_UNKNOWN ? e->srcqp : pair_source(g, e);

		e->src_ep = ep_index(g, e->src_addr, sq, e->sport);
		e->dst_ep = ep_index(g, e->dst_addr, e->dqpn, 0);
		e->flow = e->src_ep == UINT32_MAX || e->dst_ep == UINT32_MAX ?
				  UINT32_MAX : flow_index(g, e->src_ep, e->dst_ep);
		if (e->flow == UINT32_MAX) {
			g->nomem = 1;
			continue;
		}
		g->flow[e->flow].packets++;
		mark_resend(g, e);
	}
}

uint32_t insp_graph_flows(const struct insp_graph *g)
{
	return g->nflow;
}

const struct insp_gev *insp_graph_events(const struct insp_graph *g, uint64_t *n)
{
	*n = g->nev;
	return g->ev;
}

const struct insp_gep *insp_graph_endpoint(const struct insp_graph *g, uint32_t ep)
{
	return &g->ep[ep];
}

const struct insp_gflow *insp_graph_flow(const struct insp_graph *g, uint32_t flow)
{
	return &g->flow[flow];
}

const char *insp_graph_addr(const struct insp_graph *g, uint32_t addr)
{
	return g->addr[addr].s;
}

void insp_graph_ep_name(const struct insp_graph *g, uint32_t ep, char *buf, size_t len)
{
	const struct insp_gep *p = &g->ep[ep];
	const struct addr *a = &g->addr[p->addr];
	int br = a->version == 2 && strchr(a->s, ':') != NULL;

	if (p->qpn == INSP_GRAPH_QPN_UNKNOWN)
		snprintf(buf, len, "%s%s%s qp ? port %u", br ? "[" : "", a->s, br ? "]" : "",
			 p->sport);
	else
		snprintf(buf, len, "%s%s%s qp 0x%06" PRIx32, br ? "[" : "", a->s, br ? "]" : "",
			 p->qpn);
}

void insp_graph_ev_label(const struct insp_gev *e, char *buf, size_t len)
{
	uint8_t val = e->syndrome & ROCE_AETH_VALUE_MASK;
	size_t n = 0;

#define ADD(...)                                                          \
	do {                                                              \
		if (n < len)                                              \
			n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__); \
	} while (0)
	buf[0] = '\0';
	if (e->mark & INSP_GM_RESEND)
		ADD("resend ");
	ADD("%s psn %" PRIu32, roce_opcode_name(e->opcode), e->psn);
	if (e->mark & INSP_GM_MALFORMED) {
		ADD(" MALFORMED %s", insp_err_name(e->err));
		return;
	}
	if (e->payload_len && !(roce_opcode_info(e->opcode) && (roce_opcode_info(e->opcode)->flags & ROCE_OPF_CNP)))
		ADD(" len %" PRIu32, e->payload_len);
	if (e->mark & INSP_GM_AETH) {
		if (e->mark & INSP_GM_NAK)
			ADD(" NAK %s", insp_nak_name(val));
		else if (e->mark & INSP_GM_RNR)
			ADD(" RNR_NAK %s ms", insp_rnr_ms(val));
		else
			ADD(" %s", insp_aeth_type(e->syndrome));
		ADD(" msn %" PRIu32, e->msn);
	}
	if (e->mark & INSP_GM_SE)
		ADD(" SE");
	if (e->mark & INSP_GM_BAD_ICRC)
		ADD(" ICRC BAD");
#undef ADD
}
