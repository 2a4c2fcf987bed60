/*
 * recv.c: entry of received packets into the engine (the role of
 * rxe_recv.c): parse and ICRC-check the UDP payload with the netstack,
 * find the QP by destination QPN, check that the opcode's transport
 * matches the QP type and that the QP state accepts packets, then hand
 * requests to the responder (queued behind READ responses still to send)
 * and responses to the completer; the run function does the rest.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/xport/xport_int.h"
#include "netstack/icrc.h"

/* Transport prefix each QP type accepts (IBTA Table 38, Annex A14). */
static uint8_t qp_transport(const struct xport_qp *qp)
{
	if (qp->xrc != XPORT_XRC_NONE)
		return ROCE_TRANSPORT_XRC;
	switch (qp->type) {
	case IBV_QPT_UC: return ROCE_TRANSPORT_UC;
	case IBV_QPT_UD: return ROCE_TRANSPORT_UD;
	default: return ROCE_TRANSPORT_RC;
	}
}

void xport_pkt_to_rc(struct roce_pkt *pkt)
{
	uint8_t rc = xport_rc_opcode(pkt->h.opcode);

	if (rc != pkt->h.opcode) {
		pkt->h.opcode = rc;
		pkt->op = roce_opcode_info(rc);
	}
}

bool xport_reparse(const uint8_t *buf, size_t len, const struct roce_l3 *l3, struct roce_pkt *pkt)
{
	if (roce_parse_udp(buf, len, l3, pkt) != ROCE_OK)
		return false;
	xport_pkt_to_rc(pkt);
	return true;
}

/* Hand parsed packet PKT to QP: transport and state checks, then the
 * responder or the completer, then the QP's run. */
static int deliver(struct xport_qp *qp, const struct roce_pkt *pkt_in, const struct roce_l3 *l3,
		   const void *buf, size_t len)
{
	struct roce_pkt pkt = *pkt_in;
	struct xport_dev *dev = qp->dev;
	uint64_t dropped0 = qp->stats.dropped;
	bool responder_up, requester_up, taken, ignored = false;

	qp->stats.rx_pkts++;
	if (pkt.op->transport != qp_transport(qp) ||
	    (pkt.op->flags & ROCE_OPF_UNSUPPORTED) ||
	    (qp->xrc == XPORT_XRC_SEND && (pkt.op->flags & ROCE_OPF_REQUEST)) ||
	    (qp->xrc == XPORT_XRC_RECV && (pkt.op->flags & ROCE_OPF_RESPONSE))) {
		qp->stats.dropped++;
		return EAGAIN;
	}
	xport_pkt_to_rc(&pkt);
	/* The receive side works in RTR and later; the send side (which
	 * takes ACKs and READ responses) in RTS, SQD and SQE. */
	responder_up = qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS ||
		       qp->state == IBV_QPS_SQD || qp->state == IBV_QPS_SQE;
	requester_up = qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD ||
		       qp->state == IBV_QPS_SQE;
	/* A connected QP takes packets from its remote address only (IBTA
	 * Vol 1 §9.6 header validation; docs/security.md): the dgid given
	 * with the AV at RTR. */
	if (qp->type != IBV_QPT_UD && responder_up && memcmp(l3->src, qp->attr.dgid.raw, 16)) {
		qp->stats.dropped++;
		dev->stats.rx_bad_src++;
		return EACCES;
	}
	if (pkt.op->flags & ROCE_OPF_REQUEST) {
		if (!responder_up) {
			qp->stats.dropped++;
			return EAGAIN;
		}
		/* IBTA 11.6.3.1: the first packet of a connection reaching a
		 * QP in RTR; the passive CM uses it when the RTU is lost */
		if (qp->state == IBV_QPS_RTR && qp->type != IBV_QPT_UD && !qp->comm_est) {
			qp->comm_est = true;
			if (dev->ops.qp_event)
				dev->ops.qp_event(dev->ctx, qp, IBV_EVENT_COMM_EST);
		}
		if (xport_resp_busy(qp)) {
			if (!xport_resp_read_restart(qp, &pkt))
				xport_resp_enqueue(qp, l3, buf, len);
		}
		else
			xport_resp_input(qp, &pkt, l3, buf, len);
	} else if (pkt.op->flags & ROCE_OPF_RESPONSE) {
		if (!requester_up) {
			qp->stats.dropped++;
			return EAGAIN;
		}
		ignored = !xport_comp_input(qp, &pkt);
	} else {
		qp->stats.dropped++;
		return EAGAIN;
	}
	/* dropped by the responder (a UD Q_Key, no receive WQE, out of
	 * sequence) or ignored by the completer (a duplicate or stale
	 * response): not taken either */
	taken = qp->stats.dropped == dropped0 && !ignored;
	xport_run(qp);
	return taken ? 0 : EAGAIN;
}

