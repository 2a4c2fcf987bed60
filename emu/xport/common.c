/*
 * common.c: what the requester, responder and completer share, below all
 * of them: completing and flushing WQEs through ops->complete, moving the
 * QP to ERR on its own, gather/scatter through the memory callback, and
 * building and transmitting a packet with the netstack. Nothing here calls
 * back up into req.c, resp.c, comp.c or the entry points.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/xport/xport_int.h"

uint32_t xport_mtu_bytes(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256: return 256;
	case IBV_MTU_512: return 512;
	case IBV_MTU_1024: return 1024;
	case IBV_MTU_2048: return 2048;
	case IBV_MTU_4096: return 4096;
	}
	return 0;
}

uint64_t xport_sgl_len(const struct ibv_sge *sgl, uint32_t num_sge)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < num_sge; i++)
		n += sgl[i].length;
	return n;
}

/* wc opcode of a requester completion (ibv_poll_cq(3)). */
static enum ibv_wc_opcode wr_to_wc(enum ibv_wr_opcode op)
{
	switch ((int)op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case XPORT_WR_FLUSH:
		return (enum ibv_wc_opcode)XPORT_WC_FLUSH;
	case XPORT_WR_ATOMIC_WRITE:
		return (enum ibv_wc_opcode)XPORT_WC_ATOMIC_WRITE;
	default:
		return IBV_WC_SEND;
	}
}

const char *xport_wr_opcode_name(enum ibv_wr_opcode op)
{
	switch ((int)op) {
	case IBV_WR_SEND: return "SEND";
	case IBV_WR_SEND_WITH_IMM: return "SEND_WITH_IMM";
	case IBV_WR_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_RDMA_READ: return "RDMA_READ";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "ATOMIC_CMP_AND_SWP";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "ATOMIC_FETCH_AND_ADD";
	case IBV_WR_SEND_WITH_INV: return "SEND_WITH_INV";
	case IBV_WR_LOCAL_INV: return "LOCAL_INV";
	case IBV_WR_BIND_MW: return "BIND_MW";
	case XPORT_WR_FLUSH: return "FLUSH";
	case XPORT_WR_ATOMIC_WRITE: return "ATOMIC_WRITE";
	default: return "?";
	}
}

const char *xport_wc_status_name(enum ibv_wc_status st)
{
	static const char *const n[] = {
		[IBV_WC_SUCCESS] = "SUCCESS",
		[IBV_WC_LOC_LEN_ERR] = "LOC_LEN_ERR",
		[IBV_WC_LOC_QP_OP_ERR] = "LOC_QP_OP_ERR",
		[IBV_WC_LOC_PROT_ERR] = "LOC_PROT_ERR",
		[IBV_WC_WR_FLUSH_ERR] = "WR_FLUSH_ERR",
		[IBV_WC_BAD_RESP_ERR] = "BAD_RESP_ERR",
		[IBV_WC_REM_INV_REQ_ERR] = "REM_INV_REQ_ERR",
		[IBV_WC_REM_ACCESS_ERR] = "REM_ACCESS_ERR",
		[IBV_WC_REM_OP_ERR] = "REM_OP_ERR",
		[IBV_WC_RETRY_EXC_ERR] = "RETRY_EXC_ERR",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR_RETRY_EXC_ERR",
		[IBV_WC_MW_BIND_ERR] = "MW_BIND_ERR",
	};

	if ((unsigned)st < sizeof(n) / sizeof(n[0]) && n[st])
		return n[st];
	return "?";
}

void xport_log(struct xport_qp *qp, int level, const char *fmt, ...)
{
	char msg[256];
	int n;
	va_list ap;

	if (!qp->dev->ops.log)
		return;
	n = snprintf(msg, sizeof(msg), "qpn 0x%x: ", qp->qpn);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	qp->dev->ops.log(qp->dev->ctx, qp, level, msg);
}

