/*
 * transport_harness.c: the back-to-back wiring of two transport engines
 * for the transport tests (see transport_harness.h).
 */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "tests/transport_harness.h"

static int node_of(struct th_world *w, struct th_node *n)
{
	return n == &w->node[0] ? 0 : 1;
}

uint64_t th_rand(struct th_world *w)
{
	uint64_t x = w->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	w->rng = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* ---- callbacks ---- */

static struct th_world *world_of(void *ctx, struct th_node **n)
{
	*n = ctx;
	return (*n)->world;
}

static uint64_t cb_now(void *ctx)
{
	struct th_node *n;

	return world_of(ctx, &n)->now;
}

static enum xport_mem_status cb_mem(void *ctx, struct xport_qp *qp,
				    uint32_t pd, bool is_rkey, uint32_t key,
				    uint64_t addr, void *buf, uint32_t len,
				    unsigned int access, enum xport_mem_op op)
{
	struct th_node *n = ctx;
	struct th_mr *mr = NULL;

	(void)qp;
	(void)is_rkey;
	for (unsigned i = 0; i < n->nmr; i++)
		if (n->mr[i].key == key)
			mr = &n->mr[i];
	if (!mr)
		return XPORT_MEM_BAD_KEY;
	if (mr->pd != pd)
		return XPORT_MEM_BAD_PD;
	if (addr < mr->addr || addr - mr->addr > mr->len ||
	    len > mr->len - (addr - mr->addr))
		return XPORT_MEM_BOUNDS;
	if ((access & mr->access) != access)
		return XPORT_MEM_ACCESS;
	if (op == XPORT_MEM_READ) {
		memcpy(buf, mr->buf + (addr - mr->addr), len);
		n->mem_reads++;
	} else if (op == XPORT_MEM_WRITE) {
		memcpy(mr->buf + (addr - mr->addr), buf, len);
		n->mem_writes++;
	}
	return XPORT_MEM_OK;
}

static void log_pkt(struct th_world *w, int from, int to, const uint8_t *data,
		    size_t len, uint16_t sport)
{
	struct roce_l3 l3;
	struct roce_pkt p;
	struct th_pkt *e;
	int rc;

	memset(&l3, 0, sizeof(l3));
	l3.kind = roce_addr_is_v4mapped(w->node[from].gid.raw) ? ROCE_L3_IPV4 : ROCE_L3_IPV6;
	memcpy(l3.src, w->node[from].gid.raw, 16);
	memcpy(l3.dst, w->node[to].gid.raw, 16);
	l3.sport = sport;
	l3.dport = ROCE_UDP_PORT;
	rc = roce_parse_udp(data, len, &l3, &p);
	assert(rc == ROCE_OK);	/* the engine only sends valid packets */
	if (w->nlog == w->logcap) {
		w->logcap = w->logcap ? 2 * w->logcap : 256;
		w->log = realloc(w->log, w->logcap * sizeof(*w->log));
	}
	e = &w->log[w->nlog++];
	memset(e, 0, sizeof(*e));
	e->from = from;
	e->opcode = p.h.opcode;
	e->psn = p.h.psn;
	e->dqpn = p.h.dqpn;
	e->pad = p.h.pad;
	e->ackreq = p.h.ackreq;
	e->se = p.h.se;
	e->syndrome = p.h.aeth.syndrome;
	e->msn = p.h.aeth.msn;
	e->payload_len = p.payload_len;
	e->dma_len = p.h.reth.dma_len;
	e->ieth = p.h.ieth_rkey;
}

static void enqueue(struct th_world *w, int from, int to, uint16_t sport,
		    const void *pkt, size_t len)
{
	unsigned pos;

	if (w->qhead + w->qlen == w->qcap) {
		if (w->qhead) {
			memmove(w->q, w->q + w->qhead, w->qlen * sizeof(*w->q));
			w->qhead = 0;
		} else {
			w->qcap = w->qcap ? 2 * w->qcap : 1024;
			w->q = realloc(w->q, w->qcap * sizeof(*w->q));
		}
	}
	pos = w->qhead + w->qlen;
	w->q[pos].from = from;
	w->q[pos].to = to;
	w->q[pos].sport = sport;
	w->q[pos].len = (uint32_t)len;
	w->q[pos].data = malloc(len);
	memcpy(w->q[pos].data, pkt, len);
	w->qlen++;
	/* Reorder: swap the new packet with one up to 8 places earlier. */
	if (w->reorder_ppm && w->qlen > 1 &&
	    th_rand(w) % 10000 < w->reorder_ppm) {
		unsigned back = 1 + th_rand(w) % (w->qlen - 1 < 8 ? w->qlen - 1 : 8);
		struct th_wire_pkt t = w->q[pos];

		w->q[pos] = w->q[pos - back];
		w->q[pos - back] = t;
		w->reordered++;
	}
}

void th_wire_repeat(struct th_world *w, unsigned i, unsigned copies)
{
	assert(i < w->qlen);
	while (copies--) {
		struct th_wire_pkt p = w->q[w->qhead + i];

		enqueue(w, p.from, p.to, p.sport, p.data, p.len);
	}
}

/* Does a drop rule match the packet just logged (the nth sending of its
 * PSN by node FROM)? */
static bool drop_by_rule(struct th_world *w, int from)
{
	const struct th_pkt *last;
	unsigned seen = 0;

	if (!w->ndrop_rule || !w->log_on || w->drop_from != from)
		return false;
	last = &w->log[w->nlog - 1];
	for (unsigned i = 0; i < w->nlog; i++)
		seen += w->log[i].from == from && w->log[i].psn == last->psn;
	for (unsigned r = 0; r < w->ndrop_rule; r++)
		if (w->drop_rule[r].psn == last->psn && w->drop_rule[r].nth == seen)
			return true;
	return false;
}

static int cb_xmit(void *ctx, struct xport_qp *qp, const union ibv_gid *dgid,
		   uint16_t sport, const void *pkt, size_t len)
{
	struct th_node *n;
	struct th_world *w = world_of(ctx, &n);
	int from = node_of(w, n), to;

	(void)qp;
	if (w->xmit_errno)
		return w->xmit_errno;
	to = memcmp(dgid->raw, w->node[0].gid.raw, 16) == 0 ? 0 : 1;
	if (w->log_on)
		log_pkt(w, from, to, pkt, len, sport);
	if (w->drop_from == from && w->drop_next) {
		if (w->drop_skip) {
			w->drop_skip--;
		} else {
			w->drop_next--;
			w->dropped++;
			return 0;
		}
	}
	if (drop_by_rule(w, from) ||
	    (w->drop_ppm && th_rand(w) % 10000 < w->drop_ppm)) {
		w->dropped++;
		return 0;
	}
	enqueue(w, from, to, sport, pkt, len);
	if (w->dup_ppm && th_rand(w) % 10000 < w->dup_ppm) {
		enqueue(w, from, to, sport, pkt, len);
		w->duplicated++;
	}
	return 0;
}

static void cb_complete(void *ctx, struct xport_qp *qp,
			const struct xport_cqe *cqe)
{
	struct th_node *n = ctx;
	struct th_cqe_log *l = &n->cqes;

	(void)qp;
	if (!cqe->signaled)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = *cqe;
}

static void cb_timer(void *ctx, struct xport_qp *qp, uint64_t when)
{
	struct th_node *n = ctx;
	unsigned i, free_slot = TH_MAX_QP;

	for (i = 0; i < TH_MAX_QP; i++) {
		if (n->timer_qp[i] == qp) {
			n->timer_when[i] = when;
			return;
		}
		if (!n->timer_qp[i] && free_slot == TH_MAX_QP)
			free_slot = i;
	}
	assert(free_slot < TH_MAX_QP);
	n->timer_qp[free_slot] = qp;
	n->timer_when[free_slot] = when;
}

static void cb_qp_event(void *ctx, struct xport_qp *qp,
			enum ibv_event_type ev)
{
	struct th_node *n = ctx;

	n->events++;
	n->last_event = ev;
	n->last_event_qp = qp;
}

static void cb_schedule(void *ctx, struct xport_qp *qp)
{
	struct th_node *n = ctx;
	struct th_world *w = n->world;

	for (unsigned i = 0; i < w->nsched; i++)
		if (w->sched[i] == qp)
			return;
	assert(w->nsched < 2 * TH_MAX_QP);
	w->sched[w->nsched++] = qp;
}

static void cb_log(void *ctx, struct xport_qp *qp, int level, const char *msg)
{
	struct th_node *n = ctx;
	size_t len = strlen(msg);

	(void)qp;
	(void)level;
	if (n->loglen + len + 2 > sizeof(n->logtext))
		return;
	memcpy(n->logtext + n->loglen, msg, len);
	n->loglen += len;
	n->logtext[n->loglen++] = '\n';
	n->logtext[n->loglen] = 0;
}

static enum ibv_wc_status cb_local_op(void *ctx, struct xport_qp *qp, uint32_t pd,
				      const struct xport_send_wqe *wqe)
{
	struct th_node *n = ctx;

	n->local_ops++;
	return n->local_status;
}

static bool cb_invalidate(void *ctx, struct xport_qp *qp, uint32_t pd, uint32_t rkey)
{
	struct th_node *n = ctx;

	if (rkey != n->inv_rkey)
		return false;
	n->invalidations++;
	return true;
}

const struct xport_ops th_ops_for_tests = {
	.local_op = cb_local_op,
	.invalidate = cb_invalidate,
	.now_ns = cb_now,
	.mem = cb_mem,
	.xmit = cb_xmit,
	.complete = cb_complete,
	.timer_arm = cb_timer,
	.qp_event = cb_qp_event,
	.schedule = cb_schedule,
	.log = cb_log,
};

struct th_world *th_world_new(uint32_t port_mtu)
{
	struct th_world *w = calloc(1, sizeof(*w));

	w->now = 1000000;
	w->rng = 0x9E3779B97F4A7C15ull;
	w->drop_from = -1;
	w->log_on = true;
	for (int i = 0; i < 2; i++) {
		w->node[i].world = w;
		memset(&w->node[i].gid, 0, sizeof(w->node[i].gid));
		roce_addr_from_ipv4(w->node[i].gid.raw, 0x0A000001u + i);
		w->node[i].dev = xport_dev_new(&th_ops_for_tests, &w->node[i],
					       &w->node[i].gid, ROCE_UDP_PORT,
					       port_mtu);
		assert(w->node[i].dev);
	}
	return w;
}

void th_qp_destroy(struct th_world *w, int n, struct xport_qp *qp)
{
	xport_qp_destroy(qp); /* may take a timer slot to disarm its timer */
	for (unsigned j = 0; j < TH_MAX_QP; j++)
		if (w->node[n].timer_qp[j] == qp)
			w->node[n].timer_qp[j] = NULL;
}

void th_world_free(struct th_world *w)
{
	for (int i = 0; i < 2; i++) {
		struct th_node *n = &w->node[i];

		for (unsigned j = 0; j < TH_MAX_QP; j++)
			if (n->timer_qp[j])
				xport_qp_destroy(n->timer_qp[j]);
		xport_dev_free(n->dev);
		for (unsigned j = 0; j < n->nmr; j++)
			free(n->mr[j].buf);
		free(n->cqes.v);
	}
	for (unsigned i = 0; i < w->qlen; i++)
		free(w->q[w->qhead + i].data);
	free(w->q);
	free(w->log);
	free(w);
}

uint8_t *th_reg_mr(struct th_world *w, int n, uint32_t key, uint32_t pd,
		   uint64_t addr, uint32_t len, unsigned int access,
		   uint8_t fill)
{
	struct th_node *node = &w->node[n];
	struct th_mr *mr = &node->mr[node->nmr++];

	assert(node->nmr <= TH_MAX_MR);
	mr->key = key;
	mr->pd = pd;
	mr->addr = addr;
	mr->len = len;
	mr->access = access;
	mr->buf = malloc(len ? len : 1);
	memset(mr->buf, fill, len);
	return mr->buf;
}

struct xport_qp *th_qp(struct th_world *w, int n, enum ibv_qp_type type,
		       uint32_t qpn, uint32_t depth)
{
	struct xport_qp *qp = xport_qp_create(w->node[n].dev, type, qpn, 1,
					      depth, depth, false, NULL);

	assert(qp);
	/* Register it in the timer table so that th_world_free destroys it. */
	cb_timer(&w->node[n], qp, 0);
	return qp;
}

static void to_rts(struct xport_qp *qp, struct xport_qp *peer,
		   const union ibv_gid *peer_gid, enum ibv_mtu mtu,
		   uint32_t sq_psn, uint32_t rq_psn, uint8_t timeout,
		   uint8_t retry_cnt, uint8_t rnr_retry, uint8_t min_rnr_timer)
{
	struct xport_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.qkey = 0x11111111;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	rc = xport_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_QKEY |
				     IBV_QP_ACCESS_FLAGS);
	assert(rc == 0);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = xport_qp_num(peer);
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = min_rnr_timer;
	a.dgid = *peer_gid;
	rc = xport_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				     IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER | IBV_QP_AV);
	assert(rc == 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 16;
	rc = xport_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	assert(rc == 0);
}

