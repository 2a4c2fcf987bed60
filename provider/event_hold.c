/*
 * event_hold.c - the CQs of each completion channel and the hold of events
 * that announce nothing (event_hold.h explains why).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/ib_user_verbs.h>

#include "event_hold.h"
#include "env.h"

/* Live CQs on our channels: only their events are delivered. */
struct chan_cq {
	int app_fd;
	struct ibv_cq *cq;
	const struct uroce_event_hold_cq_ops *ops;
	unsigned int held; /* readers looking at this CQ right now */
};
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cond = PTHREAD_COND_INITIALIZER;
static struct chan_cq *chan_cqs;
static size_t n_chan_cqs, cap_chan_cqs;

int uroce_event_hold_add_cq(int channel_fd, struct ibv_cq *cq,
			    const struct uroce_event_hold_cq_ops *ops)
{
	int ret = 0;

	pthread_mutex_lock(&hold_lock);
	if (n_chan_cqs == cap_chan_cqs) {
		size_t cap = cap_chan_cqs ? cap_chan_cqs * 2 : 8;
		struct chan_cq *n = realloc(chan_cqs, cap * sizeof(*n));

		if (!n) {
			ret = ENOMEM;
			goto out;
		}
		chan_cqs = n;
		cap_chan_cqs = cap;
	}
	chan_cqs[n_chan_cqs++] = (struct chan_cq){ .app_fd = channel_fd, .cq = cq, .ops = ops };
out:
	pthread_mutex_unlock(&hold_lock);
	return ret;
}

static struct chan_cq *find_cq_locked(int fd, struct ibv_cq *cq)
{
	for (size_t i = 0; i < n_chan_cqs; i++)
		if (chan_cqs[i].app_fd == fd && chan_cqs[i].cq == cq)
			return &chan_cqs[i];
	return NULL;
}

void uroce_event_hold_remove_cq(int channel_fd, struct ibv_cq *cq)
{
	struct chan_cq *e;

	pthread_mutex_lock(&hold_lock);
	while ((e = find_cq_locked(channel_fd, cq)) && e->held)
		pthread_cond_wait(&held_cond, &hold_lock);
	if (e)
		*e = chan_cqs[--n_chan_cqs];
	pthread_mutex_unlock(&hold_lock);
}

/* UROCE_STALE_EVENT_WAIT_MS from the environment (0..60000), else the default. */
static int stale_wait_ms(void)
{
	static bool warned;

	return (int)uroce_env_num("UROCE_STALE_EVENT_WAIT_MS", 0, 60000, UROCE_STALE_EVENT_WAIT_MS, &warned);
}

enum cq_take { CQ_GONE, CQ_TAKEN, CQ_HELD };

/*
 * For an event of cq just read from channel fd: CQ_GONE if the CQ was
 * destroyed meanwhile (its event is void, as over the kernel); CQ_HELD if it
 * may be held back (blocking fd, the only CQ of its channel), with a hold
 * that uroce_event_hold_remove_cq waits for (*ops then names the CQ's
 * callbacks); else CQ_TAKEN. CQ_TAKEN counts the event as read under the same
 * lock as the removal, so a delivered event always names a live CQ.
 */
static enum cq_take take_cq(int fd, struct ibv_cq *cq, bool may_hold,
			    const struct uroce_event_hold_cq_ops **ops)
{
	enum cq_take t = CQ_GONE;
	struct chan_cq *e;
	size_t ncq = 0;

	pthread_mutex_lock(&hold_lock);
	e = find_cq_locked(fd, cq);
	for (size_t i = 0; e && i < n_chan_cqs; i++)
		ncq += chan_cqs[i].app_fd == fd;
	if (e && may_hold && ncq == 1) {
		e->held++;
		*ops = e->ops;
		t = CQ_HELD;
	} else if (e) {
		e->ops->count_read(cq);
		t = CQ_TAKEN;
	}
	pthread_mutex_unlock(&hold_lock);
	return t;
}

static void release_cq(int fd, struct ibv_cq *cq)
{
	struct chan_cq *e;

	pthread_mutex_lock(&hold_lock);
	e = find_cq_locked(fd, cq);
	if (e && e->held && --e->held == 0)
		pthread_cond_broadcast(&held_cond);
	pthread_mutex_unlock(&hold_lock);
}

ssize_t uroce_event_hold_read(int fd, void *buf, size_t count, uroce_read_fn read_fn)
{
	const struct uroce_event_hold_cq_ops *ops = NULL;
	struct ib_uverbs_comp_event_desc ev;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	bool blocking, stale;
	struct ibv_cq *cq;
	ssize_t n;
	int fl;

	if (count != sizeof(ev))
		return read_fn(fd, buf, count);
	fl = fcntl(fd, F_GETFL);
	blocking = fl >= 0 && !(fl & O_NONBLOCK);
	for (;;) {
		n = read_fn(fd, &ev, sizeof(ev));
		if (n != (ssize_t)sizeof(ev))
			return n;
		cq = (struct ibv_cq *)(uintptr_t)ev.cq_handle;
		switch (take_cq(fd, cq, blocking, &ops)) {
		case CQ_GONE:
			continue;
		case CQ_TAKEN:
			memcpy(buf, &ev, sizeof(ev));
			return n;
		case CQ_HELD:
			break;
		}
		stale = ops->is_stale(cq);
		release_cq(fd, cq);
		/* A newer event of the same (only) CQ replaces a stale one; without
		 * one in time, the stale one is delivered after all. */
		if (stale && poll(&pfd, 1, stale_wait_ms()) == 1)
			continue;
		if (take_cq(fd, cq, false, &ops) == CQ_TAKEN) {
			memcpy(buf, &ev, sizeof(ev));
			return n;
		}
	}
}
