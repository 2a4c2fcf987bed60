/*
 * ucma_event.c - RDMA_USER_CM_CMD_GET_EVENT on a channel (ucma.h;
 * uroce/abi_cm.h "Events"; docs/rdma-cm.md, "Provider").
 *
 * The daemons of the channel's devices write struct uroce_cm_event records
 * into the channel's socket; GET_EVENT reads one, blocking unless the fd is
 * O_NONBLOCK (EAGAIN), as the kernel's ucma_get_event. The record's
 * (conn_tag, daemon id) becomes the application's id; a CONNECT_REQUEST's
 * new daemon id gets a new application id, and the event counts for the
 * listener (its uid), as the kernel counts it for the listening context.
 * Events of ids already destroyed are dropped; a dropped CONNECT_REQUEST's
 * new id is destroyed in the daemon (it refuses the connection).
 *
 * A blocking GET_EVENT whose channel another thread closes goes on waiting,
 * as in the kernel, where the blocked write holds the file open: close shuts
 * the socket down, the read sees its end (never another file that took the
 * number) and the reader then sleeps until the process ends. rping's event
 * thread is such a reader: an error there would end the whole process with
 * a failure status while the main thread finishes cleanly. A non-blocking
 * reader gets EBADF. EINTR from a signal is retried (the kernel's
 * restartable wait).
 *
 * A daemon that goes away (uroce down, a crash) is the device going away:
 * every id of the channel on that device gets RDMA_CM_EVENT_DEVICE_REMOVAL,
 * as the kernel's ucma sends when a device is unregistered. GET_EVENT looks
 * for hung-up connections before each read and, when it blocks, waits for
 * them too; the events are queued in the channel like the daemon's, so a
 * poll()ing application sees them at its next GET_EVENT.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ucma.h"

/* enum rdma_cm_event_type (<rdma/rdma_cma.h>). */
#define UCMA_EVENT_CONNECT_REQUEST 4
#define UCMA_EVENT_DEVICE_REMOVAL 11
#define UCMA_EVENT_MULTICAST_JOIN 12
#define UCMA_EVENT_MULTICAST_ERROR 13

/* The device index of ch's connection with that tag, or -1. */
static int dev_of_tag(struct ucma_chan *ch, uint32_t tag)
{
	int dev = -1;

	pthread_mutex_lock(&ch->conn_lock);
	for (int i = 0; i < UCMA_MAX_DEVS; i++)
		if (ch->conn[i] && ch->conn[i]->conn_tag == tag)
			dev = i;
	pthread_mutex_unlock(&ch->conn_lock);
	return dev;
}

/* Destroys a connect request's new daemon id nobody will see. */
static void refuse(struct ucma_chan *ch, int dev, uint32_t handle)
{
	struct rdma_ucm_destroy_id cmd = { .id = handle };
	struct rdma_ucm_destroy_id_resp resp;
	struct ucma_conn *c;
	size_t got;

	if (!ucma_chan_conn(ch, dev, &c))
		ucma_call(c, RDMA_USER_CM_CMD_DESTROY_ID, &cmd, sizeof(cmd), &resp, sizeof(resp), &got);
}

/*
 * Maps ev to the application's ids: true if it is to be delivered (ev->resp.id
 * rewritten), false if dropped (*refuse_handle set for a connect request to
 * refuse).
 */
static bool map_event(struct ucma_chan *ch, int dev, struct uroce_cm_event *ev,
		      int64_t *refuse_handle)
{
	struct ucma_id *id;
	int a;

	*refuse_handle = -1;
	pthread_mutex_lock(&ucma_lock);
	if (ev->resp.event == UCMA_EVENT_CONNECT_REQUEST) {
		int listener = ucma_id_by_uid_locked(ch, dev, ev->resp.uid);

		a = listener >= 0 ? ucma_id_alloc_locked(ch) : -1;
		if (a < 0) {
			*refuse_handle = ev->resp.id;
			pthread_mutex_unlock(&ucma_lock);
			return false;
		}
		id = ucma_id_find_locked((uint32_t)a);
		id->dev = dev;
		id->handle = ev->resp.id;
		ucma_id_find_locked((uint32_t)listener)->delivered++;
	} else if (ev->resp.event == UCMA_EVENT_MULTICAST_JOIN ||
		   ev->resp.event == UCMA_EVENT_MULTICAST_ERROR) {
		a = ucma_mc_event_locked(ch, dev, ev->resp.id);
		if (a < 0) {
			pthread_mutex_unlock(&ucma_lock);
			return false;
		}
	} else {
		a = ucma_id_by_handle_locked(ch, dev, ev->resp.id);
		if (a < 0) {
			pthread_mutex_unlock(&ucma_lock);
			return false;
		}
		ucma_id_find_locked((uint32_t)a)->delivered++;
	}
	ev->resp.id = (uint32_t)a;
	pthread_mutex_unlock(&ucma_lock);
	return true;
}

