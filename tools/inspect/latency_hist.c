/*
 * latency_hist.c - the log-binned histogram of message latencies and its
 * JSON form (see latency_hist.h; the SVG is latency_svg.c).
 */
#include "config.h"

#include "latency_hist.h"

#include <math.h>
#include <string.h>

#include "json.h"

/* Lower edge of bin K, ns (latency_hist.h). */
static uint64_t lat_edge(unsigned k)
{
	return (uint64_t)floor(pow(10, (double)k / LAT_PER_DECADE) + 0.5);
}

/* The bin of V >= 1: the highest K with lat_edge(K) <= V. */
static unsigned bin_of(uint64_t v)
{
	unsigned k = (unsigned)(log10((double)v) * LAT_PER_DECADE);

	if (k >= LAT_BINS)
		k = LAT_BINS - 1;
	/* the float guess may be one off at an edge: settle it on the integers */
	while (k > 0 && lat_edge(k) > v)
		k--;
	while (k + 1 < LAT_BINS && lat_edge(k + 1) <= v)
		k++;
	return k;
}

void lat_hist_add(struct lat_hist *h, const uint64_t *v, size_t n)
{
	size_t i;

	if (n)
		h->flows++;
	for (i = 0; i < n; i++) {
		h->counts[v[i] ? bin_of(v[i]) + 1 : 0]++;
		if (!h->messages || v[i] < h->min_ns)
			h->min_ns = v[i];
		if (v[i] > h->max_ns)
			h->max_ns = v[i];
		h->messages++;
	}
}

size_t lat_hist_bins(const struct lat_hist *h, struct lat_bin *out)
{
	unsigned lo = 0, hi = 0, k;
	size_t n = 0;

	if (!h->messages)
		return 0;
	while (!h->counts[lo])
		lo++;
	for (k = 0; k <= LAT_BINS; k++)
		if (h->counts[k])
			hi = k;
	for (k = lo; k <= hi; k++) {
		uint64_t a = k ? lat_edge(k - 1) : 0;
		uint64_t b = k == 0 ? 1 : k < LAT_BINS ? lat_edge(k) : UINT64_MAX;

		if (a == b)
			continue;
		out[n].lo_ns = a;
		out[n].hi_ns = b;
		out[n].count = h->counts[k];
		n++;
	}
	return n;
}

void lat_hist_json(FILE *fp, const struct lat_hist *h)
{
	struct lat_bin bins[LAT_BINS + 1];
	size_t n = lat_hist_bins(h, bins), i;
	struct jsonw j;

	jsonw_begin(&j, fp);
	jsonw_obj(&j, "latency_histogram");
	jsonw_u64(&j, "flows", h->flows);
	jsonw_u64(&j, "messages", h->messages);
	jsonw_u64(&j, "min_ns", h->min_ns);
	jsonw_u64(&j, "max_ns", h->max_ns);
	jsonw_u64(&j, "bins_per_decade", LAT_PER_DECADE);
	jsonw_key(&j, "bins");
	fputc('[', fp);
	for (i = 0; i < n; i++)
		fprintf(fp, "%s{\"lo_ns\":%llu,\"hi_ns\":%llu,\"count\":%llu}", i ? "," : "",
			(unsigned long long)bins[i].lo_ns, (unsigned long long)bins[i].hi_ns,
			(unsigned long long)bins[i].count);
	fputc(']', fp);
	jsonw_end(&j);
}
