/*
 * netstack_cm_mad.c - CM MAD encode/decode (netstack/cm_mad.h) against the
 * IBTA layouts: each row encodes one message with chosen values and lists the
 * exact bytes expected at their MAD offsets (written out by hand from IBTA
 * Vol 1 12.6 / 12.11, not from the codec's table), then decodes the result
 * back. Malformed MADs (wrong length, base version, class, class version,
 * unknown attribute) are refused.
 */
#include "config.h"
#include "check_main.h"
#include "netstack/cm_mad.h"

#include <stdio.h>
#include <string.h>

struct fv {
	int field;      /* enum cm_field, -1 ends */
	uint64_t value;
};

struct span {
	unsigned int off; /* MAD offset; 0 and len 0 end */
	unsigned int len;
	const char *hex;  /* expected bytes */
};

struct row {
	const char *name;
	uint16_t attr;
	struct fv f[24];
	struct span s[24];
	unsigned int priv_off, priv_len; /* MAD offset and size of the private data */
	unsigned int info_off;           /* MAD offset of the 72-byte info block, 0 = none */
};

#define END { -1, 0 }
static const struct row rows[] = {
	{ "REQ", CM_ATTR_REQ,
	  { { CMF_LOCAL_COMM_ID, 0x11223344 }, { CMF_SERVICE_ID, 0x0000000001060A0Bull },
	    { CMF_LOCAL_CA_GUID, 0x0102030405060708ull }, { CMF_LOCAL_QKEY, 0xA1A2A3A4 },
	    { CMF_LOCAL_QPN, 0xABCDEF }, { CMF_RESPONDER_RESOURCES, 0x5A }, { CMF_INITIATOR_DEPTH, 0x3C },
	    { CMF_REMOTE_CM_RESPONSE_TIMEOUT, 0x15 }, { CMF_TRANSPORT_SERVICE_TYPE, 2 }, { CMF_FLOW_CONTROL, 1 },
	    { CMF_STARTING_PSN, 0x123456 }, { CMF_LOCAL_CM_RESPONSE_TIMEOUT, 0x13 }, { CMF_RETRY_COUNT, 5 },
	    { CMF_PKEY, 0x8001 }, { CMF_PATH_MTU, 4 }, { CMF_RDC_EXISTS, 1 }, { CMF_RNR_RETRY_COUNT, 6 },
	    { CMF_MAX_CM_RETRIES, 15 }, { CMF_SRQ, 1 }, { CMF_PRI_LOCAL_LID, 0xFFFF }, { CMF_PRI_REMOTE_LID, 0xFFFE },
	    { CMF_PRI_FLOW_LABEL, 0xABCDE }, { CMF_PRI_PACKET_RATE, 0x2A }, END },
	  { { 24, 4, "11223344" }, { 28, 4, "00000000" }, { 32, 8, "0000000001060a0b" },
	    { 40, 8, "0102030405060708" }, { 52, 4, "a1a2a3a4" }, { 56, 4, "abcdef5a" }, { 60, 4, "0000003c" },
	    { 64, 4, "000000ad" }, { 68, 4, "1234569d" }, { 72, 2, "8001" }, { 74, 1, "4e" }, { 75, 1, "f8" },
	    { 76, 4, "fffffffe" }, { 112, 4, "abcde02a" }, { 116, 4, "7740b888" }, { 0, 0, NULL } },
	  164, 92, 0 },
	{ "REP", CM_ATTR_REP,
	  { { CMF_LOCAL_COMM_ID, 0x01020304 }, { CMF_REMOTE_COMM_ID, 0x05060708 }, { CMF_LOCAL_QKEY, 0xCAFEBABE },
	    { CMF_LOCAL_QPN, 0x0A0B0C }, { CMF_STARTING_PSN, 0xFEDCBA }, { CMF_RESPONDER_RESOURCES, 0x10 },
	    { CMF_INITIATOR_DEPTH, 0x20 }, { CMF_TARGET_ACK_DELAY, 0x1F }, { CMF_FAILOVER_ACCEPTED, 2 },
	    { CMF_FLOW_CONTROL, 1 }, { CMF_RNR_RETRY_COUNT, 7 }, { CMF_SRQ, 1 },
	    { CMF_LOCAL_CA_GUID, 0x1112131415161718ull }, END },
	  { { 24, 4, "01020304" }, { 28, 4, "05060708" }, { 32, 4, "cafebabe" }, { 36, 4, "0a0b0c00" },
	    { 40, 4, "00000000" }, { 44, 4, "fedcba00" }, { 48, 4, "1020fdf0" }, { 52, 8, "1112131415161718" },
	    { 0, 0, NULL } },
	  60, 196, 0 },
	{ "REJ", CM_ATTR_REJ,
	  { { CMF_LOCAL_COMM_ID, 0x21222324 }, { CMF_REMOTE_COMM_ID, 0x25262728 }, { CMF_MSG_REJECTED, 1 },
	    { CMF_REJ_INFO_LEN, 8 }, { CMF_REASON, 28 }, END },
	  { { 24, 8, "2122232425262728" }, { 32, 4, "4010001c" }, { 0, 0, NULL } },
	  108, 148, 36 },
	{ "MRA", CM_ATTR_MRA,
	  { { CMF_LOCAL_COMM_ID, 0x31323334 }, { CMF_REMOTE_COMM_ID, 0x35363738 }, { CMF_MSG_MRAED, 2 },
	    { CMF_SERVICE_TIMEOUT, 0x1F }, END },
	  { { 24, 8, "3132333435363738" }, { 32, 2, "80f8" }, { 0, 0, NULL } },
	  34, 222, 0 },
	{ "RTU", CM_ATTR_RTU,
	  { { CMF_LOCAL_COMM_ID, 0x41424344 }, { CMF_REMOTE_COMM_ID, 0x45464748 }, END },
	  { { 24, 8, "4142434445464748" }, { 0, 0, NULL } },
	  32, 224, 0 },
	{ "DREQ", CM_ATTR_DREQ,
	  { { CMF_LOCAL_COMM_ID, 0x51525354 }, { CMF_REMOTE_COMM_ID, 0x55565758 }, { CMF_REMOTE_QPN, 0x654321 }, END },
	  { { 24, 8, "5152535455565758" }, { 32, 4, "65432100" }, { 0, 0, NULL } },
	  36, 220, 0 },
	{ "DREP", CM_ATTR_DREP,
	  { { CMF_LOCAL_COMM_ID, 0x61626364 }, { CMF_REMOTE_COMM_ID, 0x65666768 }, END },
	  { { 24, 8, "6162636465666768" }, { 0, 0, NULL } },
	  32, 224, 0 },
	{ "SIDR_REQ", CM_ATTR_SIDR_REQ,
	  { { CMF_REQUEST_ID, 0x71727374 }, { CMF_PKEY, 0xFFFF }, { CMF_SERVICE_ID, 0x0000000001110102ull }, END },
	  { { 24, 4, "71727374" }, { 28, 4, "ffff0000" }, { 32, 8, "0000000001110102" }, { 0, 0, NULL } },
	  40, 216, 0 },
	{ "SIDR_REP", CM_ATTR_SIDR_REP,
	  { { CMF_REQUEST_ID, 0x81828384 }, { CMF_STATUS, 2 }, { CMF_ADD_INFO_LEN, 0 }, { CMF_QPN, 0x000777 },
	    { CMF_SERVICE_ID, 0x0000000001110102ull }, { CMF_QKEY, 0x01234567 }, END },
	  { { 24, 4, "81828384" }, { 28, 4, "02000000" }, { 32, 4, "00077700" }, { 36, 8, "0000000001110102" },
	    { 44, 4, "01234567" }, { 0, 0, NULL } },
	  120, 136, 48 },
	{ "LAP", CM_ATTR_LAP,
	  { { CMF_LOCAL_COMM_ID, 0x91929394 }, { CMF_REMOTE_COMM_ID, 0x95969798 }, { CMF_REMOTE_QPN, 0x123456 },
	    { CMF_REMOTE_CM_RESPONSE_TIMEOUT, 0x1F }, END },
	  { { 24, 8, "9192939495969798" }, { 32, 4, "00000000" }, { 36, 4, "123456f8" }, { 0, 0, NULL } },
	  88, 168, 0 },
	{ "APR", CM_ATTR_APR,
	  { { CMF_LOCAL_COMM_ID, 0xA1A2A3A4 }, { CMF_REMOTE_COMM_ID, 0xA5A6A7A8 }, { CMF_ADD_INFO_LEN, 4 },
	    { CMF_AP_STATUS, 3 }, END },
	  { { 24, 8, "a1a2a3a4a5a6a7a8" }, { 32, 4, "04030000" }, { 0, 0, NULL } },
	  108, 148, 36 },
};

