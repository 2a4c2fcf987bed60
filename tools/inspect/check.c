/*
 * inspect_check.c - the transport-rule checker of `uroce inspect --check`
 * (see check.h; the rules are stated in docs/wire-format.md §1.5-§1.6 and
 * listed with their ids in docs/inspect.md).
 */
#include "config.h"

#include "check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "print.h"
#include "netstack/psn.h"

/* ---- Rules ---------------------------------------------------------------- */

enum rule {
	R_ICRC,
	R_MALFORMED,
	R_PSN_GAP,
	R_OPCODE_SEQUENCE,
	R_OPCODE_MIXED,
	R_PAYLOAD_PMTU,
	R_PAYLOAD_MTU,
	R_PAYLOAD_LAST_EMPTY,
	R_RETH_LENGTH,
	R_READ_RESPONSE_PSN,
	R_READ_RESPONSE_COUNT,
	R_READ_RESPONSE_LENGTH,
	R_READ_RESPONSE_AETH,
	R_ACK_UNSENT_PSN,
	R_ACK_MSN,
	R_AETH_RESERVED,
	R_NAK_NO_RESEND,
	R_RNR_NO_RETRY,
	R_RNR_EARLY_RETRY,
	R_ATOMIC_ACK_PSN,
	R_ATOMIC_PLAIN_ACK,
	R_RETRANSMIT_CHANGED,
	R__COUNT
};

/*
 * Rule id (stable, for --json readers) and the IBA Vol. 1 section it comes
 * from, to the depth docs/wire-format.md cites: §9.2 BTH and opcodes, §9.3
 * ETHs (§9.3.5 AETH), §9.7 reliable service (§9.7.1 PSN, §9.7.5.2.8 RNR),
 * §7.8.1 ICRC.
 */
static const struct {
	const char *id, *section;
} rules[R__COUNT] = {
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

/* ---- State ---------------------------------------------------------------- */

#define HIST 512u		/* PSNs remembered per request flow (a power of two) */
#define MEM_BUDGET (256u << 20)	/* bytes of struct reqmem for all flows together */
#define MAX_FLOWS (1u << 16)	/* flows followed; the packets of more are only counted */
#define NREAD 256u		/* outstanding READs remembered per QP pair */
#define NENDS 1024u		/* message ends remembered per QP pair (for the MSN) */
#define NGAP 16u
#define NNAK 8u
#define MAX_FINDINGS (1u << 17)	/* listed; more are only counted */
#define NPAIR 1024u		/* buckets of the pairing index (request flows by address pair) */
#define PAIR_SCAN 256		/* candidates looked at per join */
#define PAIR_TRIES 8		/* joins tried per response flow */

static int64_t rec_ns(const struct insp_rec *r)
{
	return r->ts_sec * 1000000000ll + r->ts_nsec;
}

/* What a request flow remembers of one PSN it sent. */
struct hist {
	uint32_t psn;
	uint8_t valid, opcode;
	uint32_t payload_len;
	uint64_t va;
	uint32_t rkey, dma_len;
	uint64_t swap_add, compare;
};

struct gap {
	uint32_t first, count;	/* PSNs still missing: first .. first + count - 1 */
	uint64_t frame;		/* the packet that jumped */
};

struct read_req {
	uint32_t psn, len;	/* request PSN, DMA length (bytes) */
	uint64_t frame;
};

struct nak {
	uint32_t psn;
	int rnr;
	uint64_t frame;
	int64_t t_ns;		/* capture time of the NAK */
	uint64_t wait_ns;	/* RNR: the timer's wait */
	uint32_t max_at;	/* highest PSN the requester had sent then */
};

struct cflow {
	/* key */
	int version;
	char src[48], dst[48];
	uint16_t sport, dport;
	uint32_t dqpn;
	int response;

	/* request flows (RC and UC; UD gets only per-packet rules) */
	uint8_t transport;	/* ROCE_OP_TRANSPORT_MASK bits of the first opcode */
	int started;
	uint32_t first_psn;
	uint32_t next_psn;	/* the next new PSN expected */
	uint32_t max_sent;	/* highest PSN used, READ response PSNs included */
	uint32_t slack;		/* after a READ of unknown response count: PSNs the next request may skip */
	int msg;		/* 0 between messages, 1 inside one, -1 unknown (after a gap) */
	uint16_t msg_class;	/* ROCE_OPF_SEND / ROCE_OPF_WRITE of the open message */
	uint32_t msg_bytes, msg_reth_len;
	int msg_has_reth;
	uint32_t pmtu;		/* bytes, 0 = not known yet */
	struct reqmem *m;	/* RC/UC request flow: its history, or NULL (over MEM_BUDGET) */
	struct gap gaps[NGAP];
	unsigned ngap;
	unsigned read_head, nread;	/* m->reads */
	unsigned end_head, nend;	/* m->ends */
	struct nak naks[NNAK];
	unsigned nnak;
	int dead;		/* a fatal NAK was sent: the QP is in error */
	long peer;		/* request flow: its response flow; response flow: its request flow */

	/* response flows */
	int paired_by_port;	/* joined by UDP port: the PSN check waits for a second response */
	int pair_tries;		/* response flow: joins tried (at most PAIR_TRIES) */
	long pair_next;		/* request flow: next in its pairing-index bucket, -1 at the end */
	int have_ack;
	uint32_t ack_psn;	/* last good AETH: the PSN it acknowledges up to */
	uint32_t msn_lo, msn_width;	/* the MSN at ack_psn: msn_lo .. msn_lo + msn_width */
	int rd_active;		/* inside a READ response sequence */
	uint32_t rd_next, rd_left, rd_count, rd_expect;
	int have_rd_max;
	uint32_t rd_max;	/* highest READ response PSN seen */

	/* statistics (--flows) */
	int have_t;
	int64_t t_first, t_last;	/* ns */
	uint64_t goodput_bytes, retx_pkts, retx_bytes, dups, ooo;
	uint64_t nak_count[INSP_NAK__COUNT];
	uint64_t rnr_waits, rnr_wait_ns;
	int64_t msg_t0;		/* first packet of the open message */
	unsigned pend_head, npend;	/* m->pend */
	uint64_t *lat;		/* ns, one per completed message */
	size_t nlat, caplat;
};

/* A message waiting for its completion: its last PSN (a READ's or atomic's: the request's). */
struct pend {
	uint32_t end_psn;
	uint8_t explicit_only;	/* READ / atomic: completed only by its own response */
	int64_t t0;		/* ns */
};
#define NPEND 1024u

/*
 * What an RC/UC request flow remembers, allocated at its first packet while
 * MEM_BUDGET lasts; the rules that need it wait for flows without it.
 */
struct reqmem {
	struct hist hist[HIST];		/* by PSN modulo HIST */
	struct read_req reads[NREAD];	/* outstanding READs, a ring */
	uint32_t ends[NENDS];		/* PSNs that complete a message, in PSN order (a ring) */
	struct pend pend[NPEND];	/* messages sent and not completed, in PSN order (a ring) */
};

struct finding {
	uint64_t frame;
	enum rule rule;
	char flow[160];
	char msg[200];
};

struct insp_check {
	uint32_t pmtu;
	struct cflow *v;
	size_t n, cap;
	size_t *slot, nslot;
	size_t mem_bytes;
	uint64_t unfollowed;	/* packets of flows beyond MAX_FLOWS */
	long pair_head[NPAIR];	/* request flows by address pair: the newest, -1 = none */
	struct finding *f;
	size_t nf, capf;
	uint64_t findings;	/* all, also those not kept for lack of memory */
	uint64_t by_rule[R__COUNT];
	/* statistics */
	uint64_t packets, checked, retransmitted, retransmitted_bytes, out_of_order, gaps_repaired;
	uint64_t naks_seq, naks_rnr, naks_fatal, unpaired, duplicates;
	/* the previous packet: a copy right after it is a duplicate */
	long prev_flow;
	uint32_t prev_psn;
	uint64_t prev_frame;
	int nomem;
};

/* ---- Flow table (open addressing over indices, as flows.c) ---------------- */

static int same_key(const struct cflow *a, const struct cflow *b)
{
	return a->version == b->version && a->dqpn == b->dqpn && a->response == b->response &&
	       a->sport == b->sport && a->dport == b->dport &&
	       strcmp(a->src, b->src) == 0 && strcmp(a->dst, b->dst) == 0;
}

static size_t key_hash(const struct cflow *k)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const unsigned char *s;
	uint32_t w[4] = { (uint32_t)k->version, k->dqpn, (uint32_t)k->response,
			  (uint32_t)k->sport << 16 | k->dport };

#define MIX(c) (h = (h ^ (unsigned char)(c)) * 0x100000001b3ull)
	for (s = (const unsigned char *)k->src; *s; s++)
		MIX(*s);
	MIX(0);
	for (s = (const unsigned char *)k->dst; *s; s++)
		MIX(*s);
	MIX(0);
	for (s = (const unsigned char *)w; s < (const unsigned char *)(w + 4); s++)
		MIX(*s);
#undef MIX
	return (size_t)h;
}

