/*
 * events.c - events of CQs and QPs that are being destroyed.
 *
 * Over the kernel, ibv_destroy_cq / ibv_destroy_qp wait until the
 * application acknowledged every event it READ for the object
 * (ibv_ack_cq_events / ibv_ack_async_event), and the kernel discards the
 * object's events still unread in the completion channel or the async queue
 * (uverbs counts an event as reported when read(2) returns it). Here the
 * daemon writes the records into sockets and cannot know what was read, so:
 *   - the provider counts the events the application read (completion
 *     events in the channel's read hook, under the lock that destroy takes to
 *     unregister the CQ; async events in the async_event op, which
 *     libibverbs calls after each read) and destroy waits for acks up to that
 *     count, never for unread events (which would hang forever);
 *   - a CQ's unread completion-event records are taken out of its channel at
 *     destroy (uroce_chan_drop_cq_events, comp_channel.c), and a record the
 *     read hook gets for an unregistered CQ is discarded, so
 *     ibv_get_cq_event never returns a freed CQ;
 *   - the async socket's writer is the daemon alone (its end of file tells
 *     the application the daemon died), so unread async records cannot be
 *     taken out: an object destroyed while some are pending stays allocated
 *     (rings freed, no daemon handle) until ibv_close_device, so that
 *     ibv_ack_async_event on such a late event touches valid memory.
 */
#include "config.h"

#include <stdlib.h>

#include "uroce.h"

/* A destroyed object kept for late async events (uroce_event_keep). */
struct uroce_kept {
	struct uroce_kept *next;
	void *obj;
};

void uroce_event_async_read(struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		__atomic_add_fetch(&to_ucq(ev->element.cq)->async_events_read, 1, __ATOMIC_RELEASE);
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		__atomic_add_fetch(&to_uqp(ev->element.qp)->async_events_read, 1, __ATOMIC_RELEASE);
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		__atomic_add_fetch(&to_usrq(ev->element.srq)->async_events_read, 1, __ATOMIC_RELEASE);
		break;
	default: /* port and device events name no object */
		break;
	}
}

bool uroce_event_keep(struct uroce_context *ctx, void *obj)
{
	struct uroce_kept *k = malloc(sizeof(*k));

	if (!k)
		return false;
	k->obj = obj;
	pthread_mutex_lock(&ctx->kept_lock);
	k->next = ctx->kept;
	ctx->kept = k;
	pthread_mutex_unlock(&ctx->kept_lock);
	return true;
}

void uroce_event_free_kept(struct uroce_context *ctx)
{
	struct uroce_kept *k = ctx->kept, *next;

	for (; k; k = next) {
		next = k->next;
		free(k->obj);
		free(k);
	}
	ctx->kept = NULL;
}
