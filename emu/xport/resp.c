/*
 * resp.c: the responder. Executes incoming request packets (SEND, RDMA
 * WRITE, RDMA READ; RC, UC and UD) as an explicit state machine whose
 * states follow the IBTA responder flow (IBTA 9.7.5; rxe_resp.c
 * has the same shape): check the PSN, the opcode sequence, the operation
 * against the QP's access, the receive resources, the lengths and the
 * R_Key; execute; complete; acknowledge. Errors are states too, each
 * sending its NAK (RC) and moving the QP to ERR where the spec says so.
 *
 * Decisions (docs/transport.md): ACKs are sent only for packets with
 * AckReq (coalescing, as rxe), and held for one receive batch when the
 * device asks (ack.c); one PSN-sequence NAK per gap; after an RNR
 * NAK further out-of-sequence packets are dropped silently until the
 * NAKed PSN returns; duplicate SEND/WRITE packets are re-ACKed with
 * ePSN-1 when they carry AckReq or are the last one before ePSN (C9-105);
 * duplicate READs are replayed from a saved resource, duplicate atomics
 * answered from the saved original value (atomic.c); a new READ or atomic
 * needs a free responder resource (atomic.c); UC drops a damaged
 * message and reuses its receive WQE for the next one; zero-length RDMA
 * skips the R_Key check.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/xport/xport_int.h"

enum resp_state {
	RESPST_CHECK_PSN,
	RESPST_CHECK_OP_SEQ,
	RESPST_CHECK_OP_VALID,
	RESPST_CHECK_RESOURCE,
	RESPST_CHECK_LENGTH,
	RESPST_CHECK_RKEY,
	RESPST_EXECUTE,
	RESPST_READ_REPLY,
	RESPST_ATOMIC,
	RESPST_COMPLETE,
	RESPST_ACKNOWLEDGE,
	RESPST_DUPLICATE,
	RESPST_NAK_PSN_SEQ,
	RESPST_RNR_NAK,
	RESPST_ERR_INVALID_REQ,
	RESPST_ERR_ACCESS,
	RESPST_ERR_LOC_PROT,
	RESPST_ERR_LENGTH,
	RESPST_ERR_INVALIDATE,
	RESPST_DROP,
	RESPST_DONE,
};

/* One packet's walk through the responder. */
struct resp_pkt {
	struct xport_qp *qp;
	const struct roce_pkt *pkt;
	uint16_t flags;		/* opcode table flags */
	bool first, last;
};

/* Send an ACK / NAK / RNR NAK with SYNDROME for PSN. */
static void send_aeth(struct xport_qp *qp, uint32_t psn, uint8_t syndrome)
{
	xport_send_aeth(qp, psn, syndrome, qp->resp.msn);
}

/* Abandon a multi-packet message (UC loss, or any error): the receive
 * WQE, if one is held, stays for the next message. */
static void abort_msg(struct xport_qp *qp)
{
	qp->resp.in_msg = RESP_MSG_NONE;
	qp->resp.recv_len = 0;
	qp->resp.resid = 0;
}

static enum resp_state check_psn(struct resp_pkt *p)
{
	struct xport_qp *qp = p->qp;
	uint32_t psn = p->pkt->h.psn;
	int32_t d = roce_psn_cmp(psn, qp->resp.epsn);

	if (qp->type == IBV_QPT_UC) {
		if (d == 0 && !qp->resp.uc_drop)
			return RESPST_CHECK_OP_SEQ;
		/* UC: out of sequence. A new message (FIRST/ONLY) resyncs;
		 * anything else ends the damaged message (IBTA 9.8.3.3). */
		if (p->first) {
			abort_msg(qp);
			qp->resp.uc_drop = false;
			qp->resp.epsn = psn;
			return RESPST_CHECK_OP_SEQ;
		}
		abort_msg(qp);
		qp->resp.uc_drop = true;
		qp->resp.epsn = roce_psn_add(psn, 1);
		return RESPST_DROP;
	}
	if (d > 0)
		return qp->resp.nak_sent ? RESPST_DROP : RESPST_NAK_PSN_SEQ;
	if (d < 0)
		return RESPST_DUPLICATE;
	qp->resp.nak_sent = false;
	/* XRC_RECV: the XRCETH names the message's SRQ (srq.c) */
	if (qp->xrc == XPORT_XRC_RECV && !xport_xrc_choose(qp, p->pkt))
		return RESPST_ERR_INVALID_REQ;
	return RESPST_CHECK_OP_SEQ;
}

