/*
 * psn_svg.c - the PSN graph as SVG (see psn_svg.h).  Dense series (new
 * requests, READ responses, message ends) are one path of a vertical bar
 * per column, from the lowest to the highest PSN in it; the rare ones
 * (resends, NAKs) a mark per column with its count, so they stay visible
 * among a million requests.
 */
#include "config.h"

#include "psn_svg.h"

#include <inttypes.h>
#include <math.h>

#include "svg_util.h"

#define LEFT 90			/* px left of the plot: PSN labels */
#define RIGHT 30
#define WIDTH (LEFT + PSN_COLS + RIGHT)
#define LEGEND 110		/* px: document title and legend */
#define PTITLE 46		/* px above a plot: the flow's name and counts */
#define PLOT_H 360
#define AXIS 44			/* px below a plot: time labels */
#define PANEL (PTITLE + PLOT_H + AXIS)
#define MARK 5			/* px: side of a resend / NAK mark */

/* How each series is drawn: colour and whether it is a mark per column. */
static const struct style {
	const char *color;
	int marks;		/* 1: <rect> per column, 2: hollow <rect>, 0: in one path */
} styles[PS__COUNT] = {
	[PS_REQ] = { "#1f4e9c", 0 },
	[PS_MSG_END] = { "#9e9e9e", 0 },
	[PS_RETX_SEQ] = { "#d62728", 1 },
	[PS_RETX_RNR] = { "#ef6c00", 1 },
	[PS_RETX_TIMEOUT] = { "#8e24aa", 1 },
	[PS_DUP] = { "#8c564b", 1 },
	[PS_READ_RESP] = { "#2e7d32", 0 },
	[PS_READ_RETX] = { "#9e9d24", 1 },
	[PS_READ_DUP] = { "#6d4c41", 1 },
	[PS_ACK] = { "#00838f", 0 },
	[PS_NAK_SEQ] = { "#d62728", 2 },
	[PS_NAK_RNR] = { "#ef6c00", 2 },
	[PS_NAK_FATAL] = { "#000000", 2 },
};
#define RNR_COLOR "#ffcc80"

/* The marks, drawn in this order: resends last, on top of a copy or a NAK in their column. */
static const unsigned mark_order[] = {
	PS_DUP, PS_READ_DUP, PS_NAK_FATAL, PS_NAK_RNR, PS_NAK_SEQ, PS_READ_RETX, PS_RETX_TIMEOUT,
	PS_RETX_RNR, PS_RETX_SEQ,
};

void psn_svg_begin(FILE *fp, const char *title, size_t npanels, uint64_t omitted)
{
	int s, i;

	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%zu\" "
		"viewBox=\"0 0 %d %zu\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
		"<text x=\"10\" y=\"20\" font-size=\"15\">PSN over time: ", WIDTH,
		LEGEND + npanels * PANEL, WIDTH, LEGEND + npanels * PANEL);
	svg_text(fp, title);
	if (omitted)
		fprintf(fp, " (%" PRIu64 " more flows not drawn: choose one with --flow)", omitted);
	fputs("</text>\n<g class=\"legend\">\n", fp);
	for (s = 0, i = 0; s <= PS__COUNT; s++, i++) {
		int x = 10 + (i % 5) * 220, y = 42 + (i / 5) * 22;

		fprintf(fp, "<g class=\"legend-item\">");
		if (s == PS__COUNT)
			fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\"/>", x,
				y - 10, RNR_COLOR);
		else if (styles[s].marks)
			fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" %s=\"%s\"%s/>", x + 4,
				y - 7, MARK, MARK, styles[s].marks == 1 ? "fill" : "stroke", styles[s].color,
				styles[s].marks == 1 ? "" : " fill=\"none\"");
		else
			fprintf(fp, "<path d=\"M%d %dh14\" stroke=\"%s\" stroke-width=\"2\"/>", x, y - 4,
				styles[s].color);
		fprintf(fp, "<text x=\"%d\" y=\"%d\">%s</text></g>\n", x + 20, y,
			s == PS__COUNT ? "RNR wait" : psn_series_legend[s]);
	}
	fputs("</g>\n", fp);
}

