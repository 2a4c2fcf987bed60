/*
 * cm_event.c - events to a CM connection's event socket (abi_cm.h "Events"):
 * queued in order and written from the event loop (a zero timer), never
 * inside the request handler that caused them and never blocking; while the
 * socket is full they wait (bounded) for EV_WRITE.
 */
#include "config.h"
#include "emu/cm/cm_int.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

void cm_event_init(const struct cm_id *id, struct rdma_ucm_event_resp *ev, uint32_t event, int32_t status)
{
	memset(ev, 0, sizeof(*ev));
	ev->uid = id->uid;
	ev->id = id->handle;
	ev->event = event;
	ev->status = (uint32_t)status;
}

bool cm_event_room(const struct cm_conn *c)
{
	return c->evq_n < CM_EVQ_MAX;
}

/* Write queued events until the socket is full. */
static void flush(struct cm_conn *c)
{
	struct ev_loop *loop = c->cm->dev->loop;

	while (c->evq_n) {
		struct cm_evq_ent *e = &c->evq[c->evq_head];

		if (send(c->event_fd, &e->ev, sizeof(e->ev), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
				ev_io_start(loop, &c->wr);
				return;
			}
			/* the application's end is gone: nothing more to deliver */
			c->events_dropped += c->evq_n;
			c->evq_n = 0;
			break;
		}
		c->events++;
		c->evq_head = (c->evq_head + 1) % CM_EVQ_MAX;
		c->evq_n--;
	}
	ev_io_stop(loop, &c->wr);
}

static void kick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	flush(w->data);
}

static void wr_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	flush(w->data);
}

int cm_event_post(struct cm_id *id, struct rdma_ucm_event_resp *ev)
{
	struct cm_conn *c = id->conn;
	struct ev_loop *loop = c->cm->dev->loop;

	if (c->evq_n >= CM_EVQ_MAX) {
		c->events_dropped++;
		ulog_limited(ULOG_LIMIT_REFUSED, ULOG_WARN,
			     "client#%u: CM event %u of id %u dropped: %u events wait for the application",
			     c->client->id, ev->event, id->handle, c->evq_n);
		return ENOSPC;
	}
	c->evq[(c->evq_head + c->evq_n) % CM_EVQ_MAX].ev.conn_tag = c->tag;
	c->evq[(c->evq_head + c->evq_n) % CM_EVQ_MAX].ev.reserved = 0;
	c->evq[(c->evq_head + c->evq_n) % CM_EVQ_MAX].ev.resp = *ev;
	c->evq_n++;
	id->events_reported++;
	if (!ev_is_active(&c->wr) && !ev_is_active(&c->kick))
		ev_timer_start(loop, &c->kick);
	return 0;
}

void cm_event_conn_init(struct cm_conn *c)
{
	ev_timer_init(&c->kick, kick_cb, 0., 0.);
	c->kick.data = c;
	ev_io_init(&c->wr, wr_cb, c->event_fd, EV_WRITE);
	c->wr.data = c;
}

void cm_event_conn_fini(struct cm_conn *c)
{
	struct ev_loop *loop = c->cm->dev->loop;

	ev_timer_stop(loop, &c->kick);
	ev_io_stop(loop, &c->wr);
}
