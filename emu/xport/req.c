/*
 * req.c: the requester. Turns send WQEs into request packets: segments a
 * message into FIRST/MIDDLE/LAST (or ONLY) packets of path-MTU payload,
 * assigns PSNs, places RETH/ImmDt/DETH/AtomicETH and the AckReq bit,
 * honours the RC windows (unacknowledged PSNs, outstanding READs and
 * atomics, fences), and restarts
 * from a PSN when the completer asks (go-back-N).
 *
 * Rules: IBTA 9.7.1-9.7.4 (segmentation, pad, SE, AckReq, READ PSN
 * consumption); docs/transport.md. UC and UD WQEs complete as soon as
 * their last packet is sent (no ACKs exist for them).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/xport/xport_int.h"

/* Packet position inside a message. */
enum seg_pos { POS_FIRST, POS_MIDDLE, POS_LAST, POS_ONLY, POS__N };

/* Operation kinds a request packet can carry. */
enum req_kind { K_SEND, K_SEND_IMM, K_WRITE, K_WRITE_IMM, K_SEND_INV, K__N };

/* RC opcode for each kind and position (IBA Table 38; UC = RC | 0x20).
 * Non-IMM kinds and IMM kinds share FIRST/MIDDLE: ImmDt (and IETH) ride
 * only on the LAST/ONLY packet (IBTA 9.4.4). SEND with Invalidate is RC
 * only. */
static const uint8_t rc_opcode[K__N][POS__N] = {
	[K_SEND] = { ROCE_OP_RC_SEND_FIRST, ROCE_OP_RC_SEND_MIDDLE,
		     ROCE_OP_RC_SEND_LAST, ROCE_OP_RC_SEND_ONLY },
	[K_SEND_IMM] = { ROCE_OP_RC_SEND_FIRST, ROCE_OP_RC_SEND_MIDDLE,
			 ROCE_OP_RC_SEND_LAST_IMM, ROCE_OP_RC_SEND_ONLY_IMM },
	[K_WRITE] = { ROCE_OP_RC_WRITE_FIRST, ROCE_OP_RC_WRITE_MIDDLE,
		      ROCE_OP_RC_WRITE_LAST, ROCE_OP_RC_WRITE_ONLY },
	[K_WRITE_IMM] = { ROCE_OP_RC_WRITE_FIRST, ROCE_OP_RC_WRITE_MIDDLE,
			  ROCE_OP_RC_WRITE_LAST_IMM, ROCE_OP_RC_WRITE_ONLY_IMM },
	[K_SEND_INV] = { ROCE_OP_RC_SEND_FIRST, ROCE_OP_RC_SEND_MIDDLE,
			 ROCE_OP_RC_SEND_LAST_INV, ROCE_OP_RC_SEND_ONLY_INV },
};

static enum req_kind wr_kind(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND_WITH_IMM: return K_SEND_IMM;
	case IBV_WR_RDMA_WRITE: return K_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM: return K_WRITE_IMM;
	case IBV_WR_SEND_WITH_INV: return K_SEND_INV;
	default: return K_SEND;
	}
}

/* Fail WQE W with a local STATUS: it is reported (after any earlier WQEs)
 * when the QP flushes. RC and UC enter ERR (IBTA 10.8.3.1); UD enters SQE
 * and keeps receiving (IBTA 10.3.1). No affiliated async event: the error
 * CQE is the report, as in comp.c (IBTA 10.10.2.3; mlx5 raises none for an
 * error CQE either). */
static void req_local_error(struct xport_qp *qp, struct xport_swqe *w,
			    enum ibv_wc_status status)
{
	w->err_status = status;
	xport_log(qp, XPORT_LOG_ERR, "send WQE %u (%s, %u bytes) failed locally: %s",
		  w->wr.wr_index, xport_wr_opcode_name(w->wr.opcode), w->length,
		  xport_wc_status_name(status));
	if (qp->type == IBV_QPT_UD)
		xport_qp_send_error(qp);
	else
		xport_qp_fatal(qp, -1);
}

/* A UD datagram the host could not send. Congestion (a full socket
 * buffer) is loss, which UD allows; anything else (EMSGSIZE, no route,
 * address family) will not get better by itself: the WQE fails. */
