/*
 * hca_clock.h - the software HCA clock: a free-running counter of
 * freq_khz kHz and `bits` valid bits derived from CLOCK_MONOTONIC_RAW, published
 * in a shared memfd page (struct uroce_clock_page, include/uroce/abi.h) that
 * every client maps read-only. The daemon re-bases the page periodically under
 * its seqlock; CQE timestamps use hca_clock_now().
 */
#ifndef UROCE_EMU_HCA_CLOCK_H
#define UROCE_EMU_HCA_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include "uroce/abi.h"

struct hca_clock {
	int fd;                          /* memfd of the page (sent to clients at HELLO) */
	struct uroce_clock_page *page;   /* the daemon's writable mapping */
	uint64_t freq_khz;
	uint32_t bits;
	bool is_virtual;                 /* hca_clock_set_virtual was called */
};

/* Limits of the options (--clock-khz, --clock-bits). */
#define HCA_CLOCK_KHZ_MIN 1000u          /* 1 MHz */
#define HCA_CLOCK_KHZ_MAX 10000000u      /* 10 GHz */
#define HCA_CLOCK_BITS_MIN 24u
#define HCA_CLOCK_BITS_MAX 64u

/*
 * hca_clock_init - create the page for a counter of FREQ_KHZ kHz with BITS
 * valid bits, starting at 0 now. Returns 0, EINVAL (out of the limits above)
 * or the errno of memfd_create/ftruncate/mmap.
 */
int hca_clock_init(struct hca_clock *c, uint64_t freq_khz, uint32_t bits);

/* Re-base the page at the current time (seqlock write); call every
 * page->update_period_ns. The counter stays continuous. */
void hca_clock_update(struct hca_clock *c);

/*
 * hca_clock_set_virtual - deterministic mode: from now on the page shows a
 * counter that stands still at virtual time NOW_NS (ns since the device's
 * virtual epoch): mult = 0, base_raw_ns = 0, base_cycles = NOW_NS in cycles,
 * base_real_ns = NOW_NS (so wall-clock conversions give virtual time too),
 * update_period_ns = 0. Call it whenever virtual time moves; hca_clock_update
 * is then a no-op.
 */
void hca_clock_set_virtual(struct hca_clock *c, uint64_t now_ns);

/* Current counter value (HCA cycles, masked to bits). */
uint64_t hca_clock_now(const struct hca_clock *c);

/* Unmap and close. */
void hca_clock_fini(struct hca_clock *c);

#endif
