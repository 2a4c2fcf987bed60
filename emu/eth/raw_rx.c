/*
 * raw_rx.c - a frame the steering rules chose, into a raw packet QP: the
 * WQ flags shape it (C-VLAN stripped, FCS appended), the oldest receive
 * WQE takes it (or, on a striding RQ, the next strides: raw_stride.c; with
 * none, a DELAY_DROP WQ holds it: raw_held.c), and its CQE carries what
 * mlx5 reports for a raw packet receive (docs/cqe-format.md §6).
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include <stdlib.h>
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

/* The CQE fields mlx5 fills for a raw packet receive (docs/cqe-format.md §6). */
static void rx_cqe_fields(const uint8_t *f, const struct frame_info *fi, const struct steer_hit *hit,
			  struct ctl_qp *qp, struct mlx5_cqe64 *x)
{
	bool l3_ok, l4_ok;

	memset(x, 0, sizeof(*x));
	frame_check_csum(f, fi, &l3_ok, &l4_ok);
	x->hds_ip_ext = MLX5_CQE_L2_OK | (l3_ok ? MLX5_CQE_L3_OK : 0) | (l4_ok ? MLX5_CQE_L4_OK : 0);
	x->l4_hdr_type_etc = (uint8_t)(fi->l4 << 4 | fi->l3 << 2);
	/* cv (bit 0): the C-VLAN tag was stripped and vlan_info holds it, as
	 * mlx5's kernel and DPDK drivers read it (cqe_has_vlan,
	 * MLX5_CQE_VLAN_STRIPPED) */
	if (fi->has_vlan && (qp->raw->wq_flags & IBV_WQ_FLAGS_CVLAN_STRIPPING))
		x->l4_hdr_type_etc |= RAW_CQE_CV;
	x->vlan_info = htobe16(fi->vlan_tci);
	if (hit->has_tag) {
		/* mlx5 reads the flow tag from sop_drop_qpn's 24 bits; the QP is
		 * then named by the user index (srqn_uidx, CQE version 1 style),
		 * marked by UROCE_CQE_UIDX_QP */
		x->sop_drop_qpn = htobe32(hit->tag & 0xFFFFFF);
		x->srqn_uidx = htobe32(UROCE_CQE_UIDX_QP | (qp->qpn & 0xFFFFFF));
	}
}

/* The frame as the WQ's flags deliver it into OUT (ETH_FRAME_MAX + 4
 * bytes): without its 802.1Q tag (CVLAN_STRIPPING), with the 4-byte FCS of
 * the frame as it travelled, tag included (SCATTER_FCS). Returns its
 * length; *DATA points to OUT or, with no flag at work, to F itself. */
static size_t rx_shape(const struct raw_qp *r, const uint8_t *f, size_t len, const struct frame_info *fi,
		       uint8_t *out, const uint8_t **data)
{
	size_t n = len;

	*data = f;
	if (fi->has_vlan && (r->wq_flags & IBV_WQ_FLAGS_CVLAN_STRIPPING)) {
		memcpy(out, f, 12);
		memcpy(out + 12, f + 12 + ETH_VLAN_HLEN, len - 12 - ETH_VLAN_HLEN);
		n = len - ETH_VLAN_HLEN;
		*data = out;
	}
	if (r->wq_flags & IBV_WQ_FLAGS_SCATTER_FCS) {
		uint32_t fcs = frame_crc32(f, len);

		if (*data != out)
			memcpy(out, f, len);
		out[n] = (uint8_t)fcs;
		out[n + 1] = (uint8_t)(fcs >> 8);
		out[n + 2] = (uint8_t)(fcs >> 16);
		out[n + 3] = (uint8_t)(fcs >> 24);
		n += 4;
		*data = out;
	}
	return n;
}

/* Frames held for want of a WQE (raw_held.c), delivered in order as WQEs come. */
void raw_held_deliver(struct ctl_qp *qp)
{
	struct raw_qp *r = qp->raw;

	while (r->held) {
		struct raw_held *h = r->held;
		struct steer_hit hit = { .qp = qp, .has_tag = h->has_tag, .tag = h->tag };
		struct frame_info fi;

		if (r->rq_tail == r->rq_head)
			raw_rq_refill(qp);
		if (r->state != IBV_QPS_RTR && r->state != IBV_QPS_RTS) {
			raw_held_drop(qp);
			return;
		}
		if (r->rq_tail == r->rq_head)
			return;
		r->held = h->next;
		r->n_held--;
		if (frame_parse(h->frame, h->len, &fi))
			raw_rx_one(qp, h->frame, h->len, &fi, &hit);
		free(h);
	}
}

void raw_qp_receive(struct ctl_qp *qp, const uint8_t *f, size_t len, const struct frame_info *fi,
		    const struct steer_hit *hit)
{
	struct eth_port *p = qp->owner->dev->eth;
	struct raw_qp *r = qp->raw;

	/* frames held for want of a WQE go first, in order */
	if (r->held)
		raw_held_deliver(qp);
	if (r->rq_tail == r->rq_head)
		raw_rq_refill(qp);
	if (r->state != IBV_QPS_RTR && r->state != IBV_QPS_RTS) {
		r->rx_dropped++;
		p->st.rx_no_wqe++;
		return;
	}
	if (r->held || r->rq_tail == r->rq_head) {
		raw_held_add(qp, f, len, hit);
		return;
	}
	raw_rx_one(qp, f, len, fi, hit);
}

void raw_rx_one(struct ctl_qp *qp, const uint8_t *f, size_t len, const struct frame_info *fi,
		const struct steer_hit *hit)
{
	static uint8_t shaped[ETH_FRAME_MAX + 4];
	struct eth_port *p = qp->owner->dev->eth;
	struct raw_qp *r = qp->raw;
	struct xport_recv_wqe *w;
	struct xport_cqe c = { .qpn = qp->qpn, .opcode = IBV_WC_RECV, .is_recv = true, .signaled = true };
	struct mlx5_cqe64 x;
	const uint8_t *data;
	uint64_t room = 0, off = 0;

	len = rx_shape(r, f, len, fi, shaped, &data);
	rx_cqe_fields(f, fi, hit, qp, &x);
	if (r->log_num_strides) {
		raw_stride_receive(qp, data, len, &x);
		return;
	}
	w = &r->rq[r->rq_tail++ & (qp->cap.max_recv_wr - 1)];
	c.wr_index = w->wr_index;
	for (uint32_t i = 0; i < w->num_sge; i++)
		room += w->sg_list[i].length;
	if (room < len) {
		/* the frame does not fit the WQE: local length error, QP to ERR */
		c.status = IBV_WC_LOC_LEN_ERR;
		raw_cqe(qp, &c, NULL);
		raw_qp_fatal(qp);
		return;
	}
	for (uint32_t i = 0; i < w->num_sge && off < len && c.status == IBV_WC_SUCCESS; i++) {
		const struct ibv_sge *s = &w->sg_list[i];
		uint32_t n = (uint32_t)(len - off < s->length ? len - off : s->length);

		c.status = raw_rx_write(qp, s->lkey, s->addr, data + off, n);
		off += n;
	}
	if (c.status == IBV_WC_SUCCESS && mem_wb_sync(qp->owner->dev, qp->qpn))
		c.status = IBV_WC_LOC_PROT_ERR;
	if (c.status != IBV_WC_SUCCESS) {
		raw_cqe(qp, &c, NULL);
		raw_qp_fatal(qp);
		return;
	}
	c.byte_len = (uint32_t)len;
	r->rx_frames++;
	p->st.rx_delivered++;
	raw_cqe(qp, &c, &x);
}