static bool ud_xmit_failed(int err)
{
	switch (err) {
	case 0:
	case EAGAIN:
#if EWOULDBLOCK != EAGAIN
	case EWOULDBLOCK:
#endif
	case ENOBUFS:
	case EINTR:
	case ECONNREFUSED:
		return false;
	default:
		return true;
	}
}

/* Arm the retransmit timer if something is outstanding and it is not. */
static void arm_retrans(struct xport_qp *qp)
{
	uint64_t t = xport_timeout_ns(qp);

	if (qp->type != IBV_QPT_RC || !t || qp->comp.retrans_deadline)
		return;
	if (qp->sq.comp == qp->sq.req && qp->req.offset == 0)
		return;
	qp->comp.retrans_deadline = xport_now(qp) + t;
	xport_timer_update(qp);
}

/* Send one request packet (xport_send_in: LEN payload bytes already in
 * place in PKT, an XPORT_PKT_MAX-byte buffer). The first packet resent after
 * a Local ACK Timeout goes twice: a timeout means the whole previous
 * attempt was lost, and when this one's first packet (a READ request, or
 * the READ's first response) is lost too the round shows no progress and
 * costs a retry; a second copy makes that unlikely. The copy is a
 * duplicate the responder handles as such: re-ACKed (C9-105), a READ
 * restarted, an atomic replayed from its saved result (IBTA 9.7.5.1.3). */
static int req_send(struct xport_qp *qp, const union ibv_gid *dgid, struct roce_hdrs *h,
		    uint8_t *pkt, uint32_t len)
{
	int err = xport_send_in(qp, dgid, h, pkt, len);

	if (qp->req.timeout_copy) {
		qp->req.timeout_copy = false;
		if (!err) {
			qp->stats.timeout_copies++;
			xport_send_in(qp, dgid, h, pkt, len);
		}
	}
	return err;
}

/* Send the READ request of W from req.psn (a restart sends the remainder
 * from the PSN the completer asked for: va and length advance by whole
 * MTUs). Returns false on a local failure. */
static bool send_read(struct xport_qp *qp, struct xport_swqe *w)
{
	uint8_t pkt[XPORT_PKT_MAX];
	struct roce_hdrs h;
	uint32_t off = qp->req.offset;

	memset(&h, 0, sizeof(h));
	h.opcode = ROCE_OP_RC_READ_REQUEST;
	h.dqpn = qp->attr.dest_qp_num;
	h.xrc_srqn = w->wr.remote_srqn;
	h.psn = qp->req.psn;
	h.ackreq = true;
	h.reth.va = w->wr.remote_addr + off;
	h.reth.rkey = w->wr.rkey;
	h.reth.dma_len = w->length - off;
	req_send(qp, &qp->attr.dgid, &h, pkt, 0);
	qp->req.noack = 0;
	qp->req.psn = roce_psn_add(qp->req.psn, xport_npkts(w->length - off, qp->mtu));
	qp->req.offset = w->length;
	if (roce_psn_after(qp->req.psn, qp->req.psn_max))
		qp->req.psn_max = qp->req.psn;
	return true;
}

/* Send the CMP_SWAP or FETCH_ADD request of W (IBTA 9.4.5; one PSN,
 * AckReq). AtomicETH: CMP_SWAP swaps in wr.atomic.swap when the word
 * equals compare_add; FETCH_ADD adds compare_add, its Compare is 0. */
static void send_atomic(struct xport_qp *qp, struct xport_swqe *w)
{
	uint8_t pkt[XPORT_PKT_MAX];
	struct roce_hdrs h;
	bool cas = w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP;

	memset(&h, 0, sizeof(h));
	h.opcode = cas ? ROCE_OP_RC_CMP_SWAP : ROCE_OP_RC_FETCH_ADD;
	h.dqpn = qp->attr.dest_qp_num;
	h.xrc_srqn = w->wr.remote_srqn;
	h.psn = qp->req.psn;
	h.ackreq = true;
	h.atomic.va = w->wr.remote_addr;
	h.atomic.rkey = w->wr.rkey;
	h.atomic.swap_add = cas ? w->wr.swap : w->wr.compare_add;
	h.atomic.compare = cas ? w->wr.compare_add : 0;
	req_send(qp, &qp->attr.dgid, &h, pkt, 0);
	qp->req.noack = 0;
	qp->req.psn = roce_psn_add(qp->req.psn, 1);
	qp->req.offset = w->length;
	if (roce_psn_after(qp->req.psn, qp->req.psn_max))
		qp->req.psn_max = qp->req.psn;
}

