/*
 * xport_qp.c: per-QP transport state of the engine: the device object and
 * its QPN table, QP create/modify/destroy (applying the attributes the
 * daemon's state machine validated), the send and receive queues the
 * daemon posts into, flushing on ERR, and the small helpers the requester,
 * responder and completer share (gather/scatter through the memory
 * callback, building and transmitting a packet with the netstack).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/xport/xport_int.h"
#include "uroce/abi.h"

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

struct xport_dev *xport_dev_new(const struct xport_ops *ops, void *ctx,
				const union ibv_gid *local_gid,
				uint16_t udp_port, uint32_t port_mtu)
{
	struct xport_dev *dev;

	if (!ops || !ops->now_ns || !ops->mem || !ops->xmit || !ops->complete ||
	    !ops->timer_arm || !local_gid || port_mtu < 256 || port_mtu > 4096 ||
	    (port_mtu & (port_mtu - 1))) {
		errno = EINVAL;
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->ops = *ops;
	dev->ctx = ctx;
	dev->gid = *local_gid;
	dev->udp_port = udp_port;
	dev->port_mtu = port_mtu;
	return dev;
}

void xport_dev_free(struct xport_dev *dev)
{
	free(dev);
}

const struct xport_dev_stats *xport_dev_stats(const struct xport_dev *dev)
{
	return &dev->stats;
}

static struct xport_qp **hash_slot(struct xport_dev *dev, uint32_t qpn)
{
	return &dev->hash[qpn % XPORT_QP_HASH];
}

/* The QP with number QPN on DEV, or NULL. Used by xport_input. */
struct xport_qp *xport_qp_lookup(struct xport_dev *dev, uint32_t qpn)
{
	struct xport_qp *qp;

	for (qp = *hash_slot(dev, qpn); qp; qp = qp->hash_next)
		if (qp->qpn == qpn)
			return qp;
	return NULL;
}

/* Back to the RESET state: nothing outstanding, all sequence state zero. */
static void qp_reset(struct xport_qp *qp)
{
	qp->sq.head = qp->sq.req = qp->sq.comp = 0;
	qp->rq.head = qp->rq.tail = 0;
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->sqd_notify = false;
	qp->state = IBV_QPS_RESET;
	xport_timer_update(qp);
}

struct xport_qp *xport_qp_create(struct xport_dev *dev, enum ibv_qp_type type,
				 uint32_t qpn, uint32_t pd, uint32_t sq_depth,
				 uint32_t rq_depth, bool sq_sig_all, void *user)
{
	struct xport_qp *qp;

	if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* A queue of depth 0 (a receive-only or send-only QP) gets one
	 * slot; the provider refuses posts beyond the capacity it asked for. */
	if (!sq_depth)
		sq_depth = 1;
	if (!rq_depth)
		rq_depth = 1;
	if (!dev || qpn > ROCE_QPN_MASK || sq_depth > 65536 || rq_depth > 65536) {
		errno = EINVAL;
		return NULL;
	}
	if (xport_qp_lookup(dev, qpn)) {
		errno = EEXIST;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->sq.ring = calloc(sq_depth, sizeof(*qp->sq.ring));
	qp->rq.ring = calloc(rq_depth, sizeof(*qp->rq.ring));
	if (!qp->sq.ring || !qp->rq.ring) {
		free(qp->sq.ring);
		free(qp->rq.ring);
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	qp->dev = dev;
	qp->user = user;
	qp->type = type;
	qp->qpn = qpn;
	qp->pd = pd;
	qp->sq_sig_all = sq_sig_all;
	qp->sq.depth = sq_depth;
	qp->rq.depth = rq_depth;
	/* rxe's default until modify_qp sets IBV_QP_PATH_MTU; UD: port MTU. */
	qp->mtu = type == IBV_QPT_UD ? dev->port_mtu : 256;
	qp->sport = roce_qpn_udp_sport(qpn);
	qp->state = IBV_QPS_RESET;
	qp->hash_next = *hash_slot(dev, qpn);
	*hash_slot(dev, qpn) = qp;
	return qp;
}

void xport_qp_destroy(struct xport_qp *qp)
{
	struct xport_qp **pp;

	if (!qp)
		return;
	if (qp->timer_armed)
		qp->dev->ops.timer_arm(qp->dev->ctx, qp, 0);
	for (pp = hash_slot(qp->dev, qp->qpn); *pp; pp = &(*pp)->hash_next) {
		if (*pp == qp) {
			*pp = qp->hash_next;
			break;
		}
	}
	free(qp->sq.ring);
	free(qp->rq.ring);
	free(qp);
}

int xport_qp_attr_check(const struct xport_qp_attr *a, int mask)
{
	if (!a)
		return EINVAL;
	if (((mask & IBV_QP_PATH_MTU) && !xport_mtu_bytes(a->path_mtu)) ||
	    ((mask & IBV_QP_TIMEOUT) && a->timeout > 31) ||
	    ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7) ||
	    ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7) ||
	    ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31) ||
	    ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > ROCE_QPN_MASK) ||
	    ((mask & IBV_QP_RQ_PSN) && a->rq_psn > ROCE_PSN_MASK) ||
	    ((mask & IBV_QP_SQ_PSN) && a->sq_psn > ROCE_PSN_MASK))
		return EINVAL;
	return 0;
}

