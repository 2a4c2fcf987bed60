/*
 * psn_svg.h - the PSN graph as a self-contained SVG 1.1 file (no scripts,
 * no external references): a legend, then one panel per request flow, x =
 * time since the flow's first packet (ticks in ns, µs, ms or s), y = PSN
 * unwrapped (psn_trace.h), drawn from the pixel columns of psn_plot.h.
 *
 * What a test reads back: each panel is <g class="panel" data-flow="N">;
 * requests, READ responses and message ends are one <path> each (class
 * "s-req", "s-read_resp", "s-msg_end"), the ACK line one <path
 * class="s-ack">; resends, duplicates and NAKs are one <rect data-n="K">
 * per column in a <g class="s-NAME"> (K packets in that column); RNR waits
 * are <rect class="rnr-wait" data-n="K">.
 */
#ifndef UROCE_TOOLS_INSPECT_PSN_SVG_H
#define UROCE_TOOLS_INSPECT_PSN_SVG_H

#include <stdint.h>
#include <stdio.h>

#include "psn_plot.h"

/* The document's head and legend, for NPANELS panels; OMITTED flows not drawn. */
void psn_svg_begin(FILE *fp, const char *title, size_t npanels, uint64_t omitted);
/* Panel INDEX (0-based) of flow number FLOW (as --timeline numbers it), titled NAME. */
void psn_svg_panel(FILE *fp, size_t index, uint32_t flow, const char *name, const struct psn_plot *p);
void psn_svg_end(FILE *fp);

#endif /* UROCE_TOOLS_INSPECT_PSN_SVG_H */
