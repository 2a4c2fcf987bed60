/*
 * prefetch.c - one ops->mem call for the payloads of several small send
 * WQEs (see xport_prefetch in xport_int.h).
 *
 * When the requester starts a small SEND or WRITE, the small SENDs and
 * WRITEs queued right behind it that name the same lkey, within
 * XPORT_PREFETCH_SPAN bytes of each other, are read with it in one call
 * and their payloads kept in their WQEs (as if posted inline). Every WQE
 * in the SQ was posted before this read (the daemon takes a WQE from the
 * client's ring only after its producer index is published), and a
 * buffer may not change between its post and its completion
 * (ibv_post_send(3)), so the bytes are those a NIC would have read later.
 * The scan stops at a WQE that must see memory as it is when it starts:
 * one with IBV_SEND_FENCE (it waits for earlier READs and atomics, whose
 * results may land in its buffer), and at any READ, atomic or local
 * operation. The read covers the whole span [lowest address, highest end)
 * through the lkey, so it is checked as one range of one MR: a key, PD,
 * bounds or fault error there prefetches nothing, and every WQE then reads
 * its own bytes and gets its own error.
 */
#include "config.h"
#include "emu/xport/xport_int.h"

#include <string.h>

static bool small_copy(const struct xport_swqe *w, uint32_t lkey)
{
	const struct xport_send_wqe *wr = &w->wr;

	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		break;
	default:
		return false;
	}
	return w->err_status == IBV_WC_SUCCESS && !(wr->send_flags & IBV_SEND_INLINE) &&
	       !w->prefetched && wr->num_sge == 1 &&
	       w->length && w->length <= XPORT_MAX_INLINE && wr->sg_list[0].lkey == lkey;
}

void xport_prefetch(struct xport_qp *qp)
{
	uint8_t span[XPORT_PREFETCH_SPAN];
	struct xport_swqe *w = xport_sq_at(qp, qp->sq.req);
	uint32_t lkey = w->wr.sg_list[0].lkey, n = 1;
	uint64_t lo, hi;

	if (!small_copy(w, lkey))
		return;
	lo = w->wr.sg_list[0].addr;
	hi = lo + w->length;
	if (hi < lo)
		return;
	for (uint32_t i = qp->sq.req + 1; i != qp->sq.head && n < XPORT_PREFETCH_WQES; i++) {
		const struct xport_swqe *x = xport_sq_at(qp, i);
		uint64_t a = x->wr.sg_list[0].addr, e = a + x->length;
		uint64_t nlo, nhi;

		if (!small_copy(x, lkey) || (x->wr.send_flags & IBV_SEND_FENCE) || e < a)
			break;
		nlo = a < lo ? a : lo;
		nhi = e > hi ? e : hi;
		if (nhi - nlo > XPORT_PREFETCH_SPAN)
			break;
		lo = nlo;
		hi = nhi;
		n++;
	}
	if (n < 2)
		return;
	if (qp->dev->ops.mem(qp->dev->ctx, qp, qp->pd, false, lkey, lo, span, (uint32_t)(hi - lo), 0,
			     XPORT_MEM_READ) != XPORT_MEM_OK)
		return;
	qp->dev->stats.prefetch_reads++;
	qp->dev->stats.prefetch_wqes += n;
	for (uint32_t i = 0; i < n; i++) {
		struct xport_swqe *x = xport_sq_at(qp, qp->sq.req + i);

		memcpy(x->wr.inline_data, span + (x->wr.sg_list[0].addr - lo), x->length);
		x->prefetched = true;
	}
}