static void fill(const struct row *r, struct cm_msg *m)
{
	unsigned int i;

	memset(m, 0, sizeof(*m));
	m->method = CM_METHOD_SEND;
	m->tid = 0x0123456789ABCDEFull;
	m->attr_id = r->attr;
	m->attr_mod = 0xDEADBEEF;
	for (i = 0; r->f[i].field >= 0; i++)
		m->f[r->f[i].field] = r->f[i].value;
	for (i = 0; i < sizeof(m->private_data); i++)
		m->private_data[i] = (uint8_t)(0x80 + i);
	for (i = 0; i < sizeof(m->info); i++)
		m->info[i] = (uint8_t)(0x40 + i);
	if (r->attr == CM_ATTR_REQ) {
		m->f[CMF_PRI_TRAFFIC_CLASS] = 0x77;
		m->f[CMF_PRI_HOP_LIMIT] = 0x40;
		m->f[CMF_PRI_SL] = 0x0B;
		m->f[CMF_PRI_SUBNET_LOCAL] = 1;
		m->f[CMF_PRI_LOCAL_ACK_TIMEOUT] = 0x11;
		for (i = 0; i < 16; i++) {
			m->pri_local_gid[i] = (uint8_t)(0xA0 + i);
			m->pri_remote_gid[i] = (uint8_t)(0xB0 + i);
		}
	}
}

