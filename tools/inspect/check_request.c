/*
 * check_request.c - the rules of an RC/UC request flow: PSN order (gaps,
 * resends, duplicates, reordering), opcode sequence, payload against the
 * path MTU, RETH length, and the retry after a NAK or RNR NAK.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>

#include "check_state.h"
#include "netstack/psn.h"

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
		chk_finding(c, r->frame, R_OPCODE_SEQUENCE, fi,
			"%s at PSN %" PRIu32 " starts a message while the one before has no LAST", op->name, h->psn);
	else if (fl->msg == 0 && !first)
		chk_finding(c, r->frame, R_OPCODE_SEQUENCE, fi,
			"%s at PSN %" PRIu32 " continues a message that was never begun (FIRST or ONLY expected)",
			op->name, h->psn);
	else if (fl->msg == 1 && cls != fl->msg_class)
		chk_finding(c, r->frame, R_OPCODE_MIXED, fi,
			"%s at PSN %" PRIu32 " continues a %s message", op->name, h->psn,
			fl->msg_class == ROCE_OPF_SEND ? "SEND" : "RDMA WRITE");

	/* payload against the path MTU */
	if ((op->flags & ROCE_OPF_PAYLOAD) && (first || !last) && !(first && last)) {
		/* FIRST or MIDDLE: exactly one PMTU */
		if (!pmtu && is_pmtu(len)) {
			fl->pmtu = len;
		} else if (!pmtu) {
			chk_finding(c, r->frame, R_PAYLOAD_PMTU, fi,
				"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, which is no path MTU", op->name,
				h->psn, len);
		} else if (len != pmtu) {
			chk_finding(c, r->frame, R_PAYLOAD_PMTU, fi,
				"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, not the path MTU %" PRIu32,
				op->name, h->psn, len, pmtu);
		}
	} else if (op->flags & ROCE_OPF_PAYLOAD) {
		if (pmtu && len > pmtu)
			chk_finding(c, r->frame, R_PAYLOAD_MTU, fi,
				"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, more than the path MTU %" PRIu32,
				op->name, h->psn, len, pmtu);
		else if (last && !first && len == 0)
			chk_finding(c, r->frame, R_PAYLOAD_LAST_EMPTY, fi,
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
				chk_finding(c, r->frame, R_RETH_LENGTH, fi,
					"RDMA WRITE message ending at PSN %" PRIu32 " carried %" PRIu32
					" bytes, its RETH says %" PRIu32, h->psn, fl->msg_bytes, fl->msg_reth_len);
		}
		fl->msg = 0;
	} else {
		fl->msg = fl->msg == -1 && !first ? -1 : 1;
	}
}

/* The first packet of request flow FI: its history, pairing-index entry and start PSN. */
static void request_start(struct insp_check *c, long fi, const struct insp_rec *r)
{
	struct cflow *fl = &c->v[fi];
	const struct roce_hdrs *h = &r->pkt.h;
	uint32_t psn = h->psn;
	unsigned b = chk_pair_bucket(fl->key.version, fl->key.src, fl->key.dst);

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
	fl->msg = (r->pkt.op->flags & ROCE_OPF_FIRST) ? 0 : -1;
	if (c->pmtu)
		fl->pmtu = c->pmtu;
}

/* Request R of flow FI answers the NAKs waiting for the resend of its PSN. */
static void request_answers_naks(struct insp_check *c, long fi, const struct insp_rec *r)
{
	struct cflow *fl = &c->v[fi];
	uint32_t psn = r->pkt.h.psn;
	unsigned i;

	for (i = 0; i < fl->nnak;) {
		struct nak *n = &fl->naks[i];

		if (n->psn == psn || (roce_psn_after(psn, n->psn) && !roce_psn_after(psn, n->max_at))) {
			int64_t waited = rec_ns(r) - n->t_ns;

			if (c->last.nak_answered < 0) {
				c->last.nak_answered = n->rnr ? INSP_NAK_RNR : INSP_NAK_SEQ;
				c->last.nak_t_ns = n->t_ns;
			}
			if (n->rnr && waited > 0) {
				fl->rnr_waits++;
				fl->rnr_wait_ns += (uint64_t)waited;
			}
			/* 5 % and 1 us of tolerance: the capture point is not the
			 * requester's timer, and a pcap may keep microseconds only */
			if (n->rnr && n->psn == psn && waited >= 0 &&
			    (uint64_t)waited + 1000 < n->wait_ns - n->wait_ns / 20)
				chk_finding(c, r->frame, R_RNR_EARLY_RETRY, fi,
					"retry of PSN %" PRIu32 " %" PRId64 " us after the RNR NAK (frame %" PRIu64
					") whose timer asks for %" PRIu64 " us", psn, waited / 1000, n->frame,
					n->wait_ns / 1000);
			fl->naks[i] = fl->naks[--fl->nnak];
			continue;
		}
		i++;
	}
}