void xport_emit(struct xport_qp *qp, const struct xport_cqe *cqe)
{
	struct xport_cqe c;

	if (!cqe->is_recv || !qp->srq) {
		qp->dev->ops.complete(qp->dev->ctx, qp, cqe);
		return;
	}
	c = *cqe;
	c.srq = qp->srq;
	qp->dev->ops.complete(qp->dev->ctx, qp, &c);
}

static void comp_one(struct xport_qp *qp, struct xport_swqe *w,
		     enum ibv_wc_status status, uint32_t byte_len)
{
	struct xport_cqe c = {
		.wr_id = w->wr.wr_id,
		.wr_index = w->wr.wr_index,
		.qpn = qp->qpn,
		.src_qp = qp->type == IBV_QPT_UD ? 0 : qp->attr.dest_qp_num,
		.byte_len = byte_len,
		.status = status,
		.opcode = wr_to_wc(w->wr.opcode),
		.wr_opcode = w->wr.opcode,
		.signaled = status != IBV_WC_SUCCESS ||
			    (w->wr.send_flags & IBV_SEND_SIGNALED),
	};

	if (w->wr.opcode == IBV_WR_SEND_WITH_IMM ||
	    w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
		c.wc_flags = IBV_WC_WITH_IMM;
		c.imm_data = w->wr.imm_data;
	}
	if (xport_wr_is_rd_atomic(w->wr.opcode) && w->psn_assigned &&
	    qp->req.rd_outstanding)
		qp->req.rd_outstanding--;
	qp->sq.comp++;
	/* Completed before the requester (re)sent it: flushed, or acked
	 * implicitly after a rewind. */
	if ((int32_t)(qp->sq.req - qp->sq.comp) < 0) {
		qp->sq.req = qp->sq.comp;
		qp->req.offset = 0;
	}
	if (w->wr.send_flags & XPORT_SEND_TM) {
		xport_tm_sq_done(qp, &w->wr, byte_len, status);
		return;
	}
	xport_emit(qp, &c);
}

void xport_comp_wqe(struct xport_qp *qp, struct xport_swqe *w,
		    enum ibv_wc_status status, uint32_t byte_len)
{
	comp_one(qp, w, status, byte_len);
	/* Local operations executed while earlier WQEs were in flight
	 * complete once those have. */
	while (status == IBV_WC_SUCCESS && qp->state != IBV_QPS_ERR &&
	       qp->sq.comp != qp->sq.req) {
		struct xport_swqe *n = xport_sq_at(qp, qp->sq.comp);

		if (!xport_wr_is_local(n->wr.opcode) || !n->psn_assigned)
			break;
		comp_one(qp, n, IBV_WC_SUCCESS, 0);
	}
}

void xport_flush_sq(struct xport_qp *qp)
{
	while (qp->sq.comp != qp->sq.head) {
		struct xport_swqe *w = xport_sq_at(qp, qp->sq.comp);

		xport_comp_wqe(qp, w, w->err_status ? w->err_status :
				      IBV_WC_WR_FLUSH_ERR, 0);
	}
	qp->sq.req = qp->sq.head;
	qp->req.rd_outstanding = 0;
	qp->req.offset = 0;
}

void xport_flush(struct xport_qp *qp)
{
	xport_flush_sq(qp);
	if (qp->resp.have_rwqe) {
		struct xport_cqe c = {
			.wr_id = qp->resp.rwqe.wr_id,
			.wr_index = qp->resp.rwqe.wr_index,
			.qpn = qp->qpn,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.is_recv = true,
			.signaled = true,
		};
		qp->resp.have_rwqe = false;
		xport_emit(qp, &c);
	}
	while (qp->rq.tail != qp->rq.head) {
		struct xport_rwqe *rw = &qp->rq.ring[qp->rq.tail % qp->rq.depth];
		struct xport_recv_wqe *r = &rw->wr;
		struct xport_cqe c = {
			.wr_id = r->wr_id,
			.wr_index = r->wr_index,
			.qpn = qp->qpn,
			.status = rw->err_status ? rw->err_status :
						   IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.is_recv = true,
			.signaled = true,
		};
		qp->rq.tail++;
		xport_emit(qp, &c);
	}
	qp->comp.retrans_deadline = 0;
	qp->req.rnr_deadline = 0;
	qp->sqd_notify = false;
	xport_resp_clear(qp);
	qp->work = 0;
}

