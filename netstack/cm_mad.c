/*
 * cm_mad.c - CM MAD layouts as tables (see cm_mad.h). Offsets are those of
 * IBTA Vol 1 12.6.5 (REQ) .. 12.6.14 and 12.11 (SIDR), counted from the start
 * of the message (byte 24 of the MAD).
 */
#include "config.h"
#include "netstack/cm_mad.h"

#include <string.h>

/* One field: the big-endian word of SIZE bytes (1, 2, 4, 8) at byte OFF of
 * the message holds it at bits SHIFT .. SHIFT+WIDTH-1. */
struct cm_row {
	uint8_t field;
	uint8_t off, size, shift, width;
};


struct cm_layout {
	uint16_t attr_id;
	const char *name;
	uint8_t priv_off, priv_len;
	uint8_t info_off; /* 0 = none; 72 bytes */
	bool gids;        /* REQ primary path GIDs at 56 and 72 */
	const struct cm_row *rows;
	unsigned int nrows;
};

#define R(f, o, s, sh, w) { CMF_##f, o, s, sh, w }
#define COMM_IDS R(LOCAL_COMM_ID, 0, 4, 0, 32), R(REMOTE_COMM_ID, 4, 4, 0, 32)

static const struct cm_row req_rows[] = {
	R(LOCAL_COMM_ID, 0, 4, 0, 32),
	R(SERVICE_ID, 8, 8, 0, 64),
	R(LOCAL_CA_GUID, 16, 8, 0, 64),
	R(LOCAL_QKEY, 28, 4, 0, 32),
	R(LOCAL_QPN, 32, 4, 8, 24), R(RESPONDER_RESOURCES, 32, 4, 0, 8),
	R(LOCAL_EECN, 36, 4, 8, 24), R(INITIATOR_DEPTH, 36, 4, 0, 8),
	R(REMOTE_EECN, 40, 4, 8, 24), R(REMOTE_CM_RESPONSE_TIMEOUT, 40, 4, 3, 5),
	R(TRANSPORT_SERVICE_TYPE, 40, 4, 1, 2), R(FLOW_CONTROL, 40, 4, 0, 1),
	R(STARTING_PSN, 44, 4, 8, 24), R(LOCAL_CM_RESPONSE_TIMEOUT, 44, 4, 3, 5),
	R(RETRY_COUNT, 44, 4, 0, 3),
	R(PKEY, 48, 2, 0, 16),
	R(PATH_MTU, 50, 1, 4, 4), R(RDC_EXISTS, 50, 1, 3, 1), R(RNR_RETRY_COUNT, 50, 1, 0, 3),
	R(MAX_CM_RETRIES, 51, 1, 4, 4), R(SRQ, 51, 1, 3, 1), R(EXT_TRANSPORT_TYPE, 51, 1, 0, 3),
	R(PRI_LOCAL_LID, 52, 2, 0, 16), R(PRI_REMOTE_LID, 54, 2, 0, 16),
	R(PRI_FLOW_LABEL, 88, 4, 12, 20), R(PRI_PACKET_RATE, 88, 4, 0, 6),
	R(PRI_TRAFFIC_CLASS, 92, 1, 0, 8), R(PRI_HOP_LIMIT, 93, 1, 0, 8),
	R(PRI_SL, 94, 1, 4, 4), R(PRI_SUBNET_LOCAL, 94, 1, 3, 1),
	R(PRI_LOCAL_ACK_TIMEOUT, 95, 1, 3, 5),
};
static const struct cm_row mra_rows[] = {
	COMM_IDS, R(MSG_MRAED, 8, 1, 6, 2), R(SERVICE_TIMEOUT, 9, 1, 3, 5),
};
static const struct cm_row rej_rows[] = {
	COMM_IDS, R(MSG_REJECTED, 8, 1, 6, 2), R(REJ_INFO_LEN, 9, 1, 1, 7), R(REASON, 10, 2, 0, 16),
};
static const struct cm_row rep_rows[] = {
	COMM_IDS,
	R(LOCAL_QKEY, 8, 4, 0, 32),
	R(LOCAL_QPN, 12, 4, 8, 24),
	R(LOCAL_EECN, 16, 4, 8, 24),
	R(STARTING_PSN, 20, 4, 8, 24),
	R(RESPONDER_RESOURCES, 24, 1, 0, 8), R(INITIATOR_DEPTH, 25, 1, 0, 8),
	R(TARGET_ACK_DELAY, 26, 1, 3, 5), R(FAILOVER_ACCEPTED, 26, 1, 1, 2), R(FLOW_CONTROL, 26, 1, 0, 1),
	R(RNR_RETRY_COUNT, 27, 1, 5, 3), R(SRQ, 27, 1, 4, 1),
	R(LOCAL_CA_GUID, 28, 8, 0, 64),
};
static const struct cm_row ids_rows[] = { COMM_IDS };
static const struct cm_row dreq_rows[] = { COMM_IDS, R(REMOTE_QPN, 8, 4, 8, 24) };
static const struct cm_row sidr_req_rows[] = {
	R(REQUEST_ID, 0, 4, 0, 32), R(PKEY, 4, 2, 0, 16), R(SERVICE_ID, 8, 8, 0, 64),
};
static const struct cm_row sidr_rep_rows[] = {
	R(REQUEST_ID, 0, 4, 0, 32), R(STATUS, 4, 1, 0, 8), R(ADD_INFO_LEN, 5, 1, 0, 8),
	R(QPN, 8, 4, 8, 24), R(SERVICE_ID, 12, 8, 0, 64), R(QKEY, 20, 4, 0, 32),
};
static const struct cm_row lap_rows[] = {
	COMM_IDS, R(REMOTE_QPN, 12, 4, 8, 24), R(REMOTE_CM_RESPONSE_TIMEOUT, 12, 4, 3, 5),
};
static const struct cm_row apr_rows[] = {
	COMM_IDS, R(ADD_INFO_LEN, 8, 1, 0, 8), R(AP_STATUS, 9, 1, 0, 8),
};

