/*
 * fault_queue.h - the fault injector of one device: per direction its
 * decisions (fault.c) and the packets it holds back (delay, reorder, rate),
 * each released by a device timer (nic_time.h: libev, or virtual time in
 * deterministic mode) in (release time, arrival) order. The queue is
 * bounded by the configuration's queue_cap; port.c sends or delivers what
 * comes out through the callbacks given at fault_queue_init.
 */
#ifndef UROCE_EMU_NIC_FAULT_QUEUE_H
#define UROCE_EMU_NIC_FAULT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "emu/nic/fault.h"
#include "emu/nic/nic_time.h"
#include "netstack/packet.h"

struct uroce_dev;

/* Where a packet goes once its faults are applied: a send (tx: FD, TO,
 * TCLASS; L3 for the capture) or a delivery (rx: FROM). Opaque to the queue. */
struct fault_meta {
	int fd;
	uint8_t tclass;
	socklen_t tolen;
	struct sockaddr_storage addr;   /* tx: destination; rx: source */
	struct roce_l3 l3;              /* tx: for the capture */
	bool now;                       /* tx: sent at once, not queued (udp_port_queue) */
	bool verified;                  /* the ICRC is known good (loopback.h): tx: not through
					 * the injector; rx: taken as such by the loopback */
};

/* Puts one packet on the wire (tx) or into the engine (rx); 0 or an errno. */
typedef int (*fault_out_fn)(struct uroce_dev *d, const struct fault_meta *m, const uint8_t *pkt,
			     size_t len);

struct fault_held;

struct fault_queue {
	struct fault_dir dir;
	struct fault_held **heap;       /* min-heap on (when, seq) */
	uint32_t n, cap;
	uint32_t held_max;              /* most ever held at once */
	uint64_t seq;
	struct nic_timer timer;
	fault_out_fn out;
	struct uroce_dev *dev;
};

/* Both directions of a device; active[dir] caches fault_cfg_active of
 * q[dir]'s configuration (set with it by fault_dev_set). */
struct fault_dev {
	struct fault_queue q[FAULT_NDIRS];
	bool active[FAULT_NDIRS];
};

/* Whether direction DIR of F (a device's fault injector) has any fault
 * configured. When false, fault_apply would only pass the packet on to the
 * direction's output: the port calls the output itself (one branch per
 * packet instead of the call and fault_cfg_active's nine tests). */
static inline bool fault_active(const struct fault_dev *f, enum fault_dir_id dir)
{
	return f->active[dir];
}

/* Set up D's injector (no faults) with seed SEED and the output functions
 * of each direction. Returns 0 or ENOMEM. */
int fault_dev_init(struct uroce_dev *d, uint64_t seed, fault_out_fn tx_out, fault_out_fn rx_out);

/* Restart both directions' random streams from SEED (configurations kept). */
void fault_dev_seed(struct uroce_dev *d, uint64_t seed);

/* Free held packets and stop timers. */
void fault_dev_fini(struct uroce_dev *d);

/* Set direction DIR's configuration (held packets stay and leave on time). */
void fault_dev_set(struct uroce_dev *d, enum fault_dir_id dir, const struct fault_cfg *cfg);

/*
 * fault_apply - pass one packet (LEN <= 4224 bytes, which are copied when
 * held) through direction DIR: dropped, sent/delivered now through the
 * direction's output (twice when duplicated, with a bit flipped when
 * corrupted), or held until its release time. *COPIES (may be NULL) is the
 * number of copies that went or will go out (0 = dropped). Returns the
 * output's result for a packet that went out at once (its last error),
 * else 0.
 */
int fault_apply(struct uroce_dev *d, enum fault_dir_id dir, const struct fault_meta *m,
			 const uint8_t *pkt, size_t len, unsigned int *copies);

/* The two "fault" lines of `uroce status` (docs/daemon.md). */
void fault_dev_status(struct uroce_dev *d, FILE *fp);

#endif
