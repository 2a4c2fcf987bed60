/*
 * traffic_fatal.c - what a client sees when its daemon dies, stops or
 * restarts (run by traffic_fatal.sh inside `uroce run`; docs/provider.md,
 * "When the daemon goes away").
 *
 * Usage: traffic_fatal kill | stop | peer
 * Each mode prints "ready" when set up, then waits for one line on stdin:
 * the script has killed, stopped or restarted a daemon meanwhile.
 *
 * kill: on uroce0, RC QP B with NRECV receives posted (wr_id 1000 + i) and
 *   RC QP A with NSEND sends posted towards a QPN that does not exist (they
 *   stay outstanding, retried; every other one unsignalled). After the
 *   daemon's SIGKILL, busy polling alone (no event read first) must return
 *   exactly NRECV IBV_WC_WR_FLUSH_ERR on B's CQ and NSEND on A's, in posting
 *   order with their wr_ids and QPNs, vendor_err 0xf9, then nothing. Then
 *   ibv_get_async_event returns IBV_EVENT_DEVICE_FATAL once and fails the
 *   second time; ibv_alloc_pd, ibv_modify_qp, ibv_query_port, ibv_reg_mr,
 *   ibv_post_send and ibv_post_recv fail with EIO; destroys return 0.
 * stop: the daemon is SIGSTOPped: ibv_alloc_pd and ibv_modify_qp fail with
 *   ETIMEDOUT after UROCE_CTL_TIMEOUT_MS (1000 here: within 900..3000 ms);
 *   after a second line (the daemon continued), ibv_alloc_pd works again (the
 *   late replies are discarded).
 * peer: RC QP A on uroce0 connected to B on uroce1 (ACK timeout 10, retry
 *   7); uroce1's daemon is killed and started again, and a new context on it
 *   creates a QP (the restarted daemon hands out QPNs from the start again,
 *   so it gets B's QPN) and leaves it in INIT. A's RDMA WRITE must end with
 *   IBV_WC_RETRY_EXC_ERR (the peer drops packets for a QP in INIT, as for
 *   a QPN that does not exist), not with a NAK.
 * Exit 0 iff every check holds; each failure is one FAIL line.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traffic_verbs.h"

#define NRECV 100
#define NSEND 10
#define WAIT_MS 10000

static int fails;

static void check(int ok, const char *what, long got, long want)
{
	if (!ok) {
		printf("FAIL: %s: got %ld, want %ld\n", what, got, want);
		fails++;
	} else {
		printf("ok: %s = %ld\n", what, got);
	}
}

static void wait_line(void)
{
	char line[16];

	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin)) {
		printf("FAIL: no go line on stdin\n");
		exit(1);
	}
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = 16, .max_recv_wr = 128,
					       .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (!qp) {
		perror("ibv_create_qp");
		exit(1);
	}
	return qp;
}

/* Busy-polls cq until WAIT_MS pass without a completion; checks flush order. */
static void expect_flushes(struct ibv_cq *cq, struct ibv_qp *qp, int n, uint64_t wr0, const char *what)
{
	struct ibv_wc wc;
	int got = 0, bad = 0;

	while (tv_poll_one(cq, got < n ? WAIT_MS : 200, &wc) == 0) {
		if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != wr0 + (uint64_t)got ||
		    wc.qp_num != qp->qp_num || wc.vendor_err != 0xf9) {
			printf("  %s: completion %d: status %d wr_id %llu qp 0x%x vendor_err 0x%x\n", what,
			       got, wc.status, (unsigned long long)wc.wr_id, wc.qp_num, wc.vendor_err);
			bad++;
		}
		got++;
	}
	check(got == n, what, got, n);
	check(bad == 0, "  of which not WR_FLUSH_ERR in order", bad, 0);
}

