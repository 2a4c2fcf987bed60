/*
 * traffic_faults.c - traffic between two devices whose fault injectors
 * lose, duplicate, reorder and corrupt packets (run by traffic_faults.sh
 * inside `uroce run`; docs/fault-injection.md).
 *
 * Usage: traffic_faults rc|uc|ud COUNT [DEV_A DEV_B]   (default uroce0 uroce1)
 * One process, context A on DEV_A and B on DEV_B, path MTU 1024, local ACK
 * timeout 12 (16.8 ms: a peer daemon descheduled on a loaded machine
 * must not spend retry_cnt by itself; longer with UROCE_TIMEOUT_FACTOR).
 * rc: COUNT messages of 64 KiB from A, in turn SEND, RDMA WRITE and RDMA
 *     READ, WINDOW in flight. Checked: every completion IBV_WC_SUCCESS in
 *     posting order, each exactly once; each SEND arrives at B in order
 *     with byte_len 65536 and its pattern; after each WRITE's completion B's
 *     target bytes are the message's; after each READ's completion A holds
 *     B's source bytes; no completion after the last. Prints the goodput.
 * uc: COUNT SENDs of 64..4096 bytes (1 to 4 packets). Every completed
 *     receive must carry its exact size and pattern; some messages must be
 *     lost. A duplicated or late FIRST/ONLY packet starts a new message
 *     (IBTA 9.8.3.3, as rxe), so duplicates and late ones are counted.
 * ud: COUNT datagrams of 64..1024 bytes, checked the same way (GRH +
 *     payload); UD has no PSN check, so duplicates are counted too.
 * Exit 0 iff every check holds.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "traffic_verbs.h"

#define MSG 65536u
#define WINDOW 4
#define SLOTS 8
#define RQ 64
#define DEADLINE_MS 240000
#define GRH 40

static void die(const char *what, unsigned long long a, unsigned long long b)
{
	fprintf(stderr, "FAIL: %s (%llu, expected %llu)\n", what, a, b);
	exit(1);
}

static unsigned char pat(uint32_t i, uint32_t k)
{
	return (unsigned char)(i * 131 + k * 7 + (k >> 8) + (i >> 8) + 1);
}

static void fill(unsigned char *p, uint32_t i, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		p[k] = pat(i, k);
	if (n >= 4)
		memcpy(p, &i, 4);
}

/* Whether P (N bytes) is message I's content; *AT the first wrong byte. */
static int same(const unsigned char *p, uint32_t i, uint32_t n, uint32_t *at)
{
	for (uint32_t k = n >= 4 ? 4 : 0; k < n; k++)
		if (p[k] != pat(i, k)) {
			*at = k;
			return 0;
		}
	if (n >= 4 && memcmp(p, &i, 4)) {
		*at = 0;
		return 0;
	}
	return 1;
}

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	size_t len;
	union ibv_gid gid;
};

static void side_open(struct side *s, const char *dev, enum ibv_qp_type type, size_t len)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 256, .max_recv_wr = RQ, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type,
	};

	s->ctx = tv_open(dev);
	if (!s->ctx)
		exit(1);
	if (ibv_query_gid(s->ctx, 1, 0, &s->gid))
		die("ibv_query_gid", errno, 0);
	s->pd = ibv_alloc_pd(s->ctx);
	s->len = len;
	s->buf = calloc(1, len);
	s->cq = ibv_create_cq(s->ctx, 1024, NULL, NULL, 0);
	if (!s->pd || !s->buf || !s->cq)
		die("pd/buf/cq", errno, 0);
	s->mr = ibv_reg_mr(s->pd, s->buf, len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!s->mr)
		die("ibv_reg_mr", errno, 0);
	qa.send_cq = qa.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &qa);
	if (!s->qp)
		die("ibv_create_qp", errno, 0);
}

/* Everything side_open made, in reverse (the run checks for leaks under
 * LeakSanitizer: make check-asan). */
static void side_close(struct side *s)
{
	if (ibv_destroy_qp(s->qp) || ibv_dereg_mr(s->mr) || ibv_destroy_cq(s->cq) ||
	    ibv_dealloc_pd(s->pd) || ibv_close_device(s->ctx))
		die("side_close: destroy", errno, 0);
	free(s->buf);
}

