/*
 * client.c - per-connection state, handle tables, cleanup when a client goes
 * away, async events and the doorbell (see client.h).
 */
#include "config.h"
#include "emu/ctl/client.h"
#include "emu/nic/cq_ring.h"
#include "emu/nic/doorbell.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/ctl/objects.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

int objtab_add(struct obj_table *t, void *obj, uint32_t *handle)
{
	uint32_t i;

	for (i = t->hint; i < t->cap; i++)
		if (!t->slot[i])
			goto found;
	if (t->cap == UINT32_MAX / 2)
		return ENOMEM;
	{
		uint32_t ncap = t->cap ? t->cap * 2 : 8;
		void **n = realloc(t->slot, ncap * sizeof(*n));

		if (!n)
			return ENOMEM;
		memset(n + t->cap, 0, (ncap - t->cap) * sizeof(*n));
		i = t->cap;
		t->slot = n;
		t->cap = ncap;
	}
found:
	t->slot[i] = obj;
	t->count++;
	t->hint = i + 1;
	*handle = i + 1;
	return 0;
}

void *objtab_get(const struct obj_table *t, uint32_t handle)
{
	if (handle == 0 || handle > t->cap)
		return NULL;
	return t->slot[handle - 1];
}

void objtab_del(struct obj_table *t, uint32_t handle)
{
	if (!objtab_get(t, handle))
		return;
	t->slot[handle - 1] = NULL;
	t->count--;
	if (handle - 1 < t->hint)
		t->hint = handle - 1;
}

void objtab_fini(struct obj_table *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

struct client *client_new(struct uroce_dev *d, int fd)
{
	struct client *c = calloc(1, sizeof(*c));
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[64];
	int cfd;

	if (!c) {
		close(fd);
		return NULL;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		ulog(ULOG_WARN, "SO_PEERCRED: %s; connection refused", strerror(errno));
		free(c);
		close(fd);
		return NULL;
	}
	c->dev = d;
	c->fd = fd;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->async_fd = -1;
	c->db_fd = -1;
	c->mem_fd = -1;
	c->pidfd = (int)syscall(SYS_pidfd_open, cred.pid, 0);
	c->id = d->next_client_id++;
	snprintf(c->comm, sizeof(c->comm), "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)cred.pid);
	cfd = open(path, O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		ssize_t n = read(cfd, c->comm, sizeof(c->comm) - 1);
		size_t i;

		c->comm[n > 0 ? n : 0] = 0;
		for (i = 0; c->comm[i]; i++)
			if (c->comm[i] == '\n' || c->comm[i] == ' ')
				c->comm[i] = c->comm[i] == '\n' ? 0 : '_';
		if (!c->comm[0])
			snprintf(c->comm, sizeof(c->comm), "?");
		close(cfd);
	}
	c->next = d->clients;
	if (d->clients)
		d->clients->prev = c;
	d->clients = c;
	return c;
}

int client_open_mem(struct client *c)
{
	char path[64];
	int fd;

	if (c->mem_fd >= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)c->pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	/* alive now (pidfd) => alive at open => the fd is the client's mm */
	if (c->pidfd < 0 || syscall(SYS_pidfd_send_signal, c->pidfd, 0, NULL, 0) < 0) {
		close(fd);
		return ESRCH;
	}
	c->mem_fd = fd;
	return 0;
}

/* Free every object of one table with FREE_FN (handles ascending). */
#define DRAIN(c, tab, type, free_fn)                                   \
	do {                                                           \
		uint32_t h_;                                           \
		for (h_ = 1; h_ <= (c)->tab.cap; h_++) {               \
			type *o_ = objtab_get(&(c)->tab, h_);          \
			if (o_)                                        \
				free_fn((c), o_);                      \
		}                                                      \
		objtab_fini(&(c)->tab);                                \
	} while (0)

void client_destroy(struct client *c)
{
	struct uroce_dev *d = c->dev;
	uint32_t nqp = c->qps.count, nah = c->ahs.count, nmr = c->mrs.count, ncq = c->cqs.count,
		 npd = c->pds.count;

	/* QPs first (they hold CQs and PDs), then AHs and MRs (hold PDs). */
	DRAIN(c, qps, struct qp, qp_free);
	DRAIN(c, ahs, struct ah, ah_free);
	DRAIN(c, mrs, struct mr, mr_free);
	DRAIN(c, cqs, struct cq, cq_free);
	DRAIN(c, pds, struct pd, pd_free);
	if (c->hello) {
		d->n_clients--;
		ulog(ULOG_INFO, "client#%u pid %d (%s) gone; freed qp=%u ah=%u mr=%u cq=%u pd=%u", c->id,
		     (int)c->pid, c->comm, nqp, nah, nmr, ncq, npd);
		if (c->async_dropped)
			ulog(ULOG_WARN, "client#%u: %llu async events lost (its async socket was full), %llu delivered",
			     c->id, (unsigned long long)c->async_dropped, (unsigned long long)c->async_events);
	}
	ev_io_stop(d->loop, &c->io);
	close(c->fd);
	if (c->db_fd >= 0) {
		ev_io_stop(d->loop, &c->db_io);
		close(c->db_fd);
	}
	if (c->async_fd >= 0)
		close(c->async_fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->mem_fd >= 0)
		close(c->mem_fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		d->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

int client_async_event(struct client *c, uint64_t element, uint32_t event_type)
{
	struct ib_uverbs_async_event_desc ev = { .element = element, .event_type = event_type };

	if (c->async_fd < 0)
		return EBADF;
	if (send(c->async_fd, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(ev)) {
		int e = errno;

		/* one line per client, not per event: a client that never reads
		 * its async_fd would otherwise grow the log with every event;
		 * the total is logged at disconnect */
		if (c->async_dropped++ == 0)
			ulog(ULOG_WARN, "client#%u: async event %u lost: %s (further losses counted, logged at disconnect)",
			     c->id, event_type, strerror(e));
		return e;
	}
	c->async_events++;
	return 0;
}

void client_doorbell(struct client *c)
{
	uint64_t v;
	uint32_t h;

	/* Drain the counter first: a ring after this read re-arms the watcher. */
	if (read(c->db_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	/* new WQEs first: their completions may be what an arm waits for */
	doorbell_post_wqes(c);
	for (h = 1; h <= c->cqs.cap; h++) {
		struct cq *cq = objtab_get(&c->cqs, h);

		if (cq)
			cq_check_arm(cq);
	}
}