static void mode_kill(struct ibv_context *ctx)
{
	static char buf[4096];
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_cq *acq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_cq *bcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	struct ibv_port_attr pa;
	struct ibv_async_event ev;
	struct ibv_qp *a, *b;
	union ibv_gid gid;
	struct ibv_sge sge;
	struct ibv_send_wr swr = { 0 }, *sbad;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	int rc;

	if (!mr || !acq || !bcq || ibv_query_gid(ctx, 1, 0, &gid)) {
		printf("FAIL: set-up\n");
		exit(1);
	}
	sge = (struct ibv_sge){ (uintptr_t)buf, 64, mr->lkey };
	a = rc_qp(pd, acq);
	b = rc_qp(pd, bcq);
	/* A sends to a QPN nobody has: no ACK ever comes, the sends stay outstanding */
	if (tv_rc_connect(a, 0xabcde, &gid, IBV_MTU_1024, 20) || tv_rc_connect(b, a->qp_num, &gid, IBV_MTU_1024, 14)) {
		printf("FAIL: connect\n");
		exit(1);
	}
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	for (int i = 0; i < NRECV; i++) {
		rwr.wr_id = 1000 + (uint64_t)i;
		if ((rc = ibv_post_recv(b, &rwr, &rbad)))
			exit(printf("FAIL: post_recv %d\n", rc) ? 1 : 1);
	}
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	for (int i = 0; i < NSEND; i++) {
		swr.wr_id = 1 + (uint64_t)i;
		swr.send_flags = i % 2 ? 0 : IBV_SEND_SIGNALED;
		if ((rc = ibv_post_send(a, &swr, &sbad)))
			exit(printf("FAIL: post_send %d\n", rc) ? 1 : 1);
	}
	wait_line();
	uint64_t t0 = tv_now_ms();
	expect_flushes(bcq, b, NRECV, 1000, "receive WR_FLUSH_ERR completions");
	expect_flushes(acq, a, NSEND, 1, "send WR_FLUSH_ERR completions");
	printf("flushes seen within %llu ms of the kill (plus 200 ms of quiet per CQ)\n",
	       (unsigned long long)(tv_now_ms() - t0));
	rc = ibv_get_async_event(ctx, &ev);
	check(rc == 0 && ev.event_type == IBV_EVENT_DEVICE_FATAL, "first async event (IBV_EVENT_DEVICE_FATAL=8)",
	      rc ? -1 : ev.event_type, IBV_EVENT_DEVICE_FATAL);
	if (rc == 0)
		ibv_ack_async_event(&ev);
	errno = 0;
	rc = ibv_get_async_event(ctx, &ev) == -1 ? errno : 0;
	check(rc == EIO, "second ibv_get_async_event errno (EIO)", rc, EIO);
	errno = 0;
	rc = ibv_alloc_pd(ctx) ? 0 : errno;
	check(rc == EIO, "ibv_alloc_pd errno", rc, EIO);
	errno = 0;
	rc = ibv_reg_mr(pd, buf, 64, 0) ? 0 : errno;
	check(rc == EIO, "ibv_reg_mr errno", rc, EIO);
	rc = ibv_modify_qp(a, &qa, IBV_QP_STATE);
	check(rc == EIO, "ibv_modify_qp", rc, EIO);
	rc = ibv_query_port(ctx, 1, &pa);
	check(rc == EIO, "ibv_query_port", rc, EIO);
	rc = ibv_post_send(a, &swr, &sbad);
	check(rc == EIO && sbad == &swr, "ibv_post_send", rc, EIO);
	rc = ibv_post_recv(b, &rwr, &rbad);
	check(rc == EIO && rbad == &rwr, "ibv_post_recv", rc, EIO);
	rc = ibv_destroy_qp(a) | ibv_destroy_qp(b) | ibv_destroy_cq(acq) | ibv_destroy_cq(bcq) |
	     ibv_dereg_mr(mr) | ibv_dealloc_pd(pd) | ibv_close_device(ctx);
	check(rc == 0, "destroys and close", rc, 0);
}

static void mode_stop(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *pd2;
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = rc_qp(pd, cq);
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	uint64_t t0, dt;
	int rc;

	wait_line();
	t0 = tv_now_ms();
	errno = 0;
	pd2 = ibv_alloc_pd(ctx);
	rc = pd2 ? 0 : errno;
	dt = tv_now_ms() - t0;
	check(rc == ETIMEDOUT, "ibv_alloc_pd on a stopped daemon: errno", rc, ETIMEDOUT);
	check(dt >= 900 && dt <= 3000, "  after ms (bound 1000)", (long)dt, 1000);
	t0 = tv_now_ms();
	rc = ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	dt = tv_now_ms() - t0;
	check(rc == ETIMEDOUT, "ibv_modify_qp on a stopped daemon", rc, ETIMEDOUT);
	check(dt >= 900 && dt <= 3000, "  after ms (bound 1000)", (long)dt, 1000);
	wait_line();
	pd2 = ibv_alloc_pd(ctx);
	check(pd2 != NULL, "ibv_alloc_pd after SIGCONT succeeds (1 = yes)", pd2 != NULL, 1);
	rc = ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	check(rc == 0, "ibv_modify_qp after SIGCONT", rc, 0);
	rc = ibv_destroy_qp(qp) | ibv_destroy_cq(cq) | (pd2 ? ibv_dealloc_pd(pd2) : 0) |
	     ibv_dealloc_pd(pd) | ibv_close_device(ctx);
	check(rc == 0, "destroys and close", rc, 0);
}

