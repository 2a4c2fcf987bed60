/*
 * graph_svg.c - `--graph FILE.svg`: the sequence graph of a capture as a
 * self-contained SVG 1.1 file (W3C SVG 1.1, no scripts, no external
 * references). Lifelines are the endpoints in order of first appearance;
 * each packet is one row, in time order, an arrow from its source to its
 * destination lifeline labelled by insp_graph_ev_label(). Each packet is a
 * <g class="pkt KIND" data-frame="N" data-flow="F"> with a <title> (the
 * browser's tooltip), which is also what tests read back.
 */
#include "config.h"

#include "graph.h"
#include "svg_util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/packet.h"

#define LANE 250	/* px between lifelines */
#define LEFT 190	/* px: the time and frame columns */
#define ROW 22		/* px per packet */
#define HEAD 46		/* px: a lifeline's header box */
#define MAX_FLOW_LINES 40

/* Kinds of arrow: CSS class, colour, dash pattern, legend text. */
static const struct kind {
	const char *cls, *color, *dash, *legend;
} kinds[] = {
	{ "req", "#1f4e9c", NULL, "request" },
	{ "resp", "#2e7d32", NULL, "ACK / response" },
	{ "resend", "#8e24aa", "6,3", "resend (PSN not after the highest sent)" },
	{ "nak", "#c62828", NULL, "NAK" },
	{ "rnr", "#ef6c00", NULL, "RNR NAK" },
	{ "cnp", "#00838f", "2,2", "CNP" },
	{ "bad", "#757575", "1,3", "bad ICRC / malformed" },
};
enum { KREQ, KRESP, KRESEND, KNAK, KRNR, KCNP, KBAD };

static int kind_of(const struct insp_gev *e)
{
	const struct roce_opcode_info *op = roce_opcode_info(e->opcode);

	if (e->mark & (INSP_GM_BAD_ICRC | INSP_GM_MALFORMED))
		return KBAD;
	if (e->mark & INSP_GM_NAK)
		return KNAK;
	if (e->mark & INSP_GM_RNR)
		return KRNR;
	if (e->mark & INSP_GM_RESEND)
		return KRESEND;
	if (op && (op->flags & ROCE_OPF_CNP))
		return KCNP;
	if (op && (op->flags & ROCE_OPF_RESPONSE))
		return KRESP;
	return KREQ;
}

static int by_time(const void *a, const void *b)
{
	const struct insp_gev *x = *(const struct insp_gev *const *)a;
	const struct insp_gev *y = *(const struct insp_gev *const *)b;

	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Microseconds with 3 decimals of a non-negative nanosecond count D. */
static void us(FILE *fp, int64_t d)
{
	fprintf(fp, "%s%" PRId64 ".%03" PRId64, d < 0 ? "-" : "", (d < 0 ? -d : d) / 1000,
		(d < 0 ? -d : d) % 1000);
}

/* The SVG's start: size, title, arrow heads, legend and the flows' list. */
static void svg_head(struct insp_graph *g, FILE *fp, const char *title, uint32_t flow,
		     uint64_t n, uint32_t flow_lines, int width, int height)
{
	uint32_t f, k, nflows = insp_graph_flows(g);
	char buf[192];

	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		    "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n",
		width, height, width, height);
	fputs("<title>", fp);
	svg_text(fp, title);
	fputs("</title>\n<defs>\n", fp);
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		fprintf(fp, "<marker id=\"h-%s\" markerWidth=\"8\" markerHeight=\"8\" refX=\"8\" "
			    "refY=\"4\" orient=\"auto\" markerUnits=\"userSpaceOnUse\">"
			    "<path d=\"M0,0 L8,4 L0,8 z\" fill=\"%s\"/></marker>\n",
			kinds[k].cls, kinds[k].color);
	fputs("</defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n", fp);

	/* title, legend, flows */
	fputs("<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", fp);
	svg_text(fp, title);
	fprintf(fp, " \xe2\x80\x94 %" PRIu64 " packets", n);
	if (flow)
		fprintf(fp, " of flow %" PRIu32, flow);
	fputs("</text>\n<g class=\"legend\">\n", fp);
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		int x = 10 + 300 * (int)(k % 4), y = 40 + 16 * (int)(k / 4);

		fprintf(fp, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
			    "stroke-width=\"2\"%s%s%s/><text x=\"%d\" y=\"%d\">%s</text>\n",
			x, y - 4, x + 24, y - 4, kinds[k].color,
			kinds[k].dash ? " stroke-dasharray=\"" : "", kinds[k].dash ? kinds[k].dash : "",
			kinds[k].dash ? "\"" : "", x + 30, y, kinds[k].legend);
	}
	fputs("</g>\n<g class=\"flows\">\n", fp);
	for (f = 0, k = 0; f < nflows && k < flow_lines; f++) {
		const struct insp_gflow *fl = insp_graph_flow(g, f);
		int y = 86 + 16 * (int)k;

		if (flow && f != flow - 1)
			continue;
		if (k == MAX_FLOW_LINES) {
			fprintf(fp, "<text x=\"10\" y=\"%d\">... and %" PRIu32 " more flows "
				    "(--timeline lists them)</text>\n", y, nflows - MAX_FLOW_LINES);
			break;
		}
		fprintf(fp, "<text x=\"10\" y=\"%d\">flow %" PRIu32 ": ", y, f + 1);
		insp_graph_ep_name(g, fl->ep_a, buf, sizeof(buf));
		svg_text(fp, buf);
		fputs(" &lt;&gt; ", fp);
		insp_graph_ep_name(g, fl->ep_b, buf, sizeof(buf));
		svg_text(fp, buf);
		fprintf(fp, ", %" PRIu64 " packets</text>\n", fl->packets);
		k++;
	}
	fputs("</g>\n", fp);

}