void th_connect(struct th_world *w, struct xport_qp *a, struct xport_qp *b,
		enum ibv_mtu mtu, uint32_t psn_a, uint32_t psn_b,
		uint8_t timeout, uint8_t retry_cnt, uint8_t rnr_retry,
		uint8_t min_rnr_timer)
{
	to_rts(a, b, &w->node[1].gid, mtu, psn_a, psn_b, timeout, retry_cnt,
	       rnr_retry, min_rnr_timer);
	to_rts(b, a, &w->node[0].gid, mtu, psn_b, psn_a, timeout, retry_cnt,
	       rnr_retry, min_rnr_timer);
}

unsigned long th_run(struct th_world *w, unsigned long max_steps)
{
	unsigned long steps = 0;

	while (steps < max_steps) {
		if (w->nsched) {
			/* a QP's next turn comes before the next delivery */
			struct xport_qp *qp = w->sched[0];

			memmove(w->sched, w->sched + 1,
				--w->nsched * sizeof(w->sched[0]));
			w->sched_runs++;
			xport_run(qp);
			continue;
		}
		if (w->qlen) {
			struct th_wire_pkt p = w->q[w->qhead];
			int from = p.from;

			w->qhead++;
			w->qlen--;
			xport_input(w->node[p.to].dev, p.data, p.len,
				    &w->node[from].gid, &w->node[p.to].gid,
				    p.sport, ROCE_UDP_PORT);
			w->delivered++;
			free(p.data);
			steps++;
			continue;
		}
		/* Idle wire: jump to the earliest timer. */
		struct th_node *tn = NULL;
		unsigned ti = 0;
		uint64_t best = 0;

		for (int i = 0; i < 2; i++)
			for (unsigned j = 0; j < TH_MAX_QP; j++) {
				uint64_t t = w->node[i].timer_when[j];

				if (t && (!best || t < best)) {
					best = t;
					tn = &w->node[i];
					ti = j;
				}
			}
		if (!tn)
			break;
		if (best > w->now)
			w->now = best;
		tn->timer_when[ti] = 0;
		xport_timer_expired(tn->timer_qp[ti]);
		steps++;
	}
	return steps;
}

