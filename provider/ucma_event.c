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
 * A blocking GET_EVENT whose channel another thread closes returns EBADF:
 * close shuts the socket down, the read sees its end, never another file.
 * EINTR from a signal is retried (the kernel's restartable wait).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "ucma.h"

/* RDMA_CM_EVENT_CONNECT_REQUEST of enum rdma_cm_event_type (<rdma/rdma_cma.h>). */
#define UCMA_EVENT_CONNECT_REQUEST 4

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
		n = recv(ch->rd_fd, &ev, sizeof(ev), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? EAGAIN : errno;
		if (n == 0 || ch->closed)
			return EBADF; /* closed by another thread */
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
