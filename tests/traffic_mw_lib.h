/*
 * traffic_mw_lib.h - memory-window helpers shared by traffic_mw.c (posted
 * with ibv_post_send) and traffic_qpex_mw.c (built with ibv_wr_*): two
 * contexts of one process on uroce0, RC QPs at path MTU 1024, a 64 KiB MR
 * per side with a window range [MW_WIN_OFF, MW_WIN_OFF + MW_WIN_LEN) on
 * the target. Every helper asserts with Check (a failed call ends the
 * test); public libibverbs API only (ibv_alloc_mw(3), ibv_bind_mw(3),
 * ibv_post_send(3), ibv_wr_post(3)).
 */
#ifndef UROCE_TESTS_TRAFFIC_MW_LIB_H
#define UROCE_TESTS_TRAFFIC_MW_LIB_H

#include <stdint.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define MW_DEV "uroce0"
#define MW_WAIT_MS 60000
#define MW_BUF (64 * 1024)	/* MR size; the side's buffer is 2 * MW_BUF */
#define MW_WIN_OFF 4096
#define MW_WIN_LEN (32 * 1024)
#define MW_GUARD 0xEE	/* every byte of a fresh side's buffer */
#define MW_ACC_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		    IBV_ACCESS_REMOTE_ATOMIC)
/* Every send_ops_flags bit an RC QP of rdma-core 44 can ask for but the
 * two atomics' 64-bit extended forms and TSO (ibv_create_qp_ex(3)). */
#define MW_OPS_RC (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		   IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE | \
		   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
		   IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)

/* An initiator QP on side I connected to a target QP on side T. */
struct mw_pair {
	struct ibv_qp *i, *t;
};

/* Open MW_DEV into S: PD, a 64-entry CQ, a 2 * MW_BUF buffer filled with
 * MW_GUARD of which [0, MW_BUF) is registered with MR_ACCESS (ibv_access_flags). */
void mw_side_open(struct tv_side *s, unsigned int mr_access);
void mw_side_close(struct tv_side *s);

/* An RC QP (16 send WRs, 4 receives, one SGE each) on CQ; with SEND_OPS
 * nonzero it is made by ibv_create_qp_ex with those send_ops_flags. */
struct ibv_qp *mw_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, uint64_t send_ops);

/* P = a connected RC pair I -> T (both with SEND_OPS, see mw_rc_qp; local
 * ACK timeout 12), the target's QP with every remote access right. */
void mw_pair_new(struct mw_pair *p, struct tv_side *i, struct tv_side *t, uint64_t send_ops);
void mw_pair_free(struct mw_pair *p);

/* The usual test start: I with every right on its MR, T with LOCAL_WRITE |
 * MW_BIND only, a pair I -> T with SEND_OPS, and a window of TYPE on T's
 * PD (returned). */
struct ibv_mw *mw_setup(struct tv_side *i, struct tv_side *t, struct mw_pair *p,
			enum ibv_mw_type type, uint64_t send_ops);

/* One test's objects as mw_setup makes them: the sides, the pair I -> T, the
 * window, the address of its range and the key the test binds it with. */
struct mw_env {
	struct tv_side i, t;
	struct mw_pair p;
	struct ibv_mw *mw;
	uint64_t win;
	uint32_t rkey;	/* ibv_inc_rkey of the window's key at allocation */
};

void mw_env_open(struct mw_env *e, enum ibv_mw_type type, uint64_t send_ops);
/* Free E's pair (its CQs drained), deallocate the window, close both sides. */
void mw_env_close(struct mw_env *e);

/* Address of T's window range (MW_WIN_OFF into its buffer). */
uint64_t mw_win(const struct tv_side *t);

/* Drain what a failed QP pair left on S's CQ (flushes, error CQEs). */
void mw_drain(struct tv_side *s);

/* The next completion on CQ within MW_WAIT_MS (a timeout fails the test). */
struct ibv_wc mw_wait_wc(struct ibv_cq *cq);

/* The state ibv_query_qp reports for QP. */
enum ibv_qp_state mw_qp_state(struct ibv_qp *qp);

/* Post one signaled RDMA WRITE/READ (LEN bytes at offset LOFF of I's
 * buffer) or FETCH_AND_ADD (+1, 8 bytes at LOFF) on QP to RADDR/RKEY with
 * ibv_post_send; the completion's status (wr_id and qp_num are checked). */
enum ibv_wc_status mw_rdma(struct ibv_qp *qp, struct tv_side *i, enum ibv_wr_opcode op,
			   uint32_t loff, uint32_t len, uint64_t raddr, uint32_t rkey);

/* One access over a fresh legacy QP pair that must fail with
 * IBV_WC_REM_ACCESS_ERR; both CQs drained after. */
void mw_expect_denied(struct tv_side *i, struct tv_side *t, enum ibv_wr_opcode op, uint64_t raddr,
		      uint32_t len, uint32_t rkey);

/* WRITE MW_WIN_LEN bytes (pattern k * 7 + SEED) through RKEY into T's
 * window, READ them back, FETCH_AND_ADD its first word: exact bytes, the
 * guard bytes on both sides of the window untouched. */
void mw_traffic_through(struct mw_pair *p, struct tv_side *i, struct tv_side *t, uint32_t rkey,
			unsigned int seed);

#endif
