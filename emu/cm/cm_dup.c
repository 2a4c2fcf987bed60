/*
 * cm_dup.c - what the CM answers for a duplicate or a receipt
 * acknowledgement, as the kernel's cm.c does (IBTA 12.6.6 MRA, 12.9.7
 * duplicates): the MRA sent for a duplicate REQ or REP while the
 * application has not answered (cm_dup_req_handler, cm_dup_rep_handler with
 * cma's ib_prepare_cm_mra), an MRA received (cm_mra_handler), the DREP for a
 * DREQ of no connection (cm_issue_drep), and cm.c's conversion of IBA times
 * to milliseconds. The state machine that calls these is cm_conn.c.
 */
#include "config.h"
#include "emu/cm/cm_int.h"

#include <string.h>

/* cm.c cm_convert_to_ms: IBA time T (4.096 us * 2^T) in ms, as the kernel
 * approximates it (2^(T-8)). */
uint32_t cm_convert_to_ms(uint8_t t)
{
	return 1u << (t > 8 ? t - 8 : 0);
}

/* The MRA of ID for the message MSG_MRAED (CM_MSG_REQ / CM_MSG_REP) its
 * peer sent again (cm.c cm_dup_req_handler / cm_dup_rep_handler in
 * MRA_REQ_SENT / MRA_REP_SENT, cm_format_mra): the application has not
 * answered yet, so the peer is told to wait CM_MRA_SETTING longer. */
void cm_send_mra(struct cm_id *id, uint8_t msg_mraed)
{
	struct cm_msg m;

	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_MRA;
	m.tid = id->tid;
	m.f[CMF_LOCAL_COMM_ID] = id->local_comm_id;
	m.f[CMF_REMOTE_COMM_ID] = id->remote_comm_id;
	m.f[CMF_MSG_MRAED] = msg_mraed;
	m.f[CMF_SERVICE_TIMEOUT] = CM_MRA_SETTING;
	cm_wire_reply(id, &m);
}

void cm_on_mra(struct cm_id *id, const struct cm_msg *m)
{
	uint8_t want = id->state == CS_REQ_SENT ? CM_MSG_REQ : id->state == CS_REP_SENT ? CM_MSG_REP : 0xff;

	/* cm.c cm_mra_handler: an MRA of the REQ in REQ_SENT or of the REP in
	 * REP_SENT, once (a second one, in MRA_*_RCVD, is a duplicate); the
	 * MAD then waits the MRA's service timeout plus the packet lifetime
	 * part (av.timeout 17), now and before each resend left */
	if (!id->mad_expects_answer || id->mra_rcvd || m->f[CMF_MSG_MRAED] != want) {
		id->cm->st.dup++;
		return;
	}
	cm_wire_mra(id, cm_convert_to_ms((uint8_t)m->f[CMF_SERVICE_TIMEOUT]) + cm_convert_to_ms(CM_PACKET_LIFETIME + 1));
	id->mra_rcvd = true;
}

/* A DREQ for no connection of ours (cm.c cm_dreq_handler, cm_issue_drep):
 * the peer's DREQ was answered and the connection forgotten, or never
 * existed; a DREP lets the peer end its wait. Counted as a duplicate. */
void cm_issue_drep(struct cm_dev *cm, const struct cm_msg *dreq, const union ibv_gid *peer)
{
	struct cm_msg m;

	cm->st.dup++;
	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_DREP;
	m.tid = dreq->tid;
	m.f[CMF_LOCAL_COMM_ID] = dreq->f[CMF_REMOTE_COMM_ID];
	m.f[CMF_REMOTE_COMM_ID] = dreq->f[CMF_LOCAL_COMM_ID];
	cm_wire_send_to(cm, peer, &m);
}