static enum resp_state check_op_seq(struct resp_pkt *p)
{
	struct xport_qp *qp = p->qp;
	bool ok;

	switch (qp->resp.in_msg) {
	case RESP_MSG_SEND:
		ok = (p->flags & ROCE_OPF_SEND) && !p->first;
		break;
	case RESP_MSG_WRITE:
		ok = (p->flags & ROCE_OPF_WRITE) && !p->first;
		break;
	default:
		ok = p->first;
		break;
	}
	if (ok)
		return RESPST_CHECK_OP_VALID;
	if (qp->type == IBV_QPT_UC) {
		abort_msg(qp);
		qp->resp.uc_drop = !p->first;
		return p->first ? RESPST_CHECK_OP_VALID : RESPST_DROP;
	}
	return RESPST_ERR_INVALID_REQ;
}

static enum resp_state check_op_valid(struct resp_pkt *p)
{
	struct xport_qp *qp = p->qp;
	unsigned int acc = qp->attr.qp_access_flags;
	bool ok;

	if (p->flags & ROCE_OPF_SEND)
		ok = true;
	else if (p->flags & ROCE_OPF_WRITE)
		ok = acc & IBV_ACCESS_REMOTE_WRITE;
	else if (p->flags & ROCE_OPF_READ)
		ok = qp->type == IBV_QPT_RC && (acc & IBV_ACCESS_REMOTE_READ);
	else if (p->pkt->h.opcode == ROCE_OP_RC_CMP_SWAP ||
		 p->pkt->h.opcode == ROCE_OP_RC_FETCH_ADD)
		ok = acc & IBV_ACCESS_REMOTE_ATOMIC;
	else	/* ATOMIC_WRITE, FLUSH (flush_aw.c) */
		ok = xport_flush_aw_valid(qp, p->pkt);
	if (ok)
		return RESPST_CHECK_RESOURCE;
	if (qp->type == IBV_QPT_UC) {
		abort_msg(qp);
		qp->resp.uc_drop = !p->last;
		return RESPST_DROP;
	}
	return RESPST_ERR_INVALID_REQ;
}

static enum resp_state check_resource(struct resp_pkt *p)
{
	struct xport_qp *qp = p->qp;

	if ((p->flags & (ROCE_OPF_READ | ROCE_OPF_ATOMIC) || xport_is_flush_aw_op(p->pkt->h.opcode)) &&
	    !xport_rd_atomic_room(qp)) {
		xport_log(qp, XPORT_LOG_ERR,
			  "PSN 0x%06x %s: no responder resource (%u in use, max_dest_rd_atomic %u)",
			  p->pkt->h.psn, p->pkt->op->name, qp->resp.rd_held,
			  qp->attr.max_dest_rd_atomic);
		return RESPST_ERR_INVALID_REQ;
	}
	if (!(p->flags & ROCE_OPF_RWQE) || qp->resp.have_rwqe)
		return RESPST_CHECK_LENGTH;
	/* SEND FIRST/ONLY, or the LAST/ONLY of WRITE with immediate. */
	if (xport_rwqe_take(qp, p->pkt, p->flags & ROCE_OPF_SEND)) {
		qp->resp.have_rwqe = true;
		qp->resp.recv_len = 0;
		return RESPST_CHECK_LENGTH;
	}
	/* rq_refill met a receive WQE it cannot execute: it completed with
	 * LOC_QP_OP_ERR, the QP is in ERR (xport_post_refused); the
	 * requester gets the NAK of an error local to the responder. */
	if (qp->state == IBV_QPS_ERR)
		return RESPST_ERR_LOC_PROT;
	if (qp->type == IBV_QPT_RC)
		return RESPST_RNR_NAK;
	abort_msg(qp);
	qp->resp.uc_drop = !p->last;
	return RESPST_DROP;
}

static enum resp_state check_length(struct resp_pkt *p)
{
	struct xport_qp *qp = p->qp;
	const struct roce_pkt *pkt = p->pkt;
	uint32_t n = pkt->payload_len;

	if ((p->flags & ROCE_OPF_ATOMIC) || xport_is_flush_aw_op(pkt->h.opcode))
		return RESPST_ATOMIC;	/* fixed 8 bytes (or none, FLUSH) */
	if (p->flags & ROCE_OPF_READ)
		return pkt->h.reth.dma_len > 0x80000000u ?
		       RESPST_ERR_INVALID_REQ : RESPST_CHECK_RKEY;