int th_post_send(struct xport_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
		 uint64_t laddr, uint32_t len, uint32_t lkey, uint64_t raddr,
		 uint32_t rkey, uint32_t imm_be, unsigned int flags)
{
	struct xport_send_wqe wqe;

	memset(&wqe, 0, sizeof(wqe));
	wqe.wr_id = wr_id;
	wqe.wr_index = (uint32_t)wr_id;
	wqe.opcode = op;
	wqe.send_flags = flags | IBV_SEND_SIGNALED;
	wqe.imm_data = imm_be;
	wqe.remote_addr = raddr;
	wqe.rkey = rkey;
	wqe.num_sge = 1;
	wqe.sg_list[0].addr = laddr;
	wqe.sg_list[0].length = len;
	wqe.sg_list[0].lkey = lkey;
	return xport_post_send(qp, &wqe);
}

int th_post_recv(struct xport_qp *qp, uint64_t wr_id, uint64_t laddr,
		 uint32_t len, uint32_t lkey)
{
	struct xport_recv_wqe wqe;

	memset(&wqe, 0, sizeof(wqe));
	wqe.wr_id = wr_id;
	wqe.wr_index = (uint32_t)wr_id;
	wqe.num_sge = 1;
	wqe.sg_list[0].addr = laddr;
	wqe.sg_list[0].length = len;
	wqe.sg_list[0].lkey = lkey;
	return xport_post_recv(qp, &wqe);
}
