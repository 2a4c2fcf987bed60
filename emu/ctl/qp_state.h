/*
 * qp_state.h - the IBTA QP state machine (Vol 1 §10.3.1, "QP state
 * transitions", and the kernel's ib_modify_qp_is_ok table, which mlx5 and rxe
 * both apply): which transitions ibv_modify_qp may request, and for each one
 * and each QP type (RC, UC, UD) the attributes that are required and the ones
 * that are allowed. Plus the value checks of the attributes themselves.
 *
 * Pure functions over a const table, so the whole machine is unit-tested
 * without a daemon (tests/daemon_qp_state.c).
 */
#ifndef UROCE_EMU_QP_STATE_H
#define UROCE_EMU_QP_STATE_H

#include <stdint.h>
#include <infiniband/verbs.h>

/* Every attr_mask bit ibv_modify_qp defines (IBV_QP_STATE .. IBV_QP_RATE_LIMIT). */
#define QP_ATTR_MASK_ALL ((uint32_t)(IBV_QP_RATE_LIMIT << 1) - 1)

/* Device limits the value checks need. */
struct qp_limits {
	enum ibv_mtu active_mtu;     /* port 1 active MTU: path_mtu may not exceed it */
	uint32_t gid_tbl_len;        /* AV sgid_index must be below it */
	uint32_t max_qp_rd_atom;     /* bound of max_dest_rd_atomic (responder resources) */
	uint32_t max_qp_init_rd_atom;/* bound of max_rd_atomic (initiator depth) */
};

/*
 * qp_state_mask_ok - the table check alone: may a QP of TYPE in CUR go to NEXT
 * with exactly the attributes in MASK? (IBV_QP_STATE is always allowed; every
 * required bit must be set; nothing outside required|optional may be set;
 * IBV_QP_CUR_STATE is only meaningful from RTR, RTS, SQD or SQE.)
 * Returns 0, or EINVAL. TYPE other than RC/UC/UD: EOPNOTSUPP.
 */
int qp_state_mask_ok(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next,
		     uint32_t mask);

/* Required / optional mask of a transition (0 for invalid ones), for tests
 * and docs. *valid is set to whether the transition exists at all. */
uint32_t qp_state_required(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next,
			   int *valid);
uint32_t qp_state_optional(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next);

/*
 * qp_modify_check - full validation of one ibv_modify_qp call on a QP of TYPE
 * currently in CUR: mask bits known, IBV_QP_CUR_STATE consistent, the table
 * (qp_state_mask_ok), then the value of every attribute in MASK against LIM:
 * qp_state <= ERR, port_num == 1, pkey_index == 0, qkey any, path_mtu
 * IBV_MTU_256..active_mtu, dest_qp_num < 2^24, access flags within
 * LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC, timeout <= 31,
 * retry_cnt <= 7, rnr_retry <= 7, min_rnr_timer <= 31, max_rd_atomic <=
 * max_qp_init_rd_atom, max_dest_rd_atomic <= max_qp_rd_atom, AV: is_global 1,
 * port_num 1 (0 is refused, as by the kernel), sgid_index 0 (< gid_tbl_len and the only
 * populated GID entry),
 * path_mig_state MIGRATED (REARM/ARMED need an alternate path).
 * On success *next is the state after the call.
 * Returns 0; EINVAL (any check above); EOPNOTSUPP (IBV_QP_ALT_PATH, a
 * path_mig_state other than MIGRATED, or a QP type other than RC/UC/UD).
 */
int qp_modify_check(enum ibv_qp_type type, enum ibv_qp_state cur, const struct ibv_qp_attr *attr,
		    uint32_t mask, const struct qp_limits *lim, enum ibv_qp_state *next);

/* Name of a state ("RESET", "INIT", ..., "ERR"), "?" if out of range. */
const char *qp_state_name(enum ibv_qp_state s);

#endif
