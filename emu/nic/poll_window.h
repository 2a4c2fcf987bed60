/*
 * poll_window.h - the event loop keeps polling for a short window after
 * traffic, before it sleeps (uroced --poll-window USEC, on by default).
 *
 * A sleeping daemon woken by a doorbell's eventfd or a datagram pays a
 * thread wake-up, in a ping-pong once for each message it sends and once
 * for each it receives; in a virtual machine waking an idle vCPU costs tens
 * of microseconds.
 * After a loop turn that saw traffic (a doorbell read, a datagram sent or one
 * a QP took, a packet through the internal loopback) the loop stays awake: an idle
 * watcher makes libev poll with timeout 0, and each such turn calls
 * sched_yield(2) so that a process sharing the CPU (the clients' own
 * pollers, which yield too: provider/poll_yield.h) runs first. When
 * USEC pass without traffic the watcher stops and the loop sleeps in
 * epoll_wait as before; the next turn that moves traffic opens a new window
 * (a wake-up for a timer or a control request opens none).
 *
 * A process that shares the CPU and does not yield back (an application
 * spinning on memory rather than polling its CQ, a compiler) keeps the CPU
 * for a whole scheduler slice once the daemon yields to it, where a sleeping
 * daemon's wake-up would have preempted it. So a yield that lost the CPU for
 * longer than --poll-window-stall USEC (a stall) closes the window and keeps
 * windows shut for POLL_WINDOW_BACKOFF_MS: on a contended CPU the daemon
 * sleeps between messages as without a window.
 *
 * Off in deterministic mode (the window is wall-clock time), under
 * --busy-poll (the loop never sleeps anyway), and by default when the
 * daemon's cgroup allows it less than one CPU (cpu_quota.h), where polling
 * would spend the group's quota.
 */
#ifndef UROCE_EMU_NIC_POLL_WINDOW_H
#define UROCE_EMU_NIC_POLL_WINDOW_H

#include <stdint.h>
#include <ev.h>

struct uroce_dev;

/* --poll-window default and limit, microseconds (0: off). */
#define POLL_WINDOW_DEFAULT_US 50
#define POLL_WINDOW_MAX_US 1000000
/* --poll-window-stall default and limit, microseconds (0: never back off).
 * Well below a scheduler slice (0.75 ms and more), well above a yield to a
 * peer that yields back after a few polls. */
#define POLL_WINDOW_STALL_DEFAULT_US 200
#define POLL_WINDOW_STALL_MAX_US 1000000
/* How long windows stay shut after a stall. */
#define POLL_WINDOW_BACKOFF_MS 100

/* The window's state and counters (`uroce status`, `poll_window` line). */
struct poll_window {
	double window;        /* seconds; 0: off */
	double stall;         /* seconds a yield may lose the CPU; 0: no limit */
	ev_idle idle;         /* active while the window is open */
	ev_prepare prepare;   /* opens a window after a turn that moved traffic */
	uint64_t seen;        /* the traffic count at the last look */
	ev_tstamp last;       /* when the count last moved (ev_now: the loop's clock,
				 * read once a turn after its poll) */
	ev_tstamp shut_until; /* no window opens before (ev_now), after a stall */
	uint64_t opened;      /* windows opened (turns with traffic while none was open) */
	uint64_t closed;      /* windows that ran out: the loop went to sleep */
	uint64_t turns;       /* loop turns spent polling inside windows */
	uint64_t caught;      /* of those, turns that found new traffic: wake-ups saved */
	uint64_t stalls;      /* windows closed by a stall (each shuts windows for a while) */
	uint64_t shut;        /* turns with traffic that opened no window: shut by a stall */
};

/* Starts D's window of USEC microseconds on D's loop (0: nothing), closing
 * on a yield that lost the CPU for more than STALL_US (0: never). */
void poll_window_start(struct uroce_dev *d, uint32_t usec, uint32_t stall_us);

#endif
