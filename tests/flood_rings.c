/*
 * flood_rings.c - a hostile client of uroce0 that floods the doorbell
 * service with lies about its own rings (run by traffic_flood_rings.sh and
 * scripts/bench-flood --rings).
 *
 * Usage: flood_rings SECONDS [NQP [rc|quiet|raw]]
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
 * instead (the "beyond the depth" refusal).
 * Prints "moved the indices N times on Q QPs in S s" and exits 0; 1 when the device
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

int main(int argc, char **argv)
{
	struct ibv_qp *qp[NQP_MAX];
	struct ibv_device_attr da;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid;
	unsigned long long moves = 0; /* index moves */
	uint64_t end;
	int secs, nqp, i, err;
	const char *mode;
	bool raw, quiet;

	mode = argc == 4 ? argv[3] : "rc";
	if (argc < 2 || argc > 4 || (strcmp(mode, "rc") && strcmp(mode, "quiet") && strcmp(mode, "raw"))) {
		fprintf(stderr, "usage: flood_rings SECONDS [NQP [rc|quiet|raw]]\n");
		return 2;
	}
	secs = atoi(argv[1]);
	nqp = argc >= 3 ? atoi(argv[2]) : 16;
	raw = !strcmp(mode, "raw");
	quiet = !strcmp(mode, "quiet");
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
	for (i = 0; i < nqp; i++) {
		struct ibv_qp_init_attr a = {
			.send_cq = cq,
			.recv_cq = cq,
			.cap = { .max_send_wr = (uint32_t)da.max_qp_wr,
				 .max_recv_wr = (uint32_t)da.max_qp_wr,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = raw ? IBV_QPT_RAW_PACKET : IBV_QPT_RC,
		};

		qp[i] = ibv_create_qp(pd, &a);
		if (!qp[i]) {
			perror("flood_rings: ibv_create_qp");
			return 1;
		}
		err = raw ? raw_ready(qp[i]) : tv_rc_connect(qp[i], qp[i]->qp_num, &gid, IBV_MTU_1024, 14);
		if (err) {
			fprintf(stderr, "flood_rings: connecting QP %d: %s\n", i, strerror(err));
			return 1;
		}
	}
	end = tv_now_ms() + (uint64_t)secs * 1000;
	while (tv_now_ms() < end) {
		for (i = 0; i < nqp; i++) {
			struct uroce_qp *q = to_uqp(qp[i]);
			struct uroce_qp_ring_hdr *h = q->ring;
			uint32_t ahead = moves % 10 == 9 ? 0x80000000u : 0;

			q->sq_head += ahead ? ahead : q->cap.max_send_wr;
			q->rq_head += ahead ? ahead : q->cap.max_recv_wr;
			__atomic_store_n(&h->sq_pi, q->sq_head, __ATOMIC_RELEASE);
			__atomic_store_n(&h->rq_pi, q->rq_head, __ATOMIC_RELEASE);
			if (!quiet || !__atomic_load_n(&h->no_doorbell, __ATOMIC_ACQUIRE))
				eventfd_write(to_uctx(ctx)->doorbell, 1);
			moves++;
		}
	}
	printf("moved the indices %llu times on %d QPs in %d s\n", moves, nqp, secs);
	fflush(stdout);
	return 0;
}