static void mode_peer(struct ibv_context *c0, struct ibv_context *c1)
{
	static char buf[4096];
	struct ibv_pd *p0 = ibv_alloc_pd(c0), *p1 = ibv_alloc_pd(c1), *p2;
	struct ibv_mr *mr = ibv_reg_mr(p0, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *cq0 = ibv_create_cq(c0, 8, NULL, NULL, 0), *cq1 = ibv_create_cq(c1, 8, NULL, NULL, 0);
	struct ibv_qp *a = rc_qp(p0, cq0), *b = rc_qp(p1, cq1), *nb;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_context *c2;
	struct ibv_cq *cq2;
	union ibv_gid g0, g1;
	struct ibv_wc wc;
	uint64_t t0;
	int rc;

	if (ibv_query_gid(c0, 1, 0, &g0) || ibv_query_gid(c1, 1, 0, &g1) ||
	    tv_rc_connect(a, b->qp_num, &g1, IBV_MTU_1024, 10) ||
	    tv_rc_connect(b, a->qp_num, &g0, IBV_MTU_1024, 10)) {
		printf("FAIL: set-up\n");
		exit(1);
	}
	wait_line();
	c2 = tv_open("uroce1");
	if (!c2)
		exit(1);
	p2 = ibv_alloc_pd(c2);
	cq2 = ibv_create_cq(c2, 8, NULL, NULL, 0);
	nb = rc_qp(p2, cq2);
	check(nb->qp_num == b->qp_num, "QPN of the restarted daemon's first QP = the vanished QP's",
	      nb->qp_num, b->qp_num);
	rc = ibv_modify_qp(nb, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	check(rc == 0, "new QP to INIT", rc, 0);
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0x100;
	t0 = tv_now_ms();
	rc = ibv_post_send(a, &wr, &bad);
	check(rc == 0, "RDMA WRITE to the vanished QP posted", rc, 0);
	rc = tv_poll_one(cq0, 30000, &wc);
	check(rc == 0 && wc.status == IBV_WC_RETRY_EXC_ERR && wc.wr_id == 77,
	      "requester completion status (IBV_WC_RETRY_EXC_ERR=12)", rc ? -1 : wc.status, IBV_WC_RETRY_EXC_ERR);
	printf("completed after %llu ms\n", (unsigned long long)(tv_now_ms() - t0));
	ibv_destroy_qp(nb);
	ibv_destroy_cq(cq2);
	ibv_dealloc_pd(p2);
	ibv_close_device(c2);
	/* c1's daemon is gone: its objects are freed locally */
	rc = ibv_destroy_qp(b) | ibv_destroy_cq(cq1) | ibv_dealloc_pd(p1) | ibv_close_device(c1);
	check(rc == 0, "the vanished context's destroys and close", rc, 0);
	rc = ibv_destroy_qp(a) | ibv_destroy_cq(cq0) | ibv_dereg_mr(mr) | ibv_dealloc_pd(p0) |
	     ibv_close_device(c0);
	check(rc == 0, "destroys and close", rc, 0);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: traffic_fatal kill|stop|peer\n");
		return 2;
	}
	ctx = tv_open("uroce0");
	if (!ctx)
		return 1;
	if (!strcmp(argv[1], "kill"))
		mode_kill(ctx);
	else if (!strcmp(argv[1], "stop"))
		mode_stop(ctx);
	else if (!strcmp(argv[1], "peer")) {
		struct ibv_context *c1 = tv_open("uroce1");

		if (!c1)
			return 1;
		mode_peer(ctx, c1);
	} else
		return 2;
	printf("%s: %d failures\n", argv[1], fails);
	return fails ? 1 : 0;
}