/* A PSN request flow FI sent before (R): a resend, a copy, or a reordered packet. */
static void request_old_psn(struct insp_check *c, long fi, const struct insp_rec *r)
{
	struct cflow *fl = &c->v[fi];
	const struct roce_opcode_info *op = r->pkt.op;
	const struct roce_hdrs *h = &r->pkt.h;
	uint32_t psn = h->psn;
	struct hist *o = chk_hist_at(fl, psn);

	if (o) {
		if (c->prev_flow == fi && c->prev_psn == psn && c->prev_frame + 1 == r->frame) {
			/* the same packet again, back to back: a copy, not a resend */
			c->last.kind = INSP_CK_DUP;
			c->duplicates++;
			fl->dups++;
		} else {
			c->last.kind = INSP_CK_RESEND;
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
			chk_finding(c, r->frame, R_RETRANSMIT_CHANGED, fi,
				"PSN %" PRIu32 " resent as %s with %" PRIu32
				" bytes and other headers than first sent (%s, %" PRIu32 " bytes)",
				psn, op->name, r->pkt.payload_len, roce_opcode_name(o->opcode), o->payload_len);
		return;
	}
	c->last.kind = INSP_CK_LATE;
	c->out_of_order++;
	fl->ooo++;
	fl->goodput_bytes += r->pkt.payload_len;
	chk_hist_put(c, fl, r);
	chk_gap_fill(c, fl, psn);
	if (h->opcode == ROCE_OP_RC_READ_REQUEST || h->opcode == ROCE_OP_RC_ATOMIC_WRITE ||
	    h->opcode == ROCE_OP_RC_FLUSH) {
		uint32_t n;
		struct read_req *rq = chk_read_of(fl, psn, &n);

		chk_read_push(fl, r);
		/* a READ resumed inside an earlier one's PSNs (the
		 * responses from there on were lost) is no new message */
		if (rq && rq->psn != psn)
			return;
	}
	if (fl->transport == 0x00 && (op->flags & ROCE_OPF_LAST)) {
		chk_end_push(fl, psn);
		/* timed from its late arrival: the FIRST's time is not known here */
		chk_pend_push(c, fl, psn, !(op->flags & (ROCE_OPF_SEND | ROCE_OPF_WRITE)), rec_ns(r));
	}
}

/* A new PSN on request flow FI that skipped the PSNs up to it: remember the gap. */
static void request_jump(struct insp_check *c, long fi, const struct insp_rec *r)
{
	struct cflow *fl = &c->v[fi];
	const struct roce_opcode_info *op = r->pkt.op;
	uint32_t miss = roce_psn_sub(r->pkt.h.psn, fl->next_psn);

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
}

void chk_request(struct insp_check *c, long fi, const struct insp_rec *r)
{
	struct cflow *fl = &c->v[fi];
	const struct roce_opcode_info *op = r->pkt.op;
	const struct roce_hdrs *h = &r->pkt.h;
	uint32_t psn = h->psn, npsn = 1;

	if (!fl->started)
		request_start(c, fi, r);
	request_answers_naks(c, fi, r);

	if (psn == fl->next_psn || (fl->slack && roce_psn_after(psn, fl->next_psn) &&
				    roce_psn_sub(psn, fl->next_psn) <= fl->slack)) {
		/* new PSN, in order */
		if (fl->transport != 0x60)
			request_in_order(c, fi, r);
	} else if (roce_psn_after(psn, fl->next_psn)) {
		request_jump(c, fi, r);
	} else {
		request_old_psn(c, fi, r);
		return;
	}

	/* a new PSN: remember it, advance */
	c->last.kind = INSP_CK_NEW;
	chk_hist_put(c, fl, r);
	fl->goodput_bytes += r->pkt.payload_len;
	if (op->flags & ROCE_OPF_FIRST)
		fl->msg_t0 = rec_ns(r);
	if (fl->transport == 0x00 && (op->flags & ROCE_OPF_LAST))
		chk_pend_push(c, fl, psn, !(op->flags & (ROCE_OPF_SEND | ROCE_OPF_WRITE)), fl->msg_t0);
	fl->slack = 0;
	if (h->opcode == ROCE_OP_RC_READ_REQUEST || h->opcode == ROCE_OP_RC_ATOMIC_WRITE ||
	    h->opcode == ROCE_OP_RC_FLUSH) {
		uint32_t len = h->opcode == ROCE_OP_RC_READ_REQUEST ? h->reth.dma_len : 0;

		chk_read_push(fl, r);
		if (fl->pmtu) {
			npsn = read_npkts(len, fl->pmtu);
		} else {
			npsn = 1;
			fl->slack = read_npkts(len, 256) - 1;
		}
	}
	if (fl->transport == 0x00 && (op->flags & ROCE_OPF_LAST))
		chk_end_push(fl, h->opcode == ROCE_OP_RC_READ_REQUEST ? psn : roce_psn_add(psn, npsn - 1));
	fl->next_psn = roce_psn_add(psn, npsn);
	fl->max_sent = roce_psn_add(psn, npsn - 1 + fl->slack);
}
