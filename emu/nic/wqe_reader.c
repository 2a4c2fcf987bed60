/*
 * wqe_reader.c - validated WQE reads from a QP's shared ring (see
 * wqe_reader.h and the QP ring section of include/uroce/abi.h).
 */
#include "config.h"
#include "emu/nic/wqe_reader.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"

#include <errno.h>
#include <string.h>

#define WQE_FLAGS_ALL (UROCE_WQE_SIGNALED | UROCE_WQE_SOLICITED | UROCE_WQE_INLINE | UROCE_WQE_FENCE | \
		       UROCE_WQE_BIND_TYPE1 | UROCE_WQE_IP_CSUM)
/* Largest slot: header + max(16 SGEs, 256 bytes inline) (+ a TSO header),
 * a power of two. */
#define SLOT_MAX UROCE_SQ_DESC_MAX
_Static_assert(XPORT_MAX_TSO_HEADER == UROCE_MAX_TSO_HEADER, "TSO header bound");

/* The TSO fields of W (abi_ring.h: the header at uroce_sq_tso_hdr_off of
 * QP's SLOT, STRIDE bytes) into OUT; EINVAL unless 18 <= tso_hdr_sz <= the
 * QP's max_tso_header, mss >= 1, byte_len <= UROCE_MAX_TSO and the header
 * ends in the slot. */
static int read_tso(const unsigned char *slot, uint32_t stride, const struct ctl_qp *qp,
		    struct xport_send_wqe *out)
{
	const struct uroce_send_wqe *w = (const void *)slot;
	uint32_t off = uroce_sq_tso_hdr_off(&qp->cap), max_hdr = qp->max_tso_header;

	if (w->tso_hdr_sz < 18 || w->tso_hdr_sz > max_hdr || w->mss == 0 || w->byte_len > UROCE_MAX_TSO ||
	    off + w->tso_hdr_sz > stride)
		return EINVAL;
	out->mss = w->mss;
	out->tso_hdr_sz = (uint16_t)w->tso_hdr_sz;
	memcpy(out->tso_hdr, slot + off, w->tso_hdr_sz);
	return 0;
}

int wqe_read_send(const struct ctl_client *c, const struct ctl_qp *qp, uint32_t n, struct xport_send_wqe *out)
{
	_Alignas(8) unsigned char slot[SLOT_MAX];
	const struct uroce_send_wqe *w = (const void *)slot;
	const struct uroce_sge *sge = (const void *)(slot + sizeof(*w));
	struct uroce_qp_ring_layout lay;
	uint64_t total = 0;
	uint32_t i;

	if (!qp->ring)
		return ENODEV;
	uroce_qp_ring_layout_tso(&qp->cap, qp->max_tso_header, &lay);
	if (lay.sq_stride > SLOT_MAX)
		return EINVAL;
	memcpy(slot, (const char *)qp->ring + lay.sq_offset +
			     (uint64_t)(n & (qp->cap.max_send_wr - 1)) * lay.sq_stride,
	       lay.sq_stride);
	if (w->wqe_index != (uint16_t)n || (w->flags & ~WQE_FLAGS_ALL))
		return EINVAL;
	memset(out, 0, offsetof(struct xport_send_wqe, sg_list));
	out->wr_index = n;
	out->opcode = (enum ibv_wr_opcode)w->opcode;
	out->send_flags = (w->flags & UROCE_WQE_SIGNALED ? IBV_SEND_SIGNALED : 0) |
			  (w->flags & UROCE_WQE_SOLICITED ? IBV_SEND_SOLICITED : 0) |
			  (w->flags & UROCE_WQE_INLINE ? IBV_SEND_INLINE : 0) |
			  (w->flags & UROCE_WQE_FENCE ? IBV_SEND_FENCE : 0) |
			  (w->flags & UROCE_WQE_IP_CSUM ? IBV_SEND_IP_CSUM : 0);
	/* checksum offload is for raw packet QPs (ibv_post_send(3)) */
	if ((w->flags & UROCE_WQE_IP_CSUM) && qp->type != IBV_QPT_RAW_PACKET)
		return EINVAL;
	out->imm_data = w->imm_data;
	out->remote_addr = w->remote_addr;
	out->rkey = w->rkey;
	out->compare_add = w->compare_add;
	out->swap = w->swap;
	switch (w->opcode) {
	case IBV_WR_SEND_WITH_INV:
		out->invalidate_rkey = w->invalidate_rkey;
		break;
	case IBV_WR_LOCAL_INV:
		out->invalidate_rkey = w->rkey;
		break;
	case IBV_WR_BIND_MW:
		out->bind.mw_handle = w->ah_handle;
		out->bind.mr_lkey = w->remote_qkey;
		out->bind.addr = w->remote_addr;
		out->bind.length = w->compare_add;
		out->bind.access = w->remote_qpn;
		out->bind.type1 = w->flags & UROCE_WQE_BIND_TYPE1;
		break;
	}
	if ((w->flags & UROCE_WQE_BIND_TYPE1) && w->opcode != IBV_WR_BIND_MW)
		return EINVAL;
	out->mss = out->tso_hdr_sz = 0;
	if (w->opcode == IBV_WR_TSO &&
	    (qp->type != IBV_QPT_RAW_PACKET || read_tso(slot, lay.sq_stride, qp, out)))
		return EINVAL;
	if (w->flags & UROCE_WQE_INLINE) {
		if (w->byte_len > qp->cap.max_inline_data || w->byte_len > XPORT_MAX_INLINE ||
		    sizeof(*w) + w->byte_len > lay.sq_stride)
			return EINVAL;
		out->num_sge = 0;
		out->inline_len = w->byte_len;
		memcpy(out->inline_data, slot + sizeof(*w), w->byte_len);
	} else {
		if (w->num_sge > qp->cap.max_send_sge || w->num_sge > XPORT_MAX_SGE ||
		    sizeof(*w) + w->num_sge * sizeof(*sge) > lay.sq_stride)
			return EINVAL;
		out->num_sge = w->num_sge;
		out->inline_len = 0;
		for (i = 0; i < w->num_sge; i++) {
			out->sg_list[i].addr = sge[i].addr;
			out->sg_list[i].length = sge[i].length;
			out->sg_list[i].lkey = sge[i].lkey;
			total += sge[i].length;
		}
		if (total != w->byte_len)
			return EINVAL;
	}
	if (qp->type == IBV_QPT_UD) {
		const struct ctl_ah *ah = objtab_get(&c->ahs, w->ah_handle);

		if (!ah || ah->pd != qp->pd || w->remote_qpn > 0xFFFFFF)
			return EINVAL;
		out->dgid = ah->attr.grh.dgid;
		out->remote_qpn = w->remote_qpn;
		out->remote_qkey = w->remote_qkey;
	}
	if (qp->type == IBV_QPT_XRC_SEND) {
		if (w->remote_qpn > 0xFFFFFF)
			return EINVAL;
		out->remote_srqn = w->remote_qpn;
	}
	return 0;
}

