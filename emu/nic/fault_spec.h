/*
 * fault_spec.h - the text form of a fault configuration, as `uroce up
 * --fault SPEC` and `uroce fault set DEV [tx|rx] SPEC` take it and `uroce
 * status` prints it (docs/fault-injection.md):
 *
 *   loss=5% dup=5% reorder=10%:2ms corrupt=1% delay=1ms:500us
 *   rate=1000pps | rate=10MBps  burst=P%:R%[:LOSS_BAD%[:LOSS_GOOD%]]  queue=N
 *
 * Items are separated by spaces or commas; "none" (or an empty SPEC) is no
 * fault. Percentages take up to 4 decimals (1 ppm); durations need a unit
 * (ns, us, ms, s) and are at most 10 s; rates need pps, Bps, KBps, MBps or
 * GBps (K = 1000). Burst defaults: LOSS_BAD 100%, LOSS_GOOD 0%.
 */
#ifndef UROCE_EMU_NIC_FAULT_SPEC_H
#define UROCE_EMU_NIC_FAULT_SPEC_H

#include <stddef.h>

#include "emu/nic/fault.h"

/* Longest SPEC text accepted (bytes, without the NUL). */
#define FAULT_SPEC_MAX 255

/*
 * fault_spec_parse - parse SPEC into *CFG (zeroed first). Returns 0, or
 * EINVAL with a one-line reason naming the bad item in ERR (ERRLEN bytes).
 */
int fault_spec_parse(const char *spec, struct fault_cfg *cfg, char *err, size_t errlen);

/* Write CFG in the form fault_spec_parse reads ("none" when inactive);
 * parsing the result gives CFG back. Returns BUF. */
char *fault_spec_format(const struct fault_cfg *cfg, char *buf, size_t len);

#endif
