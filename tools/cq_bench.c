/*
 * cq_bench.c - the cost of polling one completion, three ways, on the same
 * CQs (scripts/bench-cq, docs/performance.md "CQ polling"):
 *   classic  ibv_poll_cq(3) in batches of 16 struct ibv_wc
 *   iter     ibv_start_poll / ibv_next_poll / ibv_end_poll (ibv_create_cq_ex(3)),
 *            16 completions per start..end, reading each through ibv_wc_read_*
 *   dv       urocedv_poll_cq_wc (urocedv(3)), 16 custom WCs per call
 * Each reads wr_id, status, opcode, byte_len and qp_num of every completion,
 * and with --ts also the raw completion timestamp (classic cannot: ibv_wc
 * has none). The CQs are real uroce CQs filled by the real daemon: a round
 * posts N receives on QP B, N 64-byte RC SENDs from QP A, waits for A's N
 * send completions (the daemon writes B's receive CQE before the ACK that
 * completes A's send), then drains B's CQ with the design under test,
 * timed with the TSC. CQ fields: BYTE_LEN | QP_NUM, plus
 * COMPLETION_TIMESTAMP with --ts.
 *
 * Each design drains in its own function bench_drain_*, so that
 * valgrind --tool=callgrind --toggle-collect=bench_drain_* counts the
 * polling alone (instructions, and with --cache-sim=yes the data accesses
 * and D1 misses).
 *
 *   cq_bench [--dev NAME] [--n N] [--rounds R] [--design classic|iter|dv] [--ts]
 * prints one line: design ts=0|1 cqes=<total> cycles_per_cqe_median=<x> cycles_per_cqe_min=<x>
 * Exits 1 (message on stderr) when a completion is not what was sent: each
 * must have the next wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, 64 bytes, B's
 * qp_num, and a timestamp not before the previous one (tests/traffic_dv_wc.sh
 * relies on this).
 */
#include "config.h"

#include <errno.h>
#include <infiniband/urocedv.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#define BATCH 16
#define MSG 64
#define WINDOW 128

/* The custom WCs of the two field sets, declared by the layout rule of urocedv.h. */
struct wc_len_qpn {
	struct urocedv_wc h;
	uint32_t byte_len, qp_num;
};
struct wc_len_qpn_ts {
	struct urocedv_wc h;
	uint64_t ts;
	uint32_t byte_len, qp_num;
};

/* What a drain saw: sums checked against what was sent. */
struct seen {
	uint64_t next_wr_id, len_sum, ts_last;
	uint32_t bad, backwards, empty;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "cq_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static inline void see(struct seen *s, uint64_t wr_id, int status, int opcode, uint32_t len,
		       uint32_t qpn, uint32_t want_qpn)
{
	s->len_sum += len;
	s->bad += (wr_id != s->next_wr_id++) | (status != IBV_WC_SUCCESS) | (opcode != IBV_WC_RECV) |
		  (qpn != want_qpn);
}

static inline void see_ts(struct seen *s, uint64_t ts)
{
	s->backwards += ts < s->ts_last;
	s->ts_last = ts;
}

__attribute__((noinline)) void bench_drain_classic(struct ibv_cq *cq, unsigned int n,
						   uint32_t qpn, struct seen *s)
{
	struct ibv_wc wc[BATCH];

	for (unsigned int got = 0; got < n;) {
		int k = ibv_poll_cq(cq, n - got < BATCH ? (int)(n - got) : BATCH, wc);

		if (k <= 0) {
			s->empty++;
			continue;
		}
		for (int i = 0; i < k; i++)
			see(s, wc[i].wr_id, wc[i].status, wc[i].opcode, wc[i].byte_len, wc[i].qp_num, qpn);
		got += (unsigned int)k;
	}
}