	/* Segmentation (IBTA 9.4.4): FIRST/MIDDLE carry exactly one
	 * MTU, LAST and ONLY at most one. */
	if ((!p->last && n != qp->mtu) || n > qp->mtu)
		return RESPST_ERR_INVALID_REQ;

	if (p->flags & ROCE_OPF_WRITE) {
		uint32_t resid = p->first ? pkt->h.reth.dma_len : qp->resp.resid;

		/* A WRITE carries exactly what its RETH announced. */
		if (resid > qp->mtu ? (p->last || n != qp->mtu) :
				      (!p->last || n != resid))
			return RESPST_ERR_INVALID_REQ;
		return p->first ? RESPST_CHECK_RKEY : RESPST_EXECUTE;
	}
	/* SEND: does it still fit the receive buffers? */
	if ((uint64_t)qp->resp.recv_len + n - xport_tm_unplaced(qp, n) >
	    xport_sgl_len(qp->resp.rwqe.sg_list, qp->resp.rwqe.num_sge))
		return RESPST_ERR_LENGTH;
	return RESPST_EXECUTE;
}

static enum resp_state check_rkey(struct resp_pkt *p)
{
	struct xport_qp *qp = p->qp;
	const struct roce_pkt *pkt = p->pkt;
	bool is_read = p->flags & ROCE_OPF_READ;
	uint32_t len = pkt->h.reth.dma_len;

	if (len) {
		enum xport_mem_status st = qp->dev->ops.mem(qp->dev->ctx, qp,
			qp->pd, true, pkt->h.reth.rkey, pkt->h.reth.va, NULL,
			len, is_read ? IBV_ACCESS_REMOTE_READ :
				       IBV_ACCESS_REMOTE_WRITE, XPORT_MEM_CHECK);

		if (st) {
			if (qp->type == IBV_QPT_UC) {
				abort_msg(qp);
				qp->resp.uc_drop = !p->last;
				return RESPST_DROP;
			}
			return RESPST_ERR_ACCESS;
		}
	}
	if (is_read)
		return RESPST_READ_REPLY;
	qp->resp.va = pkt->h.reth.va;
	qp->resp.rkey = pkt->h.reth.rkey;
	qp->resp.write_len = len;
	qp->resp.resid = len;
	return RESPST_EXECUTE;
}

static enum resp_state execute(struct resp_pkt *p)
{
	struct xport_qp *qp = p->qp;
	const struct roce_pkt *pkt = p->pkt;
	uint32_t n = pkt->payload_len;
	/* the data must be in memory before an ACK or CQE can announce it
	 * (a deferred write's failure then fails this packet) */
	bool announce = p->last || pkt->h.ackreq;

	if (p->flags & ROCE_OPF_SEND) {
		if (xport_recv_place(qp, pkt->payload, &n) ||
		    (announce && xport_mem_sync(qp)))
			return RESPST_ERR_LOC_PROT;
		qp->resp.recv_len += n;
		qp->resp.in_msg = p->last ? RESP_MSG_NONE : RESP_MSG_SEND;
	} else {
		uint64_t va = qp->resp.va + (qp->resp.write_len - qp->resp.resid);

		if ((n && qp->dev->ops.mem(qp->dev->ctx, qp, qp->pd, true,
					   qp->resp.rkey, va, (void *)pkt->payload,
					   n, IBV_ACCESS_REMOTE_WRITE,
					   XPORT_MEM_WRITE)) ||
		    (announce && xport_mem_sync(qp)))
			return qp->type == IBV_QPT_UC ? RESPST_DROP :
							RESPST_ERR_ACCESS;
		qp->resp.resid -= n;
		qp->resp.in_msg = p->last ? RESP_MSG_NONE : RESP_MSG_WRITE;
	}
	qp->resp.epsn = roce_psn_add(qp->resp.epsn, 1);
	return p->last ? RESPST_COMPLETE : RESPST_ACKNOWLEDGE;
}

/* Queue READ responses for [va, va+len) from PSN (a replay may start
 * inside an earlier request); xport_resp_run sends them. A peer with more
 * READs outstanding than XPORT_RD_JOBS loses the newest: it retries. */
