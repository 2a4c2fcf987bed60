/*
 * daemon_qp_state.c - unit tests of the QP state machine (emu/ctl/qp_state.c):
 * which transitions exist, the required and optional attribute masks per QP
 * type, and the value checks of qp_modify_check, each with its exact errno.
 * Expected values are written out independently from the ibv_modify_qp(3) man
 * page, IBTA Vol 1 §10.3.1 / §11.2.6 and the Linux kernel's QP state table
 * (ib_modify_qp_is_ok, drivers/infiniband/core/verbs.c) as data below; no
 * expectation is computed with the functions under test.
 */
#include "config.h"
#include "emu/ctl/qp_state.h"

#include "check_main.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define A(x) IBV_QP_##x
#define S(x) IBV_QPS_##x

static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
static const char *const tname[] = { "RC", "UC", "UD" };

/* valid[cur] = one char per next state RESET..ERR; same for RC, UC, UD. */
static const char *const valid[] = {
	[S(RESET)] = "1100000",
	[S(INIT)] = "1110001",
	[S(RTR)] = "1001001",
	[S(RTS)] = "1001101",
	[S(SQD)] = "1001101",
	[S(SQE)] = "1001001",
	[S(ERR)] = "1000001",
};

/*
 * The required and optional attributes of every valid transition, per QP
 * type {RC, UC, UD} (IBTA Vol 1 §11.2.6 / kernel qp_state_table for RC, UC
 * and UD). Valid transitions not listed take no attribute at all.
 */
#define CONN_OPT_RTS (A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE))
static const struct kernel_row {
	enum ibv_qp_state cur, next;
	uint32_t req[3], opt[3];
} kernel_table[] = {
	{ S(RESET), S(INIT),
	  { A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS), A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
	    A(PKEY_INDEX) | A(PORT) | A(QKEY) }, { 0, 0, 0 } },
	{ S(INIT), S(INIT), { 0, 0, 0 },
	  { A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS), A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
	    A(PKEY_INDEX) | A(PORT) | A(QKEY) } },
	{ S(INIT), S(RTR),
	  { A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) | A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
	    A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN), 0 },
	  { A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX), A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
	    A(PKEY_INDEX) | A(QKEY) } },
	{ S(RTR), S(RTS),
	  { A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC), A(SQ_PSN),
	    A(SQ_PSN) },
	  { CONN_OPT_RTS | A(MIN_RNR_TIMER), CONN_OPT_RTS, A(CUR_STATE) | A(QKEY) } },
	{ S(RTS), S(RTS), { 0, 0, 0 },
	  { CONN_OPT_RTS | A(MIN_RNR_TIMER), CONN_OPT_RTS, A(CUR_STATE) | A(QKEY) } },
	{ S(RTS), S(SQD), { 0, 0, 0 },
	  { A(EN_SQD_ASYNC_NOTIFY), A(EN_SQD_ASYNC_NOTIFY), A(EN_SQD_ASYNC_NOTIFY) } },
	{ S(SQD), S(RTS), { 0, 0, 0 },
	  { CONN_OPT_RTS | A(MIN_RNR_TIMER), CONN_OPT_RTS, A(CUR_STATE) | A(QKEY) } },
	{ S(SQD), S(SQD), { 0, 0, 0 },
	  { A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) |
	    A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) |
	    A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
	    A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) | A(PATH_MIG_STATE),
	    A(PKEY_INDEX) | A(QKEY) } },
	{ S(SQE), S(RTS), { 0, 0, 0 },
	  { 0, A(CUR_STATE) | A(ACCESS_FLAGS), A(CUR_STATE) | A(QKEY) } },
};

/* The row of TYPE index T for CUR->NEXT (zero masks if not listed). */
static void kernel_masks(int t, int cur, int next, uint32_t *req, uint32_t *opt)
{
	*req = *opt = 0;
	for (size_t i = 0; i < sizeof(kernel_table) / sizeof(kernel_table[0]); i++)
		if ((int)kernel_table[i].cur == cur && (int)kernel_table[i].next == next) {
			*req = kernel_table[i].req[t];
			*opt = kernel_table[i].opt[t];
		}
}