/* One lifeline per endpoint drawn (lane[ep] != UINT32_MAX). */
static void svg_lifelines(struct insp_graph *g, FILE *fp, const uint32_t *lane, uint32_t nep,
			  int top, int height)
{
	uint64_t i;

	fprintf(fp, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">time (\xc2\xb5s)</text>"
		    "<text x=\"110\" y=\"%d\" font-weight=\"bold\">frame</text>\n",
		top + HEAD - 8, top + HEAD - 8);
	for (i = 0; i < nep; i++) {
		const struct insp_gep *p;
		int x;

		if (lane[i] == UINT32_MAX)
			continue;
		p = insp_graph_endpoint(g, (uint32_t)i);
		x = LEFT + LANE * (int)lane[i] + LANE / 2;
		fprintf(fp, "<g class=\"lifeline\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			    "fill=\"#eef2f8\" stroke=\"#333333\"/>"
			    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
			x - LANE / 2 + 10, top, LANE - 20, HEAD - 10, x, top + 15);
		svg_text(fp, insp_graph_addr(g, p->addr));
		if (p->qpn == INSP_GRAPH_QPN_UNKNOWN)
			fprintf(fp, "</text><text x=\"%d\" y=\"%d\" text-anchor=\"middle\">qp ? port %u",
				x, top + 30, p->sport);
		else
			fprintf(fp, "</text><text x=\"%d\" y=\"%d\" text-anchor=\"middle\">qp 0x%06" PRIx32,
				x, top + 30, p->qpn);
		fprintf(fp, "</text><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999999\" "
			    "stroke-dasharray=\"4,4\"/></g>\n",
			x, top + HEAD - 10, x, height - 10);
	}

}