static void read_queue(struct xport_qp *qp, uint32_t psn, uint64_t va,
		       uint32_t rkey, uint32_t len, bool replay)
{
	struct xport_rd_job *j;

	if (qp->resp.job_tail - qp->resp.job_head >= XPORT_RD_JOBS) {
		qp->stats.dropped++;
		return;
	}
	j = &qp->resp.job[qp->resp.job_tail++ % XPORT_RD_JOBS];
	j->psn = psn;
	j->va = va;
	j->rkey = rkey;
	j->len = len;
	j->i = 0;
	j->n = xport_npkts(len, qp->mtu);
	j->replay = replay;
	j->tag = ++qp->dev->read_tag;
	xport_mark(qp, XPORT_WORK_RESP);
}

/* The saved READ resource a duplicate READ request PKT asks to replay, or
 * NULL (no resource covers its PSN, or it is not the rest of the same
 * range under the same R_Key, IBTA 9.7.5.1.3.2: dropped). */
static const struct xport_rd_res *rd_res_of(const struct xport_qp *qp,
					    const struct roce_pkt *pkt)
{
	for (unsigned i = 0; i < XPORT_RD_RESOURCES; i++) {
		const struct xport_rd_res *r = &qp->resp.rd[i];
		uint32_t span = roce_psn_sub(r->last_psn, r->first_psn) + 1;
		uint64_t skip;

		if (!r->valid || r->atomic ||
		    !roce_psn_in_range(pkt->h.psn, r->first_psn, span))
			continue;
		skip = (uint64_t)roce_psn_sub(pkt->h.psn, r->first_psn) *
		       qp->mtu;
		if (pkt->h.reth.rkey != r->rkey ||
		    pkt->h.reth.va != r->va + skip ||
		    (uint64_t)pkt->h.reth.dma_len + skip != r->len)
			return NULL;
		return r;
	}
	return NULL;
}

/* A duplicate READ for resource R restarts R's responses at PSN (IBTA
 * 9.7.5.1.3.2: the responder resends from the requested PSN). If R still
 * has a job waiting or being sent, that job is restarted in place, as rxe
 * and ConnectX restart the resource; only a finished resource gets a new
 * job. So duplicates never multiply the work: at most one job per
 * resource, whatever the number of duplicates. */
static bool read_restart(struct xport_qp *qp, const struct xport_rd_res *r,
			 uint32_t psn, uint64_t va, uint32_t len)
{
	uint32_t span = roce_psn_sub(r->last_psn, r->first_psn) + 1;

	for (uint32_t k = qp->resp.job_head; k != qp->resp.job_tail; k++) {
		struct xport_rd_job *j = &qp->resp.job[k % XPORT_RD_JOBS];

		if (j->rkey != r->rkey ||
		    !roce_psn_in_range(j->psn, r->first_psn, span))
			continue;
		j->psn = psn;
		j->va = va;
		j->len = len;
		j->i = 0;
		j->n = xport_npkts(len, qp->mtu);
		qp->stats.read_restarts++;
		xport_mark(qp, XPORT_WORK_RESP);
		return true;
	}
	return false;
}

static void read_replay(struct xport_qp *qp, const struct xport_rd_res *r,
			uint32_t psn, uint64_t va, uint32_t len)
{
	if (!read_restart(qp, r, psn, va, len))
		read_queue(qp, psn, va, r->rkey, len, true);
}

bool xport_resp_read_restart(struct xport_qp *qp, const struct roce_pkt *pkt)
{
	const struct xport_rd_res *r;

	if (qp->type != IBV_QPT_RC || !(pkt->op->flags & ROCE_OPF_READ) ||
	    roce_psn_cmp(pkt->h.psn, qp->resp.epsn) >= 0 ||
	    !(r = rd_res_of(qp, pkt)) ||
	    !read_restart(qp, r, pkt->h.psn, pkt->h.reth.va,
			  pkt->h.reth.dma_len))
		return false;
	qp->stats.dup_requests++;
	return true;
}

/* xport_fetch_fn of a READ job: its range through the R_Key. */
static enum xport_mem_status rd_fetch(struct xport_qp *qp, const void *src, uint32_t off,
				      void *buf, uint32_t len)
{
	const struct xport_rd_job *j = src;

	return qp->dev->ops.mem(qp->dev->ctx, qp, qp->pd, true, j->rkey, j->va + off, buf, len,
				IBV_ACCESS_REMOTE_READ, XPORT_MEM_READ);
}

/* Send packet j->i of READ job J. Returns false if memory failed (NAK
 * Remote Access Error sent). */
