/*
 * abi_clock.h - the HCA clock page: layout, seqlock read, cycles <-> ns.
 * Part of the provider <-> daemon contract; included by uroce/abi.h (see there
 * for transport and versioning).
 */
#ifndef UROCE_ABI_CLOCK_H
#define UROCE_ABI_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

/* ------------------------------------------------------------ HCA clock */

/*
 * HCA clock page (docs/daemon.md "HCA clock"), UROCE_CLOCK_PAGE_SIZE bytes in a memfd written
 * only by the daemon; providers map it PROT_READ.
 *
 * Raw HCA cycles at CLOCK_MONOTONIC_RAW time t (ns):
 *   cycles(t) = (base_cycles + (((unsigned __int128)(t - base_raw_ns) * mult) >> shift)) & mask
 * i.e. a counter running at freq_khz kHz, mask = 2^bits - 1 (bits from
 * --clock-bits, freq from --clock-khz), so it wraps like a real HCA counter.
 * This is what CQE timestamps carry and ibv_query_rt_values_ex(RAW_CLOCK)
 * returns (tv_sec 0, tv_nsec cycles): the provider computes it locally with
 * uroce_clock_now(), no round trip.
 *
 * Cycles → wall clock (CLOCK_REALTIME ns), for completion_wallclock_ns, in the
 * style of mlx5dv_ts_to_ns():
 *   delta = (ts - base_cycles) & mask
 *   delta <= mask/2: ns = base_real_ns + ((delta * ns_mult) >> ns_shift)
 *   otherwise (ts is before the base): ns = base_real_ns - ((((base_cycles - ts) & mask) * ns_mult) >> ns_shift)
 * with 128-bit products. base_real_ns is CLOCK_REALTIME at the instant of
 * base_raw_ns. The daemon re-bases every update_period_ns (<= a quarter of the
 * wrap period and <= 1 s) so delta stays within half a wrap and NTP steps are
 * followed; re-basing keeps cycles(t) continuous.
 *
 * Deterministic mode (uroced --deterministic, docs/fault-injection.md): the
 * same formulas with mult = 0, base_raw_ns = 0 and update_period_ns = 0, so
 * cycles(t) = base_cycles whatever t; the daemon rewrites base_cycles and
 * base_real_ns (virtual ns) whenever its virtual clock moves.
 *
 * Seqlock: seq is odd while the daemon writes. Readers: s1 = seq (acquire);
 * if odd retry; copy the fields; acquire fence; s2 = seq; retry if s1 != s2.
 * uroce_clock_snapshot() does exactly that.
 */
#define UROCE_CLOCK_PAGE_SIZE 4096
#define UROCE_CLOCK_MAGIC 0x55434c4bu /* "UCLK" */
struct uroce_clock_page {
	uint32_t magic;           /* UROCE_CLOCK_MAGIC */
	uint32_t version;         /* UROCE_ABI_VERSION */
	uint32_t seq;             /* seqlock sequence, odd while updating */
	uint32_t bits;            /* valid timestamp bits, 16..64 (--clock-bits) */
	uint64_t freq_khz;        /* counter frequency, kHz (= hca_core_clock) */
	uint64_t mask;            /* 2^bits - 1 (= completion_timestamp_mask) */
	uint64_t base_raw_ns;     /* CLOCK_MONOTONIC_RAW at the base, ns */
	uint64_t base_real_ns;    /* CLOCK_REALTIME at the same instant, ns */
	uint64_t base_cycles;     /* counter value at the base (already masked) */
	uint64_t mult;            /* ns → cycles: cycles = ns * mult >> shift */
	uint32_t shift;
	uint32_t ns_shift;        /* cycles → ns: ns = cycles * ns_mult >> ns_shift */
	uint64_t ns_mult;
	uint64_t update_period_ns; /* how often the daemon re-bases (ns) */
};

/* A consistent copy of the clock page fields. */
struct uroce_clock_snap {
	uint64_t mask, base_raw_ns, base_real_ns, base_cycles, mult, ns_mult;
	uint32_t shift, ns_shift;
};

/* Seqlock read of the page into *s. Always succeeds (spins while the daemon
 * is mid-update, which lasts a few stores). */
static inline void uroce_clock_snapshot(const volatile struct uroce_clock_page *p,
					struct uroce_clock_snap *s)
{
	uint32_t s1, s2;
	do {
		s1 = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
		s->mask = p->mask;
		s->base_raw_ns = p->base_raw_ns;
		s->base_real_ns = p->base_real_ns;
		s->base_cycles = p->base_cycles;
		s->mult = p->mult;
		s->shift = p->shift;
		s->ns_mult = p->ns_mult;
		s->ns_shift = p->ns_shift;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
	} while ((s1 & 1) || s1 != s2);
}

/* Counter value at CLOCK_MONOTONIC_RAW time raw_ns (ns). */
static inline uint64_t uroce_clock_cycles_at(const struct uroce_clock_snap *s, uint64_t raw_ns)
{
	uint64_t d = raw_ns - s->base_raw_ns; /* raw_ns >= base: the base is always in the past */
	return (s->base_cycles + (uint64_t)(((unsigned __int128)d * s->mult) >> s->shift)) & s->mask;
}

/* Current counter value (HCA cycles). */
static inline uint64_t uroce_clock_now(const volatile struct uroce_clock_page *p)
{
	struct uroce_clock_snap s;
	struct timespec ts;
	uroce_clock_snapshot(p, &s);
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return uroce_clock_cycles_at(&s, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* CLOCK_REALTIME ns for counter value ts (HCA cycles), as described above. */
static inline uint64_t uroce_clock_to_wall_ns(const struct uroce_clock_snap *s, uint64_t ts)
{
	uint64_t delta = (ts - s->base_cycles) & s->mask;
	if (delta <= s->mask / 2)
		return s->base_real_ns + (uint64_t)(((unsigned __int128)delta * s->ns_mult) >> s->ns_shift);
	delta = (s->base_cycles - ts) & s->mask;
	return s->base_real_ns - (uint64_t)(((unsigned __int128)delta * s->ns_mult) >> s->ns_shift);
}

#endif /* UROCE_ABI_CLOCK_H */