struct removal {
	struct ucma_chan *ch;
	uint32_t conn_tag;
};

/* Queues one DEVICE_REMOVAL record for an id, as if its daemon had written it. */
static void queue_removal(void *arg, uint64_t uid, uint32_t handle)
{
	struct removal *r = arg;
	struct uroce_cm_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.conn_tag = r->conn_tag;
	ev.resp.uid = uid;
	ev.resp.id = handle;
	ev.resp.event = UCMA_EVENT_DEVICE_REMOVAL;
	send(r->ch->peer_fd, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * Waits (timeout_ms, -1: until something happens) for the channel to be
 * readable or a CM connection to hang up; each hung-up connection's ids get
 * their DEVICE_REMOVAL records, once. Returns whether the channel was
 * readable (or shut down) when poll returned.
 */
static bool watch_daemons(struct ucma_chan *ch, int timeout_ms)
{
	struct pollfd p[UCMA_MAX_DEVS + 1];
	int dev_of[UCMA_MAX_DEVS + 1];
	int np = 0;

	p[np++] = (struct pollfd){ .fd = ch->rd_fd, .events = POLLIN };
	pthread_mutex_lock(&ch->conn_lock);
	for (int i = 0; i < UCMA_MAX_DEVS; i++) {
		if (ch->conn[i] && !ch->conn[i]->gone) {
			dev_of[np] = i;
			p[np++] = (struct pollfd){ .fd = ch->conn[i]->sock, .events = POLLRDHUP };
		}
	}
	pthread_mutex_unlock(&ch->conn_lock);
	if (np == 1 && timeout_ms == 0)
		return false;
	while (poll(p, (nfds_t)np, timeout_ms) < 0 && errno == EINTR)
		;
	for (int k = 1; k < np; k++) {
		struct removal r = { .ch = ch };
		struct ucma_conn *c;

		if (!(p[k].revents & (POLLHUP | POLLRDHUP | POLLERR)))
			continue;
		pthread_mutex_lock(&ch->conn_lock);
		c = ch->conn[dev_of[k]];
		if (c->gone) {
			pthread_mutex_unlock(&ch->conn_lock);
			continue;
		}
		c->gone = true;
		r.conn_tag = c->conn_tag;
		pthread_mutex_unlock(&ch->conn_lock);
		pthread_mutex_lock(&ucma_lock);
		ucma_id_each_on_dev_locked(ch, dev_of[k], queue_removal, &r);
		pthread_mutex_unlock(&ucma_lock);
	}
	return p[0].revents != 0;
}

int ucma_get_event(struct ucma_chan *ch, uint64_t response, uint16_t out)
{
	struct uroce_cm_event ev;
	int64_t refuse_handle;
	ssize_t n;
	int dev;

	if (out < sizeof(ev.resp))
		return ENOSPC;
	if (!response)
		return EFAULT;
	for (;;) {
		int fl = fcntl(ch->rd_fd, F_GETFL);

		watch_daemons(ch, 0);
		if (fl >= 0 && !(fl & O_NONBLOCK))
			while (!watch_daemons(ch, -1))
				;
		n = recv(ch->rd_fd, &ev, sizeof(ev), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? EAGAIN : errno;
		if (n == 0 || ch->closed) {
			if (fl < 0 || (fl & O_NONBLOCK))
				return EBADF;
			for (;;)
				pause(); /* closed by another thread: wait as the kernel does */
		}
		if (n != (ssize_t)sizeof(ev))
			continue; /* not a record a daemon writes */
		dev = dev_of_tag(ch, ev.conn_tag);
		if (dev < 0)
			continue;
		if (!map_event(ch, dev, &ev, &refuse_handle)) {
			if (refuse_handle >= 0)
				refuse(ch, dev, (uint32_t)refuse_handle);
			continue;
		}
		memcpy((void *)(uintptr_t)response, &ev.resp, sizeof(ev.resp));
		return 0;
	}
}