static bool read_send_one(struct xport_qp *qp, struct xport_rd_job *j)
{
	uint8_t pkt[XPORT_PKT_MAX];
	struct roce_hdrs h;
	uint32_t off = j->i * qp->mtu;
	uint32_t n = j->len - off < qp->mtu ? j->len - off : qp->mtu;

	memset(&h, 0, sizeof(h));
	if (j->n == 1)
		h.opcode = ROCE_OP_RC_READ_RESP_ONLY;
	else if (j->i == 0)
		h.opcode = ROCE_OP_RC_READ_RESP_FIRST;
	else if (j->i == j->n - 1)
		h.opcode = ROCE_OP_RC_READ_RESP_LAST;
	else
		h.opcode = ROCE_OP_RC_READ_RESP_MIDDLE;
	h.dqpn = qp->attr.dest_qp_num;
	h.psn = roce_psn_add(j->psn, j->i);
	h.aeth.syndrome = ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID);
	h.aeth.msn = qp->resp.msn;
	if (n && xport_read_ahead(qp, j->tag, j->len, off, pkt + xport_hdr_len(h.opcode), n,
				  rd_fetch, j)) {
		send_aeth(qp, h.psn, ROCE_AETH_SYN_NAK(ROCE_NAK_REM_ACCESS_ERR));
		return false;
	}
	xport_send_in(qp, &qp->attr.dgid, &h, pkt, n);
	j->i++;
	return true;
}

static enum resp_state read_reply(struct resp_pkt *p)
{
	struct xport_qp *qp = p->qp;
	const struct roce_pkt *pkt = p->pkt;
	uint32_t len = pkt->h.reth.dma_len;
	uint32_t n_pkts = xport_npkts(len, qp->mtu);
	struct xport_rd_res *r = &qp->resp.rd[qp->resp.rd_next++ %
					      XPORT_RD_RESOURCES];

	/* Remember it for a duplicate (the requester's retry). */
	r->valid = true;
	r->atomic = false;
	r->first_psn = pkt->h.psn;
	r->last_psn = roce_psn_add(pkt->h.psn, n_pkts - 1);
	r->va = pkt->h.reth.va;
	r->rkey = pkt->h.reth.rkey;
	r->len = len;
	qp->resp.msn = (qp->resp.msn + 1) & ROCE_AETH_MSN_MASK; /* C9-148 */
	qp->resp.epsn = roce_psn_add(qp->resp.epsn, n_pkts);
	read_queue(qp, pkt->h.psn, r->va, r->rkey, len, false);
	return RESPST_DONE;
}

static enum resp_state complete(struct resp_pkt *p)
{
	struct xport_qp *qp = p->qp;
	const struct roce_pkt *pkt = p->pkt;

	qp->resp.msn = (qp->resp.msn + 1) & ROCE_AETH_MSN_MASK;
	if (p->flags & ROCE_OPF_RWQE) {
		bool is_send = p->flags & ROCE_OPF_SEND;
		struct xport_cqe c = {
			.wr_id = qp->resp.rwqe.wr_id,
			.wr_index = qp->resp.rwqe.wr_index,
			.qpn = qp->qpn,
			.src_qp = qp->attr.dest_qp_num,
			.byte_len = is_send ? qp->resp.recv_len :
					      qp->resp.write_len,
			.status = IBV_WC_SUCCESS,
			.opcode = is_send ? IBV_WC_RECV :
					    IBV_WC_RECV_RDMA_WITH_IMM,
			.is_recv = true,
			.solicited = pkt->h.se,
			.signaled = true,
		};
		if (p->flags & ROCE_OPF_IMM) {
			c.wc_flags |= IBV_WC_WITH_IMM;
			c.imm_data = htobe32(pkt->h.imm);
		}
		/* SEND with Invalidate: the R_Key dies before the receive
		 * completes (IBTA 10.6.7.2.5). */
		if (p->flags & ROCE_OPF_INV) {
			const struct xport_ops *ops = &qp->dev->ops;

			if (!ops->invalidate ||
			    !ops->invalidate(qp->dev->ctx, qp, qp->pd, pkt->h.ieth_rkey))
				return RESPST_ERR_INVALIDATE;
			c.wc_flags |= IBV_WC_WITH_INV;
			c.imm_data = pkt->h.ieth_rkey;
		}
		qp->resp.have_rwqe = false;
		qp->resp.recv_len = 0;
		xport_tm_emit(qp, &c);
	}
	return RESPST_ACKNOWLEDGE;
}

static enum resp_state acknowledge(struct resp_pkt *p)
{
	if (p->qp->type == IBV_QPT_RC && p->pkt->h.ackreq)
		xport_resp_ack(p->qp, p->pkt->h.psn);
	return RESPST_DONE;
}