/* The iterator, 16 completions per start_poll .. end_poll. */
static inline __attribute__((always_inline)) void drain_iter(struct ibv_cq_ex *cq, unsigned int n,
							     uint32_t qpn, struct seen *s, int ts)
{
	struct ibv_poll_cq_attr attr = { 0 };

	for (unsigned int got = 0; got < n;) {
		unsigned int k = 0;

		if (ibv_start_poll(cq, &attr)) {
			s->empty++;
			continue;
		}
		do {
			see(s, cq->wr_id, cq->status, ibv_wc_read_opcode(cq), ibv_wc_read_byte_len(cq),
			    ibv_wc_read_qp_num(cq), qpn);
			if (ts)
				see_ts(s, ibv_wc_read_completion_ts(cq));
			got++;
			k++;
		} while (got < n && k < BATCH && ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
}

__attribute__((noinline)) void bench_drain_iter(struct ibv_cq_ex *cq, unsigned int n,
						uint32_t qpn, struct seen *s)
{
	drain_iter(cq, n, qpn, s, 0);
}

__attribute__((noinline)) void bench_drain_iter_ts(struct ibv_cq_ex *cq, unsigned int n,
						   uint32_t qpn, struct seen *s)
{
	drain_iter(cq, n, qpn, s, 1);
}

__attribute__((noinline)) void bench_drain_dv(struct ibv_cq_ex *cq, unsigned int n,
					      uint32_t qpn, struct seen *s)
{
	struct wc_len_qpn wc[BATCH];

	for (unsigned int got = 0; got < n;) {
		int k = urocedv_poll_cq_wc(cq, n - got < BATCH ? (int)(n - got) : BATCH, wc);

		if (k <= 0) {
			s->empty++;
			continue;
		}
		for (int i = 0; i < k; i++)
			see(s, wc[i].h.wr_id, wc[i].h.status, wc[i].h.opcode, wc[i].byte_len,
			    wc[i].qp_num, qpn);
		got += (unsigned int)k;
	}
}

__attribute__((noinline)) void bench_drain_dv_ts(struct ibv_cq_ex *cq, unsigned int n,
						 uint32_t qpn, struct seen *s)
{
	struct wc_len_qpn_ts wc[BATCH];

	for (unsigned int got = 0; got < n;) {
		int k = urocedv_poll_cq_wc(cq, n - got < BATCH ? (int)(n - got) : BATCH, wc);

		if (k <= 0) {
			s->empty++;
			continue;
		}
		for (int i = 0; i < k; i++) {
			see(s, wc[i].h.wr_id, wc[i].h.status, wc[i].h.opcode, wc[i].byte_len,
			    wc[i].qp_num, qpn);
			see_ts(s, wc[i].ts);
		}
		got += (unsigned int)k;
	}
}

/* RC QP to INIT, RTR (towards dest_qpn at gid, MTU 1024), RTS. */
static void rc_connect(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *gid)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	int err;

	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS)))
		die("modify_qp INIT", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)))
		die("modify_qp RTR", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if ((err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_MAX_QP_RD_ATOMIC)))
		die("modify_qp RTS", err);
}

struct bench {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *scq;
	struct ibv_cq_ex *rcq;
	struct ibv_qp *a, *b;
	char *buf;
	unsigned int n;
};

/* Fills b->rcq with n receive CQEs (wr_ids 0..n-1, MSG bytes each). */
static void fill(struct bench *b)
{
	struct ibv_sge rs = { (uintptr_t)b->buf, MSG, b->mr->lkey };
	struct ibv_sge ss = { (uintptr_t)b->buf + MSG, MSG, b->mr->lkey };
	unsigned int posted = 0, done = 0;
	struct ibv_wc wc[BATCH];

	for (unsigned int i = 0; i < b->n; i++) {
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &rs, .num_sge = 1 }, *bad;
		int err = ibv_post_recv(b->b, &wr, &bad);

		if (err)
			die("post_recv", err);
	}
	while (done < b->n) {
		while (posted < b->n && posted - done < WINDOW) {
			struct ibv_send_wr wr = { .wr_id = posted, .sg_list = &ss, .num_sge = 1,
						  .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED }, *bad;
			int err = ibv_post_send(b->a, &wr, &bad);

			if (err)
				die("post_send", err);
			posted++;
		}
		int k = ibv_poll_cq(b->scq, BATCH, wc);
		if (k < 0)
			die("poll send CQ", EIO);
		for (int i = 0; i < k; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "cq_bench: send: %s\n", ibv_wc_status_str(wc[i].status));
				exit(1);
			}
		done += (unsigned int)k;
	}
}