/* Pixel y of PSN V in a plot whose top is TOP. */
static double ypx(const struct psn_plot *p, int top, int64_t v)
{
	double r = (double)(p->ymax - p->ymin);

	if (p->ymax == p->ymin)	/* one PSN: in the middle */
		return top + PLOT_H / 2.0;
	return top + 6 + (PLOT_H - 12) * (1 - (double)(v - p->ymin) / r);
}

static double xpx(uint32_t col)
{
	return LEFT + col + 0.5;
}

/* The box, the PSN ticks and the time ticks. */
static void axes(FILE *fp, const struct psn_plot *p, int top)
{
	double ystep = svg_tick_step((double)(p->ymax - p->ymin), 8), v, div;
	double span = (double)p->span_ns + 1, tstep = span < 10 ? 1 : svg_tick_step(span, 10);
	const char *unit = svg_time_unit(tstep, &div);
	char num[48];

	fprintf(fp, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%u\" height=\"%d\" fill=\"none\" "
		"stroke=\"#888888\"/>\n<g class=\"yticks\" stroke=\"#dddddd\">", LEFT, top, PSN_COLS, PLOT_H);
	if (ystep < 1)
		ystep = 1;
	for (v = ystep * ceil((double)p->ymin / ystep); v <= (double)p->ymax; v += ystep) {
		double y = ypx(p, top, (int64_t)v);

		fprintf(fp, "<path d=\"M%d %.1fh%u\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
			"stroke=\"none\" fill=\"#000000\">%.0f</text>", LEFT, y, PSN_COLS, LEFT - 4, y + 4, v);
	}
	fputs("</g>\n<g class=\"xticks\" stroke=\"#dddddd\">", fp);
	for (v = 0; v < span; v += tstep) {
		double x = LEFT + v * PSN_COLS / span;

		svg_number(num, sizeof(num), v / div, tstep / div);
		fprintf(fp, "<path d=\"M%.1f %dv%d\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
			"stroke=\"none\" fill=\"#000000\">%s</text>", x, top, PLOT_H + 4, x, top + PLOT_H + 17, num);
	}
	fprintf(fp, "</g>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time since the flow's first "
		"packet (%s)</text>\n<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" "
		"text-anchor=\"middle\">PSN</text>\n", LEFT + PSN_COLS / 2, top + PLOT_H + 36, unit,
		top + PLOT_H / 2, top + PLOT_H / 2);
}

/* A dense series: one path, a bar (or tick) per column. */
static void dense(FILE *fp, const struct psn_plot *p, int top, unsigned s)
{
	const struct psn_cell *c = &p->cell[(size_t)s * p->cols];
	uint32_t i;

	fprintf(fp, "<path class=\"s-%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" d=\"",
		psn_series_names[s], styles[s].color, s == PS_MSG_END ? "1.2" : "2");
	for (i = 0; i < p->cols; i++) {
		double lo, hi;

		if (!c[i].n)
			continue;
		lo = ypx(p, top, c[i].lo);
		hi = ypx(p, top, c[i].hi);
		if (s == PS_MSG_END) {
			/* a tick right of the request bar */
			fprintf(fp, "M%.1f %.1fh5", xpx(i) + 1.5, hi);
			if (c[i].lo != c[i].hi)
				fprintf(fp, "M%.1f %.1fh5", xpx(i) + 1.5, lo);
		} else {
			double pad = lo - hi < 6 ? 3 : 0;	/* one PSN stays visible */

			fprintf(fp, "M%.1f %.1fV%.1f", xpx(i), lo + pad, hi - pad);
		}
	}
	fputs("\"/>\n", fp);
}

