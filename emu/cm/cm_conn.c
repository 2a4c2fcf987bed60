/*
 * cm_conn.c - the connection protocol (IBTA 12.9 state machine, 12.11 SIDR)
 * as the kernel's cm.c runs it for cma.c and as ucma.c reports it to a user
 * space id that owns its QP: REQ -> CONNECT_REQUEST on the listener; REP ->
 * CONNECT_RESPONSE (librdmacm then moves its QP and ACCEPTs, which sends the
 * RTU); RTU -> ESTABLISHED; REJ -> REJECTED (status = reason); no answer ->
 * UNREACHABLE -ETIMEDOUT; DREQ/DREP -> DISCONNECTED; timewait ->
 * TIMEWAIT_EXIT; SIDR_REQ/SIDR_REP for UD ids.
 *
 * A received MAD is matched to an id by this side's comm ID (its remote comm
 * ID field) AND the sender's GID, so a peer can only touch connections it is
 * the peer of; anything that matches nothing is dropped and counted.
 */
#include "config.h"
#include "emu/cm/cm_int.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"

#include <errno.h>
#include <string.h>
#include <rdma/rdma_user_cm.h>

/* RDMA CM service ID of port space PS and PORT (cma.c rdma_get_service_id). */
static uint64_t service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

/* The 36-byte header cma puts in front of the REQ / SIDR_REQ private data
 * (cma.c struct cma_hdr): version 0, IP version << 4, source port, source
 * and destination address (IPv4 in the last 4 bytes, the rest 0). */
static void hdr_put(const struct cm_id *id, uint8_t *p)
{
	uint8_t ip[16];
	uint16_t port;
	bool v4 = id->src.ss_family == AF_INET;

	memset(p, 0, CM_HDR_SIZE);
	p[1] = v4 ? 0x40 : 0x60;
	cm_sa_ip(&id->src, ip, &port);
	p[2] = (uint8_t)(port >> 8);
	p[3] = (uint8_t)port;
	if (v4)
		memcpy(p + 4 + 12, ip + 12, 4);
	else
		memcpy(p + 4, ip, 16);
	cm_sa_ip(&id->dst, ip, NULL);
	if (v4)
		memcpy(p + 20 + 12, ip + 12, 4);
	else
		memcpy(p + 20, ip, 16);
}

/* Parse a cma header: source/destination as v4-mapped or IPv6 16 bytes,
 * source port. Returns 0, or -1 (version or IP version unknown). */
static int hdr_get(const uint8_t *p, uint8_t src[16], uint8_t dst[16], uint16_t *sport, int *family)
{
	if (p[0] != 0)
		return -1;
	memset(src, 0, 16);
	memset(dst, 0, 16);
	if ((p[1] >> 4) == 4) {
		src[10] = src[11] = dst[10] = dst[11] = 0xff;
		memcpy(src + 12, p + 16, 4);
		memcpy(dst + 12, p + 32, 4);
		*family = AF_INET;
	} else if ((p[1] >> 4) == 6) {
		memcpy(src, p + 4, 16);
		memcpy(dst, p + 20, 16);
		*family = AF_INET6;
	} else {
		return -1;
	}
	*sport = (uint16_t)(p[2] << 8 | p[3]);
	return 0;
}

static bool is_ud(const struct cm_id *id)
{
	return id->qp_type == IBV_QPT_UD;
}

static void msg_init(struct cm_msg *m, uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	m->attr_id = attr;
}

/* The REQ of ID with connection parameters P (cm.c cm_format_req for RoCE:
 * permissive LIDs when the hop limit is above 1, GIDs, hop limit 64). */