START_TEST(transition_matrix)
{
	int t, cur, next, v;

	for (t = 0; t < 3; t++)
		for (cur = 0; cur <= S(ERR); cur++)
			for (next = 0; next <= S(ERR); next++) {
				uint32_t req, opt;
				int want = valid[cur][next] == '1';

				kernel_masks(t, cur, next, &req, &opt);
				ck_assert_uint_eq(qp_state_required(types[t], cur, next, &v), req);
				ck_assert_uint_eq(qp_state_optional(types[t], cur, next), opt);
				ck_assert_msg(v == want, "%s %s->%s valid %d, expected %d", tname[t],
					      qp_state_name(cur), qp_state_name(next), v, want);
				ck_assert_int_eq(qp_state_mask_ok(types[t], cur, next, A(STATE) | req),
						 want ? 0 : EINVAL);
			}
}
END_TEST

/* Required masks from the ibv_modify_qp man page. */
static const struct {
	enum ibv_qp_type type;
	enum ibv_qp_state cur, next;
	uint32_t req;
} required[] = {
	{ IBV_QPT_RC, S(RESET), S(INIT), A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS) },
	{ IBV_QPT_UC, S(RESET), S(INIT), A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS) },
	{ IBV_QPT_UD, S(RESET), S(INIT), A(PKEY_INDEX) | A(PORT) | A(QKEY) },
	{ IBV_QPT_RC, S(INIT), S(RTR),
	  A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) | A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER) },
	{ IBV_QPT_UC, S(INIT), S(RTR), A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) },
	{ IBV_QPT_UD, S(INIT), S(RTR), 0 },
	{ IBV_QPT_RC, S(RTR), S(RTS),
	  A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) },
	{ IBV_QPT_UC, S(RTR), S(RTS), A(SQ_PSN) },
	{ IBV_QPT_UD, S(RTR), S(RTS), A(SQ_PSN) },
	{ IBV_QPT_RC, S(RTS), S(SQD), 0 },
	{ IBV_QPT_UD, S(SQD), S(RTS), 0 },
	{ IBV_QPT_RC, S(INIT), S(ERR), 0 },
	{ IBV_QPT_UC, S(ERR), S(RESET), 0 },
};

START_TEST(required_masks)
{
	int i, v, bit;

	for (i = 0; i < (int)(sizeof(required) / sizeof(required[0])); i++) {
		uint32_t req = required[i].req;

		ck_assert_uint_eq(qp_state_required(required[i].type, required[i].cur, required[i].next, &v), req);
		ck_assert_int_eq(v, 1);
		ck_assert_int_eq(qp_state_mask_ok(required[i].type, required[i].cur, required[i].next,
						  A(STATE) | req), 0);
		/* dropping any one required attribute is refused */
		for (bit = 0; bit < 32; bit++)
			if (req & (1u << bit))
				ck_assert_msg(qp_state_mask_ok(required[i].type, required[i].cur,
							       required[i].next,
							       A(STATE) | (req & ~(1u << bit))) == EINVAL,
					      "row %d without bit %d accepted", i, bit);
	}
}
END_TEST

/* Every attribute outside required|optional is refused, every optional one
 * is accepted, and dropping any required one is refused. */
START_TEST(optional_and_forbidden)
{
	int t, cur, next, bit;

	for (t = 0; t < 3; t++)
		for (cur = 0; cur <= S(ERR); cur++)
			for (next = 0; next <= S(ERR); next++) {
				uint32_t req, opt;

				if (valid[cur][next] != '1')
					continue;
				kernel_masks(t, cur, next, &req, &opt);
				for (bit = 0; bit < 26; bit++) {
					uint32_t b = 1u << bit;
					int want = (req | opt | A(STATE)) & b ? 0 : EINVAL;

					if (req & b) {
						ck_assert_msg(qp_state_mask_ok(types[t], cur, next,
									       A(STATE) | (req & ~b)) == EINVAL,
							      "%s %s->%s without required 0x%x accepted",
							      tname[t], qp_state_name(cur),
							      qp_state_name(next), b);
						continue;
					}

					ck_assert_msg(qp_state_mask_ok(types[t], cur, next, A(STATE) | req | b) == want,
						      "%s %s->%s bit 0x%x: expected %d", tname[t],
						      qp_state_name(cur), qp_state_name(next), b, want);
				}
			}
}
END_TEST

