/*
 * comp.c: the completer (RC requester side). Matches ACKs, NAKs and READ
 * responses to the send WQEs they answer and completes those WQEs in
 * order (an ATOMIC Acknowledge's original value goes to the WQE's local
 * 8 bytes), as an explicit state machine (IBTA 9.7.5.3 / 9.7.6 requester
 * side; rxe_comp.c has the same shape). It owns the retransmit timer and
 * the retry counters: on a timeout, a PSN-sequence NAK or a READ response
 * gap it rewinds the requester (go-back-N) while retry_cnt lasts, then
 * fails with IBV_WC_RETRY_EXC_ERR; an RNR NAK pauses the requester for
 * the NAK's timer while rnr_retry lasts (7 = forever), then fails with
 * IBV_WC_RNR_RETRY_EXC_ERR. A fatal NAK fails the WQE with the mapped
 * status (IBTA 9.7.5.2; docs/transport.md), moves the QP to ERR and
 * flushes the rest.
 */
#include "config.h"

#include <string.h>

#include "emu/xport/xport_int.h"

enum comp_state {
	COMPST_GET_WQE,
	COMPST_CHECK_PSN,
	COMPST_CHECK_ACK,
	COMPST_READ,
	COMPST_ATOMIC,
	COMPST_WRITE_SEND,
	COMPST_COMP_ACK,	/* the packet completes the WQE exactly */
	COMPST_COMP_WQE,	/* implicit completion: the packet is beyond it */
	COMPST_UPDATE_COMP,	/* progress: restart the retransmit timer */
	COMPST_ERROR_RETRY,
	COMPST_RNR_RETRY,
	COMPST_ERROR,
	COMPST_DROP,
	COMPST_DONE,
};

struct comp_pkt {
	struct xport_qp *qp;
	const struct roce_pkt *pkt;	/* NULL for a timeout */
	struct xport_swqe *w;
	enum ibv_wc_status status;	/* for COMPST_ERROR */
	bool ignored;			/* ended in COMPST_DROP */
};

static bool is_read_resp(uint8_t opcode)
{
	return opcode >= ROCE_OP_RC_READ_RESP_FIRST &&
	       opcode <= ROCE_OP_RC_READ_RESP_ONLY;
}

/* Progress was made: counters back to full (IBTA: the retry count is
 * per attempt to make progress), timer restarted or stopped. */
static void progress(struct xport_qp *qp)
{
	uint64_t t = xport_timeout_ns(qp);
	bool outstanding = qp->sq.comp != qp->sq.req || qp->req.offset;

	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	qp->comp.rewound = false;
	qp->comp.retrans_deadline = (t && outstanding) ? xport_now(qp) + t : 0;
	/* The requester may be behind comp.psn after an implicit ACK of
	 * packets it was about to resend: move it forward. */
	if (roce_psn_before(qp->req.psn, qp->comp.psn))
		xport_req_rewind(qp, qp->comp.psn);
	xport_timer_update(qp);
}

static enum comp_state get_wqe(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;

	if (qp->sq.comp == qp->sq.head)
		return COMPST_DROP;
	c->w = xport_sq_at(qp, qp->sq.comp);
	if (!c->w->psn_assigned)
		return COMPST_DROP;
	return COMPST_CHECK_PSN;
}

/* A PSN sequence NAK for the PSN the last ACK acknowledged (comp.psn - 1):
 * that ACK overtook it on a reordering wire, and the packet after that PSN
 * which drew the NAK was dropped (the responder NAKs a gap once and drops
 * what follows until ePSN arrives, resp.c). With PSNs in flight and no
 * rewind since the last progress, the QP goes back to comp.psn at once:
 * with nothing new to send (the device window, the end of a burst) nothing
 * else would draw another NAK before the Local ACK Timeout. Not with no
 * retry left: the NAK may be stale indeed (a duplicate of the packet after
 * it arrived and was taken), and a WQE must not fail for it; the timer
 * decides. Any other response before comp.psn is a duplicate of something
 * done. */
static bool stale_seq_nak(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;
	uint8_t syn = c->pkt->h.aeth.syndrome;

	if (c->pkt->h.opcode != ROCE_OP_RC_ACK || (syn & ROCE_AETH_TYPE_MASK) != ROCE_AETH_NAK ||
	    (syn & ROCE_AETH_VALUE_MASK) != ROCE_NAK_PSN_SEQ_ERR || qp->comp.rewound ||
	    !qp->comp.retry_left || roce_psn_add(c->pkt->h.psn, 1) != qp->comp.psn ||
	    !roce_psn_before(qp->comp.psn, qp->req.psn_max))
		return false;
	qp->stats.seq_naks_rx++;
	return true;
}