void xport_resp_clear(struct xport_qp *qp)
{
	while (qp->rxq) {
		struct xport_queued_pkt *q = qp->rxq;

		qp->rxq = q->next;
		free(q);
	}
	qp->rxq_len = 0;
	qp->resp.job_head = qp->resp.job_tail;
	/* the held ACK answers requests already executed and completed: a NIC
	 * would have sent it, and the requester's send waits for it */
	xport_ack_send_held(qp);
}

void xport_qp_fatal(struct xport_qp *qp, int event)
{
	if (qp->state == IBV_QPS_ERR)
		return;
	xport_log(qp, XPORT_LOG_ERR, "QP to ERR (sq psn 0x%06x, epsn 0x%06x)",
		  qp->req.psn, qp->resp.epsn);
	qp->state = IBV_QPS_ERR;
	if (qp->dev->ops.qp_event && event >= 0)
		qp->dev->ops.qp_event(qp->dev->ctx, qp, event);
	xport_flush(qp);
	xport_srq_last_wqe(qp);
	xport_timer_update(qp);
	xport_req_account(qp, false); /* no run may follow: no timer, no work */
	if (qp->dev->ops.qp_err)
		qp->dev->ops.qp_err(qp->dev->ctx, qp);
}

void xport_qp_send_error(struct xport_qp *qp)
{
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return;
	xport_log(qp, XPORT_LOG_ERR, "QP to SQE (receive queue still working)");
	qp->state = IBV_QPS_SQE;
	qp->sqd_notify = false;
	xport_flush_sq(qp);
	xport_req_account(qp, false);
}

/* Moves len bytes between buf and the SGE list, starting offset bytes into
 * it: reads the registered memory (XPORT_MEM_READ) or writes it
 * (XPORT_MEM_WRITE, needs IBV_ACCESS_LOCAL_WRITE). */
static enum xport_mem_status sge_copy(struct xport_qp *qp, const struct ibv_sge *sgl,
				      uint32_t num_sge, uint32_t offset, uint8_t *buf,
				      uint32_t len, enum xport_mem_op dir)
{
	int access = dir == XPORT_MEM_WRITE ? IBV_ACCESS_LOCAL_WRITE : 0;

	for (uint32_t i = 0; i < num_sge && len; i++) {
		const struct ibv_sge *s = &sgl[i];
		uint32_t n;
		enum xport_mem_status st;

		if (offset >= s->length) {
			offset -= s->length;
			continue;
		}
		n = s->length - offset;
		if (n > len)
			n = len;
		st = qp->dev->ops.mem(qp->dev->ctx, qp, qp->pd, false, s->lkey,
				      s->addr + offset, buf, n, access, dir);
		if (st)
			return st;
		buf += n;
		len -= n;
		offset = 0;
	}
	return len ? XPORT_MEM_BOUNDS : XPORT_MEM_OK;
}

/* xport_fetch_fn of a send WQE: its SGE list through the lkeys. */
static enum xport_mem_status gather_fetch(struct xport_qp *qp, const void *src, uint32_t offset,
					  void *buf, uint32_t len)
{
	const struct xport_send_wqe *wr = src;

	return sge_copy(qp, wr->sg_list, wr->num_sge, offset, buf, len, XPORT_MEM_READ);
}

enum xport_mem_status xport_gather(struct xport_qp *qp,
				   const struct xport_swqe *w,
				   uint32_t offset, void *buf, uint32_t len)
{
	const struct xport_send_wqe *wr = &w->wr;

	/* posted inline, or prefetched (prefetch.c): the payload is in the
	 * WQE; an inline WQE's length is its inline_len (xport_post_send) */
	if ((wr->send_flags & IBV_SEND_INLINE) || w->prefetched) {
		if ((uint64_t)offset + len > w->length)
			return XPORT_MEM_BOUNDS;
		memcpy(buf, wr->inline_data + offset, len);
		return XPORT_MEM_OK;
	}
	return xport_read_ahead(qp, w->tag, w->length, offset, buf, len, gather_fetch, wr);
}