/* Spot checks of optional attributes, from the man page / IBTA tables. */
static const struct {
	enum ibv_qp_type type;
	enum ibv_qp_state cur, next;
	uint32_t extra;
	int rc;
} optional_rows[] = {
	{ IBV_QPT_RC, S(RTR), S(RTS), A(MIN_RNR_TIMER), 0 },
	{ IBV_QPT_UC, S(RTR), S(RTS), A(MIN_RNR_TIMER), EINVAL },
	{ IBV_QPT_UD, S(RTR), S(RTS), A(QKEY), 0 },
	{ IBV_QPT_RC, S(RTR), S(RTS), A(QKEY), EINVAL },
	{ IBV_QPT_UD, S(INIT), S(RTR), A(QKEY) | A(PKEY_INDEX), 0 },
	{ IBV_QPT_UD, S(INIT), S(RTR), A(AV), EINVAL },
	{ IBV_QPT_RC, S(INIT), S(INIT), A(ACCESS_FLAGS) | A(PORT), 0 },
	{ IBV_QPT_UD, S(INIT), S(INIT), A(ACCESS_FLAGS), EINVAL },
	{ IBV_QPT_RC, S(RTS), S(SQD), A(EN_SQD_ASYNC_NOTIFY), 0 },
	{ IBV_QPT_RC, S(SQD), S(SQD), A(TIMEOUT) | A(RETRY_CNT) | A(AV), 0 },
	{ IBV_QPT_UC, S(SQD), S(SQD), A(TIMEOUT), EINVAL },
	{ IBV_QPT_UC, S(SQE), S(RTS), A(ACCESS_FLAGS), 0 },
	{ IBV_QPT_RC, S(SQE), S(RTS), A(ACCESS_FLAGS), EINVAL },
	{ IBV_QPT_RC, S(RESET), S(ERR), 0, EINVAL },
	{ IBV_QPT_RC, S(RTS), S(RTR), 0, EINVAL },
	{ IBV_QPT_UD, S(ERR), S(INIT), 0, EINVAL },
	{ IBV_QPT_RC, S(RTS), S(RTS), A(CUR_STATE), 0 },
	{ IBV_QPT_RC, S(INIT), S(INIT), A(CUR_STATE), EINVAL },
	{ IBV_QPT_RAW_PACKET, S(RESET), S(INIT), 0, 0 },
	{ IBV_QPT_RAW_PACKET, S(RESET), S(INIT), A(QKEY), EINVAL },
	{ IBV_QPT_RAW_PACKET, S(INIT), S(RTR), 0, 0 },
	{ IBV_QPT_RAW_PACKET, S(INIT), S(RTR), A(AV), EINVAL },
	{ IBV_QPT_RAW_PACKET, S(RTR), S(RTS), A(SQ_PSN), EINVAL },
	{ IBV_QPT_DRIVER, S(RESET), S(INIT), A(PORT), EOPNOTSUPP },
	/* XRC: the kernel's XRC_INI (XRC_SEND) and XRC_TGT (XRC_RECV) columns */
	{ IBV_QPT_XRC_SEND, S(INIT), S(RTR), A(ACCESS_FLAGS), 0 },
	{ IBV_QPT_XRC_SEND, S(INIT), S(RTR), A(MIN_RNR_TIMER), EINVAL },
	{ IBV_QPT_XRC_RECV, S(INIT), S(RTR), A(PKEY_INDEX), 0 },
	{ IBV_QPT_XRC_RECV, S(RTR), S(RTS), A(MIN_RNR_TIMER), 0 },
	{ IBV_QPT_XRC_RECV, S(RTR), S(RTS), A(RETRY_CNT), EINVAL },
	{ IBV_QPT_XRC_SEND, S(RTR), S(RTS), A(MIN_RNR_TIMER), EINVAL },
};

