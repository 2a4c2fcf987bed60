/*
 * tm.c: tag matching on a tag-matching SRQ (the mlx5 TM-SRQ; ibv_post_srq_ops(3),
 * docs/tag-matching.md). The SRQ keeps a list of tags posted by TAG_ADD;
 * the first packet of a SEND on a QP using the SRQ starts with a TMH
 * (struct ibv_tmh, <infiniband/tm_types.h>), whose tag is matched against
 * the list in posting order. A matched EAGER message lands, TMH stripped,
 * in the tag's buffer; an unmatched one, and a NO_TAG one, takes an
 * ordinary SRQ WQE whole. Every unexpected message counts; while software
 * has not acknowledged all of them (TAG_SYNC / IBV_OPS_TM_SYNC) no tag
 * matches, as on a ConnectX: software may have matched them against tags
 * it holds itself.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/tm_types.h>

#include "emu/xport/xport_int.h"
#include "uroce/abi.h"

#define TMH_LEN 16
#define RVH_LEN 16
/* SQ slots a QP on a tag-matching SRQ gets for the rendezvous READs and
 * FIN SENDs the device posts itself (mlx5: the TM-SRQ owns the QP's SQ). */
#define TM_SQ_EXTRA 64

struct xport_tm_entry {
	bool valid;
	uint64_t seq;		/* posting order */
	uint64_t tag, mask;
	struct ibv_sge sge;
};

struct xport_tm {
	uint32_t nent;
	struct xport_tm_entry *e;
	uint64_t seq;
	uint16_t hw_cnt;	/* unexpected messages seen */
	uint16_t sw_cnt;	/* ... and acknowledged by software */
};

int xport_srq_set_tm(struct xport_srq *srq, uint32_t nent)
{
	if (!srq || srq->tm || srq->xrc || !nent)
		return EINVAL;
	srq->tm = calloc(1, sizeof(*srq->tm));
	if (!srq->tm)
		return ENOMEM;
	srq->tm->e = calloc(nent, sizeof(*srq->tm->e));
	if (!srq->tm->e) {
		free(srq->tm);
		srq->tm = NULL;
		return ENOMEM;
	}
	srq->tm->nent = nent;
	return 0;
}

void xport_tm_free(struct xport_srq *srq)
{
	if (!srq->tm)
		return;
	free(srq->tm->e);
	free(srq->tm);
	srq->tm = NULL;
}

int xport_tm_op(struct xport_srq *srq, const struct xport_tm_op *op, bool *success,
		uint16_t *hw_cnt)
{
	struct xport_tm *tm = srq ? srq->tm : NULL;
	struct xport_tm_entry *e;

	if (!tm)
		return EINVAL;
	/* software cannot have handled more unexpected messages than arrived */
	if (op->sync && (uint16_t)(tm->hw_cnt - op->sw_cnt) >= 0x8000)
		return EINVAL;
	if (op->opcode != IBV_WR_TAG_SYNC && op->index >= tm->nent)
		return EINVAL;
	*success = true;
	switch (op->opcode) {
	case IBV_WR_TAG_ADD:
		e = &tm->e[op->index];
		if (e->valid)
			return EINVAL;
		e->valid = true;
		e->seq = tm->seq++;
		e->tag = op->tag;
		e->mask = op->mask;
		e->sge = op->sge;
		break;
	case IBV_WR_TAG_DEL:
		e = &tm->e[op->index];
		*success = e->valid;
		e->valid = false;
		break;
	case IBV_WR_TAG_SYNC:
		break;
	default:
		return EINVAL;
	}
	if (op->sync)
		tm->sw_cnt = op->sw_cnt;
	*hw_cnt = tm->hw_cnt;
	return 0;
}

/* The oldest listed entry whose tag matches TAG under the entry's mask, or
 * -1. mlx5's rule (ibv_post_srq_ops(3)): (tag & mask) == (entry tag & mask). */
static int tm_find(const struct xport_tm *tm, uint64_t tag)
{
	int best = -1;

	for (uint32_t i = 0; i < tm->nent; i++) {
		const struct xport_tm_entry *e = &tm->e[i];

		if (!e->valid || ((tag ^ e->tag) & e->mask))
			continue;
		if (best < 0 || e->seq < tm->e[best].seq)
			best = (int)i;
	}
	return best;
}

/* What QP's current message matched: all zero for a QP that never
 * received on a TM SRQ (most QPs: the struct is made on first use). */
static const struct xport_tm_rx tm_none;

static const struct xport_tm_rx *tm_rx(const struct xport_qp *qp)
{
	return qp->resp.tm ? qp->resp.tm : &tm_none;
}

