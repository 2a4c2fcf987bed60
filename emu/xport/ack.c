/*
 * ack.c: coalesced ACKs of the RC responder. A responder may acknowledge
 * several requests with one ACK, the ACK of a PSN acknowledging every
 * earlier one (IBTA Vol 1 9.7.5.1, coalesced acknowledges; rxe and ConnectX
 * coalesce too). When the device asks for it (xport_ack_coalescing), the
 * ACK a packet with AckReq earns is held on the QP, each newer one
 * replacing it, and sent by xport_ack_flush: the device calls it once per
 * receive batch and before its loop sleeps, so one ACK per QP per batch
 * leaves, the same bytes (PSN, MSN) as the last of those it replaces.
 * Every other response of the QP (NAK, duplicate re-ACK, READ response,
 * atomic ACK) sends the held ACK first, so the requester sees responses in
 * PSN order as before.
 */
#include "config.h"

#include <string.h>

#include "emu/xport/xport_int.h"

void xport_ack_coalescing(struct xport_dev *dev, bool on)
{
	if (!on)
		xport_ack_flush(dev);
	dev->ack_coalesce = on;
}

/* The ACK for PSN with MSN (no credit count). */
static void send_ack(struct xport_qp *qp, uint32_t psn, uint32_t msn)
{
	xport_send_aeth(qp, psn, ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID), msn);
}

/* One responder packet to the QP's peer: BTH (OPCODE, PSN) + AETH
 * (SYNDROME, MSN), and for ATOMIC Acknowledge the AtomicAckETH (ORIG). */
static void send_resp_hdr(struct xport_qp *qp, uint8_t opcode, uint32_t psn, uint8_t syndrome,
			  uint32_t msn, uint64_t orig)
{
	struct roce_hdrs h;

	memset(&h, 0, sizeof(h));
	h.opcode = opcode;
	h.dqpn = qp->attr.dest_qp_num;
	h.psn = psn;
	h.aeth.syndrome = syndrome;
	h.aeth.msn = msn;
	h.atomic_ack_orig = orig;
	xport_send_pkt(qp, &qp->attr.dgid, &h, NULL, 0);
	qp->stats.acks_tx++;
}

void xport_send_aeth(struct xport_qp *qp, uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	send_resp_hdr(qp, ROCE_OP_RC_ACK, psn, syndrome, msn, 0);
}

void xport_send_atomic_ack(struct xport_qp *qp, uint32_t psn, uint64_t orig)
{
	send_resp_hdr(qp, ROCE_OP_RC_ATOMIC_ACK, psn,
		      ROCE_AETH_SYN_ACK(ROCE_AETH_CREDIT_INVALID), qp->resp.msn, orig);
}

void xport_resp_ack(struct xport_qp *qp, uint32_t psn)
{
	struct xport_dev *dev = qp->dev;

	if (!dev->ack_coalesce) {
		send_ack(qp, psn, qp->resp.msn);
		return;
	}
	if (!qp->resp.ack_held) {
		qp->resp.ack_held = true;
		qp->ack_next = dev->ack_list;
		dev->ack_list = qp;
	} else {
		qp->stats.acks_coalesced++;
	}
	qp->resp.ack_psn = psn;
	qp->resp.ack_msn = qp->resp.msn;
}

/* Take QP off the device's list of held ACKs. */
static void unlink_qp(struct xport_qp *qp)
{
	struct xport_qp **pp;

	for (pp = &qp->dev->ack_list; *pp; pp = &(*pp)->ack_next) {
		if (*pp == qp) {
			*pp = qp->ack_next;
			break;
		}
	}
	qp->ack_next = NULL;
	qp->resp.ack_held = false;
}

void xport_ack_send_held(struct xport_qp *qp)
{
	if (!qp->resp.ack_held)
		return;
	unlink_qp(qp);
	send_ack(qp, qp->resp.ack_psn, qp->resp.ack_msn);
}

void xport_ack_forget(struct xport_qp *qp)
{
	if (qp->resp.ack_held)
		unlink_qp(qp);
}

void xport_ack_flush(struct xport_dev *dev)
{
	while (dev->ack_list) {
		struct xport_qp *qp = dev->ack_list;

		dev->ack_list = qp->ack_next;
		qp->ack_next = NULL;
		qp->resp.ack_held = false;
		send_ack(qp, qp->resp.ack_psn, qp->resp.ack_msn);
	}
}