static enum comp_state check_psn(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;
	struct xport_swqe *w = c->w;
	uint32_t p = c->pkt->h.psn;
	bool is_read = xport_wr_is_rd_atomic(w->wr.opcode);

	/* Never sent: a stale or forged response. */
	if (!roce_psn_before(p, qp->req.psn_max))
		return COMPST_DROP;
	if (roce_psn_after(p, w->last_psn)) {
		/* Beyond this WQE: a SEND/WRITE is implicitly acknowledged;
		 * a READ's or atomic's response must have been lost (IBTA
		 * 9.7.5.1.3). */
		if (is_read)
			return qp->comp.rewound ? COMPST_DROP : COMPST_ERROR_RETRY;
		return COMPST_COMP_WQE;
	}
	if (roce_psn_before(p, qp->comp.psn))
		return stale_seq_nak(c) ? COMPST_ERROR_RETRY : COMPST_DROP;
	if (roce_psn_after(p, qp->comp.psn) && is_read &&
	    is_read_resp(c->pkt->h.opcode))
		return qp->comp.rewound ? COMPST_DROP : COMPST_ERROR_RETRY;
	return COMPST_CHECK_ACK;
}

static enum comp_state check_ack(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;
	const struct roce_pkt *pkt = c->pkt;
	uint8_t syn = pkt->h.aeth.syndrome;
	/* ATOMIC WRITE and FLUSH are answered like a zero-byte READ */
	bool is_read = c->w->wr.opcode == IBV_WR_RDMA_READ || xport_wr_is_flush_aw(c->w->wr.opcode);
	bool is_atomic = xport_wr_is_atomic(c->w->wr.opcode);

	if (is_read_resp(pkt->h.opcode)) {
		if (!is_read ||
		    (pkt->h.opcode != ROCE_OP_RC_READ_RESP_MIDDLE &&
		     (syn & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK)) {
			c->status = IBV_WC_BAD_RESP_ERR;
			return COMPST_ERROR;
		}
		return COMPST_READ;
	}
	if (pkt->h.opcode == ROCE_OP_RC_ATOMIC_ACK) {
		if (!is_atomic || (syn & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK) {
			c->status = IBV_WC_BAD_RESP_ERR;
			return COMPST_ERROR;
		}
		return COMPST_ATOMIC;
	}
	if (pkt->h.opcode != ROCE_OP_RC_ACK)
		return COMPST_DROP;

	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		/* An ACK inside a READ or atomic cannot complete it; its
		 * response is on the way (or will be retried by the timer). */
		return is_read || is_atomic ? COMPST_DROP : COMPST_WRITE_SEND;
	case ROCE_AETH_RNR_NAK:
		qp->stats.rnr_naks_rx++;
		return COMPST_RNR_RETRY;
	case ROCE_AETH_NAK:
		switch (syn & ROCE_AETH_VALUE_MASK) {
		case ROCE_NAK_PSN_SEQ_ERR:
			qp->stats.seq_naks_rx++;
			/* The NAK's PSN acknowledges all before it; if that
			 * is new, it is forward progress and the retry
			 * counter starts over before this NAK's retry
			 * (IBTA 9.7.5.2.2, 9.7.6). */
			if (roce_psn_after(pkt->h.psn, qp->comp.psn)) {
				qp->comp.psn = pkt->h.psn;
				progress(qp);
			} else if (qp->comp.rewound) {
				return COMPST_DROP;
			}
			return COMPST_ERROR_RETRY;
		case ROCE_NAK_INVALID_REQ:
			c->status = IBV_WC_REM_INV_REQ_ERR;
			return COMPST_ERROR;
		case ROCE_NAK_REM_ACCESS_ERR:
			c->status = IBV_WC_REM_ACCESS_ERR;
			return COMPST_ERROR;
		default:
			c->status = IBV_WC_REM_OP_ERR;
			return COMPST_ERROR;
		}
	default:
		c->status = IBV_WC_BAD_RESP_ERR;
		return COMPST_ERROR;
	}
}

/* Place one READ response packet into the WQE's local buffers. The PSN
 * fixes the offset, so a replayed or reordered packet lands in place. */
static enum comp_state do_read(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;
	const struct roce_pkt *pkt = c->pkt;
	struct xport_swqe *w = c->w;
	uint32_t idx = roce_psn_sub(pkt->h.psn, w->first_psn);
	uint64_t off = (uint64_t)idx * qp->mtu;
	bool last = pkt->h.psn == w->last_psn;
	bool op_last = pkt->h.opcode == ROCE_OP_RC_READ_RESP_LAST ||
		       pkt->h.opcode == ROCE_OP_RC_READ_RESP_ONLY;
	uint64_t want = last ? w->length - off : qp->mtu;

	if (last != op_last || pkt->payload_len != want) {
		c->status = IBV_WC_BAD_RESP_ERR;
		return COMPST_ERROR;
	}
	if ((want && xport_scatter(qp, w->wr.sg_list, w->wr.num_sge,
				   (uint32_t)off, pkt->payload, (uint32_t)want)) ||
	    (last && xport_mem_sync(qp))) {
		c->status = IBV_WC_LOC_PROT_ERR;
		return COMPST_ERROR;
	}
	qp->comp.psn = roce_psn_add(pkt->h.psn, 1);
	return last ? COMPST_COMP_ACK : COMPST_UPDATE_COMP;
}

/* The ATOMIC Acknowledge of the atomic WQE: its original value (host
 * order) goes to the WQE's one 8-byte SGE (the requester let no other
 * shape leave), LOCAL_WRITE through the lkey. */
static enum comp_state do_atomic(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;
	struct xport_swqe *w = c->w;
	uint64_t orig = c->pkt->h.atomic_ack_orig;

	if (w->wr.num_sge != 1 || w->wr.sg_list[0].length != 8) {
		c->status = IBV_WC_LOC_LEN_ERR;
		return COMPST_ERROR;
	}
	if (xport_scatter(qp, w->wr.sg_list, 1, 0, &orig, 8) || xport_mem_sync(qp)) {
		c->status = IBV_WC_LOC_PROT_ERR;
		return COMPST_ERROR;
	}
	qp->comp.psn = roce_psn_add(c->pkt->h.psn, 1);
	return COMPST_COMP_ACK;
}

static enum comp_state write_send(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;
	uint32_t p = c->pkt->h.psn;

	if (p == c->w->last_psn)
		return COMPST_COMP_ACK;
	/* Partial ACK of a long message (AckReq every 64 packets). */
	qp->comp.psn = roce_psn_add(p, 1);
	return COMPST_UPDATE_COMP;
}

static enum comp_state comp_ack(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;
	struct xport_swqe *w = c->w;

	if (!roce_psn_before(w->last_psn, qp->comp.psn))
		qp->comp.psn = roce_psn_add(w->last_psn, 1);
	xport_comp_wqe(qp, w, IBV_WC_SUCCESS, w->length);
	return COMPST_UPDATE_COMP;
}

static enum comp_state comp_wqe(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;
	struct xport_swqe *w = c->w;

	if (!roce_psn_before(w->last_psn, qp->comp.psn))
		qp->comp.psn = roce_psn_add(w->last_psn, 1);
	xport_comp_wqe(qp, w, IBV_WC_SUCCESS, w->length);
	progress(qp);
	return COMPST_GET_WQE;
}

static enum comp_state error_retry(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;

	if (qp->comp.retry_left == 0) {
		c->status = IBV_WC_RETRY_EXC_ERR;
		return c->w ? COMPST_ERROR : COMPST_DONE;
	}
	xport_log(qp, XPORT_LOG_WARN, "%s: go back to PSN 0x%06x (%u retries left)",
		  c->pkt ? "answer out of sequence" : "timeout", qp->comp.psn,
		  qp->comp.retry_left - 1u);
	qp->comp.retry_left--;
	qp->comp.rewound = true;
	qp->stats.retransmits++;
	xport_req_rewind(qp, qp->comp.psn);
	qp->req.timeout_copy = !c->pkt;
	qp->comp.retrans_deadline = 0;
	xport_mark(qp, XPORT_WORK_REQ);	/* resending re-arms the timer */
	xport_timer_update(qp);
	return COMPST_DONE;
}

static enum comp_state rnr_retry(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;
	uint32_t p = c->pkt->h.psn;

	if (qp->comp.rnr_left == 0) {
		c->status = IBV_WC_RNR_RETRY_EXC_ERR;
		return COMPST_ERROR;
	}
	if (qp->comp.rnr_left != XPORT_RNR_RETRY_INFINITE)
		qp->comp.rnr_left--;
	xport_log(qp, XPORT_LOG_INFO, "RNR NAK for PSN 0x%06x: wait timer %u",
		  p, c->pkt->h.aeth.syndrome & ROCE_AETH_VALUE_MASK);
	/* Everything before the NAKed PSN was received. */
	if (roce_psn_after(p, qp->comp.psn))
		qp->comp.psn = p;
	xport_req_rewind(qp, qp->comp.psn);
	qp->req.rnr_deadline = xport_now(qp) +
		xport_rnr_timer_ns(c->pkt->h.aeth.syndrome & ROCE_AETH_VALUE_MASK);
	qp->comp.retrans_deadline = 0;
	qp->comp.rewound = false;
	xport_timer_update(qp);
	return COMPST_DONE;
}

static enum comp_state error(struct comp_pkt *c)
{
	struct xport_qp *qp = c->qp;

	xport_log(qp, XPORT_LOG_ERR, "send WQE %u (%s, PSN 0x%06x) failed: %s%s",
		  c->w->wr.wr_index, xport_wr_opcode_name(c->w->wr.opcode),
		  c->w->first_psn, xport_wc_status_name(c->status),
		  c->pkt ? "" : " (after timeout)");

	/* The failing WQE completes with its status; xport_qp_fatal then
	 * flushes everything after it. No affiliated async event: the
	 * error completion is the report (IBTA 10.10.2.3). */
	xport_comp_wqe(qp, c->w, c->status, 0);
	xport_qp_fatal(qp, -1);
	return COMPST_DONE;
}

/* Run the machine from state S. */
static void run(struct comp_pkt *c, enum comp_state s)
{
	struct xport_qp *qp = c->qp;

	while (s != COMPST_DONE) {
		switch (s) {
		case COMPST_GET_WQE: s = get_wqe(c); break;
		case COMPST_CHECK_PSN: s = check_psn(c); break;
		case COMPST_CHECK_ACK: s = check_ack(c); break;
		case COMPST_READ: s = do_read(c); break;
		case COMPST_ATOMIC: s = do_atomic(c); break;
		case COMPST_WRITE_SEND: s = write_send(c); break;
		case COMPST_COMP_ACK: s = comp_ack(c); break;
		case COMPST_COMP_WQE: s = comp_wqe(c); break;
		case COMPST_UPDATE_COMP:
			progress(qp);
			xport_mark(qp, XPORT_WORK_REQ);
			s = COMPST_DONE;
			break;
		case COMPST_ERROR_RETRY: s = error_retry(c); break;
		case COMPST_RNR_RETRY: s = rnr_retry(c); break;
		case COMPST_ERROR: s = error(c); break;
		case COMPST_DROP:
			c->ignored = true;
			s = COMPST_DONE;
			break;
		case COMPST_DONE:
			break;
		}
	}
}

void xport_comp_check_drained(struct xport_qp *qp)
{
	if (!qp->sqd_notify || qp->state != IBV_QPS_SQD ||
	    qp->sq.comp != qp->sq.req || qp->req.offset)
		return;
	qp->sqd_notify = false;
	if (qp->dev->ops.qp_event)
		qp->dev->ops.qp_event(qp->dev->ctx, qp, IBV_EVENT_SQ_DRAINED);
}

bool xport_comp_input(struct xport_qp *qp, const struct roce_pkt *pkt)
{
	struct comp_pkt c = { .qp = qp, .pkt = pkt };

	if (qp->type != IBV_QPT_RC || qp->state == IBV_QPS_ERR) {
		qp->stats.dropped++;
		return false;
	}
	run(&c, COMPST_GET_WQE);
	xport_mark(qp, XPORT_WORK_REQ);	/* completions may open the windows */
	return !c.ignored;
}

void xport_comp_timeout(struct xport_qp *qp)
{
	struct comp_pkt c = { .qp = qp };

	qp->comp.retrans_deadline = 0;
	if (qp->sq.comp == qp->sq.req && !qp->req.offset)
		return;		/* nothing outstanding any more */
	qp->stats.timeouts++;
	c.w = xport_sq_at(qp, qp->sq.comp);
	qp->comp.rewound = false;
	run(&c, COMPST_ERROR_RETRY);
}
