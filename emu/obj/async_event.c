/*
 * async_event.c - one asynchronous event to a client's async_fd (see
 * async_event.h). A leaf: calls only the log, so emu/nic may raise events
 * without a call cycle through client.c.
 */
#include "config.h"
#include "emu/obj/async_event.h"
#include "emu/obj/client.h"
#include "emu/log.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <rdma/ib_user_verbs.h>

int client_async_event(struct ctl_client *c, uint64_t element, uint32_t event_type)
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