static void setup(struct bench *b, const char *dev, int ts)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct urocedv_wc_layout l;
	union ibv_gid gid;
	int err;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			b->ctx = ibv_open_device(list[i]);
	if (!b->ctx) {
		fprintf(stderr, "cq_bench: cannot open %s\n", dev);
		exit(1);
	}
	if (!urocedv_is_supported(b->ctx->device))
		die(dev, EOPNOTSUPP);
	ibv_free_device_list(list);
	if ((err = ibv_query_gid(b->ctx, 1, 0, &gid)))
		die("query_gid", err);
	b->buf = calloc(1, 2 * MSG);
	b->pd = ibv_alloc_pd(b->ctx);
	b->mr = b->pd ? ibv_reg_mr(b->pd, b->buf, 2 * MSG, IBV_ACCESS_LOCAL_WRITE) : NULL;
	b->scq = ibv_create_cq(b->ctx, WINDOW * 2, NULL, NULL, 0);
	struct ibv_cq_init_attr_ex ca = {
		.cqe = b->n,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
			    (ts ? IBV_WC_EX_WITH_COMPLETION_TIMESTAMP : 0),
	};
	b->rcq = urocedv_create_cq_wc(b->ctx, &ca, &l);
	if (!b->mr || !b->scq || !b->rcq)
		die("pd/mr/cq", errno);
	/* the layout rule gives exactly the structs declared above */
	if (ts ? (l.stride != sizeof(struct wc_len_qpn_ts) ||
		  l.offset[UROCEDV_WC_COMPLETION_TS] != offsetof(struct wc_len_qpn_ts, ts) ||
		  l.offset[UROCEDV_WC_BYTE_LEN] != offsetof(struct wc_len_qpn_ts, byte_len) ||
		  l.offset[UROCEDV_WC_QP_NUM] != offsetof(struct wc_len_qpn_ts, qp_num))
	       : (l.stride != sizeof(struct wc_len_qpn) ||
		  l.offset[UROCEDV_WC_BYTE_LEN] != offsetof(struct wc_len_qpn, byte_len) ||
		  l.offset[UROCEDV_WC_QP_NUM] != offsetof(struct wc_len_qpn, qp_num))) {
		fprintf(stderr, "cq_bench: layout stride %u differs from the declared WC\n", l.stride);
		exit(1);
	}
	struct ibv_qp_init_attr qa = { .send_cq = b->scq, .recv_cq = b->scq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = WINDOW, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	b->a = ibv_create_qp(b->pd, &qa);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(b->rcq);
	qa.cap.max_send_wr = 1;
	qa.cap.max_recv_wr = b->n;
	b->b = ibv_create_qp(b->pd, &qa);
	if (!b->a || !b->b)
		die("create_qp", errno);
	rc_connect(b->a, b->b->qp_num, &gid);
	rc_connect(b->b, b->a->qp_num, &gid);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, c = *(const double *)y;
	return (a > c) - (a < c);
}

int main(int argc, char **argv)
{
	const char *dev = "uroce0", *design = "classic";
	unsigned int rounds = 5;
	struct bench b = { .n = 1024 };
	int ts = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dev") && i + 1 < argc)
			dev = argv[++i];
		else if (!strcmp(argv[i], "--n") && i + 1 < argc)
			b.n = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--design") && i + 1 < argc)
			design = argv[++i];
		else if (!strcmp(argv[i], "--ts"))
			ts = 1;
		else {
			fprintf(stderr, "usage: cq_bench [--dev NAME] [--n N] [--rounds R] "
					"[--design classic|iter|dv] [--ts]\n");
			return 2;
		}
	}
	if (b.n < 1 || b.n > 4096 || rounds < 1 || rounds > 1000) {
		fprintf(stderr, "cq_bench: --n 1..4096, --rounds 1..1000\n");
		return 2;
	}
	setup(&b, dev, ts);
	double *cyc = calloc(rounds, sizeof(double));
	for (unsigned int r = 0; r < rounds; r++) {
		struct seen s = { 0 };
		uint32_t qpn = b.b->qp_num;
		struct ibv_cq *cq = ibv_cq_ex_to_cq(b.rcq);
		uint64_t t0;

		fill(&b);
		t0 = __rdtsc();
		if (!strcmp(design, "classic"))
			bench_drain_classic(cq, b.n, qpn, &s);
		else if (!strcmp(design, "iter"))
			(ts ? bench_drain_iter_ts : bench_drain_iter)(b.rcq, b.n, qpn, &s);
		else if (!strcmp(design, "dv"))
			(ts ? bench_drain_dv_ts : bench_drain_dv)(b.rcq, b.n, qpn, &s);
		else {
			fprintf(stderr, "cq_bench: unknown design %s\n", design);
			return 2;
		}
		cyc[r] = (double)(__rdtsc() - t0) / b.n;
		if (s.bad || s.backwards || s.next_wr_id != b.n || s.len_sum != (uint64_t)b.n * MSG) {
			fprintf(stderr, "cq_bench: %s round %u: %u bad (wr_id out of order, status, "
					"opcode or qp_num), %u timestamps backwards, %llu completions, "
					"%llu bytes\n", design, r, s.bad, s.backwards,
				(unsigned long long)s.next_wr_id, (unsigned long long)s.len_sum);
			return 1;
		}
		if (s.empty)
			fprintf(stderr, "cq_bench: round %u: %u empty polls (daemon still writing)\n",
				r, s.empty);
	}
	qsort(cyc, rounds, sizeof(*cyc), cmp_double);
	printf("%s ts=%d cqes=%llu cycles_per_cqe_median=%.1f cycles_per_cqe_min=%.1f\n", design, ts,
	       (unsigned long long)rounds * b.n, cyc[rounds / 2], cyc[0]);
	return 0;
}
