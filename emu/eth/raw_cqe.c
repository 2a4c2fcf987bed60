/*
 * raw_cqe.c - the completions of raw packet QPs (see eth_int.h): the CQE
 * written as mlx5 writes it (docs/cqe-format.md §6), flushes, and the QP's
 * own move to ERR.
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/async_event.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/log.h"
#include "emu/nic/cq_ring.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_access.h"
#include "emu/nic/mem_wb.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

/* Writes one CQE of QP (send or receive CQ); a full CQ loses it (logged,
 * the CQ is in error: cq_push). */
void raw_cqe(struct ctl_qp *qp, const struct xport_cqe *c, const struct mlx5_cqe64 *extra)
{
	raw_cqe_stride(qp, c, extra, true);
}

void raw_cqe_stride(struct ctl_qp *qp, const struct xport_cqe *c, const struct mlx5_cqe64 *extra, bool retire)
{
	struct uroce_dev *d = qp->owner->dev;
	struct uroce_qp_ring_hdr *h = qp->ring;
	struct mlx5_cqe64 cqe;
	int rc;

	/* a striding WQE stays the application's until its last stride is used */
	__atomic_store_n(c->is_recv ? &h->rq_ci : &h->sq_ci, c->wr_index + (retire ? 1 : 0), __ATOMIC_RELEASE);
	if (!c->signaled && c->status == IBV_WC_SUCCESS)
		return;
	cqe_build(c, hca_clock_now(&d->clock), false, &cqe);
	if (extra) {
		/* a raw receive: no GRH, the frame's L3/L4 result instead */
		cqe.flags_rqpn = 0;
		cqe.hds_ip_ext = extra->hds_ip_ext;
		cqe.l4_hdr_type_etc = extra->l4_hdr_type_etc;
		cqe.vlan_info = extra->vlan_info;
		if (extra->srqn_uidx) {
			cqe.sop_drop_qpn = extra->sop_drop_qpn;
			cqe.srqn_uidx = extra->srqn_uidx;
		}
		if (qp->raw->log_num_strides) {
			/* striding RQ (docs/cqe-format.md §7): byte_cnt packs the
			 * length, the strides used and the filler bit; wqe_counter
			 * the first stride; wqe_id the WQE */
			cqe.byte_cnt = extra->byte_cnt;
			cqe.wqe_counter = extra->wqe_counter;
			cqe.wqe_id = extra->wqe_id;
		}
	}
	rc = cq_push(c->is_recv ? qp->recv_cq : qp->send_cq, &cqe);
	if (rc && ulog_limit_due(ULOG_LIMIT_CQ_LOST, ULOG_WARN))
		ulog_limited(ULOG_LIMIT_CQ_LOST, ULOG_WARN, "client#%u qpn 0x%x: completion lost: %s",
			     qp->owner->id, qp->qpn, strerror(rc));
}

void raw_flush_one(struct ctl_qp *qp, bool is_recv, uint32_t n, enum ibv_wr_opcode op)
{
	struct xport_cqe c = {
		.wr_index = n, .qpn = qp->qpn, .status = IBV_WC_WR_FLUSH_ERR, .is_recv = is_recv,
		.opcode = is_recv ? IBV_WC_RECV : IBV_WC_SEND, .wr_opcode = op, .signaled = true,
	};

	raw_cqe(qp, &c, NULL);
}

/* ERR: every receive WQE held completes with WR_FLUSH_ERR. */
void raw_flush_rq(struct ctl_qp *qp)
{
	struct raw_qp *r = qp->raw;

	while (r->rq_tail != r->rq_head) {
		raw_flush_one(qp, true, r->rq[r->rq_tail & (qp->cap.max_recv_wr - 1)].wr_index, 0);
		r->rq_tail++;
	}
}

/* The QP moves to ERR on its own (a WQE failed): IBV_EVENT_QP_FATAL. */
void raw_qp_fatal(struct ctl_qp *qp)
{
	/* one IBV_EVENT_QP_FATAL, at the move to ERR (as the RC path) */
	if (qp->raw->state == IBV_QPS_ERR)
		return;
	qp->raw->state = IBV_QPS_ERR;
	raw_flush_rq(qp);
	if (!client_async_event(qp->owner, qp->user_handle, IBV_EVENT_QP_FATAL))
		qp->async_events++;
}