void xport_qp_attr_from_ibv(const struct ibv_qp_attr *in,
			    struct xport_qp_attr *out)
{
	memset(out, 0, sizeof(*out));
	out->qp_state = in->qp_state;
	out->path_mtu = in->path_mtu;
	out->qkey = in->qkey;
	out->rq_psn = in->rq_psn & ROCE_PSN_MASK;
	out->sq_psn = in->sq_psn & ROCE_PSN_MASK;
	out->dest_qp_num = in->dest_qp_num;
	out->qp_access_flags = in->qp_access_flags;
	out->max_rd_atomic = in->max_rd_atomic;
	out->max_dest_rd_atomic = in->max_dest_rd_atomic;
	out->min_rnr_timer = in->min_rnr_timer;
	out->timeout = in->timeout;
	out->retry_cnt = in->retry_cnt;
	out->rnr_retry = in->rnr_retry;
	out->dgid = in->ah_attr.grh.dgid;
	out->flow_label = in->ah_attr.grh.flow_label;
	out->en_sqd_async_notify = in->en_sqd_async_notify;
}

/* The state part of a modify: side effects of entering NEXT. */
static void qp_enter(struct xport_qp *qp, enum ibv_qp_state next)
{
	enum ibv_qp_state old = qp->state;

	if (next != IBV_QPS_SQD)
		qp->sqd_notify = false;
	switch (next) {
	case IBV_QPS_RESET:
		qp_reset(qp);
		break;
	case IBV_QPS_ERR:
		qp->state = IBV_QPS_ERR;
		if (old != IBV_QPS_ERR)
			xport_flush(qp);
		xport_timer_update(qp);
		break;
	case IBV_QPS_RTS:
		qp->state = IBV_QPS_RTS;
		if (old != IBV_QPS_RTS) {
			qp->comp.retry_left = qp->attr.retry_cnt;
			qp->comp.rnr_left = qp->attr.rnr_retry;
		}
		xport_req_run(qp);
		break;
	case IBV_QPS_SQD:
		qp->state = IBV_QPS_SQD;
		if (old == IBV_QPS_RTS && qp->attr.en_sqd_async_notify) {
			qp->sqd_notify = true;
			xport_comp_check_drained(qp);
		}
		break;
	default:
		qp->state = next;
		break;
	}
}

int xport_qp_modify(struct xport_qp *qp, const struct xport_qp_attr *attr,
		    int mask)
{
	struct xport_qp_attr *q;

	if (!qp || xport_qp_attr_check(attr, mask))
		return EINVAL;
	q = &qp->attr;
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		/* RESET returns the QP to its just-created state (IBTA
		 * 10.3.1): no attribute survives. */
		memset(q, 0, sizeof(*q));
		qp_enter(qp, IBV_QPS_RESET);
		return 0;
	}
	if (mask & IBV_QP_PATH_MTU) {
		q->path_mtu = attr->path_mtu;
		if (qp->type != IBV_QPT_UD)
			qp->mtu = xport_mtu_bytes(attr->path_mtu);
	}
	if (mask & IBV_QP_QKEY)
		q->qkey = attr->qkey;
	if (mask & IBV_QP_ACCESS_FLAGS)
		q->qp_access_flags = attr->qp_access_flags;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		q->timeout = attr->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		q->retry_cnt = qp->comp.retry_left = attr->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		q->rnr_retry = qp->comp.rnr_left = attr->rnr_retry;
	if (mask & IBV_QP_DEST_QPN)
		q->dest_qp_num = attr->dest_qp_num;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		q->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IBV_QP_AV) {
		q->dgid = attr->dgid;
		q->flow_label = attr->flow_label;
	}
	if ((mask & (IBV_QP_AV | IBV_QP_DEST_QPN)) && qp->type != IBV_QPT_UD)
		qp->sport = roce_get_udp_sport(q->flow_label, qp->qpn,
					       q->dest_qp_num);
	if (mask & IBV_QP_RQ_PSN)
		q->rq_psn = qp->resp.epsn = attr->rq_psn;
	if (mask & IBV_QP_SQ_PSN) {
		q->sq_psn = attr->sq_psn;
		/* Only while nothing is outstanding (RTR->RTS, SQD->RTS). */
		if (qp->sq.comp == qp->sq.req)
			qp->req.psn = qp->req.psn_max = qp->comp.psn =
				attr->sq_psn;
	}
	if (mask & IBV_QP_STATE)
		qp_enter(qp, attr->qp_state);
	return 0;
}

