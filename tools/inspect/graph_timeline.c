/*
 * graph_timeline.c - `--timeline`: per flow (graph.h), its packets in time
 * order, each with the microseconds since the flow's first packet, its
 * direction and insp_graph_ev_label(). Format in docs/inspect.md.
 */
#include "config.h"

#include "graph.h"

#include <inttypes.h>
#include <stdlib.h>

static int by_flow_time(const void *a, const void *b)
{
	const struct insp_gev *x = *(const struct insp_gev *const *)a;
	const struct insp_gev *y = *(const struct insp_gev *const *)b;

	if (x->flow != y->flow)
		return x->flow < y->flow ? -1 : 1;
	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

void insp_graph_timeline(struct insp_graph *g, FILE *fp, uint32_t flow)
{
	const struct insp_gev *ev, **sel, *first = NULL;
	uint64_t nev, n = 0, i;
	char a[96], b[96], label[192], t[32];

	ev = insp_graph_events(g, &nev);
	sel = malloc((nev ? nev : 1) * sizeof(*sel));
	if (!sel) {
		fprintf(fp, "timeline: out of memory\n");
		return;
	}
	for (i = 0; i < nev; i++)
		if (ev[i].flow != UINT32_MAX && (!flow || ev[i].flow == flow - 1))
			sel[n++] = &ev[i];
	qsort(sel, n, sizeof(*sel), by_flow_time);
	for (i = 0; i < n; i++) {
		const struct insp_gev *e = sel[i];
		const struct insp_gflow *fl = insp_graph_flow(g, e->flow);
		int64_t d;

		if (i == 0 || e->flow != sel[i - 1]->flow) {
			const struct insp_gev *last = e;
			uint64_t j;

			for (j = i; j < n && sel[j]->flow == e->flow; j++)
				last = sel[j];
			insp_graph_ep_name(g, fl->ep_a, a, sizeof(a));
			insp_graph_ep_name(g, fl->ep_b, b, sizeof(b));
			d = last->t_ns - e->t_ns;
			fprintf(fp, "flow %" PRIu32 ": %s <> %s: %" PRIu64 " packets in %" PRId64
				    ".%03" PRId64 " us\n",
				e->flow + 1, a, b, fl->packets, d / 1000, d % 1000);
			first = e;
		}
		d = e->t_ns - first->t_ns;	/* sorted: never negative */
		insp_graph_ev_label(e, label, sizeof(label));
		snprintf(t, sizeof(t), "+%" PRId64 ".%03" PRId64, d / 1000, d % 1000);
		fprintf(fp, "  %12s us  frame %-7" PRIu64 " %s  %s\n", t, e->frame,
			e->src_ep == fl->ep_a ? "->" : "<-", label);
	}
	free(sel);
}
