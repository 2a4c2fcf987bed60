/*
 * check_read.c - RDMA READ requests outstanding on an RC request flow, and
 * the rules of the READ responses that answer them (PSN, count, length and
 * payload size; docs/wire-format.md §1.6).
 */
#include "config.h"

#include <inttypes.h>

#include "check_state.h"
#include "netstack/psn.h"

/* A READ (or ATOMIC WRITE, FLUSH) request at PSN: outstanding until answered. */
void chk_read_push(struct cflow *fl, const struct insp_rec *r)
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

/* The outstanding READ whose PSNs (its responses') hold PSN; *N: how many it takes. */
struct read_req *chk_read_of(struct cflow *q, uint32_t psn, uint32_t *n)
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

/* READ response R on response flow RI: its PSN, count, length and payload size against Q's outstanding READs. */
void chk_read_response(struct insp_check *c, long ri, struct cflow *q, const struct insp_rec *r)
{
	struct cflow *rf = &c->v[ri];
	const struct roce_opcode_info *op = r->pkt.op;
	uint32_t psn = r->pkt.h.psn, len = r->pkt.payload_len, n = 0;
	int first = (op->flags & ROCE_OPF_FIRST) != 0, last = (op->flags & ROCE_OPF_LAST) != 0;
	struct read_req *rq = chk_read_of(q, psn, &n);

	if (!rq) {
		chk_finding(c, r->frame, R_READ_RESPONSE_PSN, ri,
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
			chk_finding(c, r->frame, R_PAYLOAD_PMTU, ri,
				"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, not the path MTU %" PRIu32,
				op->name, psn, len, q->pmtu);
		}
	} else if (q->pmtu && len > q->pmtu) {
		chk_finding(c, r->frame, R_PAYLOAD_MTU, ri,
			"%s at PSN %" PRIu32 " carries %" PRIu32 " bytes, more than the path MTU %" PRIu32,
			op->name, psn, len, q->pmtu);
	}
	rf->rd_count++;
	rf->rd_next = roce_psn_add(psn, 1);
	if (!last && rf->rd_count >= rf->rd_expect && q->pmtu) {
		chk_finding(c, r->frame, R_READ_RESPONSE_COUNT, ri,
			"%s at PSN %" PRIu32 " is response %" PRIu32 " of a READ of %" PRIu32
			" bytes (frame %" PRIu64 ") that takes %" PRIu32 " at path MTU %" PRIu32 ", and not its last",
			op->name, psn, rf->rd_count, rq->len, rq->frame, rf->rd_expect, q->pmtu);
		rf->rd_active = 0;
		return;
	}
	if (last) {
		if (rf->rd_count != rf->rd_expect && q->pmtu)
			chk_finding(c, r->frame, R_READ_RESPONSE_COUNT, ri,
				"READ (frame %" PRIu64 ", %" PRIu32 " bytes) ended by %s after %" PRIu32
				" response(s); path MTU %" PRIu32 " makes it %" PRIu32,
				rq->frame, rq->len, op->name, rf->rd_count, q->pmtu, rf->rd_expect);
		else if (rf->rd_left != len)
			chk_finding(c, r->frame, R_READ_RESPONSE_LENGTH, ri,
				"READ (frame %" PRIu64 ", %" PRIu32 " bytes) ended by %s with %" PRIu32
				" bytes where %" PRIu32 " were left", rq->frame, rq->len, op->name, len, rf->rd_left);
		rf->rd_active = 0;
	} else {
		rf->rd_left = rf->rd_left > len ? rf->rd_left - len : 0;
	}
}