static void format_req(struct cm_id *id, const struct rdma_ucm_conn_param *p, struct cm_msg *m)
{
	struct uroce_dev *d = id->cm->dev;
	union ibv_gid me;

	msg_init(m, CM_ATTR_REQ);
	cm_dev_gid(id->cm, &me);
	m->f[CMF_LOCAL_COMM_ID] = id->local_comm_id;
	m->f[CMF_SERVICE_ID] = id->service_id;
	m->f[CMF_LOCAL_CA_GUID] = d->node_guid;
	m->f[CMF_LOCAL_QPN] = p->qp_num & 0xffffff;
	m->f[CMF_RESPONDER_RESOURCES] = p->responder_resources;
	m->f[CMF_INITIATOR_DEPTH] = p->initiator_depth;
	m->f[CMF_REMOTE_CM_RESPONSE_TIMEOUT] = CM_RESPONSE_TIMEOUT;
	m->f[CMF_TRANSPORT_SERVICE_TYPE] = 0; /* RC */
	m->f[CMF_FLOW_CONTROL] = p->flow_control;
	m->f[CMF_STARTING_PSN] = id->seq_num;
	m->f[CMF_LOCAL_CM_RESPONSE_TIMEOUT] = CM_RESPONSE_TIMEOUT;
	m->f[CMF_RETRY_COUNT] = p->retry_count;
	m->f[CMF_PKEY] = 0xffff;
	m->f[CMF_PATH_MTU] = d->active_mtu;
	m->f[CMF_RNR_RETRY_COUNT] = p->rnr_retry_count;
	m->f[CMF_MAX_CM_RETRIES] = CM_MAX_RETRIES;
	m->f[CMF_SRQ] = p->srq ? 1 : 0;
	m->f[CMF_PRI_LOCAL_LID] = 0xffff;
	m->f[CMF_PRI_REMOTE_LID] = 0xffff;
	memcpy(m->pri_local_gid, me.raw, 16);
	memcpy(m->pri_remote_gid, id->peer_gid.raw, 16);
	m->f[CMF_PRI_PACKET_RATE] = cm_packet_rate(id->cm);
	m->f[CMF_PRI_TRAFFIC_CLASS] = id->tos;
	m->f[CMF_PRI_HOP_LIMIT] = CM_DEFAULT_HOP_LIMIT;
	m->f[CMF_PRI_LOCAL_ACK_TIMEOUT] = cm_ack_timeout(d->attr.local_ca_ack_delay, CM_PACKET_LIFETIME);
	hdr_put(id, m->private_data);
	memcpy(m->private_data + CM_HDR_SIZE, p->private_data, p->private_data_len);
}

int cm_connect(struct cm_id *id, const struct rdma_ucm_conn_param *p)
{
	struct cm_msg m;
	uint8_t ip[16];
	uint16_t port;

	if (id->state != CS_ROUTE_RESOLVED)
		return EINVAL;
	cm_sa_ip(&id->dst, ip, &port);
	memcpy(id->peer_gid.raw, ip, 16);
	id->service_id = service_id(id->ps, port);
	id->tid = ++id->cm->tid;
	id->remote_comm_id = 0;
	if (is_ud(id)) {
		if (p->private_data_len > 216 - CM_HDR_SIZE)
			return EINVAL;
		msg_init(&m, CM_ATTR_SIDR_REQ);
		m.f[CMF_REQUEST_ID] = id->local_comm_id;
		m.f[CMF_PKEY] = 0xffff;
		m.f[CMF_SERVICE_ID] = id->service_id;
		hdr_put(id, m.private_data);
		memcpy(m.private_data + CM_HDR_SIZE, p->private_data, p->private_data_len);
		id->state = CS_SIDR_REQ_SENT;
		return cm_wire_send(id, &m, true);
	}
	if (p->private_data_len > 92 - CM_HDR_SIZE)
		return EINVAL;
	id->local_qpn = p->qp_num & 0xffffff;
	id->responder_resources = p->responder_resources;
	id->initiator_depth = p->initiator_depth;
	id->retry_count = p->retry_count & 7;
	id->rnr_retry_count = p->rnr_retry_count & 7;
	id->srq = p->srq;
	id->flow_control = p->flow_control;
	format_req(id, p, &m);
	id->state = CS_REQ_SENT;
	return cm_wire_send(id, &m, true);
}

/* A REJ to the peer of ID (reason, private data), the message rejected being
 * MSG_REJ (CM_MSG_REQ / CM_MSG_REP / CM_MSG_OTHER). */
static void send_rej(struct cm_id *id, uint16_t reason, uint8_t msg_rej, const uint8_t *pdata, uint8_t len,
		     const uint8_t *ari, uint8_t ari_len)
{
	struct cm_msg m;

	msg_init(&m, CM_ATTR_REJ);
	m.tid = id->tid;
	m.f[CMF_LOCAL_COMM_ID] = id->local_comm_id;
	m.f[CMF_REMOTE_COMM_ID] = id->remote_comm_id;
	m.f[CMF_MSG_REJECTED] = msg_rej;
	m.f[CMF_REASON] = reason;
	m.f[CMF_REJ_INFO_LEN] = ari_len;
	if (ari_len)
		memcpy(m.info, ari, ari_len);
	if (len)
		memcpy(m.private_data, pdata, len);
	cm_wire_send(id, &m, false);
}