static bool tm_take(struct xport_qp *qp, const struct roce_pkt *pkt)
{
	struct xport_tm *tm = qp->srq->tm;
	struct xport_tm_rx *rx;
	uint8_t op;
	uint64_t tag;
	int i;

	if (!qp->resp.tm && !(qp->resp.tm = calloc(1, sizeof(*qp->resp.tm))))
		return false; /* as with no WQE: the requester retries (RNR) */
	rx = qp->resp.tm;
	memset(rx, 0, sizeof(*rx));
	if (pkt->payload_len < TMH_LEN)
		goto plain;
	memcpy(rx->tmh, pkt->payload, TMH_LEN);
	op = rx->tmh[0];
	memcpy(&tag, rx->tmh + 8, 8);
	tag = be64toh(tag);
	if (op == IBV_TMH_NO_TAG) {
		rx->app_op = UROCE_TM_APP_OP_NO_TAG;
		goto wqe;
	}
	if (op != IBV_TMH_EAGER && op != IBV_TMH_RNDV)
		goto plain;
	i = tm->hw_cnt == tm->sw_cnt ? tm_find(tm, tag) : -1;
	if (i < 0 || (op == IBV_TMH_RNDV && pkt->payload_len < TMH_LEN + RVH_LEN)) {
		tm->hw_cnt++;
		rx->app_op = UROCE_TM_APP_OP_UNEXPECTED;
		goto wqe;
	}
	tm->e[i].valid = false;
	rx->index = (uint16_t)i;
	memset(&qp->resp.rwqe, 0, sizeof(qp->resp.rwqe));
	qp->resp.rwqe.wr_index = (uint32_t)i;
	if (op == IBV_TMH_RNDV) {
		/* nothing of the request is placed: the data comes by READ */
		rx->app_op = UROCE_TM_APP_OP_CONSUMED;
		rx->skip = UINT32_MAX;
		memcpy(rx->rvh, pkt->payload + TMH_LEN, RVH_LEN);
		rx->sge = tm->e[i].sge;
		return true;
	}
	rx->app_op = UROCE_TM_APP_OP_CONSUMED_MSG;
	rx->skip = TMH_LEN;
	qp->resp.rwqe.num_sge = tm->e[i].sge.length ? 1 : 0;
	qp->resp.rwqe.sg_list[0] = tm->e[i].sge;
	return true;
plain:
	memset(rx, 0, sizeof(*rx));
wqe:
	if (xport_rq_take(qp, &qp->resp.rwqe))
		return true;
	/* no WQE: the message comes again (RNR); it is not counted twice */
	if (rx->app_op == UROCE_TM_APP_OP_UNEXPECTED)
		tm->hw_cnt--;
	memset(rx, 0, sizeof(*rx));
	return false;
}

bool xport_rwqe_take(struct xport_qp *qp, const struct roce_pkt *pkt, bool is_send)
{
	if (is_send && qp->srq && qp->srq->tm)
		return tm_take(qp, pkt);
	return xport_rq_take(qp, &qp->resp.rwqe);
}

uint32_t xport_tm_unplaced(const struct xport_qp *qp, uint32_t n)
{
	return tm_rx(qp)->skip < n ? tm_rx(qp)->skip : n;
}

enum xport_mem_status xport_recv_place(struct xport_qp *qp, const uint8_t *payload, uint32_t *n)
{
	uint32_t s = xport_tm_unplaced(qp, *n);

	if (s)
		qp->resp.tm->skip -= s;
	*n -= s;
	if (!*n)
		return XPORT_MEM_OK;
	return xport_scatter(qp, qp->resp.rwqe.sg_list, qp->resp.rwqe.num_sge, qp->resp.recv_len,
			     payload + s, *n);
}

static void tm_rndv(struct xport_qp *qp);

void xport_tm_emit(struct xport_qp *qp, struct xport_cqe *c)
{
	struct xport_tm_rx *rx = qp->resp.tm;

	if (!rx) {
		xport_emit(qp, c);
		return;
	}
	c->tm_app_op = rx->app_op;
	c->tm_app_info = rx->index;
	if (rx->app_op == UROCE_TM_APP_OP_CONSUMED_MSG || rx->app_op == UROCE_TM_APP_OP_CONSUMED)
		memcpy(c->tmh, rx->tmh, sizeof(c->tmh));
	/* a rendezvous keeps rx for its READ, which follows the CQE */
	if (rx->app_op != UROCE_TM_APP_OP_CONSUMED || c->status != IBV_WC_SUCCESS)
		memset(rx, 0, sizeof(*rx));
	xport_emit(qp, c);
	tm_rndv(qp);
}

/* Posts an SQ WQE of the device's own (XPORT_SEND_TM) of LEN bytes: false
 * when the QP cannot send or its SQ is full. The requester sends it at the
 * end of the current entry point; its completion goes to
 * xport_tm_sq_done, never to the application. */
static bool tm_post(struct xport_qp *qp, const struct xport_send_wqe *wqe, uint32_t len)
{
	struct xport_swqe *w;

	if (qp->state != IBV_QPS_RTS || qp->sq.head - qp->sq.comp >= qp->sq.depth)
		return false;
	w = xport_sq_at(qp, qp->sq.head);
	memset(w, 0, sizeof(*w));
	w->wr = *wqe;
	w->length = len;
	w->state = SWQE_POSTED;
	w->tag = ++qp->dev->read_tag;
	qp->sq.head++;
	xport_mark(qp, XPORT_WORK_REQ);
	return true;
}

