/*
 * fault_queue.c - the device's fault injector: decisions applied, held
 * packets released on time (see fault_queue.h).
 */
#include "config.h"
#include "emu/nic/fault_queue.h"
#include "emu/nic/device.h"
#include "emu/nic/fault_spec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PKT_MAX 4224

struct fault_held {
	uint64_t when, seq;
	unsigned int copies;
	size_t len;
	struct fault_meta meta;
	uint8_t pkt[];
};

static bool before(const struct fault_held *a, const struct fault_held *b)
{
	return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

static void heap_push(struct fault_queue *q, struct fault_held *h)
{
	uint32_t i = q->n++;

	while (i) {
		uint32_t p = (i - 1) / 2;

		if (!before(h, q->heap[p]))
			break;
		q->heap[i] = q->heap[p];
		i = p;
	}
	q->heap[i] = h;
	if (q->n > q->held_max)
		q->held_max = q->n;
}

static struct fault_held *heap_pop(struct fault_queue *q)
{
	struct fault_held *top = q->heap[0], *last = q->heap[--q->n];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= q->n)
			break;
		if (c + 1 < q->n && before(q->heap[c + 1], q->heap[c]))
			c++;
		if (!before(q->heap[c], last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (q->n)
		q->heap[i] = last;
	return top;
}

static int emit(struct fault_queue *q, const struct fault_meta *m, const uint8_t *pkt, size_t len,
		unsigned int copies)
{
	int rc = 0, e;

	while (copies--)
		if ((e = q->out(q->dev, m, pkt, len)) != 0)
			rc = e;
	return rc;
}

/* Release every packet due by now, then re-arm for the next one. */
static void release_cb(struct nic_timer *t)
{
	struct fault_queue *q = t->data;
	uint64_t now = nic_now_ns(q->dev);

	while (q->n && q->heap[0]->when <= now) {
		struct fault_held *h = heap_pop(q);

		emit(q, &h->meta, h->pkt, h->len, h->copies); /* errors counted by the output */
		free(h);
	}
	if (q->n)
		nic_timer_start(&q->timer, q->heap[0]->when);
}

int fault_dev_init(struct uroce_dev *d, uint64_t seed, fault_out_fn tx_out, fault_out_fn rx_out)
{
	struct fault_dev *f = calloc(1, sizeof(*f));
	int i;

	if (!f)
		return ENOMEM;
	for (i = 0; i < FAULT_NDIRS; i++) {
		struct fault_queue *q = &f->q[i];

		fault_dir_init(&q->dir, seed, (enum fault_dir_id)i);
		q->out = i == FAULT_TX ? tx_out : rx_out;
		q->dev = d;
		nic_timer_init(&q->timer, d, release_cb, q);
	}
	d->fault = f;
	return 0;
}

void fault_dev_seed(struct uroce_dev *d, uint64_t seed)
{
	int i;

	for (i = 0; i < FAULT_NDIRS; i++) {
		struct fault_dir *f = &d->fault->q[i].dir;
		struct fault_cfg cfg = f->cfg;

		fault_dir_init(f, seed, (enum fault_dir_id)i);
		fault_dir_set(f, &cfg);
	}
}

void fault_dev_fini(struct uroce_dev *d)
{
	int i;

	if (!d->fault)
		return;
	for (i = 0; i < FAULT_NDIRS; i++) {
		struct fault_queue *q = &d->fault->q[i];

		nic_timer_stop(&q->timer);
		while (q->n)
			free(heap_pop(q));
		free(q->heap);
	}
	free(d->fault);
	d->fault = NULL;
}

void fault_dev_set(struct uroce_dev *d, enum fault_dir_id dir, const struct fault_cfg *cfg)
{
	fault_dir_set(&d->fault->q[dir].dir, cfg);
	d->fault->active[dir] = fault_cfg_active(&d->fault->q[dir].dir.cfg);
}

/* Hold a copy of the packet until V->release_ns; false if out of memory. */
static bool hold(struct fault_queue *q, const struct fault_verdict *v, const struct fault_meta *m,
		 const uint8_t *pkt, size_t len)
{
	struct fault_held *h;

	if (q->n == q->cap) {
		uint32_t cap = q->cap ? 2 * q->cap : 64;
		struct fault_held **nh = realloc(q->heap, cap * sizeof(*nh));

		if (!nh)
			return false;
		q->heap = nh;
		q->cap = cap;
	}
	h = malloc(sizeof(*h) + len);
	if (!h)
		return false;
	h->when = v->release_ns;
	h->seq = q->seq++;
	h->copies = v->copies;
	h->len = len;
	h->meta = *m;
	memcpy(h->pkt, pkt, len);
	if (v->flip_bit >= 0)
		h->pkt[v->flip_bit / 8] ^= (uint8_t)(0x80u >> (v->flip_bit % 8));
	heap_push(q, h);
	if (q->heap[0] == h)
		nic_timer_start(&q->timer, h->when);
	return true;
}

int fault_apply(struct uroce_dev *d, enum fault_dir_id dir, const struct fault_meta *m,
		const uint8_t *pkt, size_t len, unsigned int *copies)
{
	struct fault_queue *q = &d->fault->q[dir];
	struct fault_verdict v;
	uint8_t buf[PKT_MAX];
	unsigned int dummy;
	uint64_t now;

	if (!copies)
		copies = &dummy;
	*copies = 1;
	if (!d->fault->active[dir] || len > PKT_MAX)
		return q->out(d, m, pkt, len);
	now = nic_now_ns(d);
	fault_decide(&q->dir, len, now, q->n, &v);
	*copies = v.copies;
	if (v.drop)
		return 0;
	if (v.release_ns > now) {
		if (hold(q, &v, m, pkt, len))
			return 0;
		q->dir.st.queue_dropped++;
		*copies = 0;
		return 0;
	}
	if (v.flip_bit >= 0) {
		memcpy(buf, pkt, len);
		buf[v.flip_bit / 8] ^= (uint8_t)(0x80u >> (v.flip_bit % 8));
		pkt = buf;
	}
	return emit(q, m, pkt, len, v.copies);
}

void fault_dev_status(struct uroce_dev *d, FILE *fp)
{
	static const char *const names[FAULT_NDIRS] = { "tx", "rx" };
	char spec[FAULT_SPEC_MAX + 64];
	int i;

	if (!d->fault)
		return;
	for (i = 0; i < FAULT_NDIRS; i++) {
		const struct fault_queue *q = &d->fault->q[i];
		const struct fault_stats *s = &q->dir.st;

		fprintf(fp, "fault %s spec=\"%s\" packets=%" PRIu64 " lost=%" PRIu64 " burst_lost=%" PRIu64
			    " duplicated=%" PRIu64 " corrupted=%" PRIu64 " reordered=%" PRIu64
			    " delayed=%" PRIu64 " rate_delayed=%" PRIu64 " rate_dropped=%" PRIu64
			    " queue_dropped=%" PRIu64 " held=%u held_max=%u\n",
			names[i], fault_spec_format(&q->dir.cfg, spec, sizeof(spec)), s->packets, s->lost,
			s->burst_lost, s->duplicated, s->corrupted, s->reordered, s->delayed, s->rate_delayed,
			s->rate_dropped, s->queue_dropped, q->n, q->held_max);
	}
}