static void hex_of(const uint8_t *p, unsigned int n, char *out)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

START_TEST(test_encode_exact)
{
	const struct row *r = &rows[_i];
	uint8_t mad[CM_MAD_SIZE], seen[CM_MAD_SIZE];
	char got[2 * CM_MAD_SIZE + 1];
	struct cm_msg m;
	unsigned int i, j;

	fill(r, &m);
	ck_assert_int_eq(cm_mad_encode(&m, mad), 0);
	memset(seen, 0, sizeof(seen));
	/* MAD common header (IBTA 13.4.3) */
	hex_of(mad, 24, got);
	{
		char want[49];

		snprintf(want, sizeof(want), "01070203000000000123456789abcdef%04x0000deadbeef", r->attr);
		ck_assert_msg(!strcmp(got, want), "%s: header %s, expected %s", r->name, got, want);
	}
	memset(seen, 1, 24);
	for (i = 0; r->s[i].len; i++) {
		if (!r->s[i].hex)
			continue;
		hex_of(mad + r->s[i].off, r->s[i].len, got);
		ck_assert_msg(!strcmp(got, r->s[i].hex), "%s: bytes %u..%u are %s, expected %s", r->name,
			      r->s[i].off, r->s[i].off + r->s[i].len - 1, got, r->s[i].hex);
		memset(seen + r->s[i].off, 1, r->s[i].len);
	}
	if (r->attr == CM_ATTR_REQ) {
		/* primary path GIDs at 80 and 96; alternate path (120..163) all 0 */
		for (j = 0; j < 16; j++) {
			ck_assert_uint_eq(mad[80 + j], 0xA0 + j);
			ck_assert_uint_eq(mad[96 + j], 0xB0 + j);
		}
		memset(seen + 80, 1, 32);
		for (j = 120; j < 164; j++)
			ck_assert_msg(mad[j] == 0, "REQ: alternate path byte %u = %#x", j, mad[j]);
		memset(seen + 120, 1, 44);
	}
	for (j = 0; j < r->priv_len; j++)
		ck_assert_msg(mad[r->priv_off + j] == (uint8_t)(0x80 + j), "%s: private byte %u", r->name, j);
	memset(seen + r->priv_off, 1, r->priv_len);
	ck_assert_uint_eq(r->priv_off + r->priv_len, CM_MAD_SIZE);
	ck_assert_uint_eq(cm_private_size(r->attr), r->priv_len);
	if (r->info_off) {
		for (j = 0; j < 72; j++)
			ck_assert_uint_eq(mad[r->info_off + j], 0x40 + j);
		memset(seen + r->info_off, 1, 72);
	}
	/* every byte not named above is reserved: 0 */
	for (j = 0; j < CM_MAD_SIZE; j++)
		ck_assert_msg(seen[j] || mad[j] == 0, "%s: reserved byte %u = %#x", r->name, j, mad[j]);
}
END_TEST

