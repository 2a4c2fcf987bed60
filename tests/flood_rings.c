/*
 * flood_rings.c - a hostile client of uroce0 that floods the doorbell
 * service with lies about its own rings (run by traffic_flood_rings.sh and
 * scripts/bench-flood --rings).
 *
 * Usage: flood_rings SECONDS [NQP [rc|quiet|raw|mixed|empty]]
 * Opens uroce0 and makes NQP (default 16) RC QPs, each connected to itself
 * (raw: raw packet QPs in RTS),
 * with the device's largest send and receive queues (max_qp_wr) on one CQ
 * that is never polled. Then, for SECONDS, QP after QP: moves its ring's
 * sq_pi and rq_pi a whole queue depth ahead (over slots it never wrote) and
 * rings the doorbell (quiet: only while the daemon has not promised to
 * look at the ring unasked, no_doorbell 0, as the provider does), as a
 * client may do to the memory it owns
 * (include/uroce/abi_ring.h). Each lie costs the daemon a queue's worth of
 * WQEs to read and refuse or flush; every tenth moves the indices 2^31 ahead
 * instead (the "beyond the depth" refusal). mixed: as rc, and between two
 * rounds of lies one honest 8-byte RDMA WRITE on another QP (connected to
 * itself, at most 64 in flight), whose completions must all succeed.
 * empty: no lie at all, the doorbell rung for nothing, as fast as it goes
 * (each ring costs the daemon a look at every ring and CQ of the client).
 * Prints "moved the indices N times on Q QPs in S s" (empty: "rang the
 * doorbell N times for nothing in S s"; mixed: then
 * "honest WRITEs: N completed, 0 failed") and exits 0; 1 when the device
 * cannot be opened or the QPs made (a message on stderr).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <infiniband/verbs.h>

#include "provider/uroce.h"
#include "traffic_verbs.h"

#define NQP_MAX 64

/* The honest QP of mode mixed: its CQ, MR and WRITEs in flight. */
struct honest {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint64_t buf[8];
	unsigned int in_flight;
	unsigned long long done, failed;
};

/* A raw packet QP to INIT (port 1), RTR and RTS; 0 or ibv_modify_qp's errno. */
static int raw_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT);

	a.qp_state = IBV_QPS_RTR;
	if (!err)
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	if (!err)
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	return err;
}

/* Makes H's QP (connected to itself) on PD with its own CQ; 0 or 1. */
static int honest_open(struct honest *h, struct ibv_context *ctx, struct ibv_pd *pd,
		       const union ibv_gid *gid)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	h->cq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	h->mr = ibv_reg_mr(pd, h->buf, sizeof(h->buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	a.send_cq = a.recv_cq = h->cq;
	h->qp = h->cq && h->mr ? ibv_create_qp(pd, &a) : NULL;
	if (!h->qp || tv_rc_connect(h->qp, h->qp->qp_num, gid, IBV_MTU_1024, 14)) {
		fprintf(stderr, "flood_rings: the honest QP\n");
		return 1;
	}
	return 0;
}

/* Reaps H's completions and posts one more WRITE if fewer than 64 fly. */
static void honest_step(struct honest *h)
{
	struct ibv_sge sge = { .addr = (uintptr_t)h->buf, .length = 8, .lkey = h->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)(h->buf + 4), .rkey = h->mr->rkey },
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc[16];
	int i, n = ibv_poll_cq(h->cq, 16, wc);

	for (i = 0; i < n; i++) {
		h->in_flight--;
		if (wc[i].status == IBV_WC_SUCCESS)
			h->done++;
		else
			h->failed++;
	}
	if (h->in_flight < 64 && !ibv_post_send(h->qp, &wr, &bad))
		h->in_flight++;
}

/* Makes NQP QPs of TYPE on PD and CQ with queues of the device's largest
 * depth, connected to themselves (raw: in RTS); 0 or 1. */
