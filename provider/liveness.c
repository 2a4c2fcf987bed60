/*
 * liveness.c - noticing that the daemon is gone (liveness.h).
 *
 * Busy-polling applications (ibv_rc_pingpong without -e, perftest, UCX)
 * never block on a socket, so the poll path itself must notice: an empty
 * poll reads CLOCK_MONOTONIC_COARSE (vDSO, no system call) and, every
 * UROCE_LIVENESS_CHECK_MS, asks poll(2) whether the daemon's end of the
 * control socket closed (POLLHUP: the process exited or was killed). A
 * stopped daemon (SIGSTOP) keeps its sockets open: it is not gone, its
 * control requests time out instead (ctl.c).
 */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "liveness.h"

void uroce_ctx_set_gone(struct uroce_context *ctx, const char *why)
{
	if (__atomic_exchange_n(&ctx->gone, true, __ATOMIC_ACQ_REL) || !why)
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
