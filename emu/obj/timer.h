/*
 * timer.h - the one-shot timer an object embeds (a QP's retransmit/RNR
 * timer, a CQ's moderation timer): its type only, so the object model
 * needs nothing of the NIC. Armed and run by emu/nic/nic_time.c
 * (nic_timer_init, nic_timer_start, nic_timer_stop), in device time.
 */
#ifndef UROCE_EMU_OBJ_TIMER_H
#define UROCE_EMU_OBJ_TIMER_H

#include <stdint.h>
#include <ev.h>

struct uroce_dev;
struct nic_timer;

typedef void (*nic_timer_cb)(struct nic_timer *t);

/* A one-shot timer at an absolute device time. */
struct nic_timer {
	ev_timer ev;               /* real mode */
	struct uroce_dev *dev;
	nic_timer_cb cb;
	void *data;
	uint64_t when;             /* device ns; 0 = not armed */
	uint64_t seq;              /* virtual mode: FIFO order among equal deadlines */
	struct nic_timer *next;    /* virtual mode: the device's sorted list */
};

#endif
