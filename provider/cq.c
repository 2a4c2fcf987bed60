/*
 * cq.c - completion queues: creation, arming, completion events, destruction.
 *
 * Each CQ is a ring of struct mlx5_cqe64 in a sealed memfd that the provider
 * creates and the daemon maps (abi.h "CQ ring"): the daemon writes CQEs as a
 * ConnectX does, the provider reads them (cq_poll.c). Arming writes the
 * mlx5-style arm word into the ring header and rings the context's doorbell
 * eventfd. Completion events travel over the channel's socketpair
 * (comp_channel.c): the daemon gets our end of it at CREATE_CQ.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "comp_channel.h"
#include "event_hold.h"
#include "uroce.h"

/* wc_flags this provider's poll functions can read (cq_poll.c); see docs/provider.md. */
#define UROCE_SUP_WC_FLAGS                                                   \
	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |           \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK | IBV_WC_EX_WITH_CVLAN |  \
	 IBV_WC_EX_WITH_FLOW_TAG | IBV_WC_EX_WITH_TM_INFO)
#define UROCE_SUP_CREATE_FLAGS                                               \
	(IBV_CREATE_CQ_ATTR_SINGLE_THREADED | IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)

/* Creates, sizes, seals and maps a ring memfd of NENT entries (*FD, *SIZE)
 * for a CQ on PDOM (a parent domain whose allocator places the ring, or
 * NULL); every CQE starts INVALID, owner 0. Returns the mapping, or NULL
 * with errno. */
