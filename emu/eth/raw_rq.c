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

void raw_rq_refill(struct ctl_qp *qp)
{
	struct uroce_qp_ring_hdr *h = qp->ring;
	struct raw_qp *r = qp->raw;
	uint32_t pi;

	if (!h || !qp->cap.max_recv_wr)
		return;
	pi = __atomic_load_n(&h->rq_pi, __ATOMIC_ACQUIRE);
	while (qp->rq_next != pi && r->rq_head - r->rq_tail < qp->cap.max_recv_wr) {
		struct xport_recv_wqe w;
		uint32_t n = qp->rq_next++;

		if (wqe_read_recv(qp, n, &w)) {
			ulog_limited(ULOG_LIMIT_REFUSED, ULOG_WARN, "client#%u raw qpn 0x%x: receive WQE %u refused",
				     qp->owner->id, qp->qpn, n);
			raw_flush_one(qp, true, n, 0);
			raw_qp_fatal(qp);
			continue;
		}
		if (r->state == IBV_QPS_ERR) {
			raw_flush_one(qp, true, n, 0);
			continue;
		}
		r->rq[r->rq_head++ & (qp->cap.max_recv_wr - 1)] = w;
	}
}
