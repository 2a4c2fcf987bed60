/*
 * cm_mad.h - the communication manager's MADs (IBTA Vol 1 ch. 12.6, the CM
 * messages; ch. 13.4, the MAD common header), encoded and decoded bit-exact.
 *
 * A CM MAD is a 256-byte general management packet: the 24-byte MAD common
 * header (base version 1, management class 0x07 = CM, class version 2, method,
 * status, transaction ID, attribute ID, attribute modifier) then the message
 * (232 bytes). On RoCE it travels as the payload of a UD SEND_ONLY to QP1
 * (IBTA Annex A16/A17); the transport headers are netstack/packet.h's.
 *
 * Every field of every message is one row of a table (cm_mad.c): the byte
 * offset of the big-endian word holding it, the word's size, the bit shift and
 * the width. A message is a struct cm_msg whose values are indexed by enum
 * cm_field; encoding writes each row of the attribute's table, decoding reads
 * them. Fields an attribute does not carry are ignored when encoding and 0
 * after decoding.
 */
#ifndef UROCE_NETSTACK_CM_MAD_H
#define UROCE_NETSTACK_CM_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_MAD_SIZE 256
#define CM_MAD_HDR_SIZE 24
#define CM_MGMT_CLASS 0x07
#define CM_CLASS_VERSION 2
#define CM_BASE_VERSION 1
#define CM_METHOD_GET 0x01
#define CM_METHOD_SEND 0x03
#define CM_METHOD_GET_RESP 0x81

/* QP1 constants on RoCE (IBTA 13.4.6.2 GSI; Annex A16): Q_Key of the GSI. */
#define CM_GSI_QKEY 0x80010000u
#define CM_GSI_QPN 1u

/* Attribute IDs (IBTA Table 97). */
enum cm_attr {
	CM_ATTR_CLASS_PORT_INFO = 0x0001,
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017,
	CM_ATTR_SIDR_REP = 0x0018,
	CM_ATTR_LAP = 0x0019,
	CM_ATTR_APR = 0x001A,
};

/* Values of the messages' numeric fields (host order). */
enum cm_field {
	CMF_LOCAL_COMM_ID, CMF_REMOTE_COMM_ID, CMF_SERVICE_ID, CMF_LOCAL_CA_GUID,
	CMF_LOCAL_QKEY, CMF_LOCAL_QPN, CMF_RESPONDER_RESOURCES, CMF_LOCAL_EECN,
	CMF_INITIATOR_DEPTH, CMF_REMOTE_EECN, CMF_REMOTE_CM_RESPONSE_TIMEOUT,
	CMF_TRANSPORT_SERVICE_TYPE, CMF_FLOW_CONTROL, CMF_STARTING_PSN,
	CMF_LOCAL_CM_RESPONSE_TIMEOUT, CMF_RETRY_COUNT, CMF_PKEY, CMF_PATH_MTU,
	CMF_RDC_EXISTS, CMF_RNR_RETRY_COUNT, CMF_MAX_CM_RETRIES, CMF_SRQ,
	CMF_EXT_TRANSPORT_TYPE, CMF_PRI_LOCAL_LID, CMF_PRI_REMOTE_LID,
	CMF_PRI_FLOW_LABEL, CMF_PRI_PACKET_RATE, CMF_PRI_TRAFFIC_CLASS,
	CMF_PRI_HOP_LIMIT, CMF_PRI_SL, CMF_PRI_SUBNET_LOCAL, CMF_PRI_LOCAL_ACK_TIMEOUT,
	CMF_MSG_MRAED, CMF_SERVICE_TIMEOUT, CMF_MSG_REJECTED, CMF_REJ_INFO_LEN,
	CMF_REASON, CMF_TARGET_ACK_DELAY, CMF_FAILOVER_ACCEPTED, CMF_REMOTE_QPN,
	CMF_REQUEST_ID, CMF_STATUS, CMF_ADD_INFO_LEN, CMF_QPN, CMF_QKEY, CMF_AP_STATUS,
	CMF_NFIELDS
};

/* REJ reasons (IBTA Table 108) and SIDR_REP statuses (Table 119) used here. */
#define CM_REJ_TIMEOUT 1
#define CM_REJ_STALE_CONN 10
#define CM_REJ_INVALID_SERVICE_ID 8
#define CM_REJ_INVALID_COMM_ID 13
#define CM_REJ_CONSUMER_DEFINED 28
#define CM_SIDR_SUCCESS 0
#define CM_SIDR_UNSUPPORTED 1
#define CM_SIDR_REJECT 2
/* MessageRejected / MessageMRAed values (IBTA Table 107). */
#define CM_MSG_REQ 0
#define CM_MSG_REP 1
#define CM_MSG_OTHER 2

/* One decoded CM MAD. */
struct cm_msg {
	/* MAD common header */
	uint8_t method;
	uint16_t status;
	uint64_t tid;
	uint16_t attr_id;         /* enum cm_attr */
	uint32_t attr_mod;
	/* message */
	uint64_t f[CMF_NFIELDS];  /* numeric fields, enum cm_field */
	uint8_t pri_local_gid[16], pri_remote_gid[16]; /* REQ */
	uint8_t info[72];         /* REJ ARI, SIDR_REP ClassPortInfo, APR additional info */
	uint8_t private_data[224];
	uint8_t private_len;      /* the attribute's private data size (cm_private_size) */
};

/* Bytes of private data the attribute ATTR carries (REQ 92, MRA 222, REJ 148,
 * REP 196, RTU 224, DREQ 220, DREP 224, SIDR_REQ 216, SIDR_REP 136, LAP 168,
 * APR 148; IBTA 12.6), 0 for others. */
unsigned int cm_private_size(uint16_t attr_id);

/* Name of ATTR ("REQ", "REP", ...; "?" if unknown). */
const char *cm_attr_name(uint16_t attr_id);

/*
 * cm_mad_encode - write M as a 256-byte MAD into OUT: the common header
 * (base version 1, class 0x07, class version 2, M's method, status, TID,
 * attribute ID and modifier; reserved fields 0), then M's fields of its
 * attribute at their IBTA offsets, its private data (cm_private_size bytes
 * of private_data), everything else 0. Values wider than their field are
 * truncated to it. Returns 0, or -1 for an attribute without a layout here.
 */
int cm_mad_encode(const struct cm_msg *m, uint8_t out[CM_MAD_SIZE]);

/*
 * cm_mad_decode - decode LEN bytes at BUF into M. Refused (-1): LEN other than
 * CM_MAD_SIZE, base version not 1, class not 0x07, class version not 2, an
 * attribute without a layout. ClassPortInfo decodes its header only.
 */
int cm_mad_decode(const uint8_t *buf, size_t len, struct cm_msg *m);

#endif