static void *ring_new(uint32_t nent, struct ibv_pd *pdom, int *fd, size_t *size)
{
	int mfd = memfd_create("uroce-cq", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct mlx5_cqe64 *cqes;
	void *ring;
	int err;

	if (mfd < 0)
		return NULL;
	*size = (size_t)uroce_cq_ring_size(nent);
	if (ftruncate(mfd, (off_t)*size) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto fail;
	ring = uroce_ring_map(pdom, mfd, *size, UROCE_RES_TYPE_CQ);
	if (ring == MAP_FAILED)
		goto fail;
	cqes = (struct mlx5_cqe64 *)((char *)ring + UROCE_CQ_RING_HDR_SIZE);
	for (uint32_t i = 0; i < nent; i++)
		cqes[i].op_own = MLX5_CQE_INVALID << 4;
	*fd = mfd;
	return ring;
fail:
	err = errno;
	close(mfd);
	errno = err;
	return NULL;
}

/* Makes RING (NENT entries, SIZE bytes) the CQ's ring. */
static void ring_use(struct uroce_cq *cq, void *ring, size_t size, uint32_t nent)
{
	cq->ring = ring;
	cq->ring_size = size;
	cq->nent = nent;
	cq->hdr = ring;
	cq->cqes = (struct mlx5_cqe64 *)((char *)ring + UROCE_CQ_RING_HDR_SIZE);
}

static int map_ring(struct uroce_cq *cq, struct ibv_pd *pdom)
{
	size_t size;
	void *ring = ring_new(cq->nent, pdom, &cq->ring_fd, &size);

	if (!ring)
		return errno;
	ring_use(cq, ring, size, cq->nent);
	return 0;
}

static void unmap_ring(struct uroce_cq *cq)
{
	if (cq->ring)
		uroce_ring_unmap(cq->ring, cq->ring_size);
	if (cq->ring_fd >= 0)
		close(cq->ring_fd);
}

static bool cq_event_is_stale(struct ibv_cq *ibcq);
static void cq_count_event_read(struct ibv_cq *ibcq);
/* What the channel's event hold calls back (event_hold.h). */
static const struct uroce_event_hold_cq_ops cq_event_ops = {
	.count_read = cq_count_event_read,
	.is_stale = cq_event_is_stale,
};

/*
 * Common part of create_cq and create_cq_ex.
 *   cqe          entries asked for: 1..max_cqe (EINVAL); the ring gets the
 *                smallest power of two > cqe, reported as ibv_cq.cqe = nent - 1
 *   channel      NULL or a channel from ibv_create_comp_channel on this
 *                context (another context's: EINVAL); without the write()
 *                interception: EOPNOTSUPP
 *   comp_vector  0..num_comp_vectors-1 (EINVAL)
 * Returns the CQ or NULL with errno.
 */
static struct uroce_cq *create(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel, int comp_vector,
			       uint32_t cq_flags, uint64_t wc_flags, bool single_threaded,
			       struct ibv_pd *pdom)
{
	struct uroce_context *ctx = to_uctx(context);
	struct uroce_create_cq_req req;
	struct uroce_create_cq_resp resp;
	int fds[2], nfds = 1, ret;
	struct uroce_cq *cq;

	if (cqe < 1 || cqe > ctx->hello.dev.max_cqe)
		return uroce_fail_null(EINVAL);
	if (comp_vector < 0 || comp_vector >= ctx->num_comp_vectors)
		return uroce_fail_null(EINVAL);
	if (channel && channel->context != context)
		return uroce_fail_null(EINVAL); /* its events belong to another context */
	if (channel) {
		fds[1] = uroce_chan_peer_fd(channel->fd);
		if (fds[1] < 0) {
			if (errno == EOPNOTSUPP) {
				fprintf(stderr, UROCE_LOG_PREFIX "completion channels are unavailable: %s\n",
					uroce_chan_error());
				return uroce_fail_null(EOPNOTSUPP);
			}
			fprintf(stderr, UROCE_LOG_PREFIX "fd %d is not a completion channel of a uroce device\n",
				channel->fd);
			return uroce_fail_null(EINVAL);
		}
		nfds = 2;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return uroce_fail_null(ENOMEM);
	cq->ring_fd = -1;
	cq->nent = uroce_roundup_pow2((uint32_t)cqe + 1);
	cq->wc_flags = wc_flags;
	cq->single_threaded = single_threaded;
	cq->poll_yield = ctx->poll_yield;
	uroce_qp_cache_reset(&cq->qpc);
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	ret = map_ring(cq, pdom);
	if (ret)
		goto err;
	if (channel) {
		ret = uroce_event_hold_add_cq(channel->fd, &cq->vcq.cq, &cq_event_ops);
		if (ret)
			goto err;
	}

	memset(&req, 0, sizeof(req));
	req.user_handle = (uint64_t)(uintptr_t)&cq->vcq.cq;
	req.cqe = (uint32_t)cqe;
	req.nent = cq->nent;
	req.flags = cq_flags;
	req.comp_vector = (uint32_t)comp_vector;
	fds[0] = cq->ring_fd;
	ret = uroce_ctl_call(ctx, UROCE_OP_CREATE_CQ, &req, sizeof(req), fds, nfds,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret)
		goto err;
	/* The daemon holds its own reference to the memfd now. */
	close(cq->ring_fd);
	cq->ring_fd = -1;
	cq->handle = resp.handle;
	cq->cqn = resp.cqn;
	cq->vcq.cq.handle = resp.handle;
	cq->vcq.cq.cqe = (int)cq->nent - 1;
	return cq;
err:
	if (channel)
		uroce_event_hold_remove_cq(channel->fd, &cq->vcq.cq);
	unmap_ring(cq);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return uroce_fail_null(ret);
}

/* ibv_create_cq (libibverbs then runs verbs_init_cq). Errors: see create(). */
struct ibv_cq *uroce_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel, int comp_vector)
{
	struct uroce_cq *cq = create(context, cqe, channel, comp_vector, 0, 0, false, NULL);

	if (!cq)
		return NULL;
	uroce_cq_fill_ex_ops(cq);
	return &cq->vcq.cq;
}

/*
 * ibv_create_cq_ex. comp_mask: IBV_CQ_INIT_ATTR_MASK_FLAGS accepted;
 * MASK_PD: parent_domain must be a parent domain of this context (EINVAL),
 * whose allocator then gives the ring's memory; unknown bits → EINVAL. wc_flags
 * beyond UROCE_SUP_WC_FLAGS → EOPNOTSUPP. Create
 * flags SINGLE_THREADED (no CQ lock) and IGNORE_OVERRUN (the daemon
 * overwrites instead of raising IBV_EVENT_CQ_ERR); others → EOPNOTSUPP.
 */
struct ibv_cq_ex *uroce_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	uint32_t cq_flags = 0, create_flags = 0;
	struct ibv_pd *pdom = NULL;
	struct uroce_cq *cq;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD))
		return uroce_fail_null(EINVAL);
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		/* as mlx5: a parent domain of this context */
		pdom = attr->parent_domain;
		if (!pdom || pdom->context != context || !to_upd(pdom)->base)
			return uroce_fail_null(EINVAL);
	}
	if (attr->wc_flags & ~(uint64_t)UROCE_SUP_WC_FLAGS)
		return uroce_fail_null(EOPNOTSUPP);
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS)
		create_flags = attr->flags;
	if (create_flags & ~(uint32_t)UROCE_SUP_CREATE_FLAGS)
		return uroce_fail_null(EOPNOTSUPP);
	if (create_flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)
		cq_flags |= UROCE_CQ_IGNORE_OVERRUN;
	if (attr->cqe > (uint32_t)INT32_MAX)
		return uroce_fail_null(EINVAL);

	cq = create(context, (int)attr->cqe, attr->channel, (int)attr->comp_vector, cq_flags,
		    attr->wc_flags, create_flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED, pdom);
	if (!cq)
		return NULL;
	uroce_cq_fill_ex_ops(cq);
	return &cq->vcq.cq_ex;
}