START_TEST(optional_rows_exact)
{
	int i, v;

	for (i = 0; i < (int)(sizeof(optional_rows) / sizeof(optional_rows[0])); i++) {
		uint32_t req = qp_state_required(optional_rows[i].type, optional_rows[i].cur,
						 optional_rows[i].next, &v);
		int rc = qp_state_mask_ok(optional_rows[i].type, optional_rows[i].cur, optional_rows[i].next,
					  A(STATE) | req | optional_rows[i].extra);

		ck_assert_msg(rc == optional_rows[i].rc, "row %d: got %d, expected %d", i, rc,
			      optional_rows[i].rc);
	}
}
END_TEST

static const struct qp_limits lim = {
	.active_mtu = IBV_MTU_1024, .gid_tbl_len = 16, .max_qp_rd_atom = 16, .max_qp_init_rd_atom = 8,
};

static void rtr_attr(struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = S(RTR);
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = 0x123456;
	a->rq_psn = 0x1234;
	a->max_dest_rd_atomic = 16;
	a->min_rnr_timer = 12;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.sgid_index = 0;
	a->ah_attr.grh.hop_limit = 1;
}

#define RC_RTR (A(STATE) | A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) | A(MAX_DEST_RD_ATOMIC) | \
		A(MIN_RNR_TIMER))

/* Value checks on RC INIT->RTR: one field wrong per row. */
static void mut0(struct ibv_qp_attr *a) { (void)a; }
static void mut1(struct ibv_qp_attr *a) { a->path_mtu = IBV_MTU_2048; }
static void mut2(struct ibv_qp_attr *a) { a->path_mtu = 0; }
static void mut3(struct ibv_qp_attr *a) { a->path_mtu = IBV_MTU_256; }
static void mut4(struct ibv_qp_attr *a) { a->dest_qp_num = 1u << 24; }
static void mut5(struct ibv_qp_attr *a) { a->dest_qp_num = 0xFFFFFF; }
static void mut6(struct ibv_qp_attr *a) { a->max_dest_rd_atomic = 17; }
static void mut7(struct ibv_qp_attr *a) { a->min_rnr_timer = 32; }
static void mut8(struct ibv_qp_attr *a) { a->min_rnr_timer = 31; }
static void mut9(struct ibv_qp_attr *a) { a->ah_attr.is_global = 0; }
static void mut10(struct ibv_qp_attr *a) { a->ah_attr.grh.sgid_index = 16; }
static void mut11(struct ibv_qp_attr *a) { a->ah_attr.port_num = 2; }
static void mut12(struct ibv_qp_attr *a) { a->ah_attr.port_num = 0; }
static void mut13(struct ibv_qp_attr *a) { a->qp_access_flags = IBV_ACCESS_MW_BIND; }
static void mut14(struct ibv_qp_attr *a) { a->qp_access_flags = 0xF; }
/* rdma-core >= 45's IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT */
static void mut14f(struct ibv_qp_attr *a) { a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (1u << 8) | (1u << 9); }
static void mut14h(struct ibv_qp_attr *a) { a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (1u << 10); }
static void mut15(struct ibv_qp_attr *a) { a->pkey_index = 1; }
static void mut16(struct ibv_qp_attr *a) { (void)a; }
static void mut17(struct ibv_qp_attr *a) { a->qp_state = 7; }
static void mut18(struct ibv_qp_attr *a) { a->qp_state = (enum ibv_qp_state)-1; }
static void mut19(struct ibv_qp_attr *a) { (void)a; }
static void mut20(struct ibv_qp_attr *a) { (void)a; }
static void mut21(struct ibv_qp_attr *a) { a->cur_qp_state = S(INIT); }
static void mut22(struct ibv_qp_attr *a) { a->ah_attr.grh.sgid_index = 1; }
static void mut23(struct ibv_qp_attr *a) { a->ah_attr.grh.sgid_index = 15; }

