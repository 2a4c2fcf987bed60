/*
 * psn_output.h - `uroce inspect --psn-graph OUT.svg` and `--latency-svg
 * OUT.svg` (with --json: the figures behind them), once the capture is
 * read: the PSN graph of each RC/UC request flow (psn_trace.h, psn_plot.h,
 * psn_svg.h) and the histogram of the message latencies (latency_hist.h).
 * docs/inspect.md, "PSN graph and latency histogram".
 *
 * Flows are numbered as --timeline and --graph number them (graph.h: the
 * packets between one pair of QPs, both directions); --flow N keeps the
 * request flows of pair N (one panel per direction that sends requests).
 */
#ifndef UROCE_TOOLS_INSPECT_PSN_OUTPUT_H
#define UROCE_TOOLS_INSPECT_PSN_OUTPUT_H

#include <stdint.h>

#include "check.h"
#include "graph.h"
#include "psn_trace.h"

/* Panels at most in one --psn-graph picture: beyond, --flow picks a flow. */
#define PSN_MAX_PANELS 32u

struct psn_opts {
	const char *svg;	/* --psn-graph OUT.svg, or NULL */
	const char *lat_svg;	/* --latency-svg OUT.svg, or NULL */
	int json;		/* the figures as JSON objects on stdout */
	uint32_t flow;		/* --flow N; 0 = all */
	const char *title;	/* the capture's name */
};

/*
 * Writes what O asks of trace T (fed with checker C's verdicts; graph G
 * resolved, for the flow numbers).  One line per file on stdout without
 * JSON; with JSON one {"psn_graph":{...}} object per request flow and one
 * {"latency_histogram":{...}} (docs/inspect.md gives the keys).  Returns
 * 0, or -1 after a line on stderr (out of memory, cannot write a file).
 */
int psn_output(const struct psn_trace *t, const struct insp_check *c, const struct insp_graph *g,
	       const struct psn_opts *o);

#endif /* UROCE_TOOLS_INSPECT_PSN_OUTPUT_H */