/*
 * ibv_destroy_cq. Returns 0, EBUSY (a QP still uses it) or EINVAL. Like
 * libibverbs over the kernel: the CQ's unread completion events are dropped
 * from its channel, and destroy waits until the application acknowledged
 * (ibv_ack_cq_events / ibv_ack_async_event) every event it read for the CQ
 * (events.c). A CQ with an unread async event (CQ_ERR) stays allocated
 * until ibv_close_device.
 */
int uroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct uroce_cq *cq = to_ucq(ibcq);
	struct uroce_context *ctx = to_uctx(ibcq->context);
	struct uroce_handle_req req = { .handle = cq->handle };
	struct uroce_destroy_cq_resp resp;
	bool async_unread;
	int ret;

	ret = uroce_ctl_call(ctx, UROCE_OP_DESTROY_CQ, &req, sizeof(req),
			     NULL, 0, &resp, sizeof(resp), NULL, NULL);
	if (uroce_daemon_gone(ret)) {
		/* The daemon is gone: nothing more can be delivered. */
		resp.comp_events_reported = 0;
		resp.async_events_reported = 0;
	} else if (ret) {
		return ret;
	}
	/* The daemon wrote this CQ's last record before its reply. */
	if (ibcq->channel) {
		uroce_event_hold_remove_cq(ibcq->channel->fd, ibcq);
		uroce_chan_drop_cq_events(ibcq->channel->fd, (uint64_t)(uintptr_t)ibcq);
	}
	pthread_mutex_lock(&ibcq->mutex);
	while (ibcq->comp_events_completed <
		       __atomic_load_n(&cq->comp_events_read, __ATOMIC_ACQUIRE) ||
	       ibcq->async_events_completed <
		       __atomic_load_n(&cq->async_events_read, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	pthread_mutex_unlock(&ibcq->mutex);
	async_unread = resp.async_events_reported >
		       __atomic_load_n(&cq->async_events_read, __ATOMIC_ACQUIRE);
	unmap_ring(cq);
	cq->ring = NULL;
	cq->ring_fd = -1;
	pthread_spin_destroy(&cq->lock);
	if (!async_unread || !uroce_event_keep(ctx, cq))
		free(cq);
	return 0;
}

/* The CQ lock (none for SINGLE_THREADED CQs): taken by polls, arming and
 * resizing, so a resize never switches rings under the others. */
static void cq_lock(struct uroce_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static void cq_unlock(struct uroce_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

/* Publish the arm word for cq->arm_sn / arm_solicited and ring the doorbell
 * (abi.h "Arming"), under the CQ lock. Returns 0 or the doorbell's errno. */
static int cq_arm(struct uroce_cq *cq)
{
	struct uroce_context *ctx = to_uctx(cq->vcq.cq.context);
	uint32_t word;

	word = UROCE_CQ_ARM_CMD | (cq->arm_sn & 3) << UROCE_CQ_ARM_SN_SHIFT |
	       (cq->arm_solicited ? UROCE_CQ_ARM_SOLICITED : 0) |
	       (__atomic_load_n(&cq->cons_index, __ATOMIC_RELAXED) & UROCE_CQ_CI_MASK);
	__atomic_store_n(&cq->hdr->dbrec[1], htobe32(word), __ATOMIC_RELEASE);
	if (eventfd_write(ctx->doorbell, 1))
		return errno;
	return 0;
}

/*
 * ibv_req_notify_cq: one-shot arm for the next completion (solicited_only:
 * the next solicited or error completion). Publishes
 * UROCE_CQ_ARM_CMD | sn<<28 | sol<<24 | ci
 * in dbrec[1] (big-endian, release) and rings the doorbell; the daemon fires
 * for the next CQE it writes, not for CQEs already in the ring (abi.h
 * "Arming"): the caller polls after arming to find those.
 * Returns 0, or the errno of the doorbell write.
 */
int uroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct uroce_cq *cq = to_ucq(ibcq);
	int ret;

	cq_lock(cq);
	cq->arm_solicited = solicited_only;
	ret = cq_arm(cq);
	cq_unlock(cq);
	return ret;
}

/*
 * Called by ibv_get_cq_event for each event of this CQ: the next arm gets a
 * new sn. (The event was counted as read by the channel's read hook.)
 */
void uroce_cq_event(struct ibv_cq *ibcq)
{
	to_ucq(ibcq)->arm_sn++;
}

/*
 * For an event just read from the CQ's channel, whether it announces nothing:
 * the CQ has no CQE to poll because the application's poll after arming
 * already took the CQE that fired it (event_hold.h explains when that
 * happens). Then the CQ is armed again as the application's last arm asked
 * (so a newer CQE fires a newer event) and true is returned; false when there
 * is a CQE to poll.
 */
static bool cq_event_is_stale(struct ibv_cq *ibcq)
{
	struct uroce_cq *cq = to_ucq(ibcq);
	bool stale;

	cq_lock(cq);
	if (uroce_cq_has_cqe(cq)) {
		cq_unlock(cq);
		return false;
	}
	/* A new sn, as if the application had read, acked and re-armed. */
	cq->arm_sn++;
	/* cannot re-arm: let the application see it; else a CQE written
	 * before the daemon saw this arm fired nothing: the event in hand
	 * announces it */
	stale = !cq_arm(cq) && !uroce_cq_has_cqe(cq);
	cq_unlock(cq);
	return stale;
}

/* One completion event of the CQ handed to the application (by the event
 * hold, under its lock): ibv_destroy_cq waits for its ack. */
static void cq_count_event_read(struct ibv_cq *ibcq)
{
	__atomic_add_fetch(&to_ucq(ibcq)->comp_events_read, 1, __ATOMIC_RELEASE);
}

/*
 * ibv_resize_cq(3): the ring becomes the smallest power of two > cqe
 * entries (ibv_cq.cqe = that - 1; the same size: nothing to do, as mlx5).
 * Protocol: abi.h "Resizing" — under the CQ lock a new ring is handed to the
 * daemon, which moves the unpolled CQEs into it in order; polls and arms
 * wait for the lock, so none sees a half-switched CQ.
 * Returns 0 or an errno (also in errno): EINVAL (cqe < 1 or > max_cqe, or
 * fewer than the CQEs the CQ holds unpolled; the CQ is in error), ENOMEM,
 * EIO (daemon gone). On error the CQ keeps its ring and its CQEs.
 */
int uroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct uroce_cq *cq = to_ucq(ibcq);
	struct uroce_context *ctx = to_uctx(ibcq->context);
	struct uroce_resize_cq_req req = { .cqe = (uint32_t)cqe };
	struct uroce_resize_cq_resp resp;
	struct uroce_cq_ring_hdr *nh;
	uint32_t nent, ci;
	void *ring, *old;
	size_t size, old_size;
	int fd, ret;

	if (cqe < 1 || cqe > ctx->hello.dev.max_cqe)
		return errno = EINVAL;
	nent = uroce_roundup_pow2((uint32_t)cqe + 1);
	cq_lock(cq);
	if (nent == cq->nent) {
		cq_unlock(cq);
		return 0;
	}
	/* the new ring is the provider's own mapping, also on a parent domain */
	ring = ring_new(nent, NULL, &fd, &size);
	if (!ring) {
		ret = errno;
		cq_unlock(cq);
		return errno = ret;
	}
	ci = htobe32(cq->cons_index & UROCE_CQ_CI_MASK);
	__atomic_store_n(&cq->hdr->dbrec[0], ci, __ATOMIC_RELEASE);
	nh = ring;
	nh->dbrec[0] = ci;
	nh->dbrec[1] = __atomic_load_n(&cq->hdr->dbrec[1], __ATOMIC_RELAXED);
	req.handle = cq->handle;
	req.nent = nent;
	ret = uroce_ctl_call(ctx, UROCE_OP_RESIZE_CQ, &req, sizeof(req), &fd, 1,
			     &resp, sizeof(resp), NULL, NULL);
	close(fd);
	if (ret) {
		munmap(ring, size);
		cq_unlock(cq);
		return errno = ret;
	}
	old = cq->ring;
	old_size = cq->ring_size;
	ring_use(cq, ring, size, nent);
	ibcq->cqe = (int)nent - 1;
	cq_unlock(cq);
	uroce_ring_unmap(old, old_size);
	return 0;
}

/*
 * ibv_modify_cq(3): attr_mask IBV_CQ_ATTR_MODERATE sets completion event
 * moderation: an armed CQ fires after moderate.cq_count CQEs or
 * moderate.cq_period µs after the first, whichever comes first (0/0: on the
 * first CQE). Limits: cq_mod_caps of ibv_query_device_ex.
 * Returns 0 or EINVAL (attr_mask not exactly MODERATE, cq_period >
 * max_cq_period), EIO (daemon gone).
 */
int uroce_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct uroce_modify_cq_req req = {
		.handle = to_ucq(ibcq)->handle,
		.attr_mask = attr->attr_mask,
		.cq_count = attr->moderate.cq_count,
		.cq_period = attr->moderate.cq_period,
	};
	struct uroce_hdr resp;

	if (attr->attr_mask != IBV_CQ_ATTR_MODERATE ||
	    attr->moderate.cq_period > UROCE_CQ_MOD_MAX_PERIOD_US)
		return EINVAL;
	return uroce_ctl_call(to_uctx(ibcq->context), UROCE_OP_MODIFY_CQ, &req, sizeof(req), NULL,
			      0, &resp, sizeof(resp), NULL, NULL);
}

