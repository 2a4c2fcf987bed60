/*
 * traffic_verbs.h - small helpers for the data-path tests that drive
 * uroce0 through the public verbs API only (<infiniband/verbs.h>): open the
 * device, bring RC and UD QPs to RTS over GID 0 (RoCE v2), wait for one
 * completion on an extended CQ with a deadline. No test asserts timing; the
 * deadlines only turn a hang into a failure.
 */
#ifndef UROCE_TESTS_TRAFFIC_VERBS_H
#define UROCE_TESTS_TRAFFIC_VERBS_H

#include <infiniband/verbs.h>
#include <stdint.h>

/* Q_Key of every UD QP in these tests (the value pyverbs and ud_pingpong use). */
#define TV_QKEY 0x11111111u

/* One end of a test connection: its objects and its registered buffer. */
struct tv_side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	union ibv_gid gid;
};

/* ibv_open_device of the device named NAME; NULL (message on stderr) if absent. */
struct ibv_context *tv_open(const char *name);

/*
 * RC QP → INIT → RTR → RTS towards DEST_QPN at DGID (GID index 0, hop
 * limit 1), path MTU MTU, PSNs 0, local ACK timeout TIMEOUT (4.096 us x
 * 2^TIMEOUT; ibv_rc_pingpong uses 14), retry 7, rnr_retry 7 (infinite), one
 * outstanding READ each way. Access flags: local write, remote write and
 * read. Returns 0 or the errno of the failing ibv_modify_qp.
 */
int tv_rc_connect(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid,
		  enum ibv_mtu mtu, uint8_t timeout);

/* UD QP → INIT (TV_QKEY) → RTR → RTS; 0 or the errno of ibv_modify_qp. */
int tv_ud_ready(struct ibv_qp *qp);

/* Address handle to DGID on port 1 (is_global, sgid_index 0, hop limit 1); NULL on error. */
struct ibv_ah *tv_ah(struct ibv_pd *pd, const union ibv_gid *dgid);

/*
 * Waits up to TIMEOUT_MS for a completion on CQ and leaves it current
 * (ibv_start_poll returned 0): returns 0, ETIMEDOUT, or start_poll's error.
 * The caller reads it and calls ibv_end_poll.
 */
int tv_start_poll(struct ibv_cq_ex *cq, int timeout_ms);

/*
 * Waits up to TIMEOUT_MS for one completion on the legacy CQ (ibv_poll_cq
 * with one entry) and stores it in *WC: returns 0, ETIMEDOUT, or EIO when
 * ibv_poll_cq fails.
 */
int tv_poll_one(struct ibv_cq *cq, int timeout_ms, struct ibv_wc *wc);

/* Next async event of CTX within MS milliseconds into EV (ibv_get_async_event(3);
 * the caller acks it): 0, ETIMEDOUT, or the errno of fcntl or
 * ibv_get_async_event. Leaves CTX's async_fd non-blocking. */
int tv_next_async(struct ibv_context *ctx, int ms, struct ibv_async_event *ev);

/* Monotonic milliseconds (deadlines only). */
uint64_t tv_now_ms(void);

#endif
