/*
 * psn_output.c - `--psn-graph` and `--latency-svg` after the capture is
 * read (see psn_output.h): picks the request flows, numbers them as
 * --timeline does, and hands each to the SVG and JSON writers one at a
 * time (a flow's columns are freed before the next is built).
 */
#include "config.h"

#include "psn_output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "latency_hist.h"
#include "psn_json.h"
#include "psn_plot.h"
#include "psn_svg.h"

#define PROG "uroce inspect"

/* The --timeline number (1-based) of the pair whose packet is FRAME; 0 if none. */
static uint32_t pair_of(const struct insp_graph *g, uint64_t frame)
{
	uint64_t n, lo = 0, hi;
	const struct insp_gev *ev = insp_graph_events(g, &n);

	hi = n;
	while (lo < hi) {	/* events are in frame order */
		uint64_t mid = lo + (hi - lo) / 2;

		if (ev[mid].frame < frame)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ev[lo].frame == frame ? ev[lo].flow + 1 : 0;
}

static FILE *open_out(const char *path)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
	return fp;
}

static int close_out(FILE *fp, const char *path)
{
	if (ferror(fp) | fclose(fp)) {
		fprintf(stderr, PROG ": %s: cannot write: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The SVG of the selected flows SEL (N of them, numbers NUM). */
static int write_svg(const struct psn_trace *t, const struct insp_check *c, const size_t *sel, size_t n,
		     const uint32_t *num, const struct psn_opts *o)
{
	size_t drawn = n < PSN_MAX_PANELS ? n : PSN_MAX_PANELS, i;
	FILE *fp = open_out(o->svg);
	char name[200];

	if (!fp)
		return -1;
	psn_svg_begin(fp, o->title, drawn, n - drawn);
	for (i = 0; i < drawn; i++) {
		const struct psn_flow *f = &t->v[sel[i]];
		struct psn_plot p;

		if (psn_plot_build(&p, f, PSN_COLS) != 0) {
			fclose(fp);
			fprintf(stderr, PROG ": out of memory for the PSN graph\n");
			return -1;
		}
		insp_check_flow_name(c, f->cflow, name, sizeof(name));
		psn_svg_panel(fp, i, num[sel[i]], name, &p);
		psn_plot_free(&p);
	}
	psn_svg_end(fp);
	if (close_out(fp, o->svg) != 0)
		return -1;
	if (!o->json)
		printf("psn-graph: %s: %zu flows drawn\n", o->svg, drawn);
	if (drawn < n)
		fprintf(stderr, PROG ": %s: %zu flows not drawn (at most %u are); choose one with --flow\n",
			o->svg, n - drawn, PSN_MAX_PANELS);
	return 0;
}

static int write_json(const struct psn_trace *t, const struct insp_check *c, const size_t *sel, size_t n,
		      const uint32_t *num)
{
	char name[200];
	size_t i;

	for (i = 0; i < n; i++) {
		const struct psn_flow *f = &t->v[sel[i]];
		struct psn_plot p;

		if (psn_plot_build(&p, f, PSN_COLS) != 0) {
			fprintf(stderr, PROG ": out of memory for the PSN graph\n");
			return -1;
		}
		insp_check_flow_name(c, f->cflow, name, sizeof(name));
		psn_json(stdout, num[sel[i]], name, &p);
		psn_plot_free(&p);
	}
	return 0;
}

static int write_latency(const struct psn_trace *t, const struct insp_check *c, const size_t *sel, size_t n,
			 const struct psn_opts *o)
{
	struct lat_hist *h = calloc(1, sizeof(*h));
	size_t i, k;
	FILE *fp;
	int rc = 0;

	if (!h) {
		fprintf(stderr, PROG ": out of memory for the latency histogram\n");
		return -1;
	}
	for (i = 0; i < n; i++) {
		const uint64_t *v = insp_check_flow_latency(c, t->v[sel[i]].cflow, &k);

		lat_hist_add(h, v, k);
	}
	fp = open_out(o->lat_svg);
	if (!fp) {
		free(h);
		return -1;
	}
	lat_hist_svg(fp, h, o->title);
	if (close_out(fp, o->lat_svg) != 0)
		rc = -1;
	else if (o->json)
		lat_hist_json(stdout, h);
	else
		printf("latency-svg: %s: %" PRIu64 " messages\n", o->lat_svg, h->messages);
	free(h);
	return rc;
}

int psn_output(const struct psn_trace *t, const struct insp_check *c, const struct insp_graph *g,
	       const struct psn_opts *o)
{
	size_t *sel = calloc(t->n + 1, sizeof(*sel)), n = 0, i;
	uint32_t *num = calloc(t->n + 1, sizeof(*num));
	int rc = 0;

	if (!sel || !num || t->nomem) {
		fprintf(stderr, PROG ": out of memory for the PSN graph\n");
		free(sel);
		free(num);
		return -1;
	}
	for (i = 0; i < t->n; i++) {
		num[i] = pair_of(g, t->v[i].first_frame);
		if (!o->flow || num[i] == o->flow)
			sel[n++] = i;
	}
	if (o->svg && write_svg(t, c, sel, n, num, o) != 0)
		rc = -1;
	if (!rc && o->svg && o->json && write_json(t, c, sel, n, num) != 0)
		rc = -1;
	if (!rc && o->lat_svg && write_latency(t, c, sel, n, o) != 0)
		rc = -1;
	free(sel);
	free(num);
	return rc;
}