/* Send the ATOMIC WRITE or FLUSH request of W (IBTA 1.5; one PSN, AckReq,
 * answered by an empty READ Response Only). ATOMIC WRITE: RETH (VA, R_Key,
 * DMA length 8) and the 8 bytes of wr.compare_add as they were in the
 * poster's buffer; FLUSH: FETH (wr.swap: selectivity level << 4 |
 * placement type) and RETH (VA, R_Key, DMA length wr.compare_add). */
static void send_flush_aw(struct xport_qp *qp, struct xport_swqe *w)
{
	uint8_t pkt[XPORT_PKT_MAX];
	struct roce_hdrs h;
	bool aw = (int)w->wr.opcode == XPORT_WR_ATOMIC_WRITE;
	uint32_t n = 0;

	memset(&h, 0, sizeof(h));
	h.opcode = aw ? ROCE_OP_RC_ATOMIC_WRITE : ROCE_OP_RC_FLUSH;
	h.dqpn = qp->attr.dest_qp_num;
	h.psn = qp->req.psn;
	h.ackreq = true;
	h.reth.va = w->wr.remote_addr;
	h.reth.rkey = w->wr.rkey;
	if (aw) {
		h.reth.dma_len = n = 8;
		memcpy(pkt + xport_hdr_len(h.opcode), &w->wr.compare_add, 8);
	} else {
		h.reth.dma_len = (uint32_t)w->wr.compare_add;
		h.feth.sel = (uint8_t)(w->wr.swap >> 4 & 3);
		h.feth.plt = (uint8_t)(w->wr.swap & 15);
	}
	req_send(qp, &qp->attr.dgid, &h, pkt, n);
	qp->req.noack = 0;
	qp->req.psn = roce_psn_add(qp->req.psn, 1);
	qp->req.offset = w->length;
	if (roce_psn_after(qp->req.psn, qp->req.psn_max))
		qp->req.psn_max = qp->req.psn;
}

/* Send the next packet of SEND/WRITE WQE W. Returns false on a local
 * error (W failed, QP in ERR). */
static bool send_segment(struct xport_qp *qp, struct xport_swqe *w)
{
	uint8_t pkt[XPORT_PKT_MAX];
	struct roce_hdrs h;
	const union ibv_gid *dgid = &qp->attr.dgid;
	enum req_kind kind = wr_kind(w->wr.opcode);
	uint32_t resid = w->length - qp->req.offset;
	uint32_t n = resid < qp->mtu ? resid : qp->mtu;
	bool first = qp->req.offset == 0, last = resid <= qp->mtu;
	enum seg_pos pos = first ? (last ? POS_ONLY : POS_FIRST) :
				   (last ? POS_LAST : POS_MIDDLE);
	int err;

	memset(&h, 0, sizeof(h));
	h.psn = qp->req.psn;
	switch (qp->type) {
	case IBV_QPT_UD:
		h.opcode = kind == K_SEND_IMM ? ROCE_OP_UD_SEND_ONLY_IMM :
						ROCE_OP_UD_SEND_ONLY;
		h.dqpn = w->wr.remote_qpn & ROCE_QPN_MASK;
		h.deth.qkey = (w->wr.remote_qkey & ROCE_QKEY_CONTROLLED_BIT) ?
			      qp->attr.qkey : w->wr.remote_qkey;
		h.deth.sqpn = qp->qpn;
		dgid = &w->wr.dgid;
		break;
	case IBV_QPT_UC:
		h.opcode = rc_opcode[kind][pos] | ROCE_TRANSPORT_UC;
		h.dqpn = qp->attr.dest_qp_num;
		break;
	default:
		h.opcode = rc_opcode[kind][pos];
		h.dqpn = qp->attr.dest_qp_num;
		h.xrc_srqn = w->wr.remote_srqn;
		break;
	}
	/* the payload goes straight to its place in the packet */
	if (first && !w->prefetched)
		xport_prefetch(qp);
	if (n && xport_gather(qp, w, qp->req.offset, pkt + xport_hdr_len(h.opcode), n)) {
		req_local_error(qp, w, IBV_WC_LOC_PROT_ERR);
		return false;
	}
	if (first && (kind == K_WRITE || kind == K_WRITE_IMM)) {
		h.reth.va = w->wr.remote_addr;
		h.reth.rkey = w->wr.rkey;
		h.reth.dma_len = w->length;
	}
	if (last && (kind == K_SEND_IMM || kind == K_WRITE_IMM))
		h.imm = be32toh(w->wr.imm_data);
	if (last && kind == K_SEND_INV)
		h.ieth_rkey = w->wr.invalidate_rkey;
	if (last && (w->wr.send_flags & IBV_SEND_SOLICITED) && kind != K_WRITE)
		h.se = true;
	if (qp->type == IBV_QPT_RC) {
		/* AckReq on the END packet, and at least every 64th so
		 * that long messages are acknowledged while in flight;
		 * after a loss also on the first packets resent, so that
		 * the first to arrive shows as progress even when one ACK
		 * is lost too (else a timeout, and a retry, without progress). */
		if (last || ++qp->req.noack >= XPORT_ACKREQ_EVERY || qp->req.ackreq_next)
			h.ackreq = true;
		if (qp->comp.rewound && qp->req.resent_ackreq) {
			h.ackreq = true;
			qp->req.resent_ackreq--;
		}
		if (h.ackreq)
			qp->req.noack = 0;
	}
	err = req_send(qp, dgid, &h, pkt, n);
	if (qp->type == IBV_QPT_UD && ud_xmit_failed(err)) {
		xport_log(qp, XPORT_LOG_ERR, "send WQE %u: UD datagram to QPN 0x%06x not sent: %s",
			  w->wr.wr_index, h.dqpn, strerror(err));
		req_local_error(qp, w, err == EMSGSIZE ? IBV_WC_LOC_LEN_ERR :
							 IBV_WC_LOC_QP_OP_ERR);
		return false;
	}
	qp->req.psn = roce_psn_add(qp->req.psn, 1);
	if (roce_psn_after(qp->req.psn, qp->req.psn_max))
		qp->req.psn_max = qp->req.psn;
	qp->req.offset += n;
	if (last)
		qp->req.offset = w->length;
	return true;
}