static void send_sidr_rep(struct cm_id *id, uint8_t status, uint32_t qpn, uint32_t qkey, const uint8_t *pdata,
			  uint8_t len)
{
	struct cm_msg m;

	msg_init(&m, CM_ATTR_SIDR_REP);
	m.tid = id->tid;
	m.f[CMF_REQUEST_ID] = id->remote_comm_id;
	m.f[CMF_STATUS] = status;
	m.f[CMF_QPN] = qpn & 0xffffff;
	m.f[CMF_SERVICE_ID] = id->service_id;
	m.f[CMF_QKEY] = qkey;
	if (len)
		memcpy(m.private_data, pdata, len);
	cm_wire_send(id, &m, false);
}

/* The pending connect request of ID is answered: the listener's backlog
 * has room again. */
static void unpend(struct cm_id *id)
{
	if (id->listener) {
		id->listener->pending--;
		id->cm->n_pending--;
		id->listener = NULL;
	}
	if (id->pend_dev) {
		id->cm->n_pending_dev--;
		id->pend_dev = false;
	}
}

int cm_accept(struct cm_id *id, const struct rdma_ucm_conn_param *p)
{
	struct uroce_dev *d = id->cm->dev;
	struct cm_msg m;

	if (id->state == CS_REP_RCVD) {
		/* the active side's QP is in RTS: ucma's ACCEPT on it sends the RTU */
		msg_init(&m, CM_ATTR_RTU);
		m.f[CMF_LOCAL_COMM_ID] = id->local_comm_id;
		m.f[CMF_REMOTE_COMM_ID] = id->remote_comm_id;
		id->state = CS_ESTABLISHED;
		return cm_wire_send(id, &m, false);
	}
	if (id->state == CS_SIDR_REQ_RCVD) {
		if (p->private_data_len > 136)
			return EINVAL;
		id->state = CS_ESTABLISHED;
		unpend(id);
		send_sidr_rep(id, CM_SIDR_SUCCESS, p->qp_num,
			      id->ps == RDMA_PS_IB && p->qkey ? p->qkey : CM_UDP_QKEY, p->private_data,
			      p->private_data_len);
		return 0;
	}
	if (id->state != CS_REQ_RCVD)
		return EINVAL;
	if (!p->valid || p->private_data_len > 196)
		return EINVAL;
	id->local_qpn = p->qp_num & 0xffffff;
	id->responder_resources = p->responder_resources;
	id->initiator_depth = p->initiator_depth;
	/* the RNR retry count of this side's QP stays the REQ's: the REP's is
	 * the one the active side's QP uses (IBTA 12.7.31, 12.8.26) */
	id->srq = p->srq;
	msg_init(&m, CM_ATTR_REP);
	m.tid = id->tid;
	m.f[CMF_LOCAL_COMM_ID] = id->local_comm_id;
	m.f[CMF_REMOTE_COMM_ID] = id->remote_comm_id;
	m.f[CMF_LOCAL_QPN] = id->local_qpn;
	m.f[CMF_STARTING_PSN] = id->seq_num;
	m.f[CMF_RESPONDER_RESOURCES] = p->responder_resources;
	m.f[CMF_INITIATOR_DEPTH] = p->initiator_depth;
	m.f[CMF_TARGET_ACK_DELAY] = d->attr.local_ca_ack_delay;
	m.f[CMF_FLOW_CONTROL] = p->flow_control;
	m.f[CMF_RNR_RETRY_COUNT] = p->rnr_retry_count;
	m.f[CMF_SRQ] = p->srq ? 1 : 0;
	m.f[CMF_LOCAL_CA_GUID] = d->node_guid;
	memcpy(m.private_data, p->private_data, p->private_data_len);
	id->state = CS_REP_SENT;
	unpend(id);
	return cm_wire_send(id, &m, true);
}

