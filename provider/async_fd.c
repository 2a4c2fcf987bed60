/*
 * async_fd.c - the end of a context's async event socket (liveness.h).
 *
 * The daemon is the only writer of async_fd's peer, so end of file means it
 * is gone. Over the kernel, uverbs queues IBV_EVENT_DEVICE_FATAL on every
 * open context of a disassociated device and then fails reads of the event
 * file with EIO; an application blocked in ibv_get_async_event learns of the
 * loss the same way here: the first end of file becomes one DEVICE_FATAL
 * record (unless the daemon sent one before it exited), later reads EIO.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/ib_user_verbs.h>

#include "liveness.h"

struct async_ent {
	int fd;
	bool fatal_seen; /* a DEVICE_FATAL was returned (real or synthesised) */
};
static pthread_mutex_t async_lock = PTHREAD_MUTEX_INITIALIZER;
static struct async_ent *ents;
static size_t n_ents, cap_ents;

int uroce_async_fd_register(int fd)
{
	int ret = 0;

	pthread_mutex_lock(&async_lock);
	if (n_ents == cap_ents) {
		size_t cap = cap_ents ? cap_ents * 2 : 4;
		struct async_ent *n = realloc(ents, cap * sizeof(*n));

		if (!n) {
			ret = ENOMEM;
			goto out;
		}
		ents = n;
		cap_ents = cap;
	}
	ents[n_ents++] = (struct async_ent){ .fd = fd };
out:
	pthread_mutex_unlock(&async_lock);
	return ret;
}

static struct async_ent *find_locked(int fd)
{
	for (size_t i = 0; i < n_ents; i++)
		if (ents[i].fd == fd)
			return &ents[i];
	return NULL;
}

void uroce_async_fd_forget(int fd)
{
	struct async_ent *e;

	pthread_mutex_lock(&async_lock);
	e = find_locked(fd);
	if (e)
		*e = ents[--n_ents];
	pthread_mutex_unlock(&async_lock);
}

/* Marks fd's DEVICE_FATAL as delivered; returns whether it already was. */
static bool fatal_once(int fd)
{
	struct async_ent *e;
	bool was = true;

	pthread_mutex_lock(&async_lock);
	e = find_locked(fd);
	if (e) {
		was = e->fatal_seen;
		e->fatal_seen = true;
	}
	pthread_mutex_unlock(&async_lock);
	return was;
}

bool uroce_async_fd_read(int fd, void *buf, size_t count, uroce_async_read_fn read_fn,
			 ssize_t *ret)
{
	struct ib_uverbs_async_event_desc ev;
	bool ours;
	ssize_t n;

	pthread_mutex_lock(&async_lock);
	ours = find_locked(fd) != NULL;
	pthread_mutex_unlock(&async_lock);
	if (!ours)
		return false;
	n = read_fn(fd, buf, count);
	if (n == (ssize_t)sizeof(ev) && count >= sizeof(ev)) {
		memcpy(&ev, buf, sizeof(ev));
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			fatal_once(fd);
	} else if (n == 0 && count >= sizeof(ev)) {
		if (fatal_once(fd)) {
			errno = EIO;
			n = -1;
		} else {
			memset(&ev, 0, sizeof(ev));
			ev.event_type = IBV_EVENT_DEVICE_FATAL;
			memcpy(buf, &ev, sizeof(ev));
			n = sizeof(ev);
		}
	}
	*ret = n;
	return true;
}
