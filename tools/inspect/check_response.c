/*
 * check_response.c - the rules of an RC response flow: joining it to its
 * request flow, the AETH (syndrome, MSN), ATOMIC Acknowledge, NAKs and RNR
 * NAKs (remembered until the requester answers them).
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "check_state.h"
#include "netstack/psn.h"

/* RNR timer codes in nanoseconds (docs/wire-format.md §1.3; IBA §9.7.5.2.8 Table 45). */
static const uint32_t rnr_us100[32] = {	/* units of 10 us */
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
	384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

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
	for (i = c->pair_head[chk_pair_bucket(rf->key.version, rf->key.dst, rf->key.src)], n = 0; i >= 0 && n < PAIR_SCAN;
	     i = c->v[i].pair_next, n++) {
		struct cflow *q = &c->v[i];
		int sent, port, score;

		if (q->peer >= 0 || q->transport != 0x00 || q->key.version != rf->key.version ||
		    strcmp(q->key.src, rf->key.dst) || strcmp(q->key.dst, rf->key.src))
			continue;
		sent = roce_psn_in_range(psn, q->first_psn, roce_psn_sub(q->max_sent, q->first_psn) + 1);
		port = q->key.version == 2 && q->key.sport && q->key.sport == rf->key.sport;
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
	later = chk_ends_between(q, upto, q->max_sent);
	if (!rf->have_ack) {
		rf->have_ack = 1;
		rf->ack_psn = upto;
		rf->msn_lo = (msn - later) & 0xFFFFFF;
		rf->msn_width = later;
		chk_ends_prune(q, upto);
		return;
	}
	if (roce_psn_before(upto, rf->ack_psn))
		return;
	done = upto == rf->ack_psn ? 0 : chk_ends_between(q, rf->ack_psn, upto);
	rel = msn_diff(msn, rf->msn_lo);
	if (rel < (int32_t)done || rel > (int32_t)(done + rf->msn_width + later)) {
		chk_finding(c, r->frame, R_ACK_MSN, ri,
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
	chk_ends_prune(q, upto);
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

void chk_response(struct insp_check *c, long ri, const struct insp_rec *r)
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

	c->last.kind = INSP_CK_ACK;
	c->last.req_flow = qi;
	if (has_aeth && ((syn & 0x80) || (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RESERVED ||
			 ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK && (syn & ROCE_AETH_VALUE_MASK) > 3))) {
		chk_finding(c, r->frame, R_AETH_RESERVED, ri,
			"%s at PSN %" PRIu32 " carries AETH syndrome 0x%02x, reserved on RC", op->name, psn, syn);
		return;
	}
	if (h->opcode == ROCE_OP_RC_ACK && (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
		rf->nak_count[INSP_NAK_RNR]++;
	else if (h->opcode == ROCE_OP_RC_ACK && (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK)
		rf->nak_count[syn & ROCE_AETH_VALUE_MASK]++;
	if (has_aeth && (op->flags & ROCE_OPF_READ) && (syn & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK)
		chk_finding(c, r->frame, R_READ_RESPONSE_AETH, ri,
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
		chk_finding(c, r->frame, R_ACK_UNSENT_PSN, ri,
			"%s names PSN %" PRIu32 ", after the last PSN the requester sent (%" PRIu32 ")",
			op->name, psn, q->max_sent);
		return;
	}
	o = chk_hist_at(q, psn);
	if (!has_aeth || (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK)
		naks_superseded(q, psn);

	if (op->flags & ROCE_OPF_READ) {
		/* no MSN check: a duplicate READ is answered again with the
		 * current MSN (docs/wire-format.md §1.6), at an older PSN */
		if (!rf->have_rd_max || roce_psn_after(psn, rf->rd_max)) {
			rf->have_rd_max = 1;
			rf->rd_max = psn;
			rf->goodput_bytes += r->pkt.payload_len;
			c->last.kind = INSP_CK_NEW;
		} else if (c->prev_flow == ri && c->prev_psn == psn && c->prev_frame + 1 == r->frame) {
			c->last.kind = INSP_CK_DUP;
			c->duplicates++;
			rf->dups++;
		} else {
			c->last.kind = INSP_CK_RESEND;
			c->retransmitted++;
			c->retransmitted_bytes += r->pkt.payload_len;
			rf->retx_pkts++;
			rf->retx_bytes += r->pkt.payload_len;
		}
		if (q->m)	/* without the READs sent, nothing to check against */
			chk_read_response(c, ri, q, r);
		if (op->flags & ROCE_OPF_LAST)
			chk_pend_complete(q, psn, 1, rec_ns(r));
		return;
	}
	if (h->opcode == ROCE_OP_RC_ATOMIC_ACK) {
		if (o && !is_atomic_req(o->opcode)) {
			chk_finding(c, r->frame, R_ATOMIC_ACK_PSN, ri,
				"ATOMIC Acknowledge at PSN %" PRIu32 ", which the requester used for %s", psn,
				roce_opcode_name(o->opcode));
			return;
		}
		msn_check(c, ri, q, r, psn);
		chk_pend_complete(q, psn, 1, rec_ns(r));
		return;
	}
	if (h->opcode != ROCE_OP_RC_ACK)
		return;
	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		if (o && is_atomic_req(o->opcode))
			chk_finding(c, r->frame, R_ATOMIC_PLAIN_ACK, ri,
				"plain ACK at PSN %" PRIu32 " of %s; an atomic is answered by ATOMIC Acknowledge",
				psn, roce_opcode_name(o->opcode));
		msn_check(c, ri, q, r, psn);
		chk_pend_complete(q, psn, 0, rec_ns(r));
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
		chk_pend_complete(q, roce_psn_add(psn, 0xFFFFFF), 0, rec_ns(r));
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