/* Execute local operation W (BIND_MW, LOCAL_INV) once, when the requester
 * reaches it in SQ order (IBV_SEND_FENCE: after earlier READs and atomics
 * completed), and pass it; it completes as soon as every WQE before it has.
 * Returns false: it must wait (fence), or it failed (QP in ERR). */
static bool run_local_op(struct xport_qp *qp, struct xport_swqe *w)
{
	const struct xport_ops *ops = &qp->dev->ops;
	enum ibv_wc_status st;

	if (!w->psn_assigned) {
		if ((w->wr.send_flags & IBV_SEND_FENCE) && qp->req.rd_outstanding)
			return false;
		st = ops->local_op ? ops->local_op(qp->dev->ctx, qp, qp->pd, &w->wr) :
				     IBV_WC_LOC_QP_OP_ERR;
		/* no PSN: the range [psn, psn) matches no response */
		w->first_psn = qp->req.psn;
		w->npkts = 0;
		w->last_psn = roce_psn_add(qp->req.psn, ROCE_PSN_MASK);
		w->psn_assigned = true;
		if (st != IBV_WC_SUCCESS) {
			req_local_error(qp, w, st);
			return false;
		}
	}
	w->state = SWQE_PENDING;
	qp->req.offset = 0;
	if (qp->sq.comp == qp->sq.req++)
		xport_comp_wqe(qp, w, IBV_WC_SUCCESS, 0);
	return true;
}