static const struct {
	const char *name;
	void (*mutate)(struct ibv_qp_attr *);
	uint32_t extra_mask;
	int rc;
} value_rows[] = {
	{ "all good", mut0, 0, 0 },
	{ "path_mtu above the port's 1024", mut1, 0, EINVAL },
	{ "path_mtu 0", mut2, 0, EINVAL },
	{ "path_mtu 256", mut3, 0, 0 },
	{ "dest_qp_num 2^24", mut4, 0, EINVAL },
	{ "dest_qp_num 2^24-1", mut5, 0, 0 },
	{ "max_dest_rd_atomic 17", mut6, 0, EINVAL },
	{ "min_rnr_timer 32", mut7, 0, EINVAL },
	{ "min_rnr_timer 31", mut8, 0, 0 },
	{ "AV without GRH", mut9, 0, EINVAL },
	{ "AV sgid_index 16", mut10, 0, EINVAL },
	{ "AV sgid_index 1 (empty GID entry)", mut22, 0, EINVAL },
	{ "AV sgid_index 15 (empty GID entry)", mut23, 0, EINVAL },
	{ "AV port 2", mut11, 0, EINVAL },
	{ "AV port 0 (kernel: not a valid port)", mut12, 0, EINVAL },
	{ "access flags MW_BIND", mut13, A(ACCESS_FLAGS), EINVAL },
	{ "access flags remote r/w/atomic", mut14, A(ACCESS_FLAGS), 0 },
	{ "access flags FLUSH_GLOBAL|FLUSH_PERSISTENT", mut14f, A(ACCESS_FLAGS), 0 },
	{ "access flags bit 10 (undefined)", mut14h, A(ACCESS_FLAGS), EINVAL },
	{ "pkey_index 1", mut15, A(PKEY_INDEX), EINVAL },
	{ "alternate path", mut16, A(ALT_PATH), EOPNOTSUPP },
	{ "qp_state 7 (UNKNOWN)", mut17, 0, EINVAL },
	{ "qp_state -1", mut18, 0, EINVAL },
	{ "rate limit", mut19, A(RATE_LIMIT), EINVAL },
	{ "unknown mask bit 26", mut20, 1u << 26, EINVAL },
	{ "CUR_STATE from INIT", mut21, A(CUR_STATE), EINVAL },
};

START_TEST(value_checks)
{
	int i;

	for (i = 0; i < (int)(sizeof(value_rows) / sizeof(value_rows[0])); i++) {
		struct ibv_qp_attr a;
		enum ibv_qp_state next = S(ERR);
		int rc;

		rtr_attr(&a);
		value_rows[i].mutate(&a);
		rc = qp_modify_check(IBV_QPT_RC, S(INIT), &a, RC_RTR | value_rows[i].extra_mask, &lim, &next);
		ck_assert_msg(rc == value_rows[i].rc, "%s: got %d, expected %d", value_rows[i].name, rc,
			      value_rows[i].rc);
		if (!rc)
			ck_assert_int_eq(next, S(RTR));
	}
}
END_TEST