#define ROWS(r) r, sizeof(r) / sizeof((r)[0])
static const struct cm_layout layouts[] = {
	{ CM_ATTR_CLASS_PORT_INFO, "ClassPortInfo", 0, 0, 0, false, NULL, 0 },
	{ CM_ATTR_REQ, "REQ", 140, 92, 0, true, ROWS(req_rows) },
	{ CM_ATTR_MRA, "MRA", 10, 222, 0, false, ROWS(mra_rows) },
	{ CM_ATTR_REJ, "REJ", 84, 148, 12, false, ROWS(rej_rows) },
	{ CM_ATTR_REP, "REP", 36, 196, 0, false, ROWS(rep_rows) },
	{ CM_ATTR_RTU, "RTU", 8, 224, 0, false, ROWS(ids_rows) },
	{ CM_ATTR_DREQ, "DREQ", 12, 220, 0, false, ROWS(dreq_rows) },
	{ CM_ATTR_DREP, "DREP", 8, 224, 0, false, ROWS(ids_rows) },
	{ CM_ATTR_SIDR_REQ, "SIDR_REQ", 16, 216, 0, false, ROWS(sidr_req_rows) },
	{ CM_ATTR_SIDR_REP, "SIDR_REP", 96, 136, 24, false, ROWS(sidr_rep_rows) },
	{ CM_ATTR_LAP, "LAP", 64, 168, 0, false, ROWS(lap_rows) },
	{ CM_ATTR_APR, "APR", 84, 148, 12, false, ROWS(apr_rows) },
};

static const struct cm_layout *layout_of(uint16_t attr_id)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].attr_id == attr_id)
			return &layouts[i];
	return NULL;
}

unsigned int cm_private_size(uint16_t attr_id)
{
	const struct cm_layout *l = layout_of(attr_id);

	return l ? l->priv_len : 0;
}

const char *cm_attr_name(uint16_t attr_id)
{
	const struct cm_layout *l = layout_of(attr_id);

	return l ? l->name : "?";
}

static uint64_t get_be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be(uint8_t *p, unsigned int n, uint64_t v)
{
	unsigned int i;

	for (i = n; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t width_mask(unsigned int w)
{
	return w >= 64 ? ~0ull : (1ull << w) - 1;
}

int cm_mad_encode(const struct cm_msg *m, uint8_t out[CM_MAD_SIZE])
{
	const struct cm_layout *l = layout_of(m->attr_id);
	uint8_t *msg = out + CM_MAD_HDR_SIZE;
	unsigned int i;

	if (!l)
		return -1;
	memset(out, 0, CM_MAD_SIZE);
	out[0] = CM_BASE_VERSION;
	out[1] = CM_MGMT_CLASS;
	out[2] = CM_CLASS_VERSION;
	out[3] = m->method;
	put_be(out + 4, 2, m->status);
	put_be(out + 8, 8, m->tid);
	put_be(out + 16, 2, m->attr_id);
	put_be(out + 20, 4, m->attr_mod);
	for (i = 0; i < l->nrows; i++) {
		const struct cm_row *r = &l->rows[i];
		uint64_t mask = width_mask(r->width) << r->shift;
		uint64_t w = get_be(msg + r->off, r->size);

		w = (w & ~mask) | ((m->f[r->field] << r->shift) & mask);
		put_be(msg + r->off, r->size, w);
	}
	if (l->gids) {
		memcpy(msg + 56, m->pri_local_gid, 16);
		memcpy(msg + 72, m->pri_remote_gid, 16);
	}
	if (l->info_off)
		memcpy(msg + l->info_off, m->info, 72);
	if (l->priv_len)
		memcpy(msg + l->priv_off, m->private_data, l->priv_len);
	return 0;
}

int cm_mad_decode(const uint8_t *buf, size_t len, struct cm_msg *m)
{
	const struct cm_layout *l;
	const uint8_t *msg = buf + CM_MAD_HDR_SIZE;
	unsigned int i;

	if (!buf || len != CM_MAD_SIZE || buf[0] != CM_BASE_VERSION || buf[1] != CM_MGMT_CLASS ||
	    buf[2] != CM_CLASS_VERSION)
		return -1;
	l = layout_of((uint16_t)get_be(buf + 16, 2));
	if (!l)
		return -1;
	memset(m, 0, sizeof(*m));
	m->method = buf[3];
	m->status = (uint16_t)get_be(buf + 4, 2);
	m->tid = get_be(buf + 8, 8);
	m->attr_id = l->attr_id;
	m->attr_mod = (uint32_t)get_be(buf + 20, 4);
	for (i = 0; i < l->nrows; i++) {
		const struct cm_row *r = &l->rows[i];

		m->f[r->field] = (get_be(msg + r->off, r->size) >> r->shift) & width_mask(r->width);
	}
	if (l->gids) {
		memcpy(m->pri_local_gid, msg + 56, 16);
		memcpy(m->pri_remote_gid, msg + 72, 16);
	}
	if (l->info_off)
		memcpy(m->info, msg + l->info_off, 72);
	if (l->priv_len)
		memcpy(m->private_data, msg + l->priv_off, l->priv_len);
	m->private_len = l->priv_len;
	return 0;
}
