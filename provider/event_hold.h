/*
 * event_hold.h - which CQs live on which completion channel, and the hold of
 * completion events that announce nothing.
 *
 * ibv_get_cq_event(3) reads one 8-byte struct ib_uverbs_comp_event_desc from
 * the channel fd. Applications re-arm, then poll; a CQE written between the
 * two fires an event although that very poll consumes the CQE, so the next
 * read would return an event for an empty CQ, and some applications treat the
 * ENOENT of the poll that follows as an error (ibv_rc_pingpong -t -e). On a
 * NIC the window is a few hundred ns; here the re-arm's doorbell wakes the
 * daemon inside it. For a blocking channel fd serving one CQ, such an event
 * is held back: the CQ is re-armed and, if a newer event comes within
 * UROCE_STALE_EVENT_WAIT_MS, that one is returned instead; otherwise the held
 * one is, late but as ibv_req_notify_cq(3) promises. Non-blocking readers, and
 * channels shared by several CQs, get every event as it comes.
 *
 * The CQ code is reached only through the callbacks given at add time, so
 * this module does not depend on cq.c.
 */
#ifndef UROCE_PROVIDER_EVENT_HOLD_H
#define UROCE_PROVIDER_EVENT_HOLD_H

#include <stdbool.h>

#include "got_hook.h"

struct ibv_cq;

/* What the hold needs from a CQ: count_read is called under the hold's
 * lock, is_stale without it (while the CQ is held, so it is not removed). */
struct uroce_event_hold_cq_ops {
	/* One event of cq was handed to the application: ibv_destroy_cq must
	 * wait for its ack. Called under the hold's lock, so a destroy that
	 * removed the CQ never sees an event counted after it. */
	void (*count_read)(struct ibv_cq *cq);
	/* The event just read announces nothing (no CQE to poll); the CQ was
	 * re-armed so that a newer CQE fires a newer event. */
	bool (*is_stale)(struct ibv_cq *cq);
};

/*
 * uroce_event_hold_add_cq / uroce_event_hold_remove_cq - cq lives on the
 * channel whose application fd is channel_fd, from before the daemon can
 * write its first event until ibv_destroy_cq. Only live CQs' events are
 * delivered. add: 0 or ENOMEM. remove: waits until no reader looks at the CQ.
 */
int uroce_event_hold_add_cq(int channel_fd, struct ibv_cq *cq,
			    const struct uroce_event_hold_cq_ops *ops);
void uroce_event_hold_remove_cq(int channel_fd, struct ibv_cq *cq);

/*
 * uroce_event_hold_read - read(2) of one event (count must be 8) from a
 * channel fd, reading records with read_fn: drops records of destroyed CQs,
 * holds back stale ones as described above, and returns what read_fn
 * returned for the record delivered (8), or its error / end of file.
 */
ssize_t uroce_event_hold_read(int fd, void *buf, size_t count, uroce_read_fn read_fn);

/* How long (ms) an event that announces nothing is held while waiting for a
 * newer one on the same CQ; the environment variable
 * UROCE_STALE_EVENT_WAIT_MS (0..60000) overrides it. */
#define UROCE_STALE_EVENT_WAIT_MS 200

#endif
