/*
 * nic_time.h - the device's time and timers: CLOCK_MONOTONIC and libev
 * timers normally; in deterministic mode (`uroced --deterministic`) a
 * virtual clock that advances per packet and jumps to the next timer when
 * the device is quiet, so that a run's packets, pcap timestamps and CQE
 * timestamps depend on the seed and the program only
 * (docs/fault-injection.md, "Deterministic replay").
 *
 * Users: the transport engine's per-QP timer (engine_glue.c), the fault
 * injector's held packets (fault_queue.c), capture timestamps.
 */
#ifndef UROCE_EMU_NIC_NIC_TIME_H
#define UROCE_EMU_NIC_NIC_TIME_H

#include <stdbool.h>
#include <stdint.h>
#include <ev.h>
#include "emu/obj/timer.h"

struct uroce_dev;

/* Virtual time advanced per packet sent or received (ns). */
#define NIC_VTIME_PACKET_NS 1000ull
/* Virtual clock at start (ns): 1 s, so no timestamp is 0. */
#define NIC_VTIME_START_NS 1000000000ull
/* Real quiet time before virtual time jumps to the next timer (ms): what
 * a client has to react to a completion before the device moves on. */
#define NIC_VTIME_GRACE_MS 5.0
/* Grace periods to wait when every send queue is drained, i.e. the
 * application, not a timer, is expected to act next (1 s): a timer left
 * over from a finished exchange (a held duplicate) fires only if the
 * application stays silent that long. */
#define NIC_VTIME_IDLE_GRACES 200
/* Grace periods with packets to itself still missing before the device
 * assumes the kernel dropped them (logged). */
#define NIC_VTIME_LOST_GRACES 40

/* Deterministic-mode state of a device (struct uroce_dev's vt). */
struct nic_vtime {
	bool on;
	uint64_t now;              /* virtual ns */
	uint64_t next_seq;
	struct nic_timer *timers;  /* armed, sorted by (when, seq) */
	uint64_t activity, seen_activity;
	int64_t self_inflight;     /* sent to our own address, not yet received */
	unsigned int quiet_graces, idle_graces;
	ev_timer kick;             /* real: the grace period */
};

/* Turn deterministic mode on (before any client): the clock page becomes
 * virtual (hca_clock_set_virtual). */
void nic_vtime_enable(struct uroce_dev *d);

/* Device time in ns: CLOCK_MONOTONIC, or the virtual clock. */
uint64_t nic_now_ns(struct uroce_dev *d);

/*
 * nic_vtime_packet - a packet of the device's own traffic happened: sent
 * (TO_SELF: to the device's own address) or received (FROM_SELF). Advances
 * the virtual clock by NIC_VTIME_PACKET_NS; no-op in real mode.
 */
void nic_vtime_packet(struct uroce_dev *d, bool sent, bool self);

/* Prepare T (stopped) for device D. */
void nic_timer_init(struct nic_timer *t, struct uroce_dev *d, nic_timer_cb cb, void *data);

/* Arm T for device time WHEN_NS (re-arms if armed; a past time fires at the
 * next loop iteration, or, virtual, at the next quiet moment). */
void nic_timer_start(struct nic_timer *t, uint64_t when_ns);

/* Disarm T (no-op if not armed). */
void nic_timer_stop(struct nic_timer *t);

/* Stop the deterministic-mode watchers (device teardown). */
void nic_vtime_fini(struct uroce_dev *d);

#endif