/* RTR->RTS value checks for RC. */
START_TEST(rts_values)
{
	const uint32_t m = A(STATE) | A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC);
	struct ibv_qp_attr a = { .qp_state = S(RTS), .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				 .max_rd_atomic = 8, .sq_psn = 0xFFFFFFFF };
	enum ibv_qp_state next;

	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTR), &a, m, &lim, &next), 0);
	ck_assert_int_eq(next, S(RTS));
	a.timeout = 32;
	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTR), &a, m, &lim, &next), EINVAL);
	a.timeout = 31;
	a.retry_cnt = 8;
	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTR), &a, m, &lim, &next), EINVAL);
	a.retry_cnt = 0;
	a.rnr_retry = 8;
	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTR), &a, m, &lim, &next), EINVAL);
	a.rnr_retry = 0;
	a.max_rd_atomic = 9; /* above max_qp_init_rd_atom 8 */
	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTR), &a, m, &lim, &next), EINVAL);
	a.max_rd_atomic = 0;
	a.path_mig_state = IBV_MIG_ARMED;
	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTR), &a, m | A(PATH_MIG_STATE), &lim, &next), EOPNOTSUPP);
	a.path_mig_state = 3;
	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTR), &a, m | A(PATH_MIG_STATE), &lim, &next), EINVAL);
	a.path_mig_state = IBV_MIG_MIGRATED;
	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTR), &a, m | A(PATH_MIG_STATE), &lim, &next), 0);
	/* CUR_STATE must name the actual state */
	a.cur_qp_state = S(RTS);
	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTR), &a, m | A(CUR_STATE), &lim, &next), EINVAL);
	a.cur_qp_state = S(RTR);
	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTR), &a, m | A(CUR_STATE), &lim, &next), 0);
}
END_TEST

/* The life of a QP of each type, with the exact masks applications use. */
START_TEST(full_lifecycle)
{
	static const struct {
		enum ibv_qp_state to;
		uint32_t mask[3]; /* RC, UC, UD */
	} steps[] = {
		{ S(INIT), { A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS), A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
			     A(PKEY_INDEX) | A(PORT) | A(QKEY) } },
		{ S(RTR), { RC_RTR & ~A(STATE), A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN), 0 } },
		{ S(RTS), { A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC), A(SQ_PSN),
			    A(SQ_PSN) } },
		{ S(SQD), { A(EN_SQD_ASYNC_NOTIFY), 0, 0 } },
		{ S(RTS), { 0, 0, A(QKEY) } },
		{ S(ERR), { 0, 0, 0 } },
		{ S(RESET), { 0, 0, 0 } },
	};
	int t, i;

	for (t = 0; t < 3; t++) {
		enum ibv_qp_state cur = S(RESET);

		for (i = 0; i < (int)(sizeof(steps) / sizeof(steps[0])); i++) {
			struct ibv_qp_attr a;
			enum ibv_qp_state next;
			int rc;

			rtr_attr(&a);
			a.port_num = 1;
			a.qp_state = steps[i].to;
			rc = qp_modify_check(types[t], cur, &a, A(STATE) | steps[i].mask[t], &lim, &next);
			ck_assert_msg(rc == 0, "%s step %d (%s->%s): %d", tname[t], i, qp_state_name(cur),
				      qp_state_name(steps[i].to), rc);
			ck_assert_int_eq(next, steps[i].to);
			cur = next;
		}
	}
}
END_TEST

/* A mask without IBV_QP_STATE modifies attributes in the current state. */
START_TEST(no_state_bit)
{
	struct ibv_qp_attr a = { .qkey = 0x11111111 };
	enum ibv_qp_state next;

	ck_assert_int_eq(qp_modify_check(IBV_QPT_UD, S(RTS), &a, A(QKEY), &lim, &next), 0);
	ck_assert_int_eq(next, S(RTS));
	ck_assert_int_eq(qp_modify_check(IBV_QPT_UD, S(RESET), &a, A(QKEY), &lim, &next), EINVAL);
	ck_assert_int_eq(qp_modify_check(IBV_QPT_RC, S(RTS), &a, A(QKEY), &lim, &next), EINVAL);
	ck_assert_str_eq(qp_state_name(S(SQE)), "SQE");
	ck_assert_str_eq(qp_state_name(8), "?");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qp_state");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, transition_matrix);
	tcase_add_test(tc, required_masks);
	tcase_add_test(tc, optional_and_forbidden);
	tcase_add_test(tc, optional_rows_exact);
	tcase_add_test(tc, value_checks);
	tcase_add_test(tc, rts_values);
	tcase_add_test(tc, full_lifecycle);
	tcase_add_test(tc, no_state_bit);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