enum xport_mem_status xport_scatter(struct xport_qp *qp,
				    const struct ibv_sge *sgl, uint32_t num_sge,
				    uint32_t offset, const void *buf,
				    uint32_t len)
{
	/* the memory callback only reads buf for a write */
	return sge_copy(qp, sgl, num_sge, offset, (uint8_t *)buf, len, XPORT_MEM_WRITE);
}

enum xport_mem_status xport_mem_sync(struct xport_qp *qp)
{
	const struct xport_ops *ops = &qp->dev->ops;

	return ops->mem_sync ? ops->mem_sync(qp->dev->ctx, qp) : XPORT_MEM_OK;
}

/* Builds the packet of H with PAYLOAD[0..len) into BUF (XPORT_PKT_MAX
 * bytes; PAYLOAD may already sit at its place in BUF) and transmits it. */
static int send_built(struct xport_qp *qp, const union ibv_gid *dgid, struct roce_hdrs *h,
		      uint8_t *buf, const void *payload, uint32_t len)
{
	struct roce_l3 l3;
	size_t n;
	int err;

	memset(&l3, 0, sizeof(l3));
	memcpy(l3.src, qp->dev->gid.raw, 16);
	memcpy(l3.dst, dgid->raw, 16);
	l3.kind = roce_addr_is_v4mapped(l3.dst) ? ROCE_L3_IPV4 : ROCE_L3_IPV6;
	l3.sport = qp->sport;
	l3.dport = qp->dev->udp_port;
	if (!h->pkey)
		h->pkey = ROCE_DEFAULT_PKEY;
	/* a held ACK goes before any later response of the QP (ack.c) */
	if (qp->resp.ack_held && h->opcode >= ROCE_OP_RC_READ_RESP_FIRST &&
	    h->opcode <= ROCE_OP_RC_ATOMIC_ACK)
		xport_ack_send_held(qp);
	/* An XRC QP sends its RC opcodes with the XRC prefix (Annex A14);
	 * a request's XRCETH lengthens the headers: the payload gathered
	 * behind the RC headers moves first */
	if (qp->xrc != XPORT_XRC_NONE &&
	    (h->opcode & ROCE_OP_TRANSPORT_MASK) == ROCE_TRANSPORT_RC) {
		size_t rc_len = xport_hdr_len(h->opcode);

		h->opcode |= ROCE_TRANSPORT_XRC;
		if (len && payload == buf + rc_len && xport_hdr_len(h->opcode) != rc_len) {
			memmove(buf + xport_hdr_len(h->opcode), payload, len);
			payload = buf + xport_hdr_len(h->opcode);
		}
	}
	err = roce_build_udp(buf, XPORT_PKT_MAX, &l3, h, payload, len, &n);
	if (err)
		return EINVAL;
	qp->stats.tx_pkts++;
	return qp->dev->ops.xmit(qp->dev->ctx, qp, dgid, qp->sport, buf, n);
}

int xport_send_pkt(struct xport_qp *qp, const union ibv_gid *dgid,
		   struct roce_hdrs *h, const void *payload, uint32_t len)
{
	uint8_t buf[XPORT_PKT_MAX];

	return send_built(qp, dgid, h, buf, payload, len);
}

size_t xport_hdr_len(uint8_t opcode)
{
	const struct roce_opcode_info *op = roce_opcode_info(opcode);

	return op ? op->hdr_len : 0;
}

int xport_send_in(struct xport_qp *qp, const union ibv_gid *dgid,
		  struct roce_hdrs *h, uint8_t *pkt, uint32_t len)
{
	return send_built(qp, dgid, h, pkt, pkt + xport_hdr_len(h->opcode), len);
}
