/*
 * flush_aw.c - the responder's IBTA 1.5 ATOMIC WRITE (0x1D) and FLUSH
 * (0x1C) requests of an RC QP, called by resp.c through atomic.c.
 *
 * Both take one PSN and a responder resource and are answered, like a
 * zero-byte READ, by an empty RDMA READ Response Only carrying an ACK
 * AETH (the kernel's rxe_resp.c, acknowledge(); IBTA 1.5 oA19). A
 * duplicate gets the same empty response again. Access rules as rxe
 * (rxe_resp.c check_qp_attr_access, check_rkey): ATOMIC WRITE needs
 * REMOTE_WRITE on the QP and the MR, an 8-byte aligned VA and a DMA length
 * of 8; FLUSH needs, for each placement type bit it names, the matching
 * IBV_ACCESS_FLUSH_* bit on the QP and on the MR (selectivity level MR:
 * the R_Key and its rights only; RANGE: [VA, VA + DMA length) inside it).
 */
#include "config.h"

#include <string.h>

#include "emu/xport/xport_int.h"

#define FLUSH_PLT_GLOBAL 1u	/* IBV_FLUSH_GLOBAL, FETH placement type bit 0 */
#define FLUSH_PLT_PERSISTENT 2u	/* IBV_FLUSH_PERSISTENT, bit 1 */
#define FLUSH_SEL_MR 1u		/* IBV_FLUSH_MR; 0 is IBV_FLUSH_RANGE */
#define ACCESS_FLUSH_GLOBAL (1u << 8)	  /* IBV_ACCESS_FLUSH_GLOBAL, rdma-core >= 45 */
#define ACCESS_FLUSH_PERSISTENT (1u << 9) /* IBV_ACCESS_FLUSH_PERSISTENT */

bool xport_is_flush_aw_op(uint8_t opcode)
{
	return opcode == ROCE_OP_RC_FLUSH || opcode == ROCE_OP_RC_ATOMIC_WRITE;
}

/* The IBV_ACCESS_FLUSH_* bits placement type PLT asks for, 0 if PLT names
 * no type or a reserved one. */
static unsigned int flush_access(uint8_t plt)
{
	if (!plt || (plt & ~(FLUSH_PLT_GLOBAL | FLUSH_PLT_PERSISTENT)))
		return 0;
	return (plt & FLUSH_PLT_GLOBAL ? ACCESS_FLUSH_GLOBAL : 0) |
	       (plt & FLUSH_PLT_PERSISTENT ? ACCESS_FLUSH_PERSISTENT : 0);
}

bool xport_flush_aw_valid(const struct xport_qp *qp, const struct roce_pkt *pkt)
{
	unsigned int acc = qp->attr.qp_access_flags, need;

	if (qp->type != IBV_QPT_RC)
		return false;
	if (pkt->h.opcode == ROCE_OP_RC_ATOMIC_WRITE)
		return acc & IBV_ACCESS_REMOTE_WRITE;
	if (pkt->h.opcode != ROCE_OP_RC_FLUSH || pkt->h.feth.sel > FLUSH_SEL_MR)
		return false;
	need = flush_access(pkt->h.feth.plt);
	return need && (acc & need) == need;
}

/* The empty READ Response Only that answers PSN. */
static void send_empty_read_resp(struct xport_qp *qp, uint32_t psn)
{
	uint8_t pkt[XPORT_PKT_MAX];
	struct roce_hdrs h;

	memset(&h, 0, sizeof(h));
	h.opcode = ROCE_OP_RC_READ_RESP_ONLY;
	h.dqpn = qp->attr.dest_qp_num;
	h.psn = psn;
	h.aeth.syndrome = ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID);
	h.aeth.msn = qp->resp.msn;
	xport_send_in(qp, &qp->attr.dgid, &h, pkt, 0);
}

/* Check and carry out PKT's request; XPORT_ATOMIC_OK when done. */
static enum xport_atomic_status flush_aw_do(struct xport_qp *qp, const struct roce_pkt *pkt)
{
	const struct xport_ops *ops = &qp->dev->ops;
	uint64_t va = pkt->h.reth.va;
	uint32_t rkey = pkt->h.reth.rkey, len = pkt->h.reth.dma_len;

	if (pkt->h.opcode == ROCE_OP_RC_ATOMIC_WRITE) {
		/* the payload length is 8 (the codec's fixed_payload) */
		if ((va & 7) || len != 8 || pkt->payload_len != 8)
			return XPORT_ATOMIC_INVALID;
		/* the 8 aligned bytes as they were sent, in one write through
		 * the memory path the atomics' results take */
		if (ops->mem(qp->dev->ctx, qp, qp->pd, true, rkey, va, (void *)pkt->payload, 8,
			     IBV_ACCESS_REMOTE_WRITE, XPORT_MEM_WRITE))
			return XPORT_ATOMIC_ACCESS;
	} else {
		if (pkt->h.feth.sel == FLUSH_SEL_MR)
			len = 0;	/* the whole MR: its key and rights */
		if (ops->mem(qp->dev->ctx, qp, qp->pd, true, rkey, va, NULL, len,
			     flush_access(pkt->h.feth.plt), XPORT_MEM_CHECK))
			return XPORT_ATOMIC_ACCESS;
	}
	/* Every write accepted before (WRITEs of earlier PSNs, this ATOMIC
	 * WRITE) is in the target's memory before the response says so. */
	if (xport_mem_sync(qp))
		return XPORT_ATOMIC_ACCESS;
	return XPORT_ATOMIC_OK;
}

enum xport_atomic_status xport_flush_aw_execute(struct xport_qp *qp, const struct roce_pkt *pkt)
{
	enum xport_atomic_status st = flush_aw_do(qp, pkt);
	struct xport_rd_res *r;

	if (st != XPORT_ATOMIC_OK)
		return st;
	/* the replay cache: an atomic-kind resource of length 0 */
	r = &qp->resp.rd[qp->resp.rd_next++ % XPORT_RD_RESOURCES];
	memset(r, 0, sizeof(*r));
	r->valid = true;
	r->atomic = true;
	r->first_psn = r->last_psn = pkt->h.psn;
	r->va = pkt->h.reth.va;
	r->rkey = pkt->h.reth.rkey;
	r->len = 0;
	qp->resp.msn = (qp->resp.msn + 1) & ROCE_AETH_MSN_MASK;
	qp->resp.epsn = roce_psn_add(qp->resp.epsn, 1);
	send_empty_read_resp(qp, pkt->h.psn);
	return XPORT_ATOMIC_OK;
}

bool xport_flush_aw_replay(struct xport_qp *qp, const struct roce_pkt *pkt)
{
	for (unsigned i = 0; i < XPORT_RD_RESOURCES; i++) {
		const struct xport_rd_res *r = &qp->resp.rd[i];

		if (r->valid && r->atomic && r->len == 0 && r->first_psn == pkt->h.psn &&
		    r->va == pkt->h.reth.va && r->rkey == pkt->h.reth.rkey) {
			send_empty_read_resp(qp, pkt->h.psn);
			return true;
		}
	}
	return false;
}