static void post_recv(struct side *b, uint64_t id, unsigned char *p, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)p, len, b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(b->qp, &wr, &bad))
		die("ibv_post_recv", errno, 0);
}

static void post(struct side *a, uint64_t id, enum ibv_wr_opcode op, unsigned char *p, uint32_t len,
		 uint64_t raddr, uint32_t rkey, struct ibv_ah *ah, uint32_t dqpn)
{
	struct ibv_sge sge = { (uintptr_t)p, len, a->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ah) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = dqpn;
		wr.wr.ud.remote_qkey = TV_QKEY;
	}
	if (ibv_post_send(a->qp, &wr, &bad))
		die("ibv_post_send", errno, 0);
}

/* Layout of B's buffer in rc mode: RQ receive slots, SLOTS write targets,
 * SLOTS read sources; A's: SLOTS send/read slots. */
#define B_RECV(b, k) ((b)->buf + (size_t)((k) % RQ) * MSG)
#define B_WRITE(b, i) ((b)->buf + (size_t)(RQ + (i) % SLOTS) * MSG)
#define B_READ(b, i) ((b)->buf + (size_t)(RQ + SLOTS + (i) % SLOTS) * MSG)
#define A_SLOT(a, i) ((a)->buf + (size_t)((i) % SLOTS) * MSG)

static void check_rc_send_done(struct side *a, struct side *b, const struct ibv_wc *wc, uint32_t i)
{
	uint32_t at;

	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "FAIL: message %u: %s\n", i, ibv_wc_status_str(wc->status));
		exit(1);
	}
	if (wc->wr_id != i)
		die("send completion out of order or duplicated (wr_id)", wc->wr_id, i);
	if (i % 3 == 1 && !same(B_WRITE(b, i), i, MSG, &at))
		die("RDMA WRITE: B's bytes differ at", at, MSG);
	if (i % 3 == 2 && !same(A_SLOT(a, i), i, MSG, &at))
		die("RDMA READ: A's bytes differ at", at, MSG);
}

/* UROCE_TIMEOUT_FACTOR (tests/lib.sh tmo): 3 under make check-asan. */
static long timeout_factor(void)
{
	const char *f = getenv("UROCE_TIMEOUT_FACTOR");
	long factor = f ? strtol(f, NULL, 10) : 1;

	return factor > 1 ? factor : 1;
}

/* Local ACK timeout 12 (16.8 ms); 13 (33.6 ms) with a timeout factor:
 * an instrumented daemon on a loaded machine answers later. */
static uint8_t ack_timeout(void)
{
	return timeout_factor() > 1 ? 13 : 12;
}