int cm_reject(struct cm_id *id, uint8_t reason, const uint8_t *pdata, uint8_t len)
{
	if (id->state == CS_SIDR_REQ_RCVD) {
		if (len > 136)
			return EINVAL;
		unpend(id);
		send_sidr_rep(id, CM_SIDR_REJECT, 0, 0, pdata, len);
		id->state = CS_DISCONNECTED;
		return 0;
	}
	if (id->state != CS_REQ_RCVD && id->state != CS_REP_RCVD)
		return EINVAL;
	if (len > 148)
		return EINVAL;
	unpend(id);
	send_rej(id, reason, id->state == CS_REQ_RCVD ? CM_MSG_REQ : CM_MSG_REP, pdata, len, NULL, 0);
	id->state = CS_DISCONNECTED;
	return 0;
}

/* Timewait (cm.c cm_enter_timewait): the QP's ACK timeout, 4.096 us << it,
 * in the kernel's conversion (512 ms for 17). */
static void enter_timewait(struct cm_id *id)
{
	uint8_t t = id->timeout_set ? id->ack_timeout : cm_ack_timeout(id->cm->dev->attr.local_ca_ack_delay,
								       CM_PACKET_LIFETIME);

	id->state = CS_TIMEWAIT;
	cm_wire_timer(id, cm_convert_to_ms(t));
}

static void send_drep(struct cm_id *id)
{
	struct cm_msg m;

	msg_init(&m, CM_ATTR_DREP);
	m.f[CMF_LOCAL_COMM_ID] = id->local_comm_id;
	m.f[CMF_REMOTE_COMM_ID] = id->remote_comm_id;
	cm_wire_send(id, &m, false);
}

static void send_dreq(struct cm_id *id, bool expect)
{
	struct cm_msg m;

	msg_init(&m, CM_ATTR_DREQ);
	m.tid = ++id->cm->tid;
	id->tid = m.tid;
	m.f[CMF_LOCAL_COMM_ID] = id->local_comm_id;
	m.f[CMF_REMOTE_COMM_ID] = id->remote_comm_id;
	m.f[CMF_REMOTE_QPN] = id->remote_qpn;
	cm_wire_send(id, &m, expect);
}

int cm_disconnect(struct cm_id *id)
{
	switch (id->state) {
	case CS_ESTABLISHED:
		if (is_ud(id))
			return EINVAL;
		/* fall through */
	case CS_REP_RCVD:
		send_dreq(id, true);
		id->state = CS_DREQ_SENT;
		return 0;
	case CS_DREQ_RCVD:
		send_drep(id);
		enter_timewait(id);
		return 0;
	case CS_REQ_SENT: case CS_REQ_RCVD: case CS_REP_SENT: case CS_DREQ_SENT:
	case CS_TIMEWAIT: case CS_DISCONNECTED:
		return 0; /* cma: nothing to send in these states, not an error */
	default:
		return EINVAL;
	}
}

void cm_proto_destroy(struct cm_id *id)
{
	static const uint8_t no[1];

	switch (id->state) {
	case CS_REQ_SENT:
		/* cm_destroy_id: REJ "timeout" with the CA GUID as ARI */
		{
			uint8_t ari[8];
			uint64_t g = id->cm->dev->node_guid;
			int i;

			for (i = 7; i >= 0; i--, g >>= 8)
				ari[i] = (uint8_t)g;
			send_rej(id, CM_REJ_TIMEOUT, CM_MSG_REQ, no, 0, ari, 8);
		}
		break;
	case CS_REQ_RCVD: case CS_REP_SENT: case CS_REP_RCVD:
		send_rej(id, CM_REJ_CONSUMER_DEFINED, id->state == CS_REP_RCVD ? CM_MSG_REP : CM_MSG_REQ, no, 0,
			 NULL, 0);
		break;
	case CS_SIDR_REQ_RCVD:
		send_sidr_rep(id, CM_SIDR_REJECT, 0, 0, no, 0);
		break;
	case CS_ESTABLISHED:
		if (!is_ud(id))
			send_dreq(id, false);
		break;
	case CS_DREQ_RCVD:
		send_drep(id);
		break;
	default:
		break;
	}
}

void cm_destroy(struct cm_id *id)
{
	cm_proto_destroy(id);
	cm_wire_stop(id);
	cm_id_free(id);
}

static void post(struct cm_id *id, uint32_t event, int32_t status)
{
	struct rdma_ucm_event_resp ev;

	cm_event_init(id, &ev, event, status);
	cm_event_post(id, &ev);
}

