/*
 * raw_stride.c - the striding (multi-packet) RQ of a WQ made with
 * urocedv_create_wq (urocedv(3)), as a ConnectX's
 * MLX5_WQ_TYPE_CYCLIC_STRIDING_RQ: a WQE is one buffer of 2^log_num_strides
 * strides of 2^log_stride_bytes bytes; each frame starts at a stride
 * boundary (after two zero bytes with two_byte_shift) and uses as many
 * strides as it needs; the WQE goes back to the application when its last
 * stride is used. A frame that does not fit the strides left gets a filler
 * CQE for them, and the next WQE. The CQE fields are the ones mlx5's
 * kernel and DPDK drivers read (mpwrq_get_cqe_byte_cnt,
 * mpwrq_get_cqe_consumed_strides, mpwrq_is_filler_cqe,
 * mpwrq_get_cqe_stride_index; docs/cqe-format.md §7).
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_wb.h"

#include <endian.h>
#include <string.h>

/* byte_cnt of a striding CQE: bits 15:0 bytes, 29:16 strides, 31 filler. */
#define MPRQ_FILLER 0x80000000u
#define MPRQ_STRIDES_SHIFT 16

/* One CQE of the WQE at rq_tail; RETIRE: its last stride is used. */
static void stride_cqe(struct ctl_qp *qp, const struct xport_recv_wqe *w, enum ibv_wc_status st,
		       uint32_t byte_cnt, uint32_t first, struct mlx5_cqe64 *x, bool retire)
{
	struct xport_cqe c = { .qpn = qp->qpn, .opcode = IBV_WC_RECV, .is_recv = true, .signaled = true,
			       .wr_index = w->wr_index, .status = st, .byte_len = byte_cnt & 0xFFFF };

	x->byte_cnt = htobe32(byte_cnt);
	x->wqe_counter = htobe16((uint16_t)first);
	x->wqe_id = htobe16((uint16_t)w->wr_index);
	raw_cqe_stride(qp, &c, st == IBV_WC_SUCCESS ? x : NULL, retire);
}

void raw_stride_receive(struct ctl_qp *qp, const uint8_t *data, size_t len, struct mlx5_cqe64 *x)
{
	struct eth_port *p = qp->owner->dev->eth;
	struct raw_qp *r = qp->raw;
	uint32_t total = 1u << r->log_num_strides, shift = r->two_byte_shift ? 2 : 0;
	uint32_t need = (uint32_t)((len + shift + (1u << r->log_stride_bytes) - 1) >> r->log_stride_bytes);
	uint32_t mask = qp->cap.max_recv_wr - 1;
	const struct xport_recv_wqe *w = &r->rq[r->rq_tail & mask];
	static const uint8_t zero[2];
	enum ibv_wc_status st;
	uint64_t addr;

	if (need > total || w->num_sge != 1 || w->sg_list[0].length < (uint64_t)total << r->log_stride_bytes) {
		/* larger than a whole WQE, or a WQE without room for its
		 * strides: local length error, the WQ to ERR */
		r->rq_tail++;
		r->stride_next = 0;
		stride_cqe(qp, w, IBV_WC_LOC_LEN_ERR, 0, 0, x, true);
		raw_qp_fatal(qp);
		return;
	}
	if (r->stride_next + need > total) {
		struct mlx5_cqe64 fx = *x;

		fx.hds_ip_ext = fx.l4_hdr_type_etc = 0;
		fx.vlan_info = 0;
		r->rq_tail++;
		stride_cqe(qp, w, IBV_WC_SUCCESS,
			   MPRQ_FILLER | (total - r->stride_next) << MPRQ_STRIDES_SHIFT, r->stride_next, &fx, true);
		r->stride_next = 0;
		if (r->rq_tail == r->rq_head)
			raw_rq_refill(qp);
		if (r->rq_tail == r->rq_head || r->state == IBV_QPS_ERR) {
			r->rx_dropped++;
			p->st.rx_no_wqe++;
			return;
		}
		w = &r->rq[r->rq_tail & mask];
		if (w->num_sge != 1 || w->sg_list[0].length < (uint64_t)total << r->log_stride_bytes) {
			r->rq_tail++;
			stride_cqe(qp, w, IBV_WC_LOC_LEN_ERR, 0, 0, x, true);
			raw_qp_fatal(qp);
			return;
		}
	}
	addr = w->sg_list[0].addr + ((uint64_t)r->stride_next << r->log_stride_bytes);
	st = shift ? raw_rx_write(qp, w->sg_list[0].lkey, addr, zero, shift) : IBV_WC_SUCCESS;
	if (st == IBV_WC_SUCCESS)
		st = raw_rx_write(qp, w->sg_list[0].lkey, addr + shift, data, len);
	if (st == IBV_WC_SUCCESS && mem_wb_sync(qp->owner->dev, qp->qpn))
		st = IBV_WC_LOC_PROT_ERR;
	if (st != IBV_WC_SUCCESS) {
		r->rq_tail++;
		r->stride_next = 0;
		stride_cqe(qp, w, st, 0, 0, x, true);
		raw_qp_fatal(qp);
		return;
	}
	{
		uint32_t first = r->stride_next;
		bool retire;

		r->stride_next += need;
		retire = r->stride_next == total;
		if (retire) {
			r->rq_tail++;
			r->stride_next = 0;
		}
		r->rx_frames++;
		p->st.rx_delivered++;
		stride_cqe(qp, w, IBV_WC_SUCCESS, (uint32_t)len | need << MPRQ_STRIDES_SHIFT, first, x, retire);
	}
}