/* The ACK line: a step up to the highest PSN acknowledged in each column. */
static void ack_line(FILE *fp, const struct psn_plot *p, int top)
{
	const struct psn_cell *c = &p->cell[(size_t)PS_ACK * p->cols];
	uint32_t i;
	int started = 0;

	fprintf(fp, "<path class=\"s-ack\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"",
		styles[PS_ACK].color);
	for (i = 0; i < p->cols; i++) {
		if (!c[i].n)
			continue;
		if (!started)
			fprintf(fp, "M%.1f %.1f", xpx(i), ypx(p, top, c[i].hi));
		else
			fprintf(fp, "H%.1fV%.1f", xpx(i), ypx(p, top, c[i].hi));
		started = 1;
	}
	if (started)
		fprintf(fp, "H%.1f", xpx(p->cols - 1));
	fputs("\"/>\n", fp);
}

/* A rare series: a mark per column with its count. */
static void marks(FILE *fp, const struct psn_plot *p, int top, unsigned s)
{
	const struct psn_cell *c = &p->cell[(size_t)s * p->cols];
	uint32_t i;

	fprintf(fp, "<g class=\"s-%s\" %s=\"%s\"%s>", psn_series_names[s], styles[s].marks == 1 ? "fill" : "stroke",
		styles[s].color, styles[s].marks == 1 ? "" : " fill=\"none\"");
	for (i = 0; i < p->cols; i++) {
		double lo, hi;

		if (!c[i].n)
			continue;
		lo = ypx(p, top, c[i].lo);
		hi = ypx(p, top, c[i].hi);
		fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" data-n=\"%" PRIu64 "\"/>",
			xpx(i) - MARK / 2.0, hi - MARK / 2.0, MARK, lo - hi + MARK, c[i].n);
	}
	fputs("</g>\n", fp);
}

void psn_svg_panel(FILE *fp, size_t index, uint32_t flow, const char *name, const struct psn_plot *p)
{
	int top = LEGEND + (int)index * PANEL + PTITLE;
	const struct psn_flow *f = p->f;
	size_t i;
	unsigned s;

	fprintf(fp, "<g class=\"panel\" data-flow=\"%" PRIu32 "\">\n<text x=\"%d\" y=\"%d\" font-size=\"13\">"
		"flow %" PRIu32 ": ", flow, LEFT, top - 26, flow);
	svg_text(fp, name);
	fprintf(fp, "</text>\n<text x=\"%d\" y=\"%d\">requests %" PRIu64 ", resends %" PRIu64 " (sequence NAK %"
		PRIu64 ", RNR NAK %" PRIu64 ", timeout %" PRIu64 "), RNR waits %zu</text>\n", LEFT, top - 9,
		f->counts[PS_REQ] + f->counts[PS_RETX_SEQ] + f->counts[PS_RETX_RNR] + f->counts[PS_RETX_TIMEOUT] +
		f->counts[PS_DUP], f->counts[PS_RETX_SEQ] + f->counts[PS_RETX_RNR] + f->counts[PS_RETX_TIMEOUT],
		f->counts[PS_RETX_SEQ], f->counts[PS_RETX_RNR], f->counts[PS_RETX_TIMEOUT], f->nrnr);
	for (i = 0; i < p->nband; i++)
		fprintf(fp, "<rect class=\"rnr-wait\" x=\"%.1f\" y=\"%d\" width=\"%u\" height=\"%d\" fill=\"%s\" "
			"fill-opacity=\"0.6\" data-n=\"%" PRIu64 "\"/>\n", xpx(p->band[i].c0) - 0.5, top,
			p->band[i].c1 - p->band[i].c0 + 1, PLOT_H, RNR_COLOR, p->band[i].n);
	axes(fp, p, top);
	ack_line(fp, p, top);
	dense(fp, p, top, PS_MSG_END);
	dense(fp, p, top, PS_REQ);
	dense(fp, p, top, PS_READ_RESP);
	for (s = 0; s < sizeof(mark_order) / sizeof(mark_order[0]); s++)
		marks(fp, p, top, mark_order[s]);
	fputs("</g>\n", fp);
}

void psn_svg_end(FILE *fp)
{
	fputs("</svg>\n", fp);
}
