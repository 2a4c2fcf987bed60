/*
 * async_event.h - asynchronous events to a client (ibv_get_async_event(3)):
 * the provider reads them from its end of the async socket.
 */
#ifndef UROCE_EMU_ASYNC_EVENT_H
#define UROCE_EMU_ASYNC_EVENT_H

#include <stdint.h>

struct ctl_client;

/* Write one struct ib_uverbs_async_event_desc {element, event_type} to C's
 * async_fd (non-blocking; counted; a record the full socket cannot take is
 * lost: the first loss of a client is logged, the total at disconnect).
 * Returns 0 or the errno of send. */
int client_async_event(struct ctl_client *c, uint64_t element, uint32_t event_type);

#endif
