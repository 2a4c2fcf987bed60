/*
 * psn_json.c - one panel of the PSN graph as JSON (see psn_json.h).
 */
#include "config.h"

#include "psn_json.h"

#include <inttypes.h>

#include "json.h"

void psn_json(FILE *fp, uint32_t flow, const char *name, const struct psn_plot *p)
{
	const struct psn_flow *f = p->f;
	struct jsonw j;
	unsigned s;
	uint32_t i;
	size_t k;

	jsonw_begin(&j, fp);
	jsonw_obj(&j, "psn_graph");
	jsonw_u64(&j, "flow", flow);
	jsonw_str(&j, "name", name);
	jsonw_u64(&j, "first_frame", f->first_frame);
	jsonw_u64(&j, "t0_ns", (uint64_t)p->t0_ns);
	jsonw_u64(&j, "span_ns", (uint64_t)p->span_ns);
	jsonw_u64(&j, "columns", p->cols);
	/* signed: a late packet from before the first PSN 0 unwraps to -1 */
	jsonw_key(&j, "psn_first");
	fprintf(fp, "%" PRId64, f->n ? f->pts[0].y : 0);
	jsonw_key(&j, "psn_min");
	fprintf(fp, "%" PRId64, p->ymin);
	jsonw_key(&j, "psn_max");
	fprintf(fp, "%" PRId64, p->ymax);
	jsonw_obj(&j, "counts");
	for (s = 0; s < PS__COUNT; s++)
		jsonw_u64(&j, psn_series_names[s], f->counts[s]);
	jsonw_obj_end(&j);
	jsonw_key(&j, "rnr_waits");
	fputc('[', fp);
	for (k = 0; k < f->nrnr; k++)
		fprintf(fp, "%s[%" PRId64 ",%" PRId64 "]", k ? "," : "", f->rnr[k].t0_ns - p->t0_ns,
			f->rnr[k].t1_ns - p->t0_ns);
	fputs("]", fp);
	jsonw_key(&j, "rnr_bands");
	fputc('[', fp);
	for (k = 0; k < p->nband; k++)
		fprintf(fp, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 "]", k ? "," : "", p->band[k].c0, p->band[k].c1,
			p->band[k].n);
	fputs("]", fp);
	jsonw_obj(&j, "series");
	for (s = 0; s < PS__COUNT; s++) {
		const struct psn_cell *c = &p->cell[(size_t)s * p->cols];
		int first = 1;

		jsonw_key(&j, psn_series_names[s]);
		fputc('[', fp);
		for (i = 0; i < p->cols; i++) {
			if (!c[i].n)
				continue;
			fprintf(fp, "%s[%" PRIu32 ",%" PRId64 ",%" PRId64 ",%" PRIu64 "]", first ? "" : ",", i, c[i].lo,
				c[i].hi, c[i].n);
			first = 0;
		}
		fputc(']', fp);
	}
	jsonw_end(&j);
}
