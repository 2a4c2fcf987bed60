/*
 * raw_rq.c - the receive queue of a raw packet QP: new receive WQEs copied
 * from the QP's ring (abi_ring.h), at its doorbell and, as a NIC reads its
 * RQ when a packet arrives, whenever a frame finds the copied ones used up
 * (the application may post and make a peer send before its own doorbell
 * was served).
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/log.h"
#include "emu/nic/wqe_reader.h"

/* A refused receive WQE N: flushed, the QP to ERR (IBV_EVENT_QP_FATAL). */
static void refuse(struct ctl_qp *qp, uint32_t n, const char *why)
{
	ulog_limited(ULOG_LIMIT_REFUSED, ULOG_WARN, "client#%u raw qpn 0x%x: receive WQE %u refused (%s)",
		     qp->owner->id, qp->qpn, n, why);
	raw_flush_one(qp, true, n, 0);
	raw_qp_fatal(qp);
	qp->owner->db_lies++;
}

bool raw_rq_refill(struct ctl_qp *qp)
{
	struct uroce_qp_ring_hdr *h = qp->ring;
	struct raw_qp *r = qp->raw;
	uint32_t pi, flushed = 0;

	if (!h || !qp->cap.max_recv_wr)
		return false;
	pi = __atomic_load_n(&h->rq_pi, __ATOMIC_ACQUIRE);
	if (pi - qp->rq_next > qp->cap.max_recv_wr) {
		refuse(qp, qp->rq_next, "producer index beyond the queue's depth");
		qp->rq_next = pi;
		return false;
	}
	while (qp->rq_next != pi && r->rq_head - r->rq_tail < qp->cap.max_recv_wr) {
		struct xport_recv_wqe w;
		uint32_t n;

		if (r->state == IBV_QPS_ERR && flushed == RAW_RQ_FLUSH_BATCH)
			return true;
		n = qp->rq_next++;
		if (wqe_read_recv(qp, n, &w)) {
			refuse(qp, n, "malformed");
			flushed++;
			continue;
		}
		if (r->state == IBV_QPS_ERR) {
			raw_flush_one(qp, true, n, 0);
			qp->owner->db_lies++;
			flushed++;
			continue;
		}
		r->rq[r->rq_head++ & (qp->cap.max_recv_wr - 1)] = w;
		qp->owner->db_work++;
	}
	return false;
}
