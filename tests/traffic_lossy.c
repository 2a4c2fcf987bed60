/*
 * traffic_lossy.c - many RC SENDs of mixed sizes through uroce0 over a lossy
 * link, checked byte for byte (run by traffic_lossy.sh against a daemon
 * started with `uroce up --loss P --seed N`, inside `uroce run`).
 *
 * Usage: traffic_lossy COUNT
 * One process, two contexts (sender A, receiver B) and one RC QP each,
 * path MTU 1024; the daemon makes all progress. Message i has a size drawn
 * from a fixed mix (1 byte .. 9000 bytes, MTU-boundary sizes included, so
 * 1..9 packets each) and content derived from i. Up to 32 SENDs are in
 * flight; receives are always posted ahead of them. Checked exactly:
 * - every send completion is IBV_WC_SUCCESS, in posting order (wr_id),
 *   each exactly once;
 * - receive k completes with wr_id k, byte_len = size(k) and the bytes of
 *   message k (so in order, byte-exact, no duplicates);
 * - after COUNT completions on each side, no further completion appears.
 * Prints one summary line; exit 0 iff all hold. The local ACK timeout is
 * 8 (about 1 ms), so lost tail packets cost little time.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WINDOW 32	/* sends in flight */
#define RQ_DEPTH 64	/* receives posted */
#define SLOT 9216	/* bytes per buffer slot (>= the largest message) */
#define DEADLINE_MS 300000

static void die(const char *what, unsigned long long a, unsigned long long b)
{
	fprintf(stderr, "FAIL: %s (%llu, expected %llu)\n", what, a, b);
	exit(1);
}

/* The size of message I: a fixed mix of small, MTU-boundary and multi-packet sizes. */
static uint32_t msg_size(uint32_t i)
{
	static const uint32_t edge[] = { 1, 1023, 1024, 1025, 2048, 4096, 9000 };
	uint32_t x = i * 2654435761u;

	if (i % 5 == 0)
		return edge[(i / 5) % 7];
	return 1 + (x >> 8) % 6000;
}

static void msg_fill(unsigned char *p, uint32_t i, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		p[k] = (unsigned char)(i * 131 + k * 7 + (k >> 8) + (i >> 8));
}


static void side_open(struct tv_side *s, size_t slots)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = WINDOW, .max_recv_wr = RQ_DEPTH, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	s->ctx = tv_open(DEV);
	if (!s->ctx)
		exit(1);
	if (ibv_query_gid(s->ctx, 1, 0, &s->gid))
		die("ibv_query_gid", errno, 0);
	s->pd = ibv_alloc_pd(s->ctx);
	s->buf = calloc(slots, SLOT);
	s->cq = ibv_create_cq(s->ctx, 2 * RQ_DEPTH, NULL, NULL, 0);
	if (!s->pd || !s->buf || !s->cq)
		die("pd/buf/cq", errno, 0);
	s->mr = ibv_reg_mr(s->pd, s->buf, slots * SLOT, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		die("ibv_reg_mr", errno, 0);
	qa.send_cq = qa.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &qa);
	if (!s->qp)
		die("ibv_create_qp", errno, 0);
}

