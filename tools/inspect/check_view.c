/*
 * check_view.c - what the checker lets other parts of `uroce inspect` read
 * of its state (check.h): the verdict on the last frame, a flow's name and
 * its message latencies.  The PSN graph and the latency histogram draw from
 * these, so they show what `--flows` counts.
 */
#include "config.h"

#include "check_state.h"

const struct insp_check_verdict *insp_check_last(const struct insp_check *c)
{
	return &c->last;
}

void insp_check_flow_name(const struct insp_check *c, long flow, char *buf, size_t len)
{
	if (flow < 0 || (size_t)flow >= c->n) {
		snprintf(buf, len, "-");
		return;
	}
	chk_flow_name(&c->v[flow], 1, buf, len);
}

const uint64_t *insp_check_flow_latency(const struct insp_check *c, long flow, size_t *n)
{
	*n = 0;
	if (flow < 0 || (size_t)flow >= c->n || !c->v[flow].nlat)
		return NULL;
	*n = c->v[flow].nlat;
	return c->v[flow].lat;
}
