/*
 * raw_tso.c - an IBV_WR_TSO send WQE of a raw packet QP: its payload
 * gathered, cut into MSS-sized TCP segments behind copies of its header
 * (tso.c), each segment handed to the port like a SEND's frame
 * (docs/raw-packet.md §3). One completion for the WQE, written before the
 * segments go out, as for SEND.
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/eth/tso.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/log.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_access.h"

#include <string.h>

void raw_tso_send(struct ctl_qp *qp, const struct xport_send_wqe *w, struct xport_cqe *c)
{
	static uint8_t payload[UROCE_MAX_TSO];
	static uint8_t seg[ETH_FRAME_MAX + 64];
	struct eth_port *p = qp->owner->dev->eth;
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	struct frame_info fi;
	uint32_t len, n, first;
	bool csum = w->send_flags & IBV_SEND_IP_CSUM;

	len = raw_gather(qp, w, payload, UROCE_MAX_TSO, 0, &st);
	/* a header TSO cannot cut by: the WQE is malformed */
	if (st == IBV_WC_SUCCESS && !tso_hdr_check(w->tso_hdr, w->tso_hdr_sz, &fi))
		st = IBV_WC_LOC_QP_OP_ERR;
	/* the largest segment must fit the port's MTU, as a SEND's frame */
	first = w->tso_hdr_sz + (len < w->mss ? len : w->mss);
	if (st == IBV_WC_SUCCESS && first > eth_max_frame(p, w->tso_hdr, w->tso_hdr_sz))
		st = IBV_WC_LOC_LEN_ERR;
	if (st != IBV_WC_SUCCESS) {
		ulog_limited(ULOG_LIMIT_REFUSED, ULOG_WARN,
			     "client#%u raw qpn 0x%x: TSO WQE %u (header %u, mss %u, %u bytes) failed: wc status %d",
			     qp->owner->id, qp->qpn, w->wr_index, w->tso_hdr_sz, w->mss, len, (int)st);
		c->status = st;
		c->signaled = true;
		raw_cqe(qp, c, NULL);
		raw_qp_fatal(qp);
		return;
	}
	n = tso_segments(len, w->mss);
	qp->raw->tx_frames += n;
	p->st.tx_frames += n;
	p->st.tx_bytes += (uint64_t)n * w->tso_hdr_sz + len;
	c->byte_len = w->tso_hdr_sz + len;
	c->opcode = IBV_WC_TSO;
	raw_cqe(qp, c, NULL);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t l = tso_build(w->tso_hdr, w->tso_hdr_sz, &fi, payload, len, w->mss, i, csum, seg);

		eth_deliver(p, seg, l, qp);
		if (memcmp(seg, p->mac, 6))
			eth_segment_xmit(p, seg, l);
	}
}
