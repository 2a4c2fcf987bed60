/*
 * liveness.h - noticing that the daemon is gone, and what the provider does
 * then (docs/provider.md, "When the daemon goes away").
 *
 * A device whose daemon died behaves like a hot-unplugged ConnectX under
 * libibverbs: ibv_get_async_event returns IBV_EVENT_DEVICE_FATAL once (then
 * fails with EIO, as uverbs' event file after disassociation), polling a CQ
 * returns the CQEs the daemon wrote and then one IBV_WC_WR_FLUSH_ERR
 * completion for every outstanding WQE of the CQ's QPs (the mlx5 reset flow:
 * software completions for work the device will never complete), and every
 * later verb fails with EIO (uverbs' answer after disassociation).
 */
#ifndef UROCE_PROVIDER_LIVENESS_H
#define UROCE_PROVIDER_LIVENESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "uroce.h"

/* How often (ms of CLOCK_MONOTONIC_COARSE) an empty CQ poll asks the kernel
 * whether the daemon's end of the control socket is still open. */
#define UROCE_LIVENESS_CHECK_MS 10

/*
 * Whether the daemon of ctx is gone: the control socket broke, a
 * DEVICE_FATAL arrived, or (checked at most every UROCE_LIVENESS_CHECK_MS
 * with one poll(2) of the control socket for POLLHUP) the daemon's end closed.
 * Cheap when called often: one flag load and one vDSO clock read.
 */
bool uroce_ctx_gone(struct uroce_context *ctx);

/* Whether ctx's daemon is already known to be gone (one flag load; posts use
 * it: a WQE posted before that is known is flushed by the next CQ poll). */
static inline bool uroce_ctx_known_gone(struct uroce_context *ctx)
{
	return __atomic_load_n(&ctx->gone, __ATOMIC_ACQUIRE);
}

/* Marks ctx's daemon gone (once; says so on stderr with why, unless why is
 * NULL: the application was told by IBV_EVENT_DEVICE_FATAL). */
void uroce_ctx_set_gone(struct uroce_context *ctx, const char *why);

/*
 * Builds in *cqe the software flush CQE of the next outstanding WQE of a QP
 * whose send or receive CQ is cq: an mlx5 error CQE (REQ_ERR for the SQ,
 * RESP_ERR for the RQ) with syndrome WR_FLUSH_ERR, the QPN and the WQE
 * counter, so cq_poll.c retires it like any CQE from the ring. Send WQEs
 * first, oldest first. Returns false when nothing is outstanding.
 * Called with the CQ's lock held, only once uroce_ctx_gone() is true.
 */
bool uroce_flush_next_cqe(struct uroce_cq *cq, struct mlx5_cqe64 *cqe);

/* The read(2) libibverbs would have called (comp_channel.c's chain). */
typedef ssize_t (*uroce_async_read_fn)(int fd, void *buf, size_t count);

/*
 * async_fd records: the provider's read hook (comp_channel.c) hands reads of
 * a context's async_fd here. Register at context creation, forget at close.
 * uroce_async_fd_register returns 0 or ENOMEM.
 */
int uroce_async_fd_register(int fd);
void uroce_async_fd_forget(int fd);

/*
 * If fd is a registered async_fd: reads a record into buf with read_fn,
 * stores the result in *ret and returns true. End of file (the daemon's end
 * closed) before any DEVICE_FATAL gives one synthesised
 * struct ib_uverbs_async_event_desc {element 0, IBV_EVENT_DEVICE_FATAL};
 * end of file after a DEVICE_FATAL gives -1 with errno EIO.
 * Returns false (nothing read) for other fds.
 */
bool uroce_async_fd_read(int fd, void *buf, size_t count, uroce_async_read_fn read_fn,
			 ssize_t *ret);

#endif