bool xport_req_send(struct xport_qp *qp, uint32_t budget)
{
	uint64_t start = qp->stats.tx_pkts;
	bool more = false;

	while ((qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD) &&
	       !qp->req.rnr_deadline && qp->sq.req != qp->sq.head) {
		struct xport_swqe *w = xport_sq_at(qp, qp->sq.req);
		bool is_read = w->wr.opcode == IBV_WR_RDMA_READ;
		bool is_rd_atomic = xport_wr_is_rd_atomic(w->wr.opcode);

		if (qp->stats.tx_pkts - start >= budget) {
			more = true;
			break;
		}

		/* SQD (drain): finish and retransmit what was started,
		 * start nothing new (IBTA 10.3.1.2 / ibv_modify_qp(3)). */
		if (qp->state == IBV_QPS_SQD && !w->psn_assigned)
			break;
		if (xport_wr_is_local(w->wr.opcode)) {
			if (!run_local_op(qp, w))
				break;
			continue;
		}

		if (qp->type == IBV_QPT_RC) {
			/* max_rd_atomic 0 still lets one through, as mlx5
			 * (its log2 field cannot say 0). */
			uint32_t max_rd = qp->attr.max_rd_atomic ?
					  qp->attr.max_rd_atomic : 1;

			if (roce_psn_sub(qp->req.psn, qp->comp.psn) >=
			    XPORT_MAX_UNACKED_PSNS)
				break;
			/* the device window: one more packet, with AckReq,
			 * when none of those in flight asked for an ACK, so
			 * that the QP's own ACK wakes it */
			if (xport_dev_window_full(qp)) {
				if (!qp->req.noack) {
					qp->dev->stats.window_stops++;
					break;
				}
				qp->req.ackreq_next = true;
			}
			if (!w->psn_assigned) {
				if (is_rd_atomic &&
				    qp->req.rd_outstanding >= max_rd)
					break;
				/* IBV_SEND_FENCE: wait for earlier READs
				 * and atomics. */
				if ((w->wr.send_flags & IBV_SEND_FENCE) &&
				    qp->req.rd_outstanding)
					break;
			}
		}
		if (!w->psn_assigned) {
			/* An atomic's local data segment is one 8-byte
			 * buffer (IBTA 11.4.1.1; rxe: EINVAL at post unless
			 * the SGEs sum to 8): anything else fails before
			 * the request leaves, so the responder never
			 * executes an atomic whose result has no place. */
			if (xport_wr_is_atomic(w->wr.opcode) &&
			    (w->wr.num_sge != 1 || w->wr.sg_list[0].length != 8)) {
				req_local_error(qp, w, IBV_WC_LOC_LEN_ERR);
				return false;
			}
			w->first_psn = qp->req.psn;
			w->npkts = xport_npkts(w->length, qp->mtu);
			w->last_psn = roce_psn_add(w->first_psn, w->npkts - 1);
			w->psn_assigned = true;
			qp->req.offset = 0;
			if (is_rd_atomic)
				qp->req.rd_outstanding++;
			/* UD: one packet, at most the port MTU (C10-93.1.1;
			 * mlx5 reports a local length error). */
			if (qp->type == IBV_QPT_UD && w->length > qp->mtu) {
				req_local_error(qp, w, IBV_WC_LOC_LEN_ERR);
				return false;
			}
		}
		if (xport_wr_is_atomic(w->wr.opcode)) {
			send_atomic(qp, w);
		} else if (xport_wr_is_flush_aw(w->wr.opcode)) {
			send_flush_aw(qp, w);
		} else if (is_read) {
			if (!send_read(qp, w))
				return false;
		} else if (!send_segment(qp, w)) {
			return false;
		}
		qp->req.ackreq_next = false;
		if (qp->req.offset < w->length)
			continue;	/* more segments of this WQE */

		w->state = SWQE_PENDING;
		qp->sq.req++;
		qp->req.offset = 0;
		if (qp->type != IBV_QPT_RC)
			xport_comp_wqe(qp, w, IBV_WC_SUCCESS, w->length);
	}
	arm_retrans(qp);
	return more;
}

void xport_req_rewind(struct xport_qp *qp, uint32_t psn)
{
	qp->req.resent_ackreq = XPORT_ACKREQ_RESENT;
	uint32_t i;

	for (i = qp->sq.comp; i != qp->sq.head; i++) {
		struct xport_swqe *w = xport_sq_at(qp, i);

		if (!w->psn_assigned)
			break;
		if (roce_psn_in_range(psn, w->first_psn, w->npkts)) {
			uint64_t off = (uint64_t)roce_psn_sub(psn, w->first_psn) *
				       qp->mtu;

			qp->sq.req = i;
			qp->req.psn = psn;
			qp->req.offset = off > w->length ? w->length : (uint32_t)off;
			for (uint32_t j = i; j != qp->sq.head; j++)
				xport_sq_at(qp, j)->state = SWQE_POSTED;
			qp->req.noack = 0;
			return;
		}
	}
	/* PSN is the first one of a WQE not sent yet (everything before
	 * it is acknowledged): continue from there. */
	if (psn == qp->req.psn_max) {
		qp->sq.req = i;
		qp->req.psn = psn;
		qp->req.offset = 0;
		qp->req.noack = 0;
	}
}