void xport_qp_query(const struct xport_qp *qp, struct xport_qp_attr *out)
{
	*out = qp->attr;
	out->qp_state = qp->state;
}

enum ibv_qp_state xport_qp_state(const struct xport_qp *qp)
{
	return qp->state;
}

uint32_t xport_qp_num(const struct xport_qp *qp)
{
	return qp->qpn;
}

uint32_t xport_qp_sq_psn(const struct xport_qp *qp)
{
	return qp->req.psn;
}

uint32_t xport_qp_rq_psn(const struct xport_qp *qp)
{
	return qp->resp.epsn;
}

void *xport_qp_user(const struct xport_qp *qp)
{
	return qp->user;
}

const struct xport_qp_stats *xport_qp_stats(const struct xport_qp *qp)
{
	return &qp->stats;
}

uint64_t xport_sgl_len(const struct ibv_sge *sgl, uint32_t num_sge)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < num_sge; i++)
		n += sgl[i].length;
	return n;
}

int xport_post_send(struct xport_qp *qp, const struct xport_send_wqe *wqe)
{
	struct xport_swqe *w;
	uint64_t len;
	int err;

	if (!qp || !wqe)
		return EINVAL;
	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ||
	    qp->state == IBV_QPS_RTR)
		return EINVAL;
	err = uroce_send_opcode_check(qp->type, wqe->opcode);
	if (err)
		return err;
	if (wqe->send_flags & IBV_SEND_INLINE) {
		if (wqe->inline_len > XPORT_MAX_INLINE ||
		    wqe->opcode == IBV_WR_RDMA_READ)
			return EINVAL;
		len = wqe->inline_len;
	} else {
		if (wqe->num_sge > XPORT_MAX_SGE)
			return EINVAL;
		len = xport_sgl_len(wqe->sg_list, wqe->num_sge);
	}
	if (len > 0x80000000ull)	/* max_msg_sz 2 GiB, like rxe */
		return EINVAL;
	if (qp->sq.head - qp->sq.comp >= qp->sq.depth)
		return ENOMEM;

	w = xport_sq_at(qp, qp->sq.head);
	memset(w, 0, sizeof(*w));
	w->wr = *wqe;
	if (qp->sq_sig_all)
		w->wr.send_flags |= IBV_SEND_SIGNALED;
	w->length = (uint32_t)len;
	w->state = SWQE_POSTED;
	qp->sq.head++;

	if (qp->state == IBV_QPS_ERR) {
		xport_flush(qp);
		return 0;
	}
	xport_req_run(qp);
	return 0;
}

int xport_post_recv(struct xport_qp *qp, const struct xport_recv_wqe *wqe)
{
	if (!qp || !wqe || wqe->num_sge > XPORT_MAX_SGE ||
	    qp->state == IBV_QPS_RESET)
		return EINVAL;
	if (qp->rq.head - qp->rq.tail >= qp->rq.depth)
		return ENOMEM;
	qp->rq.ring[qp->rq.head % qp->rq.depth].wr = *wqe;
	qp->rq.ring[qp->rq.head % qp->rq.depth].err_status = IBV_WC_SUCCESS;
	qp->rq.head++;
	if (qp->state == IBV_QPS_ERR)
		xport_flush(qp);
	return 0;
}