static int make_qps(struct ibv_qp **qp, int nqp, bool raw, struct ibv_pd *pd, struct ibv_cq *cq,
		    const struct ibv_device_attr *da, const union ibv_gid *gid)
{
	for (int i = 0; i < nqp; i++) {
		struct ibv_qp_init_attr a = {
			.send_cq = cq,
			.recv_cq = cq,
			.cap = { .max_send_wr = (uint32_t)da->max_qp_wr,
				 .max_recv_wr = (uint32_t)da->max_qp_wr,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = raw ? IBV_QPT_RAW_PACKET : IBV_QPT_RC,
		};
		int err;

		qp[i] = ibv_create_qp(pd, &a);
		if (!qp[i]) {
			perror("flood_rings: ibv_create_qp");
			return 1;
		}
		err = raw ? raw_ready(qp[i]) : tv_rc_connect(qp[i], qp[i]->qp_num, gid, IBV_MTU_1024, 14);
		if (err) {
			fprintf(stderr, "flood_rings: connecting QP %d: %s\n", i, strerror(err));
			return 1;
		}
	}
	return 0;
}

/* One lie on QP Q: its indices a queue depth ahead, or 2^31 when FAR;
 * the doorbell rung unless QUIET and the daemon promised to look. */
static void lie(struct ibv_context *ctx, struct ibv_qp *ibqp, bool far, bool quiet)
{
	struct uroce_qp *q = to_uqp(ibqp);
	struct uroce_qp_ring_hdr *h = q->ring;

	q->sq_head += far ? 0x80000000u : q->cap.max_send_wr;
	q->rq_head += far ? 0x80000000u : q->cap.max_recv_wr;
	__atomic_store_n(&h->sq_pi, q->sq_head, __ATOMIC_RELEASE);
	__atomic_store_n(&h->rq_pi, q->rq_head, __ATOMIC_RELEASE);
	if (!quiet || !__atomic_load_n(&h->no_doorbell, __ATOMIC_ACQUIRE))
		eventfd_write(to_uctx(ctx)->doorbell, 1);
}

int main(int argc, char **argv)
{
	struct ibv_qp *qp[NQP_MAX];
	struct ibv_device_attr da;
	struct ibv_context *ctx;
	struct honest h = { 0 };
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid;
	unsigned long long moves = 0;
	const char *mode;
	int secs, nqp, i;
	uint64_t end;

	mode = argc == 4 ? argv[3] : "rc";
	if (argc < 2 || argc > 4 ||
	    (strcmp(mode, "rc") && strcmp(mode, "quiet") && strcmp(mode, "raw") && strcmp(mode, "mixed") &&
	     strcmp(mode, "empty"))) {
		fprintf(stderr, "usage: flood_rings SECONDS [NQP [rc|quiet|raw|mixed|empty]]\n");
		return 2;
	}
	secs = atoi(argv[1]);
	nqp = argc >= 3 ? atoi(argv[2]) : 16;
	if (secs < 1 || nqp < 1 || nqp > NQP_MAX) {
		fprintf(stderr, "flood_rings: SECONDS >= 1, NQP 1..%d\n", NQP_MAX);
		return 2;
	}
	ctx = tv_open("uroce0");
	if (!ctx)
		return 1;
	if (ibv_query_device(ctx, &da) || ibv_query_gid(ctx, 1, 0, &gid)) {
		perror("flood_rings: ibv_query_device / ibv_query_gid");
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, da.max_cqe, NULL, NULL, 0) : NULL;
	if (!cq) {
		perror("flood_rings: ibv_alloc_pd / ibv_create_cq");
		return 1;
	}
	if (make_qps(qp, nqp, !strcmp(mode, "raw"), pd, cq, &da, &gid) ||
	    (!strcmp(mode, "mixed") && honest_open(&h, ctx, pd, &gid)))
		return 1;
	end = tv_now_ms() + (uint64_t)secs * 1000;
	while (tv_now_ms() < end) {
		for (i = 0; i < nqp; i++, moves++) {
			if (!strcmp(mode, "empty"))
				eventfd_write(to_uctx(ctx)->doorbell, 1);
			else
				lie(ctx, qp[i], moves % 10 == 9, !strcmp(mode, "quiet"));
		}
		if (h.qp)
			honest_step(&h);
	}
	if (!strcmp(mode, "empty"))
		printf("rang the doorbell %llu times for nothing in %d s\n", moves, secs);
	else
		printf("moved the indices %llu times on %d QPs in %d s\n", moves, nqp, secs);
	if (h.qp)
		printf("honest WRITEs: %llu completed, %llu failed\n", h.done, h.failed);
	fflush(stdout);
	/* everything freed, so that LeakSanitizer (make check-asan) has
	 * nothing to report */
	for (i = 0; i < nqp; i++)
		ibv_destroy_qp(qp[i]);
	if (h.qp) {
		ibv_destroy_qp(h.qp);
		ibv_dereg_mr(h.mr);
		ibv_destroy_cq(h.cq);
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