/* The engine's view of a checked receive WQE W (RQ or SRQ slot): its SGEs,
 * INDEX as wr_index (the provider maps it back to the wr_id). */
static void recv_wqe_out(const struct uroce_recv_wqe *w, uint32_t index,
			 struct xport_recv_wqe *out)
{
	const struct uroce_sge *sge = (const void *)(w + 1);

	out->wr_id = 0;
	out->wr_index = index;
	out->num_sge = w->num_sge;
	for (uint32_t i = 0; i < w->num_sge; i++) {
		out->sg_list[i].addr = sge[i].addr;
		out->sg_list[i].length = sge[i].length;
		out->sg_list[i].lkey = sge[i].lkey;
	}
}

int wqe_read_recv(const struct ctl_qp *qp, uint32_t n, struct xport_recv_wqe *out)
{
	_Alignas(8) unsigned char slot[SLOT_MAX];
	const struct uroce_recv_wqe *w = (const void *)slot;
	struct uroce_qp_ring_layout lay;

	if (!qp->ring || qp->cap.max_recv_wr == 0)
		return ENODEV;
	uroce_qp_ring_layout_tso(&qp->cap, qp->max_tso_header, &lay);
	if (lay.rq_stride > SLOT_MAX)
		return EINVAL;
	memcpy(slot, (const char *)qp->ring + lay.rq_offset +
			     (uint64_t)(n & (qp->cap.max_recv_wr - 1)) * lay.rq_stride,
	       lay.rq_stride);
	if (w->wqe_index != (uint16_t)n || w->num_sge > qp->cap.max_recv_sge || w->num_sge > XPORT_MAX_SGE ||
	    sizeof(*w) + w->num_sge * sizeof(struct uroce_sge) > lay.rq_stride)
		return EINVAL;
	recv_wqe_out(w, n, out);
	return 0;
}

int wqe_read_srq(const struct ctl_srq *srq, uint32_t n, struct xport_recv_wqe *out)
{
	_Alignas(8) unsigned char slot[SLOT_MAX];
	const struct uroce_recv_wqe *w = (const void *)slot;
	uint32_t stride;
	uint64_t size;

	uroce_srq_ring_layout(srq->max_wr, srq->max_sge, &stride, &size);
	if (stride > SLOT_MAX)
		return EINVAL;
	memcpy(slot, (const char *)srq->ring + UROCE_SRQ_RING_HDR_SIZE +
			     (uint64_t)(n & (srq->max_wr - 1)) * stride,
	       stride);
	if (w->wqe_index >= srq->max_wr || w->num_sge > srq->max_sge || w->num_sge > XPORT_MAX_SGE ||
	    sizeof(*w) + w->num_sge * sizeof(struct uroce_sge) > stride)
		return EINVAL;
	recv_wqe_out(w, w->wqe_index, out);
	return 0;
}
