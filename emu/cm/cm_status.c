/*
 * cm_status.c - the connection manager's lines of `uroce status`.
 */
#include "config.h"
#include "emu/cm/cm_int.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"

void cm_status(const struct uroce_dev *d, FILE *fp)
{
	const struct cm_dev *cm = d->cm;
	const struct cm_stats *s;
	const struct cm_conn *c;
	const struct cm_id *id;
	unsigned int listens = 0, conns = 0, established = 0;
	static const char *const names[] = { "req", "mra", "rej", "rep", "rtu", "dreq", "drep", "sidr_req",
					     "sidr_rep", "lap", "apr" };
	unsigned int i;

	if (!cm)
		return;
	s = &cm->st;
	for (id = cm->ids; id; id = id->next) {
		listens += id->state == CS_LISTEN;
		established += id->state == CS_ESTABLISHED;
	}
	for (c = cm->conns; c; c = c->next)
		conns++;
	fprintf(fp, "cm ids=%u listens=%u established=%u pending=%u conns=%u timeout_ms=%u max_ids_per_user=%u",
		cm->n_ids, listens, established, cm->n_pending, conns, cm->timeout_ms, cm->max_ids);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fprintf(fp, " %s_tx=%llu %s_rx=%llu", names[i], (unsigned long long)s->tx[i], names[i],
			(unsigned long long)s->rx[i]);
	fprintf(fp, " retransmits=%llu timeouts=%llu duplicates=%llu drops=%llu refused_backlog=%llu\n",
		(unsigned long long)s->retransmits, (unsigned long long)s->timeouts, (unsigned long long)s->dup,
		(unsigned long long)s->drops, (unsigned long long)s->rej_backlog);
	for (c = cm->conns; c; c = c->next)
		fprintf(fp, "client id=%u pid=%d uid=%d comm=%s cm ids=%u events=%llu events_queued=%u events_dropped=%llu\n",
			c->client->id, (int)c->client->pid, (int)c->client->uid, c->client->comm, c->ids.count,
			(unsigned long long)c->events, c->evq_n, (unsigned long long)c->events_dropped);
}