/* One row per drawn packet: time, frame, arrow and label. */
static void svg_rows(FILE *fp, const struct insp_gev **sel, uint64_t drawn, const uint32_t *lane,
		     int top)
{
	uint64_t i;
	char buf[192];

	for (i = 0; i < drawn; i++) {
		const struct insp_gev *e = sel[i];
		const struct kind *kd = &kinds[kind_of(e)];
		int y = top + HEAD + 14 + ROW * (int)i;
		int xs = LEFT + LANE * (int)lane[e->src_ep] + LANE / 2;
		int xd = LEFT + LANE * (int)lane[e->dst_ep] + LANE / 2;

		insp_graph_ev_label(e, buf, sizeof(buf));
		fprintf(fp, "<g class=\"pkt %s\" data-frame=\"%" PRIu64 "\" data-flow=\"%" PRIu32 "\">"
			    "<title>frame %" PRIu64 ": ",
			kd->cls, e->frame, e->flow + 1, e->frame);
		svg_text(fp, buf);
		fputs("</title><text x=\"10\" y=\"", fp);
		fprintf(fp, "%d\">", y + 4);
		us(fp, e->t_ns - sel[0]->t_ns);
		fprintf(fp, "</text><text x=\"110\" y=\"%d\">%" PRIu64 "</text>", y + 4, e->frame);
		if (xs == xd)
			fprintf(fp, "<path d=\"M%d,%d h30 v8 h-30\" fill=\"none\" stroke=\"%s\" "
				    "stroke-width=\"1.5\"%s%s%s marker-end=\"url(#h-%s)\"/>"
				    "<text x=\"%d\" y=\"%d\">",
				xs, y - 4, kd->color, kd->dash ? " stroke-dasharray=\"" : "",
				kd->dash ? kd->dash : "", kd->dash ? "\"" : "", kd->cls, xs + 36, y + 4);
		else
			fprintf(fp, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
				    "stroke-width=\"1.5\"%s%s%s marker-end=\"url(#h-%s)\"/>"
				    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">",
				xs, y, xd, y, kd->color, kd->dash ? " stroke-dasharray=\"" : "",
				kd->dash ? kd->dash : "", kd->dash ? "\"" : "", kd->cls, (xs + xd) / 2,
				y - 4, kd->color);
		svg_text(fp, buf);
		fputs("</text></g>\n", fp);
	}
}

uint64_t insp_graph_svg(struct insp_graph *g, FILE *fp, const char *title, uint32_t flow,
			uint64_t max, uint64_t *omitted)
{
	const struct insp_gev *ev, **sel;
	uint64_t nev, n = 0, i, drawn;
	uint32_t *lane, nlane = 0, nep = 0, nflows = insp_graph_flows(g);
	uint32_t flow_lines;
	int top, width, height;

	ev = insp_graph_events(g, &nev);
	sel = malloc((nev ? nev : 1) * sizeof(*sel));
	for (i = 0; i < nev; i++)
		if (ev[i].flow != UINT32_MAX && ev[i].src_ep >= nep)
			nep = ev[i].src_ep + 1;
	for (i = 0; i < nev; i++)
		if (ev[i].flow != UINT32_MAX && ev[i].dst_ep >= nep)
			nep = ev[i].dst_ep + 1;
	lane = malloc((nep ? nep : 1) * sizeof(*lane));
	if (!sel || !lane) {
		free(sel);
		free(lane);
		return UINT64_MAX;
	}
	for (i = 0; i < nep; i++)
		lane[i] = UINT32_MAX;
	for (i = 0; i < nev; i++)
		if (ev[i].flow != UINT32_MAX && (!flow || ev[i].flow == flow - 1))
			sel[n++] = &ev[i];
	qsort(sel, n, sizeof(*sel), by_time);
	drawn = n < max ? n : max;
	*omitted = n - drawn;
	/* lanes in order of first appearance among the drawn packets */
	for (i = 0; i < drawn; i++) {
		if (lane[sel[i]->src_ep] == UINT32_MAX)
			lane[sel[i]->src_ep] = nlane++;
		if (lane[sel[i]->dst_ep] == UINT32_MAX)
			lane[sel[i]->dst_ep] = nlane++;
	}
	flow_lines = flow ? 1 : (nflows < MAX_FLOW_LINES ? nflows : MAX_FLOW_LINES + 1);
	top = 70 + 16 * (int)flow_lines + 20;
	width = LEFT + LANE * (int)(nlane ? nlane : 1) + 40;
	if (width < 1220)	/* the legend's four columns */
		width = 1220;
	height = top + HEAD + 20 + ROW * (int)drawn + (*omitted ? 40 : 20);

	svg_head(g, fp, title, flow, n, flow_lines, width, height);
	svg_lifelines(g, fp, lane, nep, top, height);
	svg_rows(fp, sel, drawn, lane, top);
	if (*omitted)
		fprintf(fp, "<text x=\"10\" y=\"%d\" font-weight=\"bold\" fill=\"#c62828\">"
			    "%" PRIu64 " more packets not drawn (at most %" PRIu64 " are): choose one "
			    "flow with --flow N</text>\n",
			height - 16, *omitted, max);
	fputs("</svg>\n", fp);
	free(sel);
	free(lane);
	return drawn;
}
