/*
 * check.c - the entry points of the transport-rule checker of `uroce
 * inspect --check` (see check.h; the rules are stated in
 * docs/wire-format.md §1.5-§1.6 and listed with their ids in
 * docs/inspect.md).  A frame is taken to its flow here and handed to the
 * request or response rules; check_state.h says which file does what.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check_state.h"
#include "print.h"

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
	struct insp_rec xrc;
	struct cflow key;
	long fi;

	c->packets++;
	memset(&c->last, 0, sizeof(c->last));
	c->last.flow = c->last.req_flow = -1;
	c->last.nak_answered = -1;
	if (r->status == INSP_SKIPPED)
		return;
	if (r->status == INSP_MALFORMED) {
		chk_finding_rec(c, r, R_MALFORMED, "%s: %s", insp_err_name(r->err), insp_err_message(r->err));
		return;
	}
	if (r->status == INSP_BAD_ICRC) {
		/* its headers cannot be trusted, and the receiver drops it:
		 * to the flow it is a lost packet */
		chk_finding_rec(c, r, R_ICRC, "%s PSN %" PRIu32 ": ICRC %08" PRIx32 " on the wire, %08" PRIx32
			" computed (wire byte order)", roce_opcode_name(h->opcode), h->psn,
			insp_icrc_display(r->pkt.icrc_wire), insp_icrc_display(r->pkt.icrc_calc));
		return;
	}
	if (!r->have_all || !r->pkt.op || h->opcode == ROCE_OP_CNP)
		return;
	/* XRC keeps RC's transport rules under its own prefix (Annex A14):
	 * checked as the RC operation */
	if ((h->opcode & ROCE_OP_TRANSPORT_MASK) == ROCE_TRANSPORT_XRC) {
		xrc = *r;
		xrc.pkt.h.opcode &= (uint8_t)~ROCE_OP_TRANSPORT_MASK;
		xrc.pkt.op = roce_opcode_info(xrc.pkt.h.opcode);
		r = &xrc;
		h = &xrc.pkt.h;
	}
	memset(&key, 0, sizeof(key));
	insp_flow_key_of(&key.key, r);
	fi = chk_find_flow(c, &key);
	if (fi == -2) {
		c->unfollowed++;
		return;
	}
	if (fi < 0) {
		c->nomem = 1;
		return;
	}
	c->checked++;
	c->last.flow = fi;
	c->last.response = key.key.response;
	if (!c->v[fi].have_t) {
		c->v[fi].have_t = 1;
		c->v[fi].t_first = rec_ns(r);
	}
	c->v[fi].t_last = rec_ns(r);
	if (key.key.response)
		chk_response(c, fi, r);
	else if ((h->opcode & ROCE_OP_TRANSPORT_MASK) == 0x60) {
		/* UD: one packet per message, no PSN rules; the MTU still holds */
		c->v[fi].goodput_bytes += r->pkt.payload_len;
		if (c->pmtu && r->pkt.payload_len > c->pmtu)
			chk_finding(c, r->frame, R_PAYLOAD_MTU, fi,
				"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, more than the path MTU %" PRIu32,
				r->pkt.op->name, h->psn, r->pkt.payload_len, c->pmtu);
	} else {
		c->last.req_flow = fi;
		chk_request(c, fi, r);
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
	key.key = k->key;
	slot = chk_lookup(c, &key);
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
