/*
 * svg_util.h - small pieces the SVG pictures of `uroce inspect` share
 * (psn_svg.c, latency_svg.c): XML text escaping and axis ticks in real
 * units.
 */
#ifndef UROCE_TOOLS_INSPECT_SVG_UTIL_H
#define UROCE_TOOLS_INSPECT_SVG_UTIL_H

#include <stddef.h>
#include <stdio.h>

/* S into FP with &, <, >, " escaped (XML 1.0 §2.4), control bytes as '?'. */
void svg_text(FILE *fp, const char *s);

/*
 * A tick step for RANGE (> 0) cut into about N steps: 1, 2 or 5 times a
 * power of ten.
 */
double svg_tick_step(double range, int n);

/*
 * The unit to label times with when ticks are STEP_NS apart: *DIV (ns per
 * unit) and the unit's name ("ns", "µs" in UTF-8, "ms", "s").
 */
const char *svg_time_unit(double step_ns, double *div);

/* V (in units of STEP's size) into BUF with as many decimals as STEP needs. */
void svg_number(char *buf, size_t len, double v, double step);

#endif /* UROCE_TOOLS_INSPECT_SVG_UTIL_H */
