/*
 * raw_rx.c - a frame the steering rules chose, into a raw packet QP: the
 * oldest receive WQE takes it, and its CQE carries what mlx5 reports for a
 * raw packet receive (docs/cqe-format.md §6).
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/ctl/async_event.h"
#include "emu/ctl/client.h"
#include "emu/ctl/objects.h"
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
	x->vlan_info = htobe16(fi->vlan_tci);
	if (hit->has_tag) {
		/* mlx5 reads the flow tag from sop_drop_qpn's 24 bits; the QP is
		 * then named by the user index (srqn_uidx, CQE version 1 style),
		 * marked by UROCE_CQE_UIDX_QP */
		x->sop_drop_qpn = htobe32(hit->tag & 0xFFFFFF);
		x->srqn_uidx = htobe32(UROCE_CQE_UIDX_QP | (qp->qpn & 0xFFFFFF));
	}
}

void raw_qp_receive(struct ctl_qp *qp, const uint8_t *f, size_t len, const struct frame_info *fi,
		    const struct steer_hit *hit)
{
	struct eth_port *p = qp->owner->dev->eth;
	struct raw_qp *r = qp->raw;
	struct xport_recv_wqe *w;
	struct xport_cqe c = { .qpn = qp->qpn, .opcode = IBV_WC_RECV, .is_recv = true, .signaled = true };
	struct mlx5_cqe64 x;
	uint64_t room = 0, off = 0;

	if (r->rq_tail == r->rq_head)
		raw_rq_refill(qp);
	if ((r->state != IBV_QPS_RTR && r->state != IBV_QPS_RTS) || r->rq_tail == r->rq_head) {
		r->rx_dropped++;
		p->st.rx_no_wqe++;
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
	for (uint32_t i = 0; i < w->num_sge && off < len; i++) {
		const struct ibv_sge *s = &w->sg_list[i];
		uint32_t n = (uint32_t)(len - off < s->length ? len - off : s->length);

		if (mem_access_qp(qp->owner->dev, qp->pd->pdn, qp->qpn, false, s->lkey, s->addr,
				  (void *)(f + off), n, IBV_ACCESS_LOCAL_WRITE, XPORT_MEM_WRITE) != XPORT_MEM_OK) {
			c.status = IBV_WC_LOC_PROT_ERR;
			break;
		}
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
	rx_cqe_fields(f, fi, hit, qp, &x);
	r->rx_frames++;
	p->st.rx_delivered++;
	raw_cqe(qp, &c, &x);
}