void xport_post_refused(struct xport_qp *qp, bool is_recv, uint32_t wr_index)
{
	struct xport_cqe c = {
		.wr_index = wr_index,
		.qpn = qp->qpn,
		.status = IBV_WC_LOC_QP_OP_ERR,
		.opcode = is_recv ? IBV_WC_RECV : IBV_WC_SEND,
		.is_recv = is_recv,
		.signaled = true,
	};
	bool queued = false;

	if (qp->state != IBV_QPS_RESET) {
		if (!is_recv && qp->sq.head - qp->sq.comp < qp->sq.depth) {
			struct xport_swqe *w = xport_sq_at(qp, qp->sq.head++);

			memset(w, 0, sizeof(*w));
			w->wr.wr_index = wr_index;
			w->wr.send_flags = IBV_SEND_SIGNALED;
			w->err_status = IBV_WC_LOC_QP_OP_ERR;
			queued = true;
		} else if (is_recv && qp->rq.head - qp->rq.tail < qp->rq.depth) {
			struct xport_rwqe *r = &qp->rq.ring[qp->rq.head++ % qp->rq.depth];

			memset(r, 0, sizeof(*r));
			r->wr.wr_index = wr_index;
			r->err_status = IBV_WC_LOC_QP_OP_ERR;
			queued = true;
		}
		xport_log(qp, XPORT_LOG_ERR, "%s WQE %u refused: QP to ERR",
			  is_recv ? "receive" : "send", wr_index);
		if (qp->state == IBV_QPS_ERR) {
			xport_flush(qp);
			if (qp->dev->ops.qp_event)
				qp->dev->ops.qp_event(qp->dev->ctx, qp,
						      IBV_EVENT_QP_FATAL);
		} else {
			xport_qp_fatal(qp, IBV_EVENT_QP_FATAL);
		}
	}
	/* Only a full queue (or RESET) leaves it unqueued: it still
	 * completes after everything older. */
	if (!queued)
		xport_emit(qp, &c);
}

/* wc opcode of a requester completion (roce-wire §4.4). */
static enum ibv_wc_opcode wr_to_wc(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	default:
		return IBV_WC_SEND;
	}
}

const char *xport_wr_opcode_name(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: return "SEND";
	case IBV_WR_SEND_WITH_IMM: return "SEND_WITH_IMM";
	case IBV_WR_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_RDMA_READ: return "RDMA_READ";
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
	qp->dev->ops.complete(qp->dev->ctx, qp, cqe);
}

void xport_comp_wqe(struct xport_qp *qp, struct xport_swqe *w,
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
	if (w->wr.opcode == IBV_WR_RDMA_READ && w->psn_assigned &&
	    qp->req.rd_outstanding)
		qp->req.rd_outstanding--;
	qp->sq.comp++;
	/* Completed before the requester (re)sent it: flushed, or acked
	 * implicitly after a rewind. */
	if ((int32_t)(qp->sq.req - qp->sq.comp) < 0) {
		qp->sq.req = qp->sq.comp;
		qp->req.offset = 0;
	}
	xport_emit(qp, &c);
}

void xport_flush(struct xport_qp *qp)
{
	while (qp->sq.comp != qp->sq.head) {
		struct xport_swqe *w = xport_sq_at(qp, qp->sq.comp);

		xport_comp_wqe(qp, w, w->err_status ? w->err_status :
				      IBV_WC_WR_FLUSH_ERR, 0);
	}
	qp->sq.req = qp->sq.head;
	qp->req.rd_outstanding = 0;
	qp->req.offset = 0;

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
	xport_timer_update(qp);
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

enum xport_mem_status xport_gather(struct xport_qp *qp,
				   const struct xport_send_wqe *wr,
				   uint32_t offset, void *buf, uint32_t len)
{
	if (wr->send_flags & IBV_SEND_INLINE) {
		if ((uint64_t)offset + len > wr->inline_len)
			return XPORT_MEM_BOUNDS;
		memcpy(buf, wr->inline_data + offset, len);
		return XPORT_MEM_OK;
	}
	return sge_copy(qp, wr->sg_list, wr->num_sge, offset, buf, len, XPORT_MEM_READ);
}

enum xport_mem_status xport_scatter(struct xport_qp *qp,
				    const struct ibv_sge *sgl, uint32_t num_sge,
				    uint32_t offset, const void *buf,
				    uint32_t len)
{
	/* the memory callback only reads buf for a write */
	return sge_copy(qp, sgl, num_sge, offset, (uint8_t *)buf, len, XPORT_MEM_WRITE);
}

int xport_send_pkt(struct xport_qp *qp, const union ibv_gid *dgid,
		   struct roce_hdrs *h, const void *payload, uint32_t len)
{
	uint8_t buf[XPORT_PKT_MAX];
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
	err = roce_build_udp(buf, sizeof(buf), &l3, h, payload, len, &n);
	if (err)
		return EINVAL;
	qp->stats.tx_pkts++;
	return qp->dev->ops.xmit(qp->dev->ctx, qp, dgid, qp->sport, buf, n);
}
