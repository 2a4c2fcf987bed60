/*
 * cm_recv.c - a packet for QP1 (the port hands it here through
 * uroce_dev.qp1_rx): checked like any packet (ICRC, opcode UD SEND_ONLY,
 * DETH Q_Key 0x80010000, destination QP 1, a well-formed 256-byte CM MAD),
 * counted, and handed to the protocol (cm_conn.c); anything else is dropped
 * and counted.
 */
#include "config.h"
#include "emu/cm/cm_int.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "netstack/packet.h"
#include "uroce/roce.h"

#include <string.h>

void cm_input(struct uroce_dev *d, const uint8_t *buf, size_t len, const union ibv_gid *sgid,
	      const union ibv_gid *dgid, uint16_t sport, bool verified)
{
	struct cm_dev *cm = d->cm;
	struct roce_l3 l3;
	struct roce_pkt pkt;
	struct cm_msg m;
	int rc;

	if (!cm)
		return;
	memset(&l3, 0, sizeof(l3));
	l3.kind = roce_addr_is_v4mapped(sgid->raw) ? ROCE_L3_IPV4 : ROCE_L3_IPV6;
	memcpy(l3.src, sgid->raw, 16);
	memcpy(l3.dst, dgid->raw, 16);
	l3.sport = sport;
	l3.dport = d->port;
	rc = verified ? roce_parse_udp_verified(buf, len, &l3, &pkt) : roce_parse_udp(buf, len, &l3, &pkt);
	if (rc != ROCE_OK || pkt.h.opcode != ROCE_OP_UD_SEND_ONLY || pkt.h.deth.qkey != CM_GSI_QKEY ||
	    pkt.h.dqpn != CM_GSI_QPN || cm_mad_decode(pkt.payload, pkt.payload_len, &m)) {
		cm->st.drops++;
		ulog_limited(ULOG_LIMIT_RX_SRC, ULOG_DEBUG, "QP1: malformed or foreign packet dropped (%s)",
			     rc != ROCE_OK ? roce_err_name(rc) : "not a CM MAD");
		return;
	}
	if (m.attr_id >= CM_ATTR_REQ && m.attr_id <= CM_ATTR_APR)
		cm->st.rx[m.attr_id - CM_ATTR_REQ]++;
	cm_proto_input(cm, &m, sgid);
}
