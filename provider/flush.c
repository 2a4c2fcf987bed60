/*
 * flush.c - noticing that the daemon is gone and flushing the work it will
 * never complete (liveness.h).
 *
 * Busy-polling applications (ibv_rc_pingpong without -e, perftest, UCX)
 * never block on a socket, so the poll path itself must notice: an empty
 * poll reads CLOCK_MONOTONIC_COARSE (vDSO, no system call) and, every
 * UROCE_LIVENESS_CHECK_MS, asks poll(2) whether the daemon's end of the
 * control socket closed (POLLHUP: the process exited or was killed). A
 * stopped daemon (SIGSTOP) keeps its sockets open: it is not gone, its
 * control requests time out instead (ctl.c).
 *
 * Once gone, each CQ returns a software WR_FLUSH_ERR completion for every
 * WQE posted to its QPs and not yet completed to the application, as mlx5's
 * reset flow does for a device in internal-error state: send queues before
 * receive queues, each oldest first. The CQEs use the mlx5 error layout
 * (docs/cqe-format.md), vendor syndrome 0xf9 as the daemon's own flushes.
 */
#include "config.h"

#include <endian.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "liveness.h"

/* The vendor syndrome the daemon writes with WR_FLUSH_ERR (emu/nic/cq_ring.c). */
#define FLUSH_VENDOR_ERR 0xf9

void uroce_ctx_set_gone(struct uroce_context *ctx, const char *why)
{
	if (__atomic_exchange_n(&ctx->gone, true, __ATOMIC_ACQ_REL))
		return;
	fprintf(stderr, UROCE_LOG_PREFIX "%s: the daemon is gone (%s): outstanding work completes with "
		"IBV_WC_WR_FLUSH_ERR, verbs fail with EIO\n",
		ctx->hello.dev_name[0] ? ctx->hello.dev_name : "device", why);
}

bool uroce_ctx_gone(struct uroce_context *ctx)
{
	struct timespec ts;
	struct pollfd pfd;
	uint64_t now, last;

	if (__atomic_load_n(&ctx->gone, __ATOMIC_ACQUIRE))
		return true;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	last = __atomic_load_n(&ctx->gone_checked_ms, __ATOMIC_RELAXED);
	if (now - last < UROCE_LIVENESS_CHECK_MS)
		return false;
	__atomic_store_n(&ctx->gone_checked_ms, now, __ATOMIC_RELAXED);
	/* A fork child's copy of the connection is the parent's: say nothing. */
	if (ctx->sock < 0 || getpid() != ctx->pid)
		return false;
	pfd = (struct pollfd){ .fd = ctx->sock, .events = POLLRDHUP };
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR))) {
		uroce_ctx_set_gone(ctx, "its end of the control socket closed");
		return true;
	}
	return false;
}

/* Fills cqe as a flush of WQE number wqe of qp (requester side if sq). */
static void flush_cqe(struct mlx5_cqe64 *cqe, uint32_t qpn, uint32_t wqe, bool sq)
{
	struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)cqe;

	memset(cqe, 0, sizeof(*cqe));
	e->syndrome = MLX5_CQE_SYNDROME_WR_FLUSH_ERR;
	e->vendor_err_synd = FLUSH_VENDOR_ERR;
	e->s_wqe_opcode_qpn = htobe32(qpn & 0xFFFFFF);
	e->wqe_counter = htobe16((uint16_t)wqe);
	e->op_own = (uint8_t)((sq ? MLX5_CQE_REQ_ERR : MLX5_CQE_RESP_ERR) << 4);
}

/* Whether qp has an outstanding WQE completing on cq; fills cqe for it. */
static bool qp_flush_one(struct uroce_qp *qp, struct uroce_cq *cq, struct mlx5_cqe64 *cqe)
{
	struct ibv_qp *q = &qp->vqp.qp;
	uint32_t tail;
	bool found = false;

	if (q->send_cq == &cq->vcq.cq && qp->cap.max_send_wr) {
		pthread_spin_lock(&qp->sq_lock);
		tail = __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE);
		if (tail != qp->sq_head) {
			flush_cqe(cqe, q->qp_num, tail, true);
			found = true;
		}
		pthread_spin_unlock(&qp->sq_lock);
		if (found)
			return true;
	}
	if (q->recv_cq == &cq->vcq.cq && qp->cap.max_recv_wr) {
		pthread_spin_lock(&qp->rq_lock);
		tail = __atomic_load_n(&qp->rq_tail, __ATOMIC_ACQUIRE);
		if (tail != qp->rq_head) {
			flush_cqe(cqe, q->qp_num, tail, false);
			found = true;
		}
		pthread_spin_unlock(&qp->rq_lock);
	}
	return found;
}

bool uroce_flush_next_cqe(struct uroce_cq *cq, struct mlx5_cqe64 *cqe)
{
	struct uroce_context *ctx = to_uctx(cq->vcq.cq.context);
	struct uroce_qp *qp;

	/* the QP of the previous flush first: its queue is likely not empty yet */
	qp = cq->flush_qpn ? uroce_find_qp(ctx, cq->flush_qpn) : NULL;
	if (qp && qp_flush_one(qp, cq, cqe))
		return true;
	for (uint32_t top = 0; top < UROCE_QPT_TOP; top++) {
		struct uroce_qp **lvl = __atomic_load_n(&ctx->qp_table[top], __ATOMIC_ACQUIRE);

		for (uint32_t s = 0; lvl && s < UROCE_QPT_SLOTS; s++) {
			qp = __atomic_load_n(&lvl[s], __ATOMIC_ACQUIRE);
			if (qp && qp_flush_one(qp, cq, cqe)) {
				cq->flush_qpn = qp->vqp.qp.qp_num;
				return true;
			}
		}
	}
	cq->flush_qpn = 0;
	return false;
}
