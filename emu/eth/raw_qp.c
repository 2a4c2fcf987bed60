/*
 * raw_qp.c - raw packet QPs (IBV_QPT_RAW_PACKET): whole Ethernet frames out
 * of the SQ, frames the steering rules chose into the RQ, and their CQEs
 * as mlx5 writes them for a raw packet QP (docs/cqe-format.md §6).
 *
 * A raw QP has no transport: a send WQE is one frame, gathered from its
 * SGEs (or its inline bytes), checksummed if IBV_SEND_IP_CSUM asked, and
 * handed to the port at once; its completion follows. A TSO WQE is many
 * frames (raw_tso.c). A frame for the QP
 * takes the oldest receive WQE; without one (or outside RTR/RTS) it is
 * dropped and counted, as a ConnectX counts rx_out_of_buffer.
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
#include "emu/nic/wqe_reader.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Frames shorter than this cannot be sent: mlx5 copies the first 18 bytes
 * (MLX5_ETH_L2_INLINE_HEADER_SIZE: Ethernet header and a VLAN tag) into
 * the WQE and refuses a post without them (EINVAL, providers/mlx5/qp.c);
 * the provider checks, the daemon again. */
#define RAW_MIN_FRAME 18

int raw_qp_create(struct ctl_qp *qp)
{
	struct raw_qp *r;

	/* a device without an Ethernet port (eth_port_open never ran) */
	if (!qp->owner->dev->eth)
		return EOPNOTSUPP;
	r = calloc(1, sizeof(*r));
	if (!r)
		return ENOMEM;
	if (qp->cap.max_recv_wr) {
		r->rq = calloc(qp->cap.max_recv_wr, sizeof(*r->rq));
		if (!r->rq) {
			free(r);
			return ENOMEM;
		}
	}
	r->state = IBV_QPS_RESET;
	qp->raw = r;
	return 0;
}

void raw_qp_destroy(struct ctl_qp *qp)
{
	struct eth_port *p = qp->owner->dev->eth;

	if (!qp->raw)
		return;
	if (p)
		steer_qp_gone(p, qp);
	rss_qp_gone(qp);
	mem_wb_forget_qp(qp->owner->dev, qp->qpn);
	raw_held_drop(qp);
	free(qp->raw->rq);
	free(qp->raw);
	qp->raw = NULL;
}

enum ibv_qp_state raw_qp_state(const struct ctl_qp *qp)
{
	return qp->raw->state;
}

int raw_qp_op_check(const struct ctl_qp *qp, unsigned int op)
{
	const struct raw_qp *r = qp->raw;

	if (!r)
		return 0;
	if (r->is_wq)
		return EINVAL;
	if (op == UROCE_OP_DESTROY_QP && r->n_rules)
		return EBUSY;
	if (op == UROCE_OP_MODIFY_QP && r->rss)
		return EOPNOTSUPP;
	return 0;
}

void raw_qp_modify(struct ctl_qp *qp, enum ibv_qp_state next)
{
	struct raw_qp *r = qp->raw;

	r->state = next;
	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) {
		raw_held_drop(qp);
		r->stride_next = 0;
	}
	if (next == IBV_QPS_RESET)
		r->rq_head = r->rq_tail = 0;
	else if (next == IBV_QPS_ERR)
		raw_flush_rq(qp);
}