/* The second completion of a rendezvous at list entry INDEX: DATA_VALID
 * (app_op EXPECTED), or STATUS when the READ failed. */
static void tm_rndv_done(struct xport_qp *qp, uint32_t index, uint32_t len,
			 enum ibv_wc_status status)
{
	struct xport_cqe c = {
		.wr_index = index,
		.qpn = qp->qpn,
		.src_qp = qp->attr.dest_qp_num,
		.byte_len = len,
		.status = status,
		.opcode = IBV_WC_RECV,
		.is_recv = true,
		.signaled = true,
		.tm_app_op = UROCE_TM_APP_OP_EXPECTED,
		.tm_app_info = (uint16_t)index,
	};

	xport_emit(qp, &c);
}

/* After the first CQE of a matched rendezvous, the READ of its data into
 * the tag's buffer (a failure completes the tag at once). */
static void tm_rndv(struct xport_qp *qp)
{
	struct xport_tm_rx *rx = qp->resp.tm;
	struct xport_send_wqe r;
	uint64_t va;
	uint32_t rkey, len;

	if (!rx || rx->app_op != UROCE_TM_APP_OP_CONSUMED)
		return;
	memcpy(&va, rx->rvh, 8);
	memcpy(&rkey, rx->rvh + 8, 4);
	memcpy(&len, rx->rvh + 12, 4);
	len = be32toh(len);
	memset(&r, 0, sizeof(r));
	r.opcode = IBV_WR_RDMA_READ;
	r.send_flags = XPORT_SEND_TM | IBV_SEND_SIGNALED;
	r.wr_index = rx->index;
	r.remote_addr = be64toh(va);
	r.rkey = be32toh(rkey);
	r.num_sge = len ? 1 : 0;
	r.sg_list[0] = rx->sge;
	r.sg_list[0].length = len;
	/* the FIN to send once the data is in: the request's TMH and RVH,
	 * opcode FIN (docs/tag-matching.md, from rdma-core's tag-matching documentation) */
	memcpy(r.inline_data, rx->tmh, TMH_LEN);
	memcpy(r.inline_data + TMH_LEN, rx->rvh, RVH_LEN);
	r.inline_data[0] = IBV_TMH_FIN;
	r.inline_len = TMH_LEN + RVH_LEN;
	/* data longer than the tag's buffer: nothing read, no FIN */
	if (len > rx->sge.length) {
		memset(rx, 0, sizeof(*rx));
		tm_rndv_done(qp, r.wr_index, 0, IBV_WC_LOC_LEN_ERR);
		return;
	}
	memset(rx, 0, sizeof(*rx));
	if (!tm_post(qp, &r, len))
		tm_rndv_done(qp, r.wr_index, 0, IBV_WC_LOC_QP_OP_ERR);
}

void xport_tm_sq_done(struct xport_qp *qp, const struct xport_send_wqe *wqe, uint32_t byte_len,
		      enum ibv_wc_status status)
{
	struct xport_send_wqe fin;

	if (wqe->opcode != IBV_WR_RDMA_READ)
		return;	/* the FIN: nothing to report */
	fin = *wqe;
	tm_rndv_done(qp, wqe->wr_index, byte_len, status);
	if (status != IBV_WC_SUCCESS)
		return;
	fin.opcode = IBV_WR_SEND;
	fin.send_flags = XPORT_SEND_TM | IBV_SEND_INLINE;
	fin.num_sge = 0;
	tm_post(qp, &fin, fin.inline_len);
}

int xport_tm_qp_attach(struct xport_qp *qp)
{
	struct xport_swqe *ring;

	if (!qp->srq->tm)
		return 0;
	/* tag matching is defined for RC (docs/tag-matching.md, from rdma-core's tag-matching documentation) */
	if (qp->type != IBV_QPT_RC)
		return EINVAL;
	ring = calloc(qp->sq.depth + TM_SQ_EXTRA, sizeof(*ring));
	if (!ring)
		return ENOMEM;
	free(qp->sq.ring);
	qp->sq.ring = ring;
	qp->sq.depth += TM_SQ_EXTRA;
	return 0;
}

bool xport_tm_give_back(struct xport_qp *qp)
{
	struct xport_tm_rx *rx = qp->resp.tm;
	bool matched;

	if (!rx)
		return false;
	matched = rx->app_op == UROCE_TM_APP_OP_CONSUMED_MSG;

	if (matched && qp->srq && qp->srq->tm)
		qp->srq->tm->e[rx->index].valid = true;
	if (rx->app_op == UROCE_TM_APP_OP_UNEXPECTED && qp->srq && qp->srq->tm)
		qp->srq->tm->hw_cnt--;
	memset(rx, 0, sizeof(*rx));
	return matched;
}