START_TEST(test_decode_roundtrip)
{
	const struct row *r = &rows[_i];
	uint8_t mad[CM_MAD_SIZE];
	struct cm_msg m, d;
	unsigned int i;

	fill(r, &m);
	ck_assert_int_eq(cm_mad_encode(&m, mad), 0);
	ck_assert_int_eq(cm_mad_decode(mad, sizeof(mad), &d), 0);
	ck_assert_uint_eq(d.attr_id, r->attr);
	ck_assert_uint_eq(d.tid, 0x0123456789ABCDEFull);
	ck_assert_uint_eq(d.attr_mod, 0xDEADBEEF);
	ck_assert_uint_eq(d.method, CM_METHOD_SEND);
	for (i = 0; r->f[i].field >= 0; i++)
		ck_assert_msg(d.f[r->f[i].field] == r->f[i].value, "%s: field %d decoded %#llx, sent %#llx", r->name,
			      r->f[i].field, (unsigned long long)d.f[r->f[i].field], (unsigned long long)r->f[i].value);
	ck_assert_uint_eq(d.private_len, r->priv_len);
	ck_assert_int_eq(memcmp(d.private_data, m.private_data, r->priv_len), 0);
	if (r->attr == CM_ATTR_REQ) {
		ck_assert_int_eq(memcmp(d.pri_local_gid, m.pri_local_gid, 16), 0);
		ck_assert_uint_eq(d.f[CMF_PRI_SL], 0x0B);
		ck_assert_uint_eq(d.f[CMF_PRI_LOCAL_ACK_TIMEOUT], 0x11);
	}
}
END_TEST

START_TEST(test_wider_values_truncated)
{
	struct cm_msg m, d;
	uint8_t mad[CM_MAD_SIZE];

	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_DREQ;
	m.f[CMF_REMOTE_QPN] = 0xFF123456; /* 24-bit field: the rest must not spill */
	m.f[CMF_REMOTE_COMM_ID] = 0x01;
	ck_assert_int_eq(cm_mad_encode(&m, mad), 0);
	ck_assert_uint_eq(mad[32], 0x12);
	ck_assert_uint_eq(mad[35], 0x00);
	ck_assert_uint_eq(mad[31], 0x01);
	ck_assert_int_eq(cm_mad_decode(mad, sizeof(mad), &d), 0);
	ck_assert_uint_eq(d.f[CMF_REMOTE_QPN], 0x123456);
}
END_TEST

START_TEST(test_malformed_refused)
{
	struct cm_msg m, d;
	uint8_t mad[CM_MAD_SIZE + 1];

	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_REQ;
	m.method = CM_METHOD_SEND;
	ck_assert_int_eq(cm_mad_encode(&m, mad), 0);
	ck_assert_int_eq(cm_mad_decode(mad, CM_MAD_SIZE, &d), 0);
	ck_assert_int_eq(cm_mad_decode(mad, CM_MAD_SIZE - 1, &d), -1);
	ck_assert_int_eq(cm_mad_decode(mad, CM_MAD_SIZE + 1, &d), -1);
	ck_assert_int_eq(cm_mad_decode(mad, 0, &d), -1);
	ck_assert_int_eq(cm_mad_decode(NULL, CM_MAD_SIZE, &d), -1);
	mad[0] = 2; /* base version */
	ck_assert_int_eq(cm_mad_decode(mad, CM_MAD_SIZE, &d), -1);
	mad[0] = 1;
	mad[1] = 0x04; /* performance management class */
	ck_assert_int_eq(cm_mad_decode(mad, CM_MAD_SIZE, &d), -1);
	mad[1] = 0x07;
	mad[2] = 1; /* class version */
	ck_assert_int_eq(cm_mad_decode(mad, CM_MAD_SIZE, &d), -1);
	mad[2] = 2;
	mad[16] = 0x00;
	mad[17] = 0x77; /* no such attribute */
	ck_assert_int_eq(cm_mad_decode(mad, CM_MAD_SIZE, &d), -1);
	m.attr_id = 0x77;
	ck_assert_int_eq(cm_mad_encode(&m, mad), -1);
	ck_assert_str_eq(cm_attr_name(CM_ATTR_SIDR_REP), "SIDR_REP");
	ck_assert_str_eq(cm_attr_name(0x77), "?");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netstack_cm_mad");
	TCase *tc = tcase_create("cm_mad");
	int n = (int)(sizeof(rows) / sizeof(rows[0]));

	tcase_add_loop_test(tc, test_encode_exact, 0, n);
	tcase_add_loop_test(tc, test_decode_roundtrip, 0, n);
	tcase_add_test(tc, test_wider_values_truncated);
	tcase_add_test(tc, test_malformed_refused);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
