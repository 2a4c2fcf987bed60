/*
 * cm_wire.c - CM MADs on QP1 (IBTA 13.4 GSI; Annex A16/A17 RoCE): a MAD
 * leaves as the payload of a UD SEND_ONLY (BTH P_Key 0xffff, destination QP
 * 1; DETH Q_Key 0x80010000, source QP 1) through the device's port, so it is
 * captured and looped back like any packet (port_xmit); a packet for QP1 is
 * checked by cm_recv.c. The retransmit timer of each id runs on the daemon's
 * loop (cm_env_daemon; a test gives its own cm_env).
 */
#include "config.h"
#include "emu/cm/cm_int.h"
#include "emu/nic/device.h"
#include "emu/nic/port.h"
#include "emu/log.h"
#include "netstack/icrc.h"
#include "netstack/packet.h"
#include "uroce/roce.h"

#include <errno.h>
#include <string.h>

/* The daemon's way out: through the device's port, from its own UDP port
 * (port_xmit computes the ICRC). */
static int daemon_xmit(struct cm_dev *cm, const union ibv_gid *peer, uint8_t tclass, const uint8_t *pkt, size_t len)
{
	return port_xmit(cm->dev, peer, cm->dev->port, tclass, pkt, len, false);
}

static int xmit(struct cm_dev *cm, const union ibv_gid *peer, uint8_t tclass, const uint8_t mad[CM_MAD_SIZE])
{
	struct roce_hdrs h;
	uint8_t pkt[512];
	size_t len;
	int rc;

	memset(&h, 0, sizeof(h));
	h.opcode = ROCE_OP_UD_SEND_ONLY;
	h.pkey = 0xffff;
	h.dqpn = CM_GSI_QPN;
	h.psn = cm->psn;
	cm->psn = (cm->psn + 1) & 0xffffff;
	h.deth.qkey = CM_GSI_QKEY;
	h.deth.sqpn = CM_GSI_QPN;
	if (roce_build_bth(pkt, sizeof(pkt), &h, mad, CM_MAD_SIZE, &len) != ROCE_OK)
		return EINVAL;
	rc = cm->env->xmit(cm, peer, tclass, pkt, len);
	if (!rc) {
		uint16_t a = (uint16_t)(mad[16] << 8 | mad[17]);

		if (a >= CM_ATTR_REQ && a <= CM_ATTR_APR)
			cm->st.tx[a - CM_ATTR_REQ]++;
	}
	return rc;
}

void cm_wire_expired(struct cm_id *id)
{
	if (id->mad_valid && id->mad_expects_answer && id->retries < id->max_cm_retries) {
		id->retries++;
		id->cm->st.retransmits++;
		xmit(id->cm, &id->peer_gid, id->tos, id->mad);
		id->cm->env->timer_arm(id, id->wait_ms);
		return;
	}
	id->mad_expects_answer = false;
	id->cm->timeout(id);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	cm_wire_expired(w->data);
}

static void daemon_timer_arm(struct cm_id *id, uint32_t ms)
{
	struct ev_loop *loop = id->cm->dev->loop;

	ev_timer_stop(loop, &id->timer);
	ev_timer_init(&id->timer, timer_cb, ms / 1000., 0.);
	id->timer.data = id;
	ev_timer_start(loop, &id->timer);
}

static void daemon_timer_stop(struct cm_id *id)
{
	if (id->timer.cb)
		ev_timer_stop(id->cm->dev->loop, &id->timer);
}

const struct cm_env cm_env_daemon = {
	.xmit = daemon_xmit,
	.timer_arm = daemon_timer_arm,
	.timer_stop = daemon_timer_stop,
};

int cm_wire_send(struct cm_id *id, struct cm_msg *m, bool expect)
{
	struct cm_dev *cm = id->cm;

	m->method = CM_METHOD_SEND;
	if (!m->tid)
		m->tid = id->tid;
	if (cm_mad_encode(m, id->mad))
		return EINVAL;
	id->mad_valid = true;
	id->mad_expects_answer = expect;
	id->mra_rcvd = false;
	id->retries = 0;
	id->wait_ms = cm->timeout_ms;
	/* a MAD that expects no answer leaves a running timer alone (a DREP
	 * resent in timewait must not end the timewait) */
	if (expect)
		cm->env->timer_arm(id, cm->timeout_ms);
	return xmit(cm, &id->peer_gid, id->tos, id->mad);
}

int cm_wire_send_to(struct cm_dev *cm, const union ibv_gid *peer, struct cm_msg *m)
{
	uint8_t mad[CM_MAD_SIZE];

	m->method = CM_METHOD_SEND;
	if (cm_mad_encode(m, mad))
		return EINVAL;
	return xmit(cm, peer, 0, mad);
}

int cm_wire_reply(struct cm_id *id, struct cm_msg *m)
{
	uint8_t mad[CM_MAD_SIZE];

	m->method = CM_METHOD_SEND;
	if (cm_mad_encode(m, mad))
		return EINVAL;
	return xmit(id->cm, &id->peer_gid, id->tos, mad);
}

void cm_wire_mra(struct cm_id *id, uint32_t ms)
{
	id->wait_ms = ms;
	id->cm->env->timer_arm(id, ms);
}

void cm_wire_resend(struct cm_id *id)
{
	if (id->mad_valid)
		xmit(id->cm, &id->peer_gid, id->tos, id->mad);
}

void cm_wire_stop(struct cm_id *id)
{
	id->mad_expects_answer = false;
	id->cm->env->timer_stop(id);
}

void cm_wire_timer(struct cm_id *id, uint32_t ms)
{
	id->mad_expects_answer = false;
	id->cm->env->timer_arm(id, ms);
}