static enum resp_state duplicate(struct resp_pkt *p)
{
	struct xport_qp *qp = p->qp;
	const struct roce_pkt *pkt = p->pkt;
	uint32_t prev = roce_psn_add(qp->resp.epsn, ROCE_PSN_MASK); /* -1 */

	qp->stats.dup_requests++;
	if (p->flags & ROCE_OPF_READ) {
		const struct xport_rd_res *r = rd_res_of(qp, pkt);

		if (!r)
			return RESPST_DROP;
		read_replay(qp, r, pkt->h.psn, pkt->h.reth.va,
			    pkt->h.reth.dma_len);
		return RESPST_DONE;
	}
	if ((p->flags & ROCE_OPF_ATOMIC) || xport_is_flush_aw_op(pkt->h.opcode))
		return xport_atomic_replay(qp, pkt) ? RESPST_DONE : RESPST_DROP;
	/* SEND/WRITE already executed: acknowledge again (C9-105). */
	if (pkt->h.ackreq || pkt->h.psn == prev)
		send_aeth(qp, prev, ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID));
	return RESPST_DONE;
}

/* Complete the held receive WQE with an error STATUS (responder side). */
static void fail_rwqe(struct xport_qp *qp, enum ibv_wc_status status)
{
	struct xport_cqe c = {
		.wr_id = qp->resp.rwqe.wr_id,
		.wr_index = qp->resp.rwqe.wr_index,
		.qpn = qp->qpn,
		.src_qp = qp->attr.dest_qp_num,
		.status = status,
		.opcode = IBV_WC_RECV,
		.is_recv = true,
		.signaled = true,
	};

	if (!qp->resp.have_rwqe)
		return;
	qp->resp.have_rwqe = false;
	xport_tm_emit(qp, &c);
}

/* Fatal responder error: NAK (RC), QP to ERR. */
static enum resp_state fatal(struct resp_pkt *p, uint8_t nak,
			     enum ibv_event_type ev)
{
	static const char *const why[] = {
		[ROCE_NAK_INVALID_REQ] = "invalid request",
		[ROCE_NAK_REM_ACCESS_ERR] = "remote access error",
		[ROCE_NAK_REM_OP_ERR] = "remote operational error",
	};

	xport_log(p->qp, XPORT_LOG_ERR, "PSN 0x%06x %s: %s%s",
		  p->pkt->h.psn, p->pkt->op->name, why[nak],
		  p->qp->type == IBV_QPT_RC ? " (NAK sent)" : "");
	if (p->qp->type == IBV_QPT_RC)
		send_aeth(p->qp, p->pkt->h.psn, ROCE_AETH_SYN_NAK(nak));
	xport_qp_fatal(p->qp, ev);
	return RESPST_DONE;
}

/* UD receive (IBTA 9.8.4; the receive buffer starts with 40 bytes of GRH,
 * IBTA 11.4.1.2 / ibv_post_recv(3)): Q_Key
 * check, 40-byte GRH area, then the payload; one packet per message. */
