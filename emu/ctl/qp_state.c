/*
 * qp_state.c - the QP state-transition table (IBTA Vol 1 §10.3.1; same content
 * as the kernel's ib_modify_qp_is_ok table for RC, UC, UD, RAW_PACKET and
 * XRC (XI: IBV_QPT_XRC_SEND, the kernel's XRC_INI; XT: IBV_QPT_XRC_RECV,
 * its XRC_TGT):
 * a raw packet QP needs only the port, at RESET->INIT) and the
 * attribute value checks of ibv_modify_qp. See qp_state.h.
 */
#include "config.h"
#include "emu/ctl/qp_state.h"
#include "emu/xport/xport.h"

#include <errno.h>

enum { T_RC, T_UC, T_UD, T_RAW, T_XI, T_XT, T_NUM };

struct qp_transition {
	int valid;
	uint32_t req[T_NUM];
	uint32_t opt[T_NUM];
};

#define S(x) IBV_QPS_##x
#define A(x) IBV_QP_##x

/* Attributes a connected QP may change in RTS / SQD (no path migration is
 * modelled, but the masks are the spec's). */
#define CONN_RTS_OPT (A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE))
/* Optional attributes of RTR->RTS, RTS->RTS and SQD->RTS: the same set for
 * all three. */
/* Required attributes of RESET->INIT, optional ones of INIT->INIT: the same
 * set for both. */
#define INIT_ATTRS                                              \
	{                                                       \
		[T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS), \
		[T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS), \
		[T_XI] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS), \
		[T_XT] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS), \
		[T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),     \
		[T_RAW] = A(PORT),                              \
	}
#define TO_RTS_OPT                                              \
	{                                                       \
		[T_RC] = CONN_RTS_OPT | A(MIN_RNR_TIMER),       \
		[T_UC] = CONN_RTS_OPT,                          \
		[T_XI] = CONN_RTS_OPT,                          \
		[T_XT] = CONN_RTS_OPT | A(MIN_RNR_TIMER),       \
		[T_UD] = A(CUR_STATE) | A(QKEY),                \
	}

static const struct qp_transition table[S(ERR) + 1][S(ERR) + 1] = {
	[S(RESET)] = {
		[S(RESET)] = { .valid = 1 },
		[S(INIT)] = {
			.valid = 1,
			.req = INIT_ATTRS,
		},
	},
	[S(INIT)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
		[S(INIT)] = {
			.valid = 1,
			.opt = INIT_ATTRS,
		},
		[S(RTR)] = {
			.valid = 1,
			.req = {
				[T_RC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
					 A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
				[T_UC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
				[T_XI] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
				[T_XT] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
					 A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
			},
			.opt = {
				[T_RC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
				[T_UC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
				[T_XI] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
				[T_XT] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
				[T_UD] = A(PKEY_INDEX) | A(QKEY),
			},
		},
	},
	[S(RTR)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
		[S(RTS)] = {
			.valid = 1,
			.req = {
				[T_RC] = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) |
					 A(MAX_QP_RD_ATOMIC),
				[T_UC] = A(SQ_PSN),
				[T_UD] = A(SQ_PSN),
				[T_XI] = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) |
					 A(MAX_QP_RD_ATOMIC),
				[T_XT] = A(TIMEOUT) | A(SQ_PSN),
			},
			.opt = TO_RTS_OPT,
		},
	},
	[S(RTS)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
		[S(RTS)] = {
			.valid = 1,
			.opt = TO_RTS_OPT,
		},
		[S(SQD)] = {
			.valid = 1,
			.opt = {
				[T_RC] = A(EN_SQD_ASYNC_NOTIFY),
				[T_UC] = A(EN_SQD_ASYNC_NOTIFY),
				[T_UD] = A(EN_SQD_ASYNC_NOTIFY),
				[T_XI] = A(EN_SQD_ASYNC_NOTIFY),
				[T_XT] = A(EN_SQD_ASYNC_NOTIFY),
			},
		},
	},
	[S(SQD)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
		[S(RTS)] = {
			.valid = 1,
			.opt = TO_RTS_OPT,
		},
		[S(SQD)] = {
			.valid = 1,
			.opt = {
				[T_RC] = A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
					 A(MAX_QP_RD_ATOMIC) | A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) |
					 A(ACCESS_FLAGS) | A(PKEY_INDEX) | A(MIN_RNR_TIMER) |
					 A(PATH_MIG_STATE),
				[T_UC] = A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) |
					 A(PATH_MIG_STATE),
				[T_UD] = A(PKEY_INDEX) | A(QKEY),
				[T_XI] = A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
					 A(MAX_QP_RD_ATOMIC) | A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(PKEY_INDEX) | A(PATH_MIG_STATE),
				[T_XT] = A(PORT) | A(AV) | A(TIMEOUT) | A(MAX_DEST_RD_ATOMIC) |
					 A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) |
					 A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
			},
		},
	},
	[S(SQE)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
		/* Only UD and UC ever enter SQE (an RC send error goes to ERR). */
		[S(RTS)] = {
			.valid = 1,
			.opt = {
				[T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS),
				[T_UD] = A(CUR_STATE) | A(QKEY),
			},
		},
	},
	[S(ERR)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
	},
};

static int type_index(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC: return T_RC;
	case IBV_QPT_UC: return T_UC;
	case IBV_QPT_UD: return T_UD;
	case IBV_QPT_RAW_PACKET: return T_RAW;
	case IBV_QPT_XRC_SEND: return T_XI;
	case IBV_QPT_XRC_RECV: return T_XT;
	default: return -1;
	}
}

