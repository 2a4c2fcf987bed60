/*
 * psn_json.h - the figures behind one panel of the PSN graph as one JSON
 * line: {"psn_graph":{"flow","name","first_frame","t0_ns","span_ns",
 * "columns","psn_first","psn_min","psn_max","counts":{SERIES:N},
 * "rnr_waits":[[FROM_NS,TO_NS],...],"rnr_bands":[[C0,C1,N],...],
 * "series":{SERIES:[[COLUMN,LO,HI,N],...]}}}.  Times are ns since the
 * flow's first packet (t0_ns: since the epoch); PSNs are unwrapped
 * (psn_trace.h); SERIES are psn_series_names; a series' columns are the
 * ones with points, LO and HI the lowest and highest PSN there, N the
 * points (docs/inspect.md).
 */
#ifndef UROCE_TOOLS_INSPECT_PSN_JSON_H
#define UROCE_TOOLS_INSPECT_PSN_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "psn_plot.h"

void psn_json(FILE *fp, uint32_t flow, const char *name, const struct psn_plot *p);

#endif /* UROCE_TOOLS_INSPECT_PSN_JSON_H */
