/*
 * psn_plot.c - a request flow's points reduced to pixel columns (see
 * psn_plot.h): one pass over the points, memory per flow of
 * PS__COUNT x cols cells whatever the number of packets.
 */
#include "config.h"

#include "psn_plot.h"

#include <stdlib.h>
#include <string.h>

uint32_t psn_plot_col(const struct psn_plot *p, int64_t t)
{
	unsigned __int128 x;

	if (t <= p->t0_ns)
		return 0;
	x = (unsigned __int128)(uint64_t)(t - p->t0_ns) * p->cols / ((uint64_t)p->span_ns + 1);
	return x >= p->cols ? p->cols - 1 : (uint32_t)x;
}

/* The RNR waits of F as bands of columns, overlapping ones merged. */
static int bands(struct psn_plot *p, const struct psn_flow *f)
{
	size_t i;

	if (!f->nrnr)
		return 0;
	p->band = calloc(f->nrnr, sizeof(*p->band));
	if (!p->band)
		return -1;
	for (i = 0; i < f->nrnr; i++) {
		uint32_t c0 = psn_plot_col(p, f->rnr[i].t0_ns), c1 = psn_plot_col(p, f->rnr[i].t1_ns);
		struct psn_band *b = p->nband ? &p->band[p->nband - 1] : NULL;

		if (c1 < c0) {	/* timestamps that go back in time */
			uint32_t x = c0;

			c0 = c1;
			c1 = x;
		}

		/* retries come in time order, so only the last band can overlap */
		if (b && c0 <= b->c1 + 1) {
			if (c1 > b->c1)
				b->c1 = c1;
			if (c0 < b->c0)
				b->c0 = c0;
			b->n++;
			continue;
		}
		b = &p->band[p->nband++];
		b->c0 = c0;
		b->c1 = c1;
		b->n = 1;
	}
	return 0;
}

int psn_plot_build(struct psn_plot *p, const struct psn_flow *f, uint32_t cols)
{
	int64_t t1;
	size_t i;

	memset(p, 0, sizeof(*p));
	p->f = f;
	p->cols = cols;
	p->t0_ns = t1 = f->t0_ns;
	p->ymin = p->ymax = f->n ? f->pts[0].y : 0;
	for (i = 0; i < f->n; i++) {
		const struct psn_pt *q = &f->pts[i];

		if (q->t_ns > t1)
			t1 = q->t_ns;
		if (q->y < p->ymin)
			p->ymin = q->y;
		if (q->y > p->ymax)
			p->ymax = q->y;
	}
	p->span_ns = t1 - p->t0_ns;
	p->cell = calloc((size_t)PS__COUNT * cols, sizeof(*p->cell));
	if (!p->cell)
		return -1;
	for (i = 0; i < f->n; i++) {
		const struct psn_pt *q = &f->pts[i];
		struct psn_cell *c = &p->cell[(size_t)q->series * cols + psn_plot_col(p, q->t_ns)];

		if (!c->n++) {
			c->lo = c->hi = q->y;
		} else if (q->y < c->lo) {
			c->lo = q->y;
		} else if (q->y > c->hi) {
			c->hi = q->y;
		}
	}
	if (bands(p, f) != 0) {
		psn_plot_free(p);
		return -1;
	}
	return 0;
}

void psn_plot_free(struct psn_plot *p)
{
	free(p->cell);
	free(p->band);
	p->cell = NULL;
	p->band = NULL;
}
