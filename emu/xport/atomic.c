/*
 * atomic.c: the responder's atomics and its READ/atomic resources.
 *
 * CMP_SWAP and FETCH_ADD (IBTA 9.4.5) act on one 8-byte word, host byte
 * order, at an 8-byte aligned VA; a misaligned VA is NAK Invalid Request
 * (mlx5 reports IBV_WC_REM_INV_REQ_ERR; rxe the same NAK). The word is
 * read and written through ops->mem with IBV_ACCESS_REMOTE_ATOMIC; one
 * device is single-threaded, so no other atomic of the device can run
 * between the read and the write (IBV_ATOMIC_HCA; docs/transport.md says
 * what this does not cover). The original value is saved in the replay
 * cache (struct xport_rd_res, shared with READ): a duplicate atomic, the
 * requester's retry after a lost ATOMIC Acknowledge, is answered from it
 * and never executed again (IBTA 9.7.5.1.3).
 *
 * Responder resources (max_dest_rd_atomic, ibv_modify_qp(3)): a new READ
 * or atomic holds one from its arrival until its response has been sent.
 * One that arrives while max_dest_rd_atomic are held (always, if it is 0)
 * is NAK Invalid Request (IBTA 9.7.5.2.4; rxe the same for 0).
 */
#include "config.h"

#include <string.h>

#include "emu/xport/xport_int.h"

static bool is_rd_atomic_op(uint8_t opcode)
{
	return opcode == ROCE_OP_RC_READ_REQUEST || opcode == ROCE_OP_RC_CMP_SWAP ||
	       opcode == ROCE_OP_RC_FETCH_ADD || xport_is_flush_aw_op(opcode);
}

enum xport_atomic_status xport_atomic_execute(struct xport_qp *qp,
					      const struct roce_pkt *pkt)
{
	const struct xport_ops *ops = &qp->dev->ops;
	uint64_t va = pkt->h.atomic.va, orig, val;
	uint32_t rkey = pkt->h.atomic.rkey;
	struct xport_rd_res *r;

	if (xport_is_flush_aw_op(pkt->h.opcode))
		return xport_flush_aw_execute(qp, pkt);
	if (va & 7)
		return XPORT_ATOMIC_INVALID;
	if (ops->mem(qp->dev->ctx, qp, qp->pd, true, rkey, va, &orig, 8,
		     IBV_ACCESS_REMOTE_ATOMIC, XPORT_MEM_READ))
		return XPORT_ATOMIC_ACCESS;
	if (pkt->h.opcode == ROCE_OP_RC_FETCH_ADD)
		val = orig + pkt->h.atomic.swap_add;	/* wraps mod 2^64 */
	else
		val = orig == pkt->h.atomic.compare ? pkt->h.atomic.swap_add :
						      orig;
	if (val != orig &&
	    ops->mem(qp->dev->ctx, qp, qp->pd, true, rkey, va, &val, 8,
		     IBV_ACCESS_REMOTE_ATOMIC, XPORT_MEM_WRITE))
		return XPORT_ATOMIC_ACCESS;

	r = &qp->resp.rd[qp->resp.rd_next++ % XPORT_RD_RESOURCES];
	memset(r, 0, sizeof(*r));
	r->valid = true;
	r->atomic = true;
	r->first_psn = r->last_psn = pkt->h.psn;
	r->va = va;
	r->rkey = rkey;
	r->len = 8;
	r->orig = orig;
	qp->resp.msn = (qp->resp.msn + 1) & ROCE_AETH_MSN_MASK;
	qp->resp.epsn = roce_psn_add(qp->resp.epsn, 1);
	xport_send_atomic_ack(qp, pkt->h.psn, orig);
	return XPORT_ATOMIC_OK;
}

bool xport_atomic_replay(struct xport_qp *qp, const struct roce_pkt *pkt)
{
	if (xport_is_flush_aw_op(pkt->h.opcode))
		return xport_flush_aw_replay(qp, pkt);
	for (unsigned i = 0; i < XPORT_RD_RESOURCES; i++) {
		const struct xport_rd_res *r = &qp->resp.rd[i];

		/* The retry is the same request: same PSN, VA and R_Key. */
		if (r->valid && r->atomic && r->len == 8 && r->first_psn == pkt->h.psn &&
		    r->va == pkt->h.atomic.va && r->rkey == pkt->h.atomic.rkey) {
			xport_log(qp, XPORT_LOG_INFO,
				  "PSN 0x%06x duplicate %s: original value replayed",
				  pkt->h.psn, pkt->op->name);
			xport_send_atomic_ack(qp, pkt->h.psn, r->orig);
			return true;
		}
	}
	return false;
}

uint32_t xport_rd_atomic_held(const struct xport_qp *qp)
{
	uint32_t n = 0;

	for (uint32_t i = qp->resp.job_head; i != qp->resp.job_tail; i++)
		n += !qp->resp.job[i % XPORT_RD_JOBS].replay;
	for (const struct xport_queued_pkt *q = qp->rxq; q; q = q->next)
		n += q->rd_new;
	return n;
}

bool xport_rd_atomic_room(const struct xport_qp *qp)
{
	return qp->resp.rd_held < qp->attr.max_dest_rd_atomic;
}

bool xport_rd_atomic_arrival(struct xport_qp *qp, const uint8_t *raw,
			     size_t len)
{
	uint32_t psn, span = 1;
	bool rd_atomic, fresh;
	uint8_t opcode;
	size_t dl;

	if (len < ROCE_BTH_LEN)
		return false;
	opcode = xport_rc_opcode(raw[0]);
	rd_atomic = is_rd_atomic_op(opcode);
	psn = ((uint32_t)raw[9] << 16 | (uint32_t)raw[10] << 8 | raw[11]) &
	      ROCE_PSN_MASK;
	/* RETH DMA length: after the XRCETH in an XRC request */
	dl = ROCE_BTH_LEN + 12u + (opcode != raw[0] ? ROCE_XRCETH_LEN : 0u);
	if (opcode == ROCE_OP_RC_READ_REQUEST && len >= dl + 4)
		span = xport_npkts((uint32_t)raw[dl] << 24 | (uint32_t)raw[dl + 1] << 16 |
				   (uint32_t)raw[dl + 2] << 8 | raw[dl + 3], qp->mtu);
	/* Nothing queued: the responder has seen everything before ePSN. */
	if (!qp->rxq || roce_psn_before(qp->resp.rx_next, qp->resp.epsn))
		qp->resp.rx_next = qp->resp.epsn;
	fresh = !roce_psn_before(psn, qp->resp.rx_next);
	if (fresh)
		qp->resp.rx_next = roce_psn_add(psn, span);
	return rd_atomic && fresh;
}
