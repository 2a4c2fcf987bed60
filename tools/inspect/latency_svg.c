/*
 * latency_svg.c - the latency histogram of latency_hist.h as a
 * self-contained SVG 1.1 file: x = latency on a log scale (one bar per
 * bin, equal widths), y = messages.  Each bar with messages is a <rect
 * class="bin" data-lo="NS" data-hi="NS" data-n="COUNT"> with a <title>
 * (what tests read back).
 */
#include "config.h"

#include "latency_hist.h"

#include <inttypes.h>

#include "svg_util.h"

#define LEFT 80
#define TOP 60
#define PLOT_W 900
#define PLOT_H 360
#define WIDTH (LEFT + PLOT_W + 30)
#define HEIGHT (TOP + PLOT_H + 60)

/* "1.26 ms", "800 ns": NS with a unit of its size. */
static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	double div;
	/* the unit in which NS is at least 1: 100 ms, not 0.1 s */
	const char *unit = svg_time_unit((double)ns / 10, &div);

	snprintf(buf, len, "%.3g %s", (double)ns / div, unit);
}

void lat_hist_svg(FILE *fp, const struct lat_hist *h, const char *title)
{
	struct lat_bin bins[LAT_BINS + 1];
	size_t n = lat_hist_bins(h, bins), i;
	uint64_t top = 1;
	double bw, ystep, v;
	char a[32], b[32];

	for (i = 0; i < n; i++)
		if (bins[i].count > top)
			top = bins[i].count;
	bw = n ? (double)PLOT_W / n : PLOT_W;
	ystep = svg_tick_step((double)top, 6);
	if (ystep < 1)
		ystep = 1;
	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n<text x=\"10\" y=\"20\" "
		"font-size=\"15\">Message latency (first request packet to the completing response): ",
		WIDTH, HEIGHT, WIDTH, HEIGHT);
	svg_text(fp, title);
	fmt_ns(a, sizeof(a), h->min_ns);
	fmt_ns(b, sizeof(b), h->max_ns);
	fprintf(fp, "</text>\n<text x=\"10\" y=\"40\">%" PRIu64 " messages on %" PRIu32 " flows, min %s, "
		"max %s; bins of 10^(1/%d), log scale</text>\n", h->messages, h->flows, a, b, LAT_PER_DECADE);
	fprintf(fp, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"#888888\"/>\n<g class=\"yticks\" stroke=\"#dddddd\">", LEFT, TOP, PLOT_W, PLOT_H);
	for (v = 0; v <= (double)top; v += ystep) {
		double y = TOP + PLOT_H - v * PLOT_H / (double)top;

		fprintf(fp, "<path d=\"M%d %.1fh%d\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" stroke=\"none\" "
			"fill=\"#000000\">%.0f</text>", LEFT, y, PLOT_W, LEFT - 4, y + 4, v);
	}
	fputs("</g>\n<g class=\"bins\" fill=\"#1f4e9c\">", fp);
	for (i = 0; i < n; i++) {
		double hgt = (double)bins[i].count * PLOT_H / (double)top;

		if (!bins[i].count)
			continue;
		fmt_ns(a, sizeof(a), bins[i].lo_ns);
		fmt_ns(b, sizeof(b), bins[i].hi_ns);
		fprintf(fp, "<rect class=\"bin\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-lo=\"%"
			PRIu64 "\" data-hi=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\"><title>%s to %s: %" PRIu64
			" messages</title></rect>", LEFT + i * bw + 0.5, TOP + PLOT_H - hgt, bw > 2 ? bw - 1 : bw, hgt,
			bins[i].lo_ns, bins[i].hi_ns, bins[i].count, a, b, bins[i].count);
	}
	fputs("</g>\n<g class=\"xticks\">", fp);
	/* a label at each power of ten among the bins' lower edges */
	for (i = 0; i < n; i++) {
		uint64_t lo = bins[i].lo_ns, p = 1;

		while (p < lo && p <= UINT64_MAX / 10)
			p *= 10;
		if (lo != p && lo != 0)
			continue;
		fmt_ns(a, sizeof(a), lo);
		fprintf(fp, "<path d=\"M%.1f %dv6\" stroke=\"#000000\"/><text x=\"%.1f\" y=\"%d\" "
			"text-anchor=\"middle\">%s</text>", LEFT + i * bw, TOP + PLOT_H, LEFT + i * bw,
			TOP + PLOT_H + 20, a);
	}
	fprintf(fp, "</g>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">latency (log scale)</text>\n"
		"<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">messages"
		"</text>\n</svg>\n", LEFT + PLOT_W / 2, TOP + PLOT_H + 44, TOP + PLOT_H / 2, TOP + PLOT_H / 2);
}