static void ud_receive(struct xport_qp *qp, const struct roce_pkt *pkt,
		       const struct roce_l3 *l3, const uint8_t *raw,
		       size_t raw_len)
{
	uint8_t ipbuf[XPORT_PKT_MAX + 64];
	uint8_t grh[XPORT_UD_GRH_BYTES];
	struct xport_recv_wqe rw, *r = &rw;
	size_t n = 0;
	struct xport_cqe c;

	if (pkt->h.deth.qkey != qp->attr.qkey || !xport_rq_take(qp, r)) {
		qp->stats.dropped++;
		return;
	}
	memset(&c, 0, sizeof(c));
	c.wr_id = r->wr_id;
	c.wr_index = r->wr_index;
	c.qpn = qp->qpn;
	c.src_qp = pkt->h.deth.sqpn;
	c.opcode = IBV_WC_RECV;
	c.is_recv = true;
	c.solicited = pkt->h.se;
	c.signaled = true;
	c.wc_flags = IBV_WC_GRH;
	if (pkt->op->flags & ROCE_OPF_IMM) {
		c.wc_flags |= IBV_WC_WITH_IMM;
		c.imm_data = htobe32(pkt->h.imm);
	}
	c.byte_len = XPORT_UD_GRH_BYTES + pkt->payload_len;

	/* The GRH area: IPv6 header, or 20 zero bytes + IPv4 header. */
	memset(grh, 0, sizeof(grh));
	if (roce_wrap_ip(ipbuf, sizeof(ipbuf), l3, raw, raw_len, &n) == ROCE_OK) {
		if (l3->kind == ROCE_L3_IPV4)
			memcpy(grh + 20, ipbuf, 20);
		else
			memcpy(grh, ipbuf, 40);
	}
	if (c.byte_len > xport_sgl_len(r->sg_list, r->num_sge)) {
		/* A datagram from any host must not stop the QP: the
		 * receive WQE completes in error and the QP stays in RTS
		 * (mlx5; rxe drops the datagram and keeps the WQE). */
		xport_log(qp, XPORT_LOG_WARN,
			  "UD datagram of %u bytes from QPN 0x%06x into a %u-byte receive buffer: LOC_LEN_ERR",
			  c.byte_len, pkt->h.deth.sqpn,
			  (unsigned)xport_sgl_len(r->sg_list, r->num_sge));
		c.status = IBV_WC_LOC_LEN_ERR;
		c.byte_len = 0;
		xport_emit(qp, &c);
		return;
	}
	if (xport_scatter(qp, r->sg_list, r->num_sge, 0, grh, sizeof(grh)) ||
	    (pkt->payload_len &&
	     xport_scatter(qp, r->sg_list, r->num_sge, XPORT_UD_GRH_BYTES,
			   pkt->payload, pkt->payload_len)) ||
	    xport_mem_sync(qp)) {
		c.status = IBV_WC_LOC_PROT_ERR;
		xport_emit(qp, &c);
		xport_qp_fatal(qp, IBV_EVENT_QP_FATAL);
		return;
	}
	c.status = IBV_WC_SUCCESS;
	xport_emit(qp, &c);
}

void xport_resp_input(struct xport_qp *qp, const struct roce_pkt *pkt,
		      const struct roce_l3 *l3, const uint8_t *raw,
		      size_t raw_len)
{
	struct resp_pkt p = {
		.qp = qp,
		.pkt = pkt,
		.flags = pkt->op->flags,
		.first = pkt->op->flags & ROCE_OPF_FIRST,
		.last = pkt->op->flags & ROCE_OPF_LAST,
	};
	enum resp_state s = RESPST_CHECK_PSN;

	if (qp->type == IBV_QPT_UD) {
		ud_receive(qp, pkt, l3, raw, raw_len);
		return;
	}
	/* READ requests are single packets that both start and end. */
	if (p.flags & ROCE_OPF_READ)
		p.first = p.last = true;

	while (s != RESPST_DONE) {
		switch (s) {
		case RESPST_CHECK_PSN: s = check_psn(&p); break;
		case RESPST_CHECK_OP_SEQ: s = check_op_seq(&p); break;
		case RESPST_CHECK_OP_VALID: s = check_op_valid(&p); break;
		case RESPST_CHECK_RESOURCE: s = check_resource(&p); break;
		case RESPST_CHECK_LENGTH: s = check_length(&p); break;
		case RESPST_CHECK_RKEY: s = check_rkey(&p); break;
		case RESPST_EXECUTE: s = execute(&p); break;
		case RESPST_READ_REPLY: s = read_reply(&p); break;
		case RESPST_ATOMIC:
			switch (xport_atomic_execute(qp, pkt)) {
			case XPORT_ATOMIC_OK: s = RESPST_DONE; break;
			case XPORT_ATOMIC_INVALID: s = RESPST_ERR_INVALID_REQ; break;
			default: s = RESPST_ERR_ACCESS; break;
			}
			break;
		case RESPST_COMPLETE: s = complete(&p); break;
		case RESPST_ACKNOWLEDGE: s = acknowledge(&p); break;
		case RESPST_DUPLICATE: s = duplicate(&p); break;
		case RESPST_NAK_PSN_SEQ:
			xport_log(qp, XPORT_LOG_WARN,
				  "PSN 0x%06x out of sequence: NAK, expected 0x%06x",
				  pkt->h.psn, qp->resp.epsn);
			/* ePSN in the NAK acknowledges everything before. */
			send_aeth(qp, qp->resp.epsn,
				  ROCE_AETH_SYN_NAK(ROCE_NAK_PSN_SEQ_ERR));
			qp->resp.nak_sent = true;
			qp->stats.seq_naks_tx++;
			s = RESPST_DONE;
			break;
		case RESPST_RNR_NAK:
			xport_log(qp, XPORT_LOG_INFO,
				  "PSN 0x%06x: no receive WQE: RNR NAK (timer %u)",
				  pkt->h.psn, qp->attr.min_rnr_timer);
			send_aeth(qp, pkt->h.psn,
				  ROCE_AETH_SYN_RNR(qp->attr.min_rnr_timer));
			qp->resp.nak_sent = true;
			qp->stats.rnr_naks_tx++;
			s = RESPST_DONE;
			break;
		case RESPST_ERR_INVALID_REQ:
			s = fatal(&p, ROCE_NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR);
			break;
		case RESPST_ERR_ACCESS:
			s = fatal(&p, ROCE_NAK_REM_ACCESS_ERR,
				  IBV_EVENT_QP_ACCESS_ERR);
			break;
		case RESPST_ERR_LOC_PROT:
			fail_rwqe(qp, IBV_WC_LOC_PROT_ERR);
			s = fatal(&p, ROCE_NAK_REM_OP_ERR, IBV_EVENT_QP_FATAL);
			break;
		case RESPST_ERR_LENGTH:
			/* Receive buffer too small: LOC_LEN_ERR here, Invalid
			 * Request NAK to the requester (IBTA 9.7.5.2.4). */
			fail_rwqe(qp, IBV_WC_LOC_LEN_ERR);
			s = fatal(&p, ROCE_NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR);
			break;
		case RESPST_ERR_INVALIDATE:
			/* An R_Key that cannot be invalidated: the receive
			 * WQE fails, Invalid Request NAK (responder error
			 * class J; the statuses rxe uses). */
			xport_log(qp, XPORT_LOG_ERR, "PSN 0x%06x: R_Key 0x%x cannot be invalidated",
				  pkt->h.psn, pkt->h.ieth_rkey);
			fail_rwqe(qp, IBV_WC_REM_INV_REQ_ERR);
			s = fatal(&p, ROCE_NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR);
			break;
		case RESPST_DROP:
			qp->stats.dropped++;
			s = RESPST_DONE;
			break;
		case RESPST_DONE:
			break;
		}
	}
}