static int run_rc(const char *da, const char *db, uint32_t count)
{
	uint32_t sent = 0, done = 0, sends = 0, rposted = 0, rdone = 0, at = 0;
	uint64_t t0 = tv_now_ms(), deadline = t0 + (uint64_t)DEADLINE_MS * timeout_factor();
	struct side a, b;
	struct ibv_wc wc[16];
	double secs;
	int n;

	for (uint32_t i = 0; i < count; i++)
		sends += i % 3 == 0;
	side_open(&a, da, IBV_QPT_RC, (size_t)SLOTS * MSG);
	side_open(&b, db, IBV_QPT_RC, (size_t)(RQ + 2 * SLOTS) * MSG);
	if (tv_rc_connect(a.qp, b.qp->qp_num, &b.gid, IBV_MTU_1024, ack_timeout()) ||
	    tv_rc_connect(b.qp, a.qp->qp_num, &a.gid, IBV_MTU_1024, ack_timeout()))
		die("connect", errno, 0);
	while (rposted < sends && rposted < RQ)
		post_recv(&b, rposted, B_RECV(&b, rposted), MSG), rposted++;
	while (done < count || rdone < sends) {
		if (tv_now_ms() > deadline) {
			fprintf(stderr, "FAIL: stalled: posted %u, completed %u, received %u of %u\n", sent, done,
				rdone, sends);
			return 1;
		}
		while (sent < count && sent - done < WINDOW) {
			uint32_t i = sent++;

			if (i % 3 == 0) {
				fill(A_SLOT(&a, i), i, MSG);
				post(&a, i, IBV_WR_SEND, A_SLOT(&a, i), MSG, 0, 0, NULL, 0);
			} else if (i % 3 == 1) {
				fill(A_SLOT(&a, i), i, MSG);
				memset(B_WRITE(&b, i), 0, MSG);
				post(&a, i, IBV_WR_RDMA_WRITE, A_SLOT(&a, i), MSG, (uintptr_t)B_WRITE(&b, i),
				     b.mr->rkey, NULL, 0);
			} else {
				fill(B_READ(&b, i), i, MSG);
				memset(A_SLOT(&a, i), 0, MSG);
				post(&a, i, IBV_WR_RDMA_READ, A_SLOT(&a, i), MSG, (uintptr_t)B_READ(&b, i),
				     b.mr->rkey, NULL, 0);
			}
		}
		n = ibv_poll_cq(a.cq, 16, wc);
		if (n < 0)
			die("ibv_poll_cq(A)", (unsigned long long)n, 0);
		for (int j = 0; j < n; j++)
			check_rc_send_done(&a, &b, &wc[j], done++);
		n = ibv_poll_cq(b.cq, 16, wc);
		if (n < 0)
			die("ibv_poll_cq(B)", (unsigned long long)n, 0);
		for (int j = 0; j < n; j++) {
			uint32_t k = rdone++;

			if (wc[j].status != IBV_WC_SUCCESS || wc[j].wr_id != k || k >= sends)
				die("receive completion status/order (wr_id)", wc[j].wr_id, k);
			if (wc[j].byte_len != MSG || !same(B_RECV(&b, k), 3 * k, MSG, &at))
				die("SEND: B's bytes differ at", at, MSG);
			if (rposted < sends)
				post_recv(&b, rposted, B_RECV(&b, rposted), MSG), rposted++;
		}
	}
	secs = (double)(tv_now_ms() - t0) / 1000.;
	usleep(300000);
	if ((n = ibv_poll_cq(a.cq, 16, wc)) != 0 || (n = ibv_poll_cq(b.cq, 16, wc)) != 0)
		die("completions after the last", (unsigned long long)n, 0);
	printf("rc: %u messages of %u bytes (%u SEND, %u RDMA WRITE, %u RDMA READ): all completed once, "
	       "in order, byte-exact\n", count, MSG, sends, count / 3 + (count % 3 > 1), count / 3);
	printf("rc goodput: %.1f MB/s (%.1f s)\n", (double)count * MSG / 1e6 / (secs > 0 ? secs : 1e-3), secs);
	side_close(&a);
	side_close(&b);
	return 0;
}

static uint32_t small_size(uint32_t i, uint32_t max)
{
	return 64 + (i * 2654435761u >> 8) % (max - 63);
}

