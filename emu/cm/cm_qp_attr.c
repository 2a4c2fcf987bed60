/*
 * cm_qp_attr.c - INIT_QP_ATTR: the QP attributes for INIT, RTR and RTS as
 * the kernel's rdma_init_qp_attr gives them for a RoCE id (cma.c
 * cma_ib_init_qp_attr before a connection exists and for UD; cm.c
 * ib_cm_init_qp_attr once it does), in struct ib_uverbs_qp_attr, which
 * librdmacm converts with ibv_copy_qp_attr_from_kern and applies itself.
 *
 * PSNs as Linux sets them, which is what a peer running the kernel's CM
 * (rxe, a ConnectX) does: each side receives from the starting PSN it put
 * in its own REQ or REP (rdma_init_qp_attr: rq_psn = the id's seq_num) and
 * sends from the one the peer put in its message (cm.c: sq_psn from the
 * peer's REQ or REP). Seen on the wire against kernel 6.1's rxe: its
 * active side sends its first SEND at the REP's starting PSN.
 */
#include "config.h"
#include "emu/cm/cm_int.h"
#include "emu/nic/device.h"

#include <errno.h>
#include <string.h>

/* cm.c cm_ack_timeout: the local ACK timeout from the CA's ACK delay and the
 * path's packet lifetime (both 4.096 us * 2^x exponents), at most 31. */
uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time)
{
	int t = packet_life_time + 1;

	if (t >= ca_ack_delay)
		t += (ca_ack_delay >= t - 1);
	else
		t = ca_ack_delay + (t >= ca_ack_delay - 1);
	return (uint8_t)(t < 31 ? t : 31);
}

/* IB static rate of the port (ib_verbs.h enum ib_rate): 4X EDR = 100 Gb/s. */
uint8_t cm_packet_rate(const struct cm_dev *cm)
{
	(void)cm;
	return 14; /* IB_RATE_100_GBPS */
}

static bool connected(const struct cm_id *id)
{
	switch (id->state) {
	case CS_REQ_SENT: case CS_REQ_RCVD: case CS_REP_SENT: case CS_REP_RCVD: case CS_ESTABLISHED:
		return true;
	default:
		return false;
	}
}

int cm_init_qp_attr(struct cm_id *id, uint32_t qp_state, struct ib_uverbs_qp_attr *a)
{
	struct uroce_dev *d = id->cm->dev;
	uint32_t mask;

	memset(a, 0, sizeof(*a));
	a->qp_state = qp_state;
	if (qp_state != IBV_QPS_INIT && qp_state != IBV_QPS_RTR && qp_state != IBV_QPS_RTS)
		return EINVAL;
	if (id->qp_type == IBV_QPT_UD || !connected(id)) {
		/* cma_ib_init_qp_attr: no connection yet, or UD */
		if (id->qp_type != IBV_QPT_UD && qp_state != IBV_QPS_INIT)
			return EINVAL;
		mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		a->pkey_index = 0;
		a->port_num = 1;
		if (id->qp_type == IBV_QPT_UD) {
			a->qkey = CM_UDP_QKEY;
			mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = 0;
			mask |= IBV_QP_ACCESS_FLAGS;
		}
		if (qp_state == IBV_QPS_RTR)
			a->rq_psn = id->seq_num;
		a->qp_attr_mask = mask;
		return 0;
	}
	switch (qp_state) {
	case IBV_QPS_INIT:
		mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (id->responder_resources)
			a->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		a->pkey_index = 0;
		a->port_num = 1;
		break;
	case IBV_QPS_RTR:
		if (id->state == CS_REQ_SENT)
			return EINVAL; /* cm_init_qp_rtr_attr: not before the REP */
		mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		memcpy(a->ah_attr.grh.dgid, id->peer_gid.raw, 16);
		a->ah_attr.grh.sgid_index = 0; /* the device's address is GID index 0 */
		a->ah_attr.grh.hop_limit = CM_DEFAULT_HOP_LIMIT;
		a->ah_attr.grh.traffic_class = id->tos;
		a->ah_attr.is_global = 1;
		a->ah_attr.port_num = 1;
		a->ah_attr.static_rate = cm_packet_rate(id->cm);
		a->path_mtu = id->path_mtu;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->seq_num; /* what this side advertised: see below */
		a->max_dest_rd_atomic = id->responder_resources;
		a->min_rnr_timer = 0;
		break;
	default: /* RTS */
		if (id->state == CS_REQ_SENT)
			return EINVAL;
		mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
		a->sq_psn = id->peer_psn;
		a->timeout = id->timeout_set ? id->ack_timeout
					     : cm_ack_timeout(d->attr.local_ca_ack_delay, CM_PACKET_LIFETIME);
		a->retry_cnt = id->retry_count;
		a->rnr_retry = id->rnr_retry_count;
		a->max_rd_atomic = id->initiator_depth;
		break;
	}
	a->qp_attr_mask = mask;
	return 0;
}
