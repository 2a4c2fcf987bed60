/*
 * psn.h - 24-bit Packet Sequence Number arithmetic.
 *
 * PSNs count modulo 2^24 (IBA §9.7.1).  Comparison splits the circle into
 * two halves of 2^23: A is "after" B when (A - B) mod 2^24 lies in
 * [1, 2^23).  Same rule as rxe's psn_compare ((int32_t)((a - b) << 8),
 * rxe_verbs.h; docs/wire-format.md §1.6).  Inputs are masked to 24 bits.
 */
#ifndef UROCE_NETSTACK_PSN_H
#define UROCE_NETSTACK_PSN_H

#include <stdbool.h>
#include <stdint.h>

#include "uroce/roce.h"

/* (PSN + N) mod 2^24. */
static inline uint32_t roce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

/* Distance from B forward to A: (A - B) mod 2^24, in packets, 0..2^24-1. */
static inline uint32_t roce_psn_sub(uint32_t a, uint32_t b)
{
	return (a - b) & ROCE_PSN_MASK;
}

/*
 * Signed comparison in a 2^23 window: < 0 if A is before B, 0 if equal,
 * > 0 if A is after B.  The magnitude is the distance scaled by 256.
 * A distance of exactly 2^23 compares as "before" (the sign bit).
 */
static inline int32_t roce_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8);
}

static inline bool roce_psn_before(uint32_t a, uint32_t b)
{
	return roce_psn_cmp(a, b) < 0;
}

static inline bool roce_psn_after(uint32_t a, uint32_t b)
{
	return roce_psn_cmp(a, b) > 0;
}

/* True if PSN lies in [FIRST, FIRST + COUNT) modulo 2^24 (COUNT <= 2^24). */
static inline bool roce_psn_in_range(uint32_t psn, uint32_t first, uint32_t count)
{
	return roce_psn_sub(psn, first) < count;
}

#endif /* UROCE_NETSTACK_PSN_H */