/* Executes send WQE W: one frame out, then its completion. */
static void raw_send(struct ctl_qp *qp, const struct xport_send_wqe *w)
{
	struct eth_port *p = qp->owner->dev->eth;
	static uint8_t frame[ETH_FRAME_MAX + 64];
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	struct xport_cqe c = {
		.wr_index = w->wr_index, .qpn = qp->qpn, .opcode = IBV_WC_SEND, .wr_opcode = w->opcode,
		.signaled = (w->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all,
	};
	uint32_t len;

	if (qp->raw->state != IBV_QPS_RTS) {
		/* ERR (or a WQE posted before a move back): flushed */
		c.status = IBV_WC_WR_FLUSH_ERR;
		c.signaled = true;
		raw_cqe(qp, &c, NULL);
		return;
	}
	if (w->opcode == IBV_WR_TSO) {
		raw_tso_send(qp, w, &c);
		return;
	}
	len = raw_gather(qp, w, frame, sizeof(frame), RAW_MIN_FRAME, &st);
	if (st == IBV_WC_SUCCESS && (w->opcode != IBV_WR_SEND || len < RAW_MIN_FRAME))
		st = IBV_WC_LOC_QP_OP_ERR;
	/* longer than the port's MTU allows: a ConnectX completes the WQE
	 * with a local length error (syndrome 0x01) and the QP goes to ERR */
	if (st == IBV_WC_SUCCESS && len > eth_max_frame(p, frame, len))
		st = IBV_WC_LOC_LEN_ERR;
	if (st != IBV_WC_SUCCESS) {
		ulog_limited(ULOG_LIMIT_REFUSED, ULOG_WARN, "client#%u raw qpn 0x%x: send WQE %u failed: wc status %d",
			     qp->owner->id, qp->qpn, w->wr_index, (int)st);
		c.status = st;
		c.signaled = true;
		raw_cqe(qp, &c, NULL);
		raw_qp_fatal(qp);
		return;
	}
	if (w->send_flags & IBV_SEND_IP_CSUM) {
		struct frame_info fi;

		if (frame_parse(frame, len, &fi))
			frame_fill_csum(frame, &fi);
	}
	qp->raw->tx_frames++;
	p->st.tx_frames++;
	p->st.tx_bytes += len;
	c.byte_len = len;
	raw_cqe(qp, &c, NULL);
	/* the frame goes out after the completion is written: its copy is taken */
	eth_deliver(p, frame, len, qp);
	if (!(frame[0] == p->mac[0] && !memcmp(frame, p->mac, 6)))
		eth_segment_xmit(p, frame, len);
}

/* A send WQE N refused: LOC_QP_OP_ERR, the QP to ERR, a lie of the
 * client's doorbell service (doorbell.h). */
static void refuse_send(struct ctl_qp *qp, uint32_t n)
{
	struct xport_cqe c = { .wr_index = n, .qpn = qp->qpn, .status = IBV_WC_LOC_QP_OP_ERR,
			       .signaled = true };

	raw_cqe(qp, &c, NULL);
	raw_qp_fatal(qp);
	qp->owner->db_lies++;
}

bool raw_qp_doorbell(struct ctl_qp *qp, uint32_t max, uint32_t *taken)
{
	struct uroce_qp_ring_hdr *h = qp->ring;
	struct raw_qp *r = qp->raw;
	uint32_t pi, budget = max < RAW_SEND_BATCH ? max : RAW_SEND_BATCH;
	bool rq_more;

	*taken = 0;
	if (!h)
		return false;
	/* receive WQEs first: a frame sent below may be for this QP */
	rq_more = raw_rq_refill(qp);
	if (r->held)
		raw_held_deliver(qp);
	pi = __atomic_load_n(&h->sq_pi, __ATOMIC_ACQUIRE);
	if (pi - qp->sq_next > qp->cap.max_send_wr && r->state != IBV_QPS_RESET) {
		/* further ahead than the ring holds: a lie; the WQE at the
		 * cursor is refused and the cursor jumps (as doorbell.c) */
		refuse_send(qp, qp->sq_next);
		qp->sq_next = pi;
		return rq_more;
	}
	for (; qp->sq_next != pi && budget; budget--, (*taken)++) {
		struct xport_send_wqe w;
		uint32_t n = qp->sq_next++;

		if (r->state == IBV_QPS_RESET)
			continue;
		if (wqe_read_send(qp->owner, qp, n, &w)) {
			refuse_send(qp, n);
			continue;
		}
		if (r->state == IBV_QPS_ERR)
			qp->owner->db_lies++;
		else
			qp->owner->db_work++;
		raw_send(qp, &w);
	}
	return qp->sq_next != pi || rq_more;
}