void cm_proto_timeout(struct cm_id *id)
{
	switch (id->state) {
	case CS_REQ_SENT: case CS_REP_SENT: case CS_SIDR_REQ_SENT:
		id->cm->st.timeouts++;
		id->state = CS_DISCONNECTED;
		post(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		break;
	case CS_DREQ_SENT:
		id->cm->st.timeouts++;
		post(id, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT);
		enter_timewait(id);
		break;
	case CS_TIMEWAIT:
		id->state = CS_DISCONNECTED;
		post(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
		break;
	default:
		break;
	}
}

/* ---- received messages ---------------------------------------------- */

/* A REJ / SIDR_REP for a request nobody takes, without an id. */
static void refuse_req(struct cm_dev *cm, const struct cm_msg *req, const union ibv_gid *peer, uint16_t reason)
{
	struct cm_msg m;

	if (req->attr_id == CM_ATTR_SIDR_REQ) {
		msg_init(&m, CM_ATTR_SIDR_REP);
		m.f[CMF_REQUEST_ID] = req->f[CMF_REQUEST_ID];
		m.f[CMF_STATUS] = reason;
		m.f[CMF_SERVICE_ID] = req->f[CMF_SERVICE_ID];
	} else {
		msg_init(&m, CM_ATTR_REJ);
		m.f[CMF_REMOTE_COMM_ID] = req->f[CMF_LOCAL_COMM_ID];
		m.f[CMF_MSG_REJECTED] = CM_MSG_REQ;
		m.f[CMF_REASON] = reason;
	}
	m.tid = req->tid;
	cm_wire_send_to(cm, peer, &m);
}

/* REQ or SIDR_REQ: a connect request for a listener. */
static void on_req(struct cm_dev *cm, const struct cm_msg *m, const union ibv_gid *peer)
{
	bool sidr = m->attr_id == CM_ATTR_SIDR_REQ;
	uint32_t rid = (uint32_t)(sidr ? m->f[CMF_REQUEST_ID] : m->f[CMF_LOCAL_COMM_ID]);
	uint64_t sid = m->f[CMF_SERVICE_ID];
	uint16_t ps = (uint16_t)(sid >> 16), dport = (uint16_t)sid, sport;
	uint8_t src[16], dst[16];
	struct rdma_ucm_event_resp ev;
	struct cm_id *l, *id;
	int family, err;
	uid_t owner;
	bool quota;

	id = cm_find_remote(cm, rid, peer);
	if (id) {
		/* a retransmitted request (cm.c cm_dup_req_handler): an MRA
		 * while the application has not answered (cma put the id in
		 * MRA_REQ_SENT when it gave the CONNECT_REQUEST), REJ "stale
		 * connection" in timewait, else nothing (a REP out is resent
		 * by its own timer); never a second CONNECT_REQUEST */
		cm->st.dup++;
		if (id->state == CS_REQ_RCVD)
			cm_send_mra(id, CM_MSG_REQ);
		else if (id->state == CS_TIMEWAIT && !sidr)
			send_rej(id, CM_REJ_STALE_CONN, CM_MSG_REQ, NULL, 0, NULL, 0);
		return;
	}
	if ((sid >> 32) || (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB) ||
	    hdr_get(m->private_data, src, dst, &sport, &family) ||
	    family != cm->dev->addr.ss_family) {
		cm->st.drops++;
		refuse_req(cm, m, peer, sidr ? CM_SIDR_UNSUPPORTED : CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	l = cm_find_listener(cm, ps, dport, dst);
	if (!l || (sidr != is_ud(l))) {
		refuse_req(cm, m, peer, sidr ? CM_SIDR_UNSUPPORTED : CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	/* the device-wide bound is for owners without a quota: a uid with one
	 * is bound by its quota of ids (cm_id_new), so it cannot use up the
	 * device's room for other users' listeners */
	owner = l->conn->client->uid;
	quota = owner != 0 && owner != cm->dev->uid;
	if (l->pending >= l->backlog || (!quota && cm->n_pending_dev >= CM_PENDING_DEV_MAX) ||
	    !cm_event_room(l->conn)) {
		cm->st.rej_backlog++;
		refuse_req(cm, m, peer, sidr ? CM_SIDR_REJECT : CM_REJ_CONSUMER_DEFINED);
		return;
	}
	id = cm_id_new(l->conn, l->uid, ps, l->qp_type, &err);
	if (!id) {
		cm->st.rej_backlog++;
		refuse_req(cm, m, peer, sidr ? CM_SIDR_REJECT : CM_REJ_CONSUMER_DEFINED);
		return;
	}
	id->passive = true;
	id->listener = l;
	l->pending++;
	cm->n_pending++;
	if (!quota) {
		id->pend_dev = true;
		cm->n_pending_dev++;
	}
	id->tos = l->tos;
	id->tos_set = l->tos_set;
	id->timeout_set = l->timeout_set;
	id->ack_timeout = l->ack_timeout;
	id->remote_comm_id = rid;
	id->peer_gid = *peer;
	id->tid = m->tid;
	id->service_id = sid;
	cm_sa_make(&id->src, family, dst, dport);
	cm_sa_make(&id->dst, family, src, sport);
	cm_event_init(id, &ev, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	ev.uid = l->uid;
	if (sidr) {
		id->state = CS_SIDR_REQ_RCVD;
		ev.param.ud.private_data_len = 216 - CM_HDR_SIZE;
		memcpy(ev.param.ud.private_data, m->private_data + CM_HDR_SIZE, 216 - CM_HDR_SIZE);
	} else {
		id->state = CS_REQ_RCVD;
		id->remote_qpn = (uint32_t)m->f[CMF_LOCAL_QPN];
		id->peer_psn = (uint32_t)m->f[CMF_STARTING_PSN];
		id->path_mtu = m->f[CMF_PATH_MTU] && m->f[CMF_PATH_MTU] < cm->dev->active_mtu
				       ? (uint8_t)m->f[CMF_PATH_MTU] : cm->dev->active_mtu;
		/* cm.c cm_format_req_event: the peer's initiator depth is this
		 * side's responder resources and the reverse */
		id->responder_resources = (uint8_t)m->f[CMF_INITIATOR_DEPTH];
		id->initiator_depth = (uint8_t)m->f[CMF_RESPONDER_RESOURCES];
		id->retry_count = (uint8_t)m->f[CMF_RETRY_COUNT];
		id->rnr_retry_count = (uint8_t)m->f[CMF_RNR_RETRY_COUNT];
		id->srq = (uint8_t)m->f[CMF_SRQ];
		id->flow_control = (uint8_t)m->f[CMF_FLOW_CONTROL];
		/* the REP and a DREQ of this side are resent as often as the
		 * REQ says */
		id->max_cm_retries = (uint8_t)m->f[CMF_MAX_CM_RETRIES];
		ev.param.conn.private_data_len = 92 - CM_HDR_SIZE;
		memcpy(ev.param.conn.private_data, m->private_data + CM_HDR_SIZE, 92 - CM_HDR_SIZE);
		ev.param.conn.responder_resources = id->responder_resources;
		ev.param.conn.initiator_depth = id->initiator_depth;
		ev.param.conn.flow_control = id->flow_control;
		ev.param.conn.retry_count = id->retry_count;
		ev.param.conn.rnr_retry_count = id->rnr_retry_count;
		ev.param.conn.srq = id->srq;
		ev.param.conn.qp_num = id->remote_qpn;
	}
	cm_event_post(l, &ev);
	/* the event counts for the new id (DESTROY_ID's events_reported) */
	l->events_reported--;
	id->events_reported++;
}

static void on_rep(struct cm_id *id, const struct cm_msg *m)
{
	struct rdma_ucm_event_resp ev;

	if (id->state == CS_ESTABLISHED) {
		/* the RTU was lost: cm_dup_rep_handler resends it */
		id->cm->st.dup++;
		cm_wire_resend(id);
		return;
	}
	if (id->state != CS_REQ_SENT) {
		/* cm_dup_rep_handler: an MRA while the application has not
		 * answered the CONNECT_RESPONSE (MRA_REP_SENT) */
		id->cm->st.dup++;
		if (id->state == CS_REP_RCVD)
			cm_send_mra(id, CM_MSG_REP);
		return;
	}
	cm_wire_stop(id);
	id->remote_comm_id = (uint32_t)m->f[CMF_LOCAL_COMM_ID];
	id->remote_qpn = (uint32_t)m->f[CMF_LOCAL_QPN];
	id->peer_psn = (uint32_t)m->f[CMF_STARTING_PSN];
	id->initiator_depth = (uint8_t)m->f[CMF_RESPONDER_RESOURCES];
	id->responder_resources = (uint8_t)m->f[CMF_INITIATOR_DEPTH];
	id->rnr_retry_count = (uint8_t)m->f[CMF_RNR_RETRY_COUNT];
	id->srq = (uint8_t)m->f[CMF_SRQ];
	id->peer_ack_delay = (uint8_t)m->f[CMF_TARGET_ACK_DELAY];
	id->state = CS_REP_RCVD;
	cm_event_init(id, &ev, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	ev.param.conn.private_data_len = 196;
	memcpy(ev.param.conn.private_data, m->private_data, 196);
	ev.param.conn.responder_resources = id->responder_resources;
	ev.param.conn.initiator_depth = id->initiator_depth;
	ev.param.conn.flow_control = (uint8_t)m->f[CMF_FLOW_CONTROL];
	ev.param.conn.rnr_retry_count = id->rnr_retry_count;
	ev.param.conn.srq = id->srq;
	ev.param.conn.qp_num = id->remote_qpn;
	cm_event_post(id, &ev);
}

static void on_rtu(struct cm_id *id)
{
	if (id->state != CS_REP_SENT) {
		id->cm->st.dup++;
		return;
	}
	cm_wire_stop(id);
	id->state = CS_ESTABLISHED;
	post(id, RDMA_CM_EVENT_ESTABLISHED, 0);
}

static void on_rej(struct cm_id *id, const struct cm_msg *m)
{
	struct rdma_ucm_event_resp ev;

	switch (id->state) {
	case CS_REQ_SENT: case CS_REQ_RCVD: case CS_REP_SENT: case CS_REP_RCVD: case CS_ESTABLISHED:
		break;
	default:
		id->cm->st.dup++;
		return;
	}
	cm_wire_stop(id);
	unpend(id);
	id->state = CS_DISCONNECTED;
	cm_event_init(id, &ev, RDMA_CM_EVENT_REJECTED, (int32_t)m->f[CMF_REASON]);
	ev.param.conn.private_data_len = 148;
	memcpy(ev.param.conn.private_data, m->private_data, 148);
	cm_event_post(id, &ev);
}

static void on_dreq(struct cm_id *id, const struct cm_msg *m)
{
	if (m->f[CMF_REMOTE_QPN] != id->local_qpn) {
		id->cm->st.drops++; /* cm_dreq_handler: not this QP's */
		return;
	}
	switch (id->state) {
	case CS_ESTABLISHED: case CS_REP_SENT: case CS_REP_RCVD:
		/* the DREP goes at once: the peer's DISCONNECTED does not wait
		 * for this application's rdma_disconnect (which then finds the
		 * id in timewait and sends nothing) */
		cm_wire_stop(id);
		send_drep(id);
		post(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		enter_timewait(id);
		break;
	case CS_DREQ_SENT:
		/* both sides disconnect at once: answer, and this side is done */
		cm_wire_stop(id);
		send_drep(id);
		post(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		enter_timewait(id);
		break;
	case CS_TIMEWAIT:
		/* our DREP was lost: resend it */
		id->cm->st.dup++;
		send_drep(id);
		break;
	case CS_DREQ_RCVD:
		id->cm->st.dup++;
		break;
	default:
		/* cm_dreq_handler's default: no connection yet (a CONNECT_REQUEST
		 * not answered, a REQ out): dropped, no DREP; the request or the
		 * REQ goes on */
		id->cm->st.drops++;
		break;
	}
}

static void on_drep(struct cm_id *id)
{
	if (id->state != CS_DREQ_SENT) {
		id->cm->st.dup++;
		return;
	}
	cm_wire_stop(id);
	post(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	enter_timewait(id);
}

static void on_sidr_rep(struct cm_id *id, const struct cm_msg *m)
{
	struct rdma_ucm_event_resp ev;
	union ibv_gid me;

	if (id->state != CS_SIDR_REQ_SENT) {
		id->cm->st.dup++;
		return;
	}
	cm_wire_stop(id);
	if (m->f[CMF_STATUS] != CM_SIDR_SUCCESS) {
		id->state = CS_DISCONNECTED;
		cm_event_init(id, &ev, RDMA_CM_EVENT_UNREACHABLE, (int32_t)m->f[CMF_STATUS]);
	} else if (id->ps == RDMA_PS_UDP && m->f[CMF_QKEY] != CM_UDP_QKEY) {
		/* cma_sidr_rep_handler: cma_set_qkey refuses another Q_Key */
		id->state = CS_DISCONNECTED;
		cm_event_init(id, &ev, RDMA_CM_EVENT_ADDR_ERROR, -EINVAL);
	} else {
		id->state = CS_ESTABLISHED;
		id->remote_qpn = (uint32_t)m->f[CMF_QPN];
		id->remote_qkey = (uint32_t)m->f[CMF_QKEY];
		cm_event_init(id, &ev, RDMA_CM_EVENT_ESTABLISHED, 0);
		ev.param.ud.qp_num = id->remote_qpn;
		ev.param.ud.qkey = id->remote_qkey;
		cm_dev_gid(id->cm, &me);
		memcpy(ev.param.ud.ah_attr.grh.dgid, id->peer_gid.raw, 16);
		ev.param.ud.ah_attr.grh.sgid_index = 0;
		ev.param.ud.ah_attr.grh.hop_limit = CM_DEFAULT_HOP_LIMIT;
		ev.param.ud.ah_attr.grh.traffic_class = id->tos;
		ev.param.ud.ah_attr.is_global = 1;
		ev.param.ud.ah_attr.port_num = 1;
	}
	ev.param.ud.private_data_len = 136;
	memcpy(ev.param.ud.private_data, m->private_data, 136);
	cm_event_post(id, &ev);
}

void cm_proto_input(struct cm_dev *cm, const struct cm_msg *m, const union ibv_gid *peer)
{
	struct cm_id *id;
	uint32_t mine;

	if (m->method != CM_METHOD_SEND) {
		cm->st.drops++; /* ClassPortInfo GETs and responses: not answered */
		return;
	}
	switch (m->attr_id) {
	case CM_ATTR_REQ:
	case CM_ATTR_SIDR_REQ:
		on_req(cm, m, peer);
		return;
	case CM_ATTR_SIDR_REP:
		mine = (uint32_t)m->f[CMF_REQUEST_ID];
		break;
	case CM_ATTR_REJ:
		if (m->f[CMF_REASON] == CM_REJ_TIMEOUT) {
			/* cm_acquire_rejected_id: a peer that gives up its REQ
			 * does not know our comm ID; it names its own */
			id = cm_find_remote(cm, (uint32_t)m->f[CMF_LOCAL_COMM_ID], peer);
			if (!id) {
				cm->st.drops++;
				return;
			}
			on_rej(id, m);
			return;
		}
		mine = (uint32_t)m->f[CMF_REMOTE_COMM_ID];
		break;
	case CM_ATTR_LAP: case CM_ATTR_APR:
		/* cm.c refuses alternate paths on RoCE: dropped */
		cm->st.drops++;
		return;
	default:
		mine = (uint32_t)m->f[CMF_REMOTE_COMM_ID];
		break;
	}
	id = cm_find_comm(cm, mine);
	if (id && memcmp(id->peer_gid.raw, peer->raw, 16)) {
		/* only the peer of a connection may move it */
		cm->st.drops++;
		return;
	}
	/* and once its comm ID is known only with both (cm.c's
	 * cm_acquire_id; a REJ too) */
	if (!id || (id->remote_comm_id && m->attr_id != CM_ATTR_SIDR_REP &&
		    m->f[CMF_LOCAL_COMM_ID] != id->remote_comm_id)) {
		if (m->attr_id == CM_ATTR_DREQ) {
			cm_issue_drep(cm, m, peer);
			return;
		}
		cm->st.drops++;
		return;
	}
	switch (m->attr_id) {
	case CM_ATTR_REP: on_rep(id, m); break;
	case CM_ATTR_RTU: on_rtu(id); break;
	case CM_ATTR_REJ: on_rej(id, m); break;
	case CM_ATTR_MRA: cm_on_mra(id, m); break;
	case CM_ATTR_DREQ: on_dreq(id, m); break;
	case CM_ATTR_DREP: on_drep(id); break;
	case CM_ATTR_SIDR_REP: on_sidr_rep(id, m); break;
	default: cm->st.drops++; break;
	}
}