static void post_recv(struct tv_side *b, uint32_t k)
{
	struct ibv_sge sge = { (uintptr_t)b->buf + (size_t)(k % RQ_DEPTH) * SLOT, SLOT, b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(b->buf + (size_t)(k % RQ_DEPTH) * SLOT, 0, SLOT);
	if (ibv_post_recv(b->qp, &wr, &bad))
		die("ibv_post_recv", errno, 0);
}

static void post_send(struct tv_side *a, uint32_t i)
{
	unsigned char *p = a->buf + (size_t)(i % WINDOW) * SLOT;
	struct ibv_sge sge = { (uintptr_t)p, msg_size(i), a->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	msg_fill(p, i, msg_size(i));
	if (ibv_post_send(a->qp, &wr, &bad))
		die("ibv_post_send", errno, 0);
}

int main(int argc, char **argv)
{
	uint32_t count = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 10000;
	uint32_t sent = 0, send_done = 0, recv_posted = 0, recv_done = 0;
	unsigned long long bytes = 0;
	unsigned char *want = malloc(SLOT);
	uint64_t deadline = tv_now_ms() + DEADLINE_MS;
	struct tv_side a, b;
	struct ibv_wc wc[16];
	int n;

	side_open(&a, WINDOW);
	side_open(&b, RQ_DEPTH);
	if (tv_rc_connect(a.qp, b.qp->qp_num, &b.gid, IBV_MTU_1024, 8) ||
	    tv_rc_connect(b.qp, a.qp->qp_num, &a.gid, IBV_MTU_1024, 8))
		die("connect", errno, 0);
	while (recv_posted < count && recv_posted < RQ_DEPTH)
		post_recv(&b, recv_posted++);

	while (send_done < count || recv_done < count) {
		if (tv_now_ms() > deadline) {
			fprintf(stderr, "FAIL: stalled: sent %u, send completions %u, receive completions %u of %u\n",
				sent, send_done, recv_done, count);
			return 1;
		}
		while (sent < count && sent - send_done < WINDOW && sent < recv_posted)
			post_send(&a, sent++);
		n = ibv_poll_cq(a.cq, 16, wc);
		if (n < 0)
			die("ibv_poll_cq(sender)", (unsigned long long)n, 0);
		for (int j = 0; j < n; j++) {
			if (wc[j].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "FAIL: send %llu: %s (vendor_err 0x%x)\n",
					(unsigned long long)wc[j].wr_id, ibv_wc_status_str(wc[j].status),
					wc[j].vendor_err);
				return 1;
			}
			if (wc[j].opcode != IBV_WC_SEND || wc[j].qp_num != a.qp->qp_num)
				die("send completion opcode/qp_num", wc[j].opcode, IBV_WC_SEND);
			if (wc[j].wr_id != send_done || send_done >= sent)
				die("send completion out of order or duplicated (wr_id)", wc[j].wr_id, send_done);
			send_done++;
		}
		n = ibv_poll_cq(b.cq, 16, wc);
		if (n < 0)
			die("ibv_poll_cq(receiver)", (unsigned long long)n, 0);
		for (int j = 0; j < n; j++) {
			uint32_t k = recv_done;
			unsigned char *got = b.buf + (size_t)(k % RQ_DEPTH) * SLOT;

			if (wc[j].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "FAIL: receive %u: %s\n", k, ibv_wc_status_str(wc[j].status));
				return 1;
			}
			if (wc[j].wr_id != k || k >= count)
				die("receive completion out of order or duplicated (wr_id)", wc[j].wr_id, k);
			if (wc[j].opcode != IBV_WC_RECV || wc[j].src_qp != a.qp->qp_num)
				die("receive opcode/src_qp", wc[j].src_qp, a.qp->qp_num);
			if (wc[j].byte_len != msg_size(k))
				die("receive byte_len", wc[j].byte_len, msg_size(k));
			msg_fill(want, k, msg_size(k));
			if (memcmp(got, want, msg_size(k))) {
				uint32_t at = 0;
				while (got[at] == want[at])
					at++;
				fprintf(stderr, "FAIL: message %u (%u bytes) differs at byte %u: 0x%02x, expected 0x%02x\n",
					k, msg_size(k), at, got[at], want[at]);
				return 1;
			}
			for (uint32_t z = msg_size(k); z < SLOT; z++)
				if (got[z])
					die("bytes written past the message end", z, msg_size(k));
			bytes += msg_size(k);
			recv_done++;
			if (recv_posted < count)
				post_recv(&b, recv_posted++);
		}
	}
	/* Late duplicates would show up here (retransmissions take ~1 ms). */
	usleep(200000);
	if ((n = ibv_poll_cq(a.cq, 16, wc)) != 0)
		die("extra send completions after the last", (unsigned long long)n, 0);
	if ((n = ibv_poll_cq(b.cq, 16, wc)) != 0)
		die("extra receive completions after the last", (unsigned long long)n, 0);
	printf("%u messages, %llu bytes: all completed once, in order, byte-exact\n", count, bytes);

	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	ibv_destroy_cq(a.cq);
	ibv_destroy_cq(b.cq);
	ibv_dereg_mr(a.mr);
	ibv_dereg_mr(b.mr);
	ibv_dealloc_pd(a.pd);
	ibv_dealloc_pd(b.pd);
	ibv_close_device(a.ctx);
	ibv_close_device(b.ctx);
	free(a.buf);
	free(b.buf);
	free(want);
	return 0;
}
