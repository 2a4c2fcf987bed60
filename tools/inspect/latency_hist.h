/*
 * latency_hist.h - `uroce inspect --latency-svg`: the message latencies
 * `--flows` takes its p50/p99/max from (check.h insp_check_flow_latency:
 * from a message's first packet to the response that completes it) as a
 * histogram with log-scaled bins.  docs/inspect.md, "Latency histogram".
 *
 * Bins: LAT_PER_DECADE per power of ten; bin k holds the latencies L with
 * lat_edge(k) <= L < lat_edge(k + 1), lat_edge(k) = 10^(k / LAT_PER_DECADE)
 * ns rounded to the nearest integer.  Where rounding makes two edges equal
 * (below 10 ns) the bin between them is empty and left out.  A latency of
 * 0 ns (a response in the same capture tick) goes to the bin [0, 1).
 */
#ifndef UROCE_TOOLS_INSPECT_LATENCY_HIST_H
#define UROCE_TOOLS_INSPECT_LATENCY_HIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LAT_PER_DECADE 10
#define LAT_BINS (19 * LAT_PER_DECADE + 1)	/* up to 10^19 ns, within uint64_t */

struct lat_bin {
	uint64_t lo_ns, hi_ns;	/* [lo, hi) */
	uint64_t count;
};

struct lat_hist {
	uint64_t counts[LAT_BINS + 1];	/* [0]: 0 ns; [k + 1]: bin k */
	uint64_t messages, min_ns, max_ns;
	uint32_t flows;			/* request flows that gave latencies */
};

/* Add the N latencies (ns) V of one request flow. */
void lat_hist_add(struct lat_hist *h, const uint64_t *v, size_t n);

/*
 * The bins from the lowest to the highest one with a count, those of no
 * width left out, into OUT (room for LAT_BINS + 1).  Returns their number
 * (0 without messages).
 */
size_t lat_hist_bins(const struct lat_hist *h, struct lat_bin *out);

/* {"latency_histogram":{"flows","messages","min_ns","max_ns","bins_per_decade","bins":[{lo_ns,hi_ns,count}]}} */
void lat_hist_json(FILE *fp, const struct lat_hist *h);

/* The histogram as a self-contained SVG; TITLE names the capture. */
void lat_hist_svg(FILE *fp, const struct lat_hist *h, const char *title);

#endif /* UROCE_TOOLS_INSPECT_LATENCY_HIST_H */