/* Parse and check the received payload BUF into L3 and PKT (counted in
 * the device's rx_bad / rx_bad_icrc when it fails). 0 or EBADMSG. */
static int parse(struct xport_dev *dev, const void *buf, size_t len,
		 const union ibv_gid *sgid, const union ibv_gid *dgid,
		 uint16_t sport, uint16_t dport, bool verified,
		 struct roce_l3 *l3, struct roce_pkt *pkt)
{
	if (!dev || !buf || !sgid || !dgid) {
		if (dev)
			dev->stats.rx_bad++;
		return EBADMSG;
	}
	memset(l3, 0, sizeof(*l3));
	l3->kind = roce_addr_is_v4mapped(sgid->raw) ? ROCE_L3_IPV4 : ROCE_L3_IPV6;
	memcpy(l3->src, sgid->raw, 16);
	memcpy(l3->dst, dgid->raw, 16);
	l3->sport = sport;
	l3->dport = dport;
	if ((verified ? roce_parse_udp_verified(buf, len, l3, pkt)
		      : roce_parse_udp(buf, len, l3, pkt)) != ROCE_OK || !pkt->op) {
		dev->stats.rx_bad++;
		/* the ICRC decides even when a damaged header failed first */
		if (roce_icrc_udp_check(buf, len, l3, NULL, NULL) == ROCE_E_ICRC)
			dev->stats.rx_bad_icrc++;
		return EBADMSG;
	}
	return 0;
}

static int input(struct xport_dev *dev, const void *buf, size_t len,
		 const union ibv_gid *sgid, const union ibv_gid *dgid,
		 uint16_t sport, uint16_t dport, bool verified)
{
	struct roce_l3 l3;
	struct roce_pkt pkt;
	struct xport_qp *qp;

	if (parse(dev, buf, len, sgid, dgid, sport, dport, verified, &l3, &pkt))
		return EBADMSG;
	qp = xport_qp_lookup(dev, pkt.h.dqpn);
	if (!qp) {
		dev->stats.rx_no_qp++;
		return ENOENT;
	}
	return deliver(qp, &pkt, &l3, buf, len);
}

int xport_input(struct xport_dev *dev, const void *buf, size_t len,
		const union ibv_gid *sgid, const union ibv_gid *dgid,
		uint16_t sport, uint16_t dport)
{
	return input(dev, buf, len, sgid, dgid, sport, dport, false);
}

int xport_input_verified(struct xport_dev *dev, const void *buf, size_t len,
			 const union ibv_gid *sgid, const union ibv_gid *dgid,
			 uint16_t sport, uint16_t dport)
{
	return input(dev, buf, len, sgid, dgid, sport, dport, true);
}

int xport_input_mcast(struct xport_dev *dev, const void *buf, size_t len,
		      const union ibv_gid *sgid, const union ibv_gid *dgid,
		      uint16_t sport, uint16_t dport, bool verified,
		      const uint32_t *qpns, unsigned int n)
{
	struct roce_l3 l3;
	struct roce_pkt pkt;
	unsigned int i, taken = 0;

	if (parse(dev, buf, len, sgid, dgid, sport, dport, verified, &l3, &pkt))
		return EBADMSG;
	/* IBTA 10.5.2.2 (C10-41): a multicast packet names QP 0xFFFFFF and
	 * is a UD SEND */
	if (pkt.h.dqpn != ROCE_QPN_MASK || pkt.op->transport != ROCE_TRANSPORT_UD) {
		dev->stats.rx_no_qp++;
		return ENOENT;
	}
	for (i = 0; i < n; i++) {
		struct xport_qp *qp = xport_qp_lookup(dev, qpns[i]);

		if (qp && deliver(qp, &pkt, &l3, buf, len) == 0)
			taken++;
	}
	return taken ? 0 : EAGAIN;
}