static int state_ok(enum ibv_qp_state s)
{
	return (unsigned int)s <= S(ERR);
}

uint32_t qp_state_required(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next,
			   int *valid)
{
	int t = type_index(type);

	*valid = 0;
	if (t < 0 || !state_ok(cur) || !state_ok(next))
		return 0;
	*valid = table[cur][next].valid;
	return table[cur][next].req[t];
}

uint32_t qp_state_optional(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next)
{
	int t = type_index(type);

	if (t < 0 || !state_ok(cur) || !state_ok(next))
		return 0;
	return table[cur][next].opt[t];
}

int qp_state_mask_ok(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next,
		     uint32_t mask)
{
	const struct qp_transition *tr;
	int t = type_index(type);

	if (t < 0)
		return EOPNOTSUPP;
	if (!state_ok(cur) || !state_ok(next))
		return EINVAL;
	if ((mask & A(CUR_STATE)) && cur != S(RTR) && cur != S(RTS) && cur != S(SQD) &&
	    cur != S(SQE))
		return EINVAL;
	tr = &table[cur][next];
	if (!tr->valid)
		return EINVAL;
	if ((mask & tr->req[t]) != tr->req[t])
		return EINVAL;
	if (mask & ~(tr->req[t] | tr->opt[t] | A(STATE)))
		return EINVAL;
	return 0;
}

/* Value checks of an address vector (RoCE: the GRH carries the address). */
static int av_ok(const struct ibv_ah_attr *ah, const struct qp_limits *lim)
{
	if (!ah->is_global)
		return EINVAL;
	/* The kernel's uverbs modify_qp refuses an AV whose port is not a
	 * valid port of the device (rdma_is_port_valid: 1 here), 0 included. */
	if (ah->port_num != 1)
		return EINVAL;
	if (ah->grh.sgid_index >= lim->gid_tbl_len)
		return EINVAL;
	/* Only GID 0 is populated (the others read all-zero in sysfs); the
	 * kernel's rdma_get_gid_attr fails for an empty entry. */
	if (ah->grh.sgid_index != 0)
		return EINVAL;
	return 0;
}

/* ON_DEMAND and the FLUSH flags are MR flags that applications pass to QPs
 * too (pyverbs test_odp; rdma-core 56's test_qpex sets FLUSH_GLOBAL |
 * FLUSH_PERSISTENT on every RC QP); mlx5 reads only the REMOTE_* bits of
 * qp_access_flags, and rxe accepts both FLUSH bits on a QP
 * (RXE_ACCESS_SUPPORTED_QP).  The FLUSH values are rdma-core >= 45's
 * verbs.h (IBV_ACCESS_FLUSH_GLOBAL 1 << 8, IBV_ACCESS_FLUSH_PERSISTENT
 * 1 << 9), absent from older headers. */
#define QP_ACCESS_FLUSH_GLOBAL (1u << 8)
#define QP_ACCESS_FLUSH_PERSISTENT (1u << 9)
#define QP_ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		       IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ON_DEMAND | QP_ACCESS_FLUSH_GLOBAL | \
		       QP_ACCESS_FLUSH_PERSISTENT)

int qp_modify_check(enum ibv_qp_type type, enum ibv_qp_state cur, const struct ibv_qp_attr *attr,
		    uint32_t mask, const struct qp_limits *lim, enum ibv_qp_state *next)
{
	enum ibv_qp_state to = cur;
	struct xport_qp_attr x;
	int rc;

	if (type_index(type) < 0)
		return EOPNOTSUPP;
	if (mask & ~QP_ATTR_MASK_ALL)
		return EINVAL;
	if (mask & A(STATE)) {
		if (!state_ok(attr->qp_state))
			return EINVAL;
		to = attr->qp_state;
	}
	if ((mask & A(CUR_STATE)) && attr->cur_qp_state != cur)
		return EINVAL;
	rc = qp_state_mask_ok(type, cur, to, mask);
	if (rc)
		return rc;

	if (mask & A(ALT_PATH))
		return EOPNOTSUPP;
	if ((mask & A(PATH_MIG_STATE)) && attr->path_mig_state != IBV_MIG_MIGRATED)
		return (unsigned int)attr->path_mig_state <= IBV_MIG_ARMED ? EOPNOTSUPP : EINVAL;
	if ((mask & A(PORT)) && attr->port_num != 1)
		return EINVAL;
	if ((mask & A(PKEY_INDEX)) && attr->pkey_index != 0)
		return EINVAL;
	if ((mask & A(ACCESS_FLAGS)) && (attr->qp_access_flags & ~(unsigned int)QP_ACCESS_ALL))
		return EINVAL;
	if ((mask & A(PATH_MTU)) &&
	    (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > lim->active_mtu))
		return EINVAL;
	/* the transport value ranges: the engine's one check */
	xport_qp_attr_from_ibv(attr, &x);
	if (xport_qp_attr_check(&x, (int)mask))
		return EINVAL;
	if ((mask & A(MAX_QP_RD_ATOMIC)) && attr->max_rd_atomic > lim->max_qp_init_rd_atom)
		return EINVAL;
	if ((mask & A(MAX_DEST_RD_ATOMIC)) && attr->max_dest_rd_atomic > lim->max_qp_rd_atom)
		return EINVAL;
	if (mask & A(AV)) {
		rc = av_ok(&attr->ah_attr, lim);
		if (rc)
			return rc;
	}
	*next = to;
	return 0;
}

const char *qp_state_name(enum ibv_qp_state s)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return state_ok(s) ? names[s] : "?";
}