bool xport_resp_busy(const struct xport_qp *qp)
{
	return qp->resp.job_head != qp->resp.job_tail || qp->rxq;
}

void xport_resp_enqueue(struct xport_qp *qp, const struct roce_l3 *l3,
			const uint8_t *raw, size_t raw_len)
{
	struct xport_queued_pkt *q;

	if (qp->rxq_len >= XPORT_RESP_QUEUE ||
	    !(q = malloc(sizeof(*q) + raw_len))) {
		qp->stats.dropped++;	/* the requester retransmits */
		return;
	}
	q->next = NULL;
	q->rd_held = xport_rd_atomic_held(qp);
	q->rd_new = xport_rd_atomic_arrival(qp, raw, raw_len);
	q->l3 = *l3;
	q->len = raw_len;
	memcpy(q->data, raw, raw_len);
	if (!qp->rxq)
		qp->rxq_tail = &qp->rxq;
	*qp->rxq_tail = q;
	qp->rxq_tail = &q->next;
	qp->rxq_len++;
	xport_mark(qp, XPORT_WORK_RESP);
}

bool xport_resp_run(struct xport_qp *qp, uint32_t budget)
{
	uint64_t start = qp->stats.tx_pkts;

	while (qp->state != IBV_QPS_ERR && qp->state != IBV_QPS_RESET) {
		struct xport_queued_pkt *q;
		struct roce_pkt pkt;

		if (qp->stats.tx_pkts - start >= budget)
			return xport_resp_busy(qp);
		if (qp->resp.job_head != qp->resp.job_tail) {
			struct xport_rd_job *j =
				&qp->resp.job[qp->resp.job_head % XPORT_RD_JOBS];

			if (!read_send_one(qp, j)) {
				xport_qp_fatal(qp, IBV_EVENT_QP_ACCESS_ERR);
				return false;
			}
			if (j->i == j->n)
				qp->resp.job_head++;
			continue;
		}
		q = qp->rxq;
		if (!q)
			return false;
		qp->rxq = q->next;
		qp->rxq_len--;
		/* parsed (and ICRC-checked) before it was queued */
		qp->resp.rd_held = q->rd_held;
		if (xport_reparse(q->data, q->len, &q->l3, &pkt))
			xport_resp_input(qp, &pkt, &q->l3, q->data, q->len);
		qp->resp.rd_held = 0;	/* a packet taken at once finds none */
		free(q);
	}
	return false;
}