static size_t *lookup(const struct insp_check *c, const struct cflow *k)
{
	size_t mask = c->nslot - 1, i = key_hash(k) & mask;

	while (c->slot[i] && !same_key(&c->v[c->slot[i] - 1], k))
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
		*lookup(c, &c->v[i]) = i + 1;
	free(old);
	return 0;
}

/* "RoCEv2 a:p > b:p dqpn 0x..." into BUF; without the dqpn if !WITH_QPN. */
static void flow_name(const struct cflow *fl, int with_qpn, char *buf, size_t len)
{
	int n;

	if (fl->version == 2 && strchr(fl->src, ':'))
		n = snprintf(buf, len, "RoCEv2 [%s]:%u > [%s]:%u", fl->src, fl->sport, fl->dst, fl->dport);
	else if (fl->version == 2)
		n = snprintf(buf, len, "RoCEv2 %s:%u > %s:%u", fl->src, fl->sport, fl->dst, fl->dport);
	else
		n = snprintf(buf, len, "RoCEv1 %s > %s", fl->src, fl->dst);
	if (with_qpn && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " dqpn 0x%06" PRIx32, fl->dqpn);
}

/* Index of the flow of KEY, made if new; -1 when out of memory, -2 beyond MAX_FLOWS. */
static long find_flow(struct insp_check *c, const struct cflow *key)
{
	size_t *slot;

	if (2 * (c->n + 1) > c->nslot && grow_table(c) != 0)
		return -1;
	slot = lookup(c, key);
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
static unsigned pair_bucket(int version, const char *src, const char *dst)
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

/* ---- Findings ------------------------------------------------------------- */

/* The flow of a packet that has no flow state (bad ICRC, malformed): what was decoded of it. */
static void rec_flow_name(const struct insp_rec *r, char *buf, size_t len)
{
	struct cflow k;

	if (!r->have_addr) {
		snprintf(buf, len, "-");
		return;
	}
	memset(&k, 0, sizeof(k));
	k.version = r->version;
	memcpy(k.src, r->src, sizeof(k.src));
	memcpy(k.dst, r->dst, sizeof(k.dst));
	k.sport = r->sport;
	k.dport = r->dport;
	k.dqpn = r->have_bth ? r->pkt.h.dqpn : 0;
	flow_name(&k, r->have_bth, buf, len);
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

static void finding(struct insp_check *c, uint64_t frame, enum rule r, long flow, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Record a finding of rule R at FRAME on flow index FLOW. */
static void finding(struct insp_check *c, uint64_t frame, enum rule r, long flow, const char *fmt, ...)
{
	char name[160];
	va_list ap;

	flow_name(&c->v[flow], 1, name, sizeof(name));
	va_start(ap, fmt);
	finding_at(c, frame, r, name, fmt, ap);
	va_end(ap);
}

static void finding_rec(struct insp_check *c, const struct insp_rec *rec, enum rule r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Record a finding about packet REC itself (its flow named from its headers). */
static void finding_rec(struct insp_check *c, const struct insp_rec *rec, enum rule r, const char *fmt, ...)
{
	char name[160];
	va_list ap;

	rec_flow_name(rec, name, sizeof(name));
	va_start(ap, fmt);
	finding_at(c, rec->frame, r, name, fmt, ap);
	va_end(ap);
}

/* ---- Helpers -------------------------------------------------------------- */

/* RNR timer codes in nanoseconds (docs/wire-format.md §1.3; IBA §9.7.5.2.8 Table 45). */
static const uint32_t rnr_us100[32] = {	/* units of 10 us */
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
	384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

static int is_pmtu(uint32_t v)
{
	return v == 256 || v == 512 || v == 1024 || v == 2048 || v == 4096;
}

static struct hist *hist_at(struct cflow *fl, uint32_t psn)
{
	struct hist *h;

	if (!fl->m)
		return NULL;
	h = &fl->m->hist[psn & (HIST - 1)];
	return h->valid && h->psn == psn ? h : NULL;
}

static void hist_put(struct insp_check *c, struct cflow *fl, const struct insp_rec *r)
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

static int is_atomic_req(uint8_t op)
{
	return op == ROCE_OP_RC_CMP_SWAP || op == ROCE_OP_RC_FETCH_ADD;
}

/* Responses a READ of LEN bytes takes at PMTU (docs/wire-format.md §1.6). */
static uint32_t read_npkts(uint32_t len, uint32_t pmtu)
{
	return len == 0 ? 1 : (uint32_t)(((uint64_t)len + pmtu - 1) / pmtu);
}

/* ---- Message latency ------------------------------------------------------ */

/* A message (ending at END_PSN) was sent for the first time; T0 its first packet. */
static void pend_push(struct insp_check *c, struct cflow *fl, uint32_t end_psn, int explicit_only, int64_t t0)
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
static void pend_complete(struct cflow *fl, uint32_t upto, int explicit_ok, int64_t now)
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

/* ---- Requests ------------------------------------------------------------- */

static struct read_req *read_of(struct cflow *q, uint32_t psn, uint32_t *n);

/* PSNs a request uses: a READ also those of its responses (1 while the PMTU is unknown). */
static uint32_t psns_of(const struct cflow *fl, uint8_t opcode, uint32_t dma_len)
{
	if (opcode == ROCE_OP_RC_READ_REQUEST && fl->pmtu)
		return read_npkts(dma_len, fl->pmtu);
	return 1;
}

/* PSN P (not seen before) filled part of a gap: shrink the gaps. */
static void gap_fill(struct insp_check *c, struct cflow *fl, uint32_t psn)
{
	unsigned i;
	struct hist *e;

	for (i = 0; i < fl->ngap; i++) {
		struct gap *g = &fl->gaps[i];

		if (!roce_psn_in_range(psn, g->first, g->count))
			continue;
		while (g->count && (e = hist_at(fl, g->first)) != NULL) {
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
static void end_push(struct cflow *fl, uint32_t psn)
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

/* A READ (or ATOMIC WRITE) request at PSN: outstanding until answered. */
static void read_push(struct cflow *fl, const struct insp_rec *r)
{
	const struct roce_hdrs *h = &r->pkt.h;
	struct read_req *rq;

	if (!fl->m)
		return;
	if (fl->nread == NREAD) {
		fl->read_head = (fl->read_head + 1) % NREAD;
		fl->nread--;
	}
	rq = &fl->m->reads[(fl->read_head + fl->nread) % NREAD];
	rq->psn = h->psn;
	rq->len = h->opcode == ROCE_OP_RC_READ_REQUEST ? h->reth.dma_len : 0;
	rq->frame = r->frame;
	fl->nread++;
}

/* Messages completed at PSNs in (from, to]. */
static uint32_t ends_between(const struct cflow *fl, uint32_t from, uint32_t to)
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
static void ends_prune(struct cflow *fl, uint32_t upto)
{
	while (fl->nend && !roce_psn_after(fl->m->ends[fl->end_head], upto)) {
		fl->end_head = (fl->end_head + 1) % NENDS;
		fl->nend--;
	}
}

/* Opcode order and payload size of a request taken in PSN order. */
static void request_in_order(struct insp_check *c, long fi, const struct insp_rec *r)
{
	struct cflow *fl = &c->v[fi];
	const struct roce_opcode_info *op = r->pkt.op;
	const struct roce_hdrs *h = &r->pkt.h;
	int first = (op->flags & ROCE_OPF_FIRST) != 0, last = (op->flags & ROCE_OPF_LAST) != 0;
	uint16_t cls = op->flags & (ROCE_OPF_SEND | ROCE_OPF_WRITE);
	uint32_t len = r->pkt.payload_len;
	uint32_t pmtu = fl->pmtu;

	if (fl->msg == 1 && first)
		finding(c, r->frame, R_OPCODE_SEQUENCE, fi,
			"%s at PSN %" PRIu32 " starts a message while the one before has no LAST", op->name, h->psn);
	else if (fl->msg == 0 && !first)
		finding(c, r->frame, R_OPCODE_SEQUENCE, fi,
			"%s at PSN %" PRIu32 " continues a message that was never begun (FIRST or ONLY expected)",
			op->name, h->psn);
	else if (fl->msg == 1 && cls != fl->msg_class)
		finding(c, r->frame, R_OPCODE_MIXED, fi,
			"%s at PSN %" PRIu32 " continues a %s message", op->name, h->psn,
			fl->msg_class == ROCE_OPF_SEND ? "SEND" : "RDMA WRITE");

	/* payload against the path MTU */
	if ((op->flags & ROCE_OPF_PAYLOAD) && (first || !last) && !(first && last)) {
		/* FIRST or MIDDLE: exactly one PMTU */
		if (!pmtu && is_pmtu(len)) {
			fl->pmtu = len;
		} else if (!pmtu) {
			finding(c, r->frame, R_PAYLOAD_PMTU, fi,
				"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, which is no path MTU", op->name,
				h->psn, len);
		} else if (len != pmtu) {
			finding(c, r->frame, R_PAYLOAD_PMTU, fi,
				"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, not the path MTU %" PRIu32,
				op->name, h->psn, len, pmtu);
		}
	} else if (op->flags & ROCE_OPF_PAYLOAD) {
		if (pmtu && len > pmtu)
			finding(c, r->frame, R_PAYLOAD_MTU, fi,
				"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, more than the path MTU %" PRIu32,
				op->name, h->psn, len, pmtu);
		else if (last && !first && len == 0)
			finding(c, r->frame, R_PAYLOAD_LAST_EMPTY, fi,
				"%s at PSN %" PRIu32 " carries no payload (a LAST packet carries 1..PMTU bytes)",
				op->name, h->psn);
	}

	/* message state */
	if (first) {
		fl->msg_class = cls;
		fl->msg_bytes = 0;
		fl->msg_has_reth = (op->flags & ROCE_OPF_WRITE) && (op->hdrs & ROCE_HDR_BIT(ROCE_HDR_RETH));
		fl->msg_reth_len = h->reth.dma_len;
	}
	fl->msg_bytes += len;
	if (last) {
		if (fl->msg != -1 || first) {
			if (fl->msg_has_reth && fl->msg_class == ROCE_OPF_WRITE && fl->msg_bytes != fl->msg_reth_len)
				finding(c, r->frame, R_RETH_LENGTH, fi,
					"RDMA WRITE message ending at PSN %" PRIu32 " carried %" PRIu32
					" bytes, its RETH says %" PRIu32, h->psn, fl->msg_bytes, fl->msg_reth_len);
		}
		fl->msg = 0;
	} else {
		fl->msg = fl->msg == -1 && !first ? -1 : 1;
	}
}

static void request(struct insp_check *c, long fi, const struct insp_rec *r)
{
	struct cflow *fl = &c->v[fi];
	const struct roce_opcode_info *op = r->pkt.op;
	const struct roce_hdrs *h = &r->pkt.h;
	uint32_t psn = h->psn, npsn = 1;
	unsigned i;

	if (!fl->started) {
		unsigned b = pair_bucket(fl->version, fl->src, fl->dst);

		fl->started = 1;
		if (c->mem_bytes + sizeof(struct reqmem) <= MEM_BUDGET) {
			fl->m = calloc(1, sizeof(*fl->m));
			if (fl->m)
				c->mem_bytes += sizeof(*fl->m);
		}
		fl->pair_next = c->pair_head[b];
		c->pair_head[b] = fi;
		fl->transport = h->opcode & ROCE_OP_TRANSPORT_MASK;
		fl->first_psn = fl->next_psn = psn;
		fl->max_sent = roce_psn_add(psn, -1u & 0xFFFFFF);
		fl->msg = (op->flags & ROCE_OPF_FIRST) ? 0 : -1;
		if (c->pmtu)
			fl->pmtu = c->pmtu;
	}

	/* NAKs waiting for the resend of their PSN */
	for (i = 0; i < fl->nnak;) {
		struct nak *n = &fl->naks[i];

		if (n->psn == psn || (roce_psn_after(psn, n->psn) && !roce_psn_after(psn, n->max_at))) {
			int64_t waited = rec_ns(r) - n->t_ns;

			if (n->rnr && waited > 0) {
				fl->rnr_waits++;
				fl->rnr_wait_ns += (uint64_t)waited;
			}
			/* 5 % and 1 us of tolerance: the capture point is not the
			 * requester's timer, and a pcap may keep microseconds only */
			if (n->rnr && n->psn == psn && waited >= 0 &&
			    (uint64_t)waited + 1000 < n->wait_ns - n->wait_ns / 20)
				finding(c, r->frame, R_RNR_EARLY_RETRY, fi,
					"retry of PSN %" PRIu32 " %" PRId64 " us after the RNR NAK (frame %" PRIu64
					") whose timer asks for %" PRIu64 " us", psn, waited / 1000, n->frame,
					n->wait_ns / 1000);
			fl->naks[i] = fl->naks[--fl->nnak];
			continue;
		}
		i++;
	}

	if (psn == fl->next_psn || (fl->slack && roce_psn_after(psn, fl->next_psn) &&
				    roce_psn_sub(psn, fl->next_psn) <= fl->slack)) {
		/* new PSN, in order */
		if (fl->transport != 0x60)
			request_in_order(c, fi, r);
	} else if (roce_psn_after(psn, fl->next_psn)) {
		uint32_t miss = roce_psn_sub(psn, fl->next_psn);

		if (fl->transport == 0x00 && fl->m && fl->ngap < NGAP) {
			fl->gaps[fl->ngap].first = fl->next_psn;
			fl->gaps[fl->ngap].count = miss;
			fl->gaps[fl->ngap].frame = r->frame;
			fl->ngap++;
		}
		if (!(op->flags & ROCE_OPF_FIRST) && fl->msg != 1)
			fl->msg_t0 = rec_ns(r);	/* its FIRST is missing: timed from here */
		fl->msg = -1;
		if (fl->transport != 0x60) {
			if (op->flags & ROCE_OPF_FIRST)
				fl->msg = 0;
			request_in_order(c, fi, r);
		}
	} else {
		/* an old PSN: resent, duplicated or reordered */
		struct hist *o = hist_at(fl, psn);

		if (o) {
			if (c->prev_flow == fi && c->prev_psn == psn && c->prev_frame + 1 == r->frame) {
				/* the same packet again, back to back: a copy, not a resend */
				c->duplicates++;
				fl->dups++;
			} else {
				c->retransmitted++;
				c->retransmitted_bytes += r->pkt.payload_len;
				fl->retx_pkts++;
				fl->retx_bytes += r->pkt.payload_len;
			}
			if (o->opcode != h->opcode || o->payload_len != r->pkt.payload_len ||
			    ((op->hdrs & ROCE_HDR_BIT(ROCE_HDR_RETH)) && h->opcode != ROCE_OP_RC_READ_REQUEST &&
			     (o->va != h->reth.va || o->rkey != h->reth.rkey || o->dma_len != h->reth.dma_len)) ||
			    ((op->hdrs & ROCE_HDR_BIT(ROCE_HDR_ATOMICETH)) &&
			     (o->va != h->atomic.va || o->rkey != h->atomic.rkey ||
			      o->swap_add != h->atomic.swap_add || o->compare != h->atomic.compare)))
				finding(c, r->frame, R_RETRANSMIT_CHANGED, fi,
					"PSN %" PRIu32 " resent as %s with %" PRIu32
					" bytes and other headers than first sent (%s, %" PRIu32 " bytes)",
					psn, op->name, r->pkt.payload_len, roce_opcode_name(o->opcode), o->payload_len);
			return;
		}
		c->out_of_order++;
		fl->ooo++;
		fl->goodput_bytes += r->pkt.payload_len;
		hist_put(c, fl, r);
		gap_fill(c, fl, psn);
		if (h->opcode == ROCE_OP_RC_READ_REQUEST || h->opcode == ROCE_OP_RC_ATOMIC_WRITE) {
			uint32_t n;
			struct read_req *rq = read_of(fl, psn, &n);

			read_push(fl, r);
			/* a READ resumed inside an earlier one's PSNs (the
			 * responses from there on were lost) is no new message */
			if (rq && rq->psn != psn)
				return;
		}
		if (fl->transport == 0x00 && (op->flags & ROCE_OPF_LAST)) {
			end_push(fl, psn);
			/* timed from its late arrival: the FIRST's time is not known here */
			pend_push(c, fl, psn, !(op->flags & (ROCE_OPF_SEND | ROCE_OPF_WRITE)), rec_ns(r));
		}
		return;
	}

	/* a new PSN: remember it, advance */
	hist_put(c, fl, r);
	fl->goodput_bytes += r->pkt.payload_len;
	if (op->flags & ROCE_OPF_FIRST)
		fl->msg_t0 = rec_ns(r);
	if (fl->transport == 0x00 && (op->flags & ROCE_OPF_LAST))
		pend_push(c, fl, psn, !(op->flags & (ROCE_OPF_SEND | ROCE_OPF_WRITE)), fl->msg_t0);
	fl->slack = 0;
	if (h->opcode == ROCE_OP_RC_READ_REQUEST || h->opcode == ROCE_OP_RC_ATOMIC_WRITE) {
		uint32_t len = h->opcode == ROCE_OP_RC_READ_REQUEST ? h->reth.dma_len : 0;

		read_push(fl, r);
		if (fl->pmtu) {
			npsn = read_npkts(len, fl->pmtu);
		} else {
			npsn = 1;
			fl->slack = read_npkts(len, 256) - 1;
		}
	}
	if (fl->transport == 0x00 && (op->flags & ROCE_OPF_LAST))
		end_push(fl, h->opcode == ROCE_OP_RC_READ_REQUEST ? psn : roce_psn_add(psn, npsn - 1));
	fl->next_psn = roce_psn_add(psn, npsn);
	fl->max_sent = roce_psn_add(psn, npsn - 1 + fl->slack);
}

/* ---- Responses ------------------------------------------------------------ */

/*
 * The request flow a response flow answers: one from the response's
 * destination to its source, not joined yet, preferring one that sent the
 * response's PSN and uses the same UDP source port (RoCEv2 drivers derive
 * it from both QPNs, so both directions agree), then one that sent the PSN,
 * then one with the port.  At most PAIR_SCAN candidates are looked at, and
 * a response flow tries PAIR_TRIES times: a capture with a million QPs
 * between two hosts stays linear.
 */
static long pair_flow(struct insp_check *c, long ri, uint32_t psn)
{
	struct cflow *rf = &c->v[ri];
	long i, best = -1;
	int best_score = 0, n;

	if (rf->pair_tries >= PAIR_TRIES)
		return -1;
	rf->pair_tries++;
	for (i = c->pair_head[pair_bucket(rf->version, rf->dst, rf->src)], n = 0; i >= 0 && n < PAIR_SCAN;
	     i = c->v[i].pair_next, n++) {
		struct cflow *q = &c->v[i];
		int sent, port, score;

		if (q->peer >= 0 || q->transport != 0x00 || q->version != rf->version ||
		    strcmp(q->src, rf->dst) || strcmp(q->dst, rf->src))
			continue;
		sent = roce_psn_in_range(psn, q->first_psn, roce_psn_sub(q->max_sent, q->first_psn) + 1);
		port = q->version == 2 && q->sport && q->sport == rf->sport;
		score = sent && port ? 3 : sent ? 2 : port ? 1 : 0;
		if (score > best_score) {
			best = i;
			best_score = score;
		}
	}
	if (best >= 0) {
		c->v[best].peer = ri;
		rf->peer = best;
		rf->paired_by_port = best_score == 1;
	}
	return best;
}

/* Record an AETH's MSN against the messages completed since the last one. */
/* A - B in 24-bit MSN arithmetic, as a signed number. */
static int32_t msn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/*
 * Check an AETH's MSN against the messages completed since the last one.
 * An MSN is the responder's current one: the first answer to a PSN carries
 * exactly the messages completed up to it, but a duplicate answered again
 * (its first answer lost) also counts those completed after it, up to the
 * messages sent after its PSN.  So what is known of the MSN at the
 * acknowledged PSN is a range, msn_lo .. msn_lo + msn_width.
 */
static void msn_check(struct insp_check *c, long ri, struct cflow *q, const struct insp_rec *r, uint32_t upto)
{
	struct cflow *rf = &c->v[ri];
	uint32_t msn = r->pkt.h.aeth.msn, done, later;
	int32_t rel, lo, hi;

	if (q->dead || !q->m)
		return;
	later = ends_between(q, upto, q->max_sent);
	if (!rf->have_ack) {
		rf->have_ack = 1;
		rf->ack_psn = upto;
		rf->msn_lo = (msn - later) & 0xFFFFFF;
		rf->msn_width = later;
		ends_prune(q, upto);
		return;
	}
	if (roce_psn_before(upto, rf->ack_psn))
		return;
	done = upto == rf->ack_psn ? 0 : ends_between(q, rf->ack_psn, upto);
	rel = msn_diff(msn, rf->msn_lo);
	if (rel < (int32_t)done || rel > (int32_t)(done + rf->msn_width + later)) {
		finding(c, r->frame, R_ACK_MSN, ri,
			"MSN %" PRIu32 " acknowledging up to PSN %" PRIu32 ": %" PRIu32
			" message(s) completed since PSN %" PRIu32 " (MSN %" PRIu32 "), so MSN %" PRIu32
			" expected (up to %" PRIu32 " answering a duplicate)", msn, upto, done, rf->ack_psn,
			(rf->msn_lo + rf->msn_width) & 0xFFFFFF, (rf->msn_lo + done + rf->msn_width) & 0xFFFFFF,
			(rf->msn_lo + done + rf->msn_width + later) & 0xFFFFFF);
		return;	/* the next AETH is checked against the last good one */
	}
	lo = (int32_t)done > rel - (int32_t)later ? (int32_t)done : rel - (int32_t)later;
	hi = (int32_t)(done + rf->msn_width) < rel ? (int32_t)(done + rf->msn_width) : rel;
	rf->ack_psn = upto;
	rf->msn_lo = (rf->msn_lo + (uint32_t)lo) & 0xFFFFFF;
	rf->msn_width = (uint32_t)(hi - lo);
	ends_prune(q, upto);
}

static struct read_req *read_of(struct cflow *q, uint32_t psn, uint32_t *n)
{
	unsigned i;

	for (i = q->nread; i-- > 0;) {
		struct read_req *rq = &q->m->reads[(q->read_head + i) % NREAD];
		uint32_t cnt = read_npkts(rq->len, q->pmtu ? q->pmtu : 256);

		if (roce_psn_in_range(psn, rq->psn, cnt)) {
			*n = cnt;
			return rq;
		}
	}
	return NULL;
}

static void read_response(struct insp_check *c, long ri, struct cflow *q, const struct insp_rec *r)
{
	struct cflow *rf = &c->v[ri];
	const struct roce_opcode_info *op = r->pkt.op;
	uint32_t psn = r->pkt.h.psn, len = r->pkt.payload_len, n = 0;
	int first = (op->flags & ROCE_OPF_FIRST) != 0, last = (op->flags & ROCE_OPF_LAST) != 0;
	struct read_req *rq = read_of(q, psn, &n);

	if (!rq) {
		finding(c, r->frame, R_READ_RESPONSE_PSN, ri,
			"%s at PSN %" PRIu32 " answers no outstanding RDMA READ", op->name, psn);
		rf->rd_active = 0;
		return;
	}
	if (first) {
		uint32_t off = roce_psn_sub(psn, rq->psn);
		uint64_t done = (uint64_t)off * (q->pmtu ? q->pmtu : 0);

		if (off && !q->pmtu) {
			rf->rd_active = 0;	/* a restart inside a READ of unknown PMTU: not followed */
			return;
		}
		rf->rd_active = 1;
		rf->rd_next = psn;
		rf->rd_left = done >= rq->len ? 0 : rq->len - (uint32_t)done;
		rf->rd_count = 0;
		rf->rd_expect = n - off;
	} else if (!rf->rd_active || psn != rf->rd_next) {
		rf->rd_active = 0;	/* responses lost before the capture: wait for the next FIRST/ONLY */
		return;
	}
	/* payload size: FIRST/MIDDLE exactly one PMTU (learned here if unknown) */
	if (!last) {
		if (!q->pmtu && is_pmtu(len)) {
			q->pmtu = len;
			rf->rd_expect = read_npkts(rq->len, len);
		} else if (len != q->pmtu) {
			finding(c, r->frame, R_PAYLOAD_PMTU, ri,
				"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, not the path MTU %" PRIu32,
				op->name, psn, len, q->pmtu);
		}
	} else if (q->pmtu && len > q->pmtu) {
		finding(c, r->frame, R_PAYLOAD_MTU, ri,
			"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, more than the path MTU %" PRIu32,
			op->name, psn, len, q->pmtu);
	}
	rf->rd_count++;
	rf->rd_next = roce_psn_add(psn, 1);
	if (!last && rf->rd_count >= rf->rd_expect && q->pmtu) {
		finding(c, r->frame, R_READ_RESPONSE_COUNT, ri,
			"%s at PSN %" PRIu32 " is response %" PRIu32 " of a READ of %" PRIu32
			" bytes (frame %" PRIu64 ") that takes %" PRIu32 " at path MTU %" PRIu32 ", and not its last",
			op->name, psn, rf->rd_count, rq->len, rq->frame, rf->rd_expect, q->pmtu);
		rf->rd_active = 0;
		return;
	}
	if (last) {
		if (rf->rd_count != rf->rd_expect && q->pmtu)
			finding(c, r->frame, R_READ_RESPONSE_COUNT, ri,
				"READ (frame %" PRIu64 ", %" PRIu32 " bytes) ended by %s after %" PRIu32
				" response(s); path MTU %" PRIu32 " makes it %" PRIu32,
				rq->frame, rq->len, op->name, rf->rd_count, q->pmtu, rf->rd_expect);
		else if (rf->rd_left != len)
			finding(c, r->frame, R_READ_RESPONSE_LENGTH, ri,
				"READ (frame %" PRIu64 ", %" PRIu32 " bytes) ended by %s with %" PRIu32
				" bytes where %" PRIu32 " were left", rq->frame, rq->len, op->name, len, rf->rd_left);
		rf->rd_active = 0;
	} else {
		rf->rd_left = rf->rd_left > len ? rf->rd_left - len : 0;
	}
}

/*
 * A positive answer at PSN: the responder has what a pending NAK at or
 * before it asked for (its resend may be missing from the capture), so the
 * NAK needs no more answer.
 */
static void naks_superseded(struct cflow *q, uint32_t psn)
{
	unsigned i;

	for (i = 0; i < q->nnak;) {
		if (!roce_psn_after(q->naks[i].psn, psn))
			q->naks[i] = q->naks[--q->nnak];
		else
			i++;
	}
}

static void response(struct insp_check *c, long ri, const struct insp_rec *r)
{
	struct cflow *rf = &c->v[ri];
	const struct roce_opcode_info *op = r->pkt.op;
	const struct roce_hdrs *h = &r->pkt.h;
	uint32_t psn = h->psn;
	uint8_t syn = h->aeth.syndrome;
	int has_aeth = (op->hdrs & ROCE_HDR_BIT(ROCE_HDR_AETH)) != 0;
	long qi = rf->peer >= 0 ? rf->peer : pair_flow(c, ri, psn);
	struct cflow *q;
	struct hist *o;

	if (has_aeth && ((syn & 0x80) || (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RESERVED ||
			 ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK && (syn & ROCE_AETH_VALUE_MASK) > 3))) {
		finding(c, r->frame, R_AETH_RESERVED, ri,
			"%s at PSN %" PRIu32 " carries AETH syndrome 0x%02x, reserved on RC", op->name, psn, syn);
		return;
	}
	if (h->opcode == ROCE_OP_RC_ACK && (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
		rf->nak_count[INSP_NAK_RNR]++;
	else if (h->opcode == ROCE_OP_RC_ACK && (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK)
		rf->nak_count[syn & ROCE_AETH_VALUE_MASK]++;
	if (has_aeth && (op->flags & ROCE_OPF_READ) && (syn & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK)
		finding(c, r->frame, R_READ_RESPONSE_AETH, ri,
			"%s at PSN %" PRIu32 " carries AETH syndrome 0x%02x; a READ response's AETH is an ACK",
			op->name, psn, syn);
	if (qi < 0) {
		c->unpaired++;
		return;
	}
	q = &c->v[qi];
	rf = &c->v[ri];
	if (rf->paired_by_port) {
		rf->paired_by_port = 0;
	} else if (roce_psn_after(psn, q->max_sent)) {
		finding(c, r->frame, R_ACK_UNSENT_PSN, ri,
			"%s names PSN %" PRIu32 ", after the last PSN the requester sent (%" PRIu32 ")",
			op->name, psn, q->max_sent);
		return;
	}
	o = hist_at(q, psn);
	if (!has_aeth || (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK)
		naks_superseded(q, psn);

	if (op->flags & ROCE_OPF_READ) {
		/* no MSN check: a duplicate READ is answered again with the
		 * current MSN (docs/wire-format.md §1.6), at an older PSN */
		if (!rf->have_rd_max || roce_psn_after(psn, rf->rd_max)) {
			rf->have_rd_max = 1;
			rf->rd_max = psn;
			rf->goodput_bytes += r->pkt.payload_len;
		} else if (c->prev_flow == ri && c->prev_psn == psn && c->prev_frame + 1 == r->frame) {
			c->duplicates++;
			rf->dups++;
		} else {
			c->retransmitted++;
			c->retransmitted_bytes += r->pkt.payload_len;
			rf->retx_pkts++;
			rf->retx_bytes += r->pkt.payload_len;
		}
		if (q->m)	/* without the READs sent, nothing to check against */
			read_response(c, ri, q, r);
		if (op->flags & ROCE_OPF_LAST)
			pend_complete(q, psn, 1, rec_ns(r));
		return;
	}
	if (h->opcode == ROCE_OP_RC_ATOMIC_ACK) {
		if (o && !is_atomic_req(o->opcode)) {
			finding(c, r->frame, R_ATOMIC_ACK_PSN, ri,
				"ATOMIC Acknowledge at PSN %" PRIu32 ", which the requester used for %s", psn,
				roce_opcode_name(o->opcode));
			return;
		}
		msn_check(c, ri, q, r, psn);
		pend_complete(q, psn, 1, rec_ns(r));
		return;
	}
	if (h->opcode != ROCE_OP_RC_ACK)
		return;
	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		if (o && is_atomic_req(o->opcode))
			finding(c, r->frame, R_ATOMIC_PLAIN_ACK, ri,
				"plain ACK at PSN %" PRIu32 " of %s; an atomic is answered by ATOMIC Acknowledge",
				psn, roce_opcode_name(o->opcode));
		msn_check(c, ri, q, r, psn);
		pend_complete(q, psn, 0, rec_ns(r));
		break;
	case ROCE_AETH_RNR_NAK:
	case ROCE_AETH_NAK:
		if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK && (syn & ROCE_AETH_VALUE_MASK) != 0) {
			c->naks_fatal++;
			q->dead = 1;
			break;
		}
		if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
			c->naks_rnr++;
		else
			c->naks_seq++;
		/* the NAK acknowledges everything before its PSN */
		msn_check(c, ri, q, r, roce_psn_add(psn, 0xFFFFFF));
		pend_complete(q, roce_psn_add(psn, 0xFFFFFF), 0, rec_ns(r));
		if (q->nnak < NNAK) {
			struct nak *n = &q->naks[q->nnak++];

			n->psn = psn;
			n->rnr = (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK;
			n->frame = r->frame;
			n->t_ns = r->ts_sec * 1000000000ll + r->ts_nsec;
			n->wait_ns = (uint64_t)rnr_us100[syn & ROCE_AETH_VALUE_MASK] * 10000u;
			n->max_at = q->max_sent;
		}
		break;
	}
}

/* ---- Entry points --------------------------------------------------------- */

struct insp_check *insp_check_new(uint32_t pmtu)
{
	struct insp_check *c = calloc(1, sizeof(*c));

	unsigned i;

	if (c) {
		c->pmtu = pmtu;
		c->prev_flow = -1;
		for (i = 0; i < NPAIR; i++)
			c->pair_head[i] = -1;
	}
	return c;
}

void insp_check_add(struct insp_check *c, const struct insp_rec *r)
{
	const struct roce_hdrs *h = &r->pkt.h;
	struct cflow key;
	long fi;

	c->packets++;
	if (r->status == INSP_SKIPPED)
		return;
	if (r->status == INSP_MALFORMED) {
		finding_rec(c, r, R_MALFORMED, "%s: %s", insp_err_name(r->err), insp_err_message(r->err));
		return;
	}
	if (r->status == INSP_BAD_ICRC) {
		/* its headers cannot be trusted, and the receiver drops it:
		 * to the flow it is a lost packet */
		finding_rec(c, r, R_ICRC, "%s PSN %" PRIu32 ": ICRC %08" PRIx32 " on the wire, %08" PRIx32
			" computed (wire byte order)", roce_opcode_name(h->opcode), h->psn,
			insp_icrc_display(r->pkt.icrc_wire), insp_icrc_display(r->pkt.icrc_calc));
		return;
	}
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
	fi = find_flow(c, &key);
	if (fi == -2) {
		c->unfollowed++;
		return;
	}
	if (fi < 0) {
		c->nomem = 1;
		return;
	}
	c->checked++;
	if (!c->v[fi].have_t) {
		c->v[fi].have_t = 1;
		c->v[fi].t_first = rec_ns(r);
	}
	c->v[fi].t_last = rec_ns(r);
	if (key.response)
		response(c, fi, r);
	else if ((h->opcode & ROCE_OP_TRANSPORT_MASK) == 0x60) {
		/* UD: one packet per message, no PSN rules; the MTU still holds */
		c->v[fi].goodput_bytes += r->pkt.payload_len;
		if (c->pmtu && r->pkt.payload_len > c->pmtu)
			finding(c, r->frame, R_PAYLOAD_MTU, fi,
				"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, more than the path MTU %" PRIu32,
				r->pkt.op->name, h->psn, r->pkt.payload_len, c->pmtu);
	} else {
		request(c, fi, r);
	}
	c->prev_flow = fi;
	c->prev_psn = h->psn;
	c->prev_frame = r->frame;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile PCT of the N sorted values V. */
static uint64_t pctl(const uint64_t *v, size_t n, unsigned pct)
{
	size_t rank = (n * pct + 99) / 100;

	return n ? v[rank ? rank - 1 : 0] : 0;
}

int insp_check_flow_stats(struct insp_check *c, const struct insp_flow *k, struct insp_flow_stats *st)
{
	struct cflow key;
	size_t *slot;
	struct cflow *fl;

	memset(st, 0, sizeof(*st));
	if (!c->nslot)
		return -1;
	memset(&key, 0, sizeof(key));
	key.version = k->version;
	memcpy(key.src, k->src, sizeof(key.src));
	memcpy(key.dst, k->dst, sizeof(key.dst));
	key.sport = k->sport;
	key.dport = k->dport;
	key.dqpn = k->dqpn;
	key.response = k->response;
	slot = lookup(c, &key);
	if (!*slot)
		return -1;
	fl = &c->v[*slot - 1];
	st->goodput_bytes = fl->goodput_bytes;
	st->duration_ns = (uint64_t)(fl->t_last - fl->t_first);
	if (st->duration_ns)
		st->goodput_bps = (uint64_t)((unsigned __int128)fl->goodput_bytes * 8u * 1000000000u /
					     st->duration_ns);
	st->retransmitted = fl->retx_pkts;
	st->retransmitted_bytes = fl->retx_bytes;
	st->duplicates = fl->dups;
	st->out_of_order = fl->ooo;
	memcpy(st->naks, fl->nak_count, sizeof(st->naks));
	st->rnr_waits = fl->rnr_waits;
	st->rnr_wait_ns = fl->rnr_wait_ns;
	st->messages = fl->nlat;
	if (fl->nlat) {
		qsort(fl->lat, fl->nlat, sizeof(*fl->lat), cmp_u64);
		st->latency_p50_ns = pctl(fl->lat, fl->nlat, 50);
		st->latency_p99_ns = pctl(fl->lat, fl->nlat, 99);
		st->latency_max_ns = fl->lat[fl->nlat - 1];
	}
	return 0;
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
			finding(c, n->frame, n->rnr ? R_RNR_NO_RETRY : R_NAK_NO_RESEND,
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
			finding(c, g->frame, R_PSN_GAP, (long)i,
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
	qsort(c->f, c->nf, sizeof(*c->f), cmp_finding);
	for (i = 0; i < c->nf; i++) {
		const struct finding *f = &c->f[i];
		const char *flow = f->flow;

		if (json) {
			jsonw_begin(&j, fp);
			jsonw_u64(&j, "frame", f->frame);
			jsonw_str(&j, "rule", rules[f->rule].id);
			jsonw_str(&j, "section", rules[f->rule].section);
			jsonw_str(&j, "flow", flow);
			jsonw_str(&j, "message", f->msg);
			jsonw_end(&j);
		} else {
			fprintf(fp, "frame %" PRIu64 ": %s (IBA §%s) %s: %s\n", f->frame, rules[f->rule].id,
				rules[f->rule].section, flow, f->msg);
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
				jsonw_u64(&j, rules[r].id, c->by_rule[r]);
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
				fprintf(fp, "%s %s %" PRIu64, r == 0 || !c->findings ? "," : ",", rules[r].id,
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

void insp_check_free(struct insp_check *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->v[i].m);
		free(c->v[i].lat);
	}
	free(c->v);
	free(c->slot);
	free(c->f);
	free(c);
}