/* uc/ud: post all in windows of RQ; receive what arrives. */
static int run_unreliable(const char *da, const char *db, uint32_t count, bool ud)
{
	uint32_t sent = 0, sdone = 0, got = 0, dups = 0, late = 0, last = 0, at = 0, max = ud ? 1024 : 4096;
	unsigned char *seen = calloc(count, 1);
	struct side a, b;
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc[16];
	uint64_t quiet;
	int n;

	side_open(&a, da, ud ? IBV_QPT_UD : IBV_QPT_UC, (size_t)RQ * 4096);
	side_open(&b, db, ud ? IBV_QPT_UD : IBV_QPT_UC, (size_t)RQ * (4096 + GRH));
	if (ud) {
		if (tv_ud_ready(a.qp) || tv_ud_ready(b.qp) || !(ah = tv_ah(a.pd, &b.gid)))
			die("UD setup", errno, 0);
	} else {
		struct ibv_qp_attr x = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
		struct side *s[2] = { &a, &b };

		for (int k = 0; k < 2; k++) {
			struct ibv_qp_attr r = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
						 .dest_qp_num = s[1 - k]->qp->qp_num };
			struct ibv_qp_attr t = { .qp_state = IBV_QPS_RTS };

			r.ah_attr.is_global = 1;
			r.ah_attr.grh.dgid = s[1 - k]->gid;
			r.ah_attr.grh.hop_limit = 1;
			r.ah_attr.port_num = 1;
			if (ibv_modify_qp(s[k]->qp, &x, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
								 IBV_QP_ACCESS_FLAGS) ||
			    ibv_modify_qp(s[k]->qp, &r, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
								 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN) ||
			    ibv_modify_qp(s[k]->qp, &t, IBV_QP_STATE | IBV_QP_SQ_PSN))
				die("UC connect", errno, 0);
		}
	}
	for (uint32_t k = 0; k < RQ; k++)
		post_recv(&b, k, b.buf + (size_t)k * (4096 + GRH), 4096 + GRH);
	last = 0;
	quiet = tv_now_ms();
	for (;;) {
		uint64_t now = tv_now_ms();

		/* a batch of RQ / 2 once the last one is settled (20 ms without a
		 * receive), so that every datagram finds a receive posted */
		if (sent < count && sdone == sent && now >= quiet + 20) {
			for (uint32_t k = 0; k < RQ / 2 && sent < count; k++) {
				uint32_t i = sent++;
				unsigned char *p = a.buf + (size_t)(i % RQ) * 4096;

				fill(p, i, small_size(i, max));
				post(&a, i, IBV_WR_SEND, p, small_size(i, max), 0, 0, ah, b.qp->qp_num);
			}
			quiet = now;
		}
		if (sent == count && sdone == count && now >= quiet + 500)
			break;
		if ((n = ibv_poll_cq(a.cq, 16, wc)) < 0)
			die("ibv_poll_cq(A)", (unsigned long long)n, 0);
		for (int j = 0; j < n; j++)
			if (wc[j].status != IBV_WC_SUCCESS || wc[j].wr_id != sdone++)
				die("send completion status/order", wc[j].wr_id, sdone - 1);
		if ((n = ibv_poll_cq(b.cq, 16, wc)) < 0)
			die("ibv_poll_cq(B)", (unsigned long long)n, 0);
		for (int j = 0; j < n; j++) {
			unsigned char *p = b.buf + (size_t)wc[j].wr_id * (4096 + GRH) + (ud ? GRH : 0);
			uint32_t i, len = wc[j].byte_len - (ud ? GRH : 0);

			if (wc[j].status != IBV_WC_SUCCESS)
				die("receive status", wc[j].status, 0);
			memcpy(&i, p, 4);
			if (i >= count || len != small_size(i, max) || !same(p, i, len, &at)) {
				fprintf(stderr, "FAIL: received a damaged message (number %u, %u bytes)\n", i, len);
				return 1;
			}
			late += got && i <= last && !seen[i];
			dups += seen[i];
			seen[i] = 1;
			last = i;
			got++;
			post_recv(&b, wc[j].wr_id, b.buf + (size_t)wc[j].wr_id * (4096 + GRH), 4096 + GRH);
		}
		if (n > 0)
			quiet = tv_now_ms();
	}
	if (sdone != count)
		die("send completions", sdone, count);
	printf("%s: sent %u received %u (%u distinct, %u duplicates, %u late) lost %u: every one received intact\n",
	       ud ? "ud" : "uc", count, got, got - dups, dups, late, count - (got - dups));
	if (got - dups >= count)
		die("messages lost under the faults", 0, 1);
	free(seen);
	if (ah && ibv_destroy_ah(ah))
		die("ibv_destroy_ah", errno, 0);
	side_close(&a);
	side_close(&b);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t count;
	const char *da = argc > 4 ? argv[3] : "uroce0", *db = argc > 4 ? argv[4] : "uroce1";

	if (argc < 3) {
		fprintf(stderr, "usage: traffic_faults rc|uc|ud COUNT [DEV_A DEV_B]\n");
		return 2;
	}
	count = (uint32_t)strtoul(argv[2], NULL, 0);
	if (!strcmp(argv[1], "rc"))
		return run_rc(da, db, count);
	if (!strcmp(argv[1], "uc") || !strcmp(argv[1], "ud"))
		return run_unreliable(da, db, count, !strcmp(argv[1], "ud"));
	fprintf(stderr, "traffic_faults: unknown mode '%s'\n", argv[1]);
	return 2;
}
