/*
 * poll_window.h - the event loop keeps polling for a short window after
 * traffic, before it sleeps (uroced --poll-window USEC).
 *
 * A sleeping daemon woken by a doorbell's eventfd or a datagram pays a
 * thread wake-up, in a ping-pong once for each message it sends and once
 * for each it receives.
 * After a loop turn that saw traffic (a doorbell read, a datagram received or
 * sent, a packet through the internal loopback) the loop stays awake: an idle
 * watcher makes libev poll with timeout 0, and each such turn calls
 * sched_yield(2) so that a process sharing the CPU (the clients' own
 * pollers, which yield too: provider/poll_yield.h) runs first. When
 * USEC pass without traffic the watcher stops and the loop sleeps in
 * epoll_wait as before; the next turn that moves traffic opens a new window
 * (a wake-up for a timer or a control request opens none). Unlike
 * --busy-poll, an idle device keeps no CPU busy. Off in deterministic mode
 * (the window is wall-clock time) and under --busy-poll (the loop never
 * sleeps anyway). Off by default: a process that spins without yielding
 * (an application polling memory rather than its CQ) keeps the CPU the
 * daemon yields to it for a whole scheduler slice, where a sleeping
 * daemon's wake-up would have preempted it (docs/daemon.md).
 */
#ifndef UROCE_EMU_NIC_POLL_WINDOW_H
#define UROCE_EMU_NIC_POLL_WINDOW_H

#include <stdint.h>
#include <ev.h>

struct uroce_dev;

/* --poll-window default and limit, microseconds (0: off). */
#define POLL_WINDOW_DEFAULT_US 0
#define POLL_WINDOW_MAX_US 1000000

/* The window's state and counters (`uroce status`, `poll_window` line). */
struct poll_window {
	double window;        /* seconds; 0: off */
	ev_idle idle;         /* active while the window is open */
	ev_prepare prepare;   /* opens a window after a turn that moved traffic */
	uint64_t seen;        /* the traffic count at the last look */
	ev_tstamp last;       /* when the count last moved (ev_now: the loop's clock,
				 * read once a turn after its poll) */
	uint64_t opened;      /* windows opened (turns with traffic while none was open) */
	uint64_t closed;      /* windows that ran out: the loop went to sleep */
	uint64_t turns;       /* loop turns spent polling inside windows */
	uint64_t caught;      /* of those, turns that found new traffic: wake-ups saved */
};

/* Starts D's window of USEC microseconds on D's loop (0: nothing). */
void poll_window_start(struct uroce_dev *d, uint32_t usec);

#endif
