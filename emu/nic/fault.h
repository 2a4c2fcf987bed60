/*
 * fault.h - the device's seeded fault injector: what happens to each packet
 * a device sends (tx) or receives (rx). One configuration per direction
 * (struct fault_cfg, written as text by fault_spec.c), one pseudo-random
 * stream per direction derived from the seed, so the same seed and the same
 * packet sequence give the same decisions (docs/fault-injection.md).
 *
 * This file only decides; held packets and their timers are fault_queue.c,
 * and port.c applies the decisions on the wire.
 */
#ifndef UROCE_EMU_NIC_FAULT_H
#define UROCE_EMU_NIC_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Probabilities are in parts per million (1 ppm = 0.0001 %). */
#define FAULT_PPM 1000000u

enum fault_dir_id { FAULT_TX = 0, FAULT_RX = 1, FAULT_NDIRS = 2 };

/*
 * What one direction does to its packets; all zero = nothing.
 * loss/dup/corrupt: probability per packet (ppm). reorder: probability that
 * a packet is held back, uniformly 1 ns..reorder_max_ns, so later packets
 * overtake it. delay_ns fixed plus jitter_ns uniform 0..jitter_ns extra.
 * rate: a shaper (a link of that speed with a bounded queue): packets per
 * second or bytes (UDP payload) per second, 0 = unlimited. Burst loss:
 * Gilbert-Elliott, per packet the state moves good->bad with ge_p, bad->good
 * with ge_r, then the packet is lost with ge_loss_good / ge_loss_bad of its
 * state (ge_on enables it). queue_cap: packets that may be held at once
 * (delay, reorder, rate); beyond it a packet that would be held is dropped
 * and counted (queue_dropped).
 */
struct fault_cfg {
	uint32_t loss, dup, corrupt, reorder;
	uint64_t reorder_max_ns;
	uint64_t delay_ns, jitter_ns;
	uint64_t rate_pps, rate_Bps;
	bool ge_on;
	uint32_t ge_p, ge_r, ge_loss_good, ge_loss_bad;
	uint32_t queue_cap;
};

/* Default queue_cap: 1024 packets of at most 4224 bytes, about 4.3 MiB. */
#define FAULT_QUEUE_CAP 1024u
/* A shaped packet that would wait longer than this is dropped (rate_dropped):
 * the shaper's buffer, in time. */
#define FAULT_RATE_MAX_WAIT_NS 100000000ull

/* Counters of one direction (shown by `uroce status`, line "fault"). */
struct fault_stats {
	uint64_t packets;       /* packets the injector saw */
	uint64_t lost;          /* dropped by loss= */
	uint64_t burst_lost;    /* dropped by burst= (Gilbert-Elliott) */
	uint64_t duplicated;    /* sent (or delivered) twice */
	uint64_t corrupted;     /* one bit flipped */
	uint64_t reordered;     /* held back by reorder= */
	uint64_t delayed;       /* held by delay= */
	uint64_t rate_delayed;  /* held by the rate shaper */
	uint64_t rate_dropped;  /* the shaper's buffer was full (> FAULT_RATE_MAX_WAIT_NS) */
	uint64_t queue_dropped; /* queue_cap packets were already held */
};

/* One direction's configuration and state. */
struct fault_dir {
	struct fault_cfg cfg;
	uint64_t rng;           /* xorshift64* state, never 0 */
	bool ge_bad;            /* Gilbert-Elliott state */
	uint64_t rate_free_ns;  /* when the shaped link is free again */
	struct fault_stats st;
};

/* The decision for one packet. */
struct fault_verdict {
	bool drop;
	unsigned int copies;    /* 1, or 2 when duplicated (0 when dropped) */
	int64_t flip_bit;       /* bit index (bit 0 = MSB of byte 0) to flip, -1 none */
	uint64_t release_ns;    /* when to put it on the wire / deliver it; <= now: at once */
};

/*
 * fault_dir_init - direction DIR of a device with seed SEED: no faults,
 * counters 0, the random stream seeded from (SEED, DIR). Same SEED and DIR,
 * same stream.
 */
void fault_dir_init(struct fault_dir *f, uint64_t seed, enum fault_dir_id dir);

/* Replace the configuration (counters and random stream kept). */
void fault_dir_set(struct fault_dir *f, const struct fault_cfg *cfg);

/* Whether CFG does anything. */
bool fault_cfg_active(const struct fault_cfg *cfg);

/*
 * fault_decide - the fate of one packet of LEN bytes (UDP payload) seen at
 * NOW_NS (device time, ns) when HELD packets are waiting in this direction.
 * Order: burst loss, loss, corruption, duplication, rate shaping, delay,
 * reorder, queue cap. A corrupted bit is never in BTH byte 4 (resv8a, which
 * the ICRC does not cover; IBTA 14.2.2 / Annex A17 "Variant fields"), so
 * every corruption is one the receiver's ICRC check catches. Counts into
 * f->st. Never fails.
 */
void fault_decide(struct fault_dir *f, size_t len, uint64_t now_ns, uint32_t held,
		  struct fault_verdict *v);

#endif
