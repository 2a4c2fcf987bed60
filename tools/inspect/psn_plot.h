/*
 * psn_plot.h - one request flow of the PSN graph reduced to pixel columns
 * (psn_trace.h gives the points): the flow's time span is cut into COLS
 * columns of equal time, and per series and column only the lowest and
 * highest PSN and the number of points are kept.  What the SVG draws and
 * what --json prints are these columns, so a picture of a million packets
 * is no bigger than one of a thousand.
 *
 * Column of time T: (T - t0) * cols / (span + 1), with span the time from
 * the flow's first to its last point (ns); so column i covers
 * [t0 + i (span + 1) / cols, t0 + (i + 1) (span + 1) / cols).
 */
#ifndef UROCE_TOOLS_INSPECT_PSN_PLOT_H
#define UROCE_TOOLS_INSPECT_PSN_PLOT_H

#include <stdint.h>

#include "psn_trace.h"

/* Columns of a PSN graph: one per pixel of the plot's width. */
#define PSN_COLS 1000u

/* What one series has in one column (N == 0: nothing). */
struct psn_cell {
	int64_t lo, hi;		/* unwrapped PSNs */
	uint64_t n;
};

/* RNR waits merged where they share columns: columns C0..C1, N waits. */
struct psn_band {
	uint32_t c0, c1;
	uint64_t n;
};

struct psn_plot {
	const struct psn_flow *f;
	int64_t t0_ns;		/* the flow's first packet */
	int64_t span_ns;	/* to its last point */
	int64_t ymin, ymax;	/* the lowest and highest PSN of any point (unwrapped) */
	uint32_t cols;
	struct psn_cell *cell;	/* [series * cols + column] */
	struct psn_band *band;
	size_t nband;
};

/* Reduce F to COLS columns.  0, or -1 when out of memory. */
int psn_plot_build(struct psn_plot *p, const struct psn_flow *f, uint32_t cols);
/* The column of capture time T_NS (clamped to the plot). */
uint32_t psn_plot_col(const struct psn_plot *p, int64_t t_ns);
void psn_plot_free(struct psn_plot *p);

#endif /* UROCE_TOOLS_INSPECT_PSN_PLOT_H */
