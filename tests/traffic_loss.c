/*
 * traffic_loss.c - which packets `uroce up --loss P --seed N` drops, seen
 * from a client (run by traffic_loss.sh inside `uroce run`).
 *
 * Usage: traffic_loss COUNT
 * UD QP A sends COUNT datagrams of 64 bytes (message i carries i) to UD QP
 * B on the same device, in windows of WINDOW: post the window, wait for
 * its send completions (a UD send completes whether or not the packet is
 * lost), then collect B's receive completions until none has come for
 * QUIET_MS (a late one is counted when it comes, and twice a window of
 * receives stays posted for it; after the last window the wait is
 * FINAL_QUIET_MS). UD has no retransmission, so the daemon sends exactly one
 * packet per message and each loss is one missing message. Receives are
 * always posted for a whole window ahead. Checked: every send completes
 * with IBV_WC_SUCCESS, every receive with byte_len 40 + 64 and the index
 * of a message sent, never repeated.
 * Prints "sent COUNT received R dropped D" and "drops: i j k ..." (the
 * indices of the lost messages, ascending); exit 0 iff all checks hold.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WINDOW 100
#define RQ_DEPTH (2 * WINDOW)	/* a window plus stragglers of earlier ones */
#define MSG 64
#define GRH 40
#define QUIET_MS 100
#define FINAL_QUIET_MS 3000

static void die(const char *what, long a)
{
	fprintf(stderr, "FAIL: %s (%ld)\n", what, a);
	exit(1);
}

/*
 * Receive completions on RCQ until QUIET_MS pass without one: mark each
 * message index seen (it must be below SENT and not seen before; a late
 * one from an earlier window is fine), repost its slot. Returns the count.
 */
static uint32_t drain(struct ibv_qp *b, struct ibv_cq_ex *rcq, struct ibv_mr *mr,
		      unsigned char *mem, unsigned char *seen, uint32_t sent, int quiet_ms)
{
	uint32_t got = 0;
	int rc;

	while (tv_start_poll(rcq, quiet_ms) == 0) {
		do {
			uint32_t slot = (uint32_t)rcq->wr_id, idx;
			unsigned char *p = mem + (WINDOW + slot) * (GRH + MSG) + GRH;
			struct ibv_sge sge = { (uintptr_t)p - GRH, GRH + MSG, mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

			if (rcq->status != IBV_WC_SUCCESS || ibv_wc_read_byte_len(rcq) != GRH + MSG)
				die("receive completion status / byte_len", ibv_wc_read_byte_len(rcq));
			memcpy(&idx, p, sizeof(idx));
			if (idx >= sent || seen[idx])
				die("received index never sent or twice", idx);
			seen[idx] = 1;
			got++;
			if ((rc = ibv_post_recv(b, &wr, &bad)))
				die("ibv_post_recv", rc);
		} while (ibv_next_poll(rcq) == 0);
		ibv_end_poll(rcq);
	}
	return got;
}

int main(int argc, char **argv)
{
	struct ibv_cq_init_attr_ex cqa = { .cqe = RQ_DEPTH, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_qp_init_attr qpa = { .qp_type = IBV_QPT_UD,
					.cap = { .max_send_wr = WINDOW, .max_recv_wr = RQ_DEPTH,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *scq, *rcq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	union ibv_gid gid;
	unsigned char *mem, *seen;
	uint32_t n, sent = 0, received = 0;
	int rc;

	if (argc != 2 || (n = (uint32_t)atoi(argv[1])) == 0) {
		fprintf(stderr, "usage: traffic_loss COUNT\n");
		return 2;
	}
	ctx = tv_open(DEV);
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq_ex(ctx, &cqa);
	rcq = ibv_create_cq_ex(ctx, &cqa);
	if (!pd || !scq || !rcq)
		die("PD/CQ", errno);
	qpa.send_cq = ibv_cq_ex_to_cq(scq);
	qpa.recv_cq = ibv_cq_ex_to_cq(rcq);
	a = ibv_create_qp(pd, &qpa);
	b = ibv_create_qp(pd, &qpa);
	/* WINDOW send slots, then RQ_DEPTH receive slots */
	mem = calloc(WINDOW + RQ_DEPTH, GRH + MSG);
	seen = calloc(n, 1);
	mr = mem ? ibv_reg_mr(pd, mem, (WINDOW + RQ_DEPTH) * (GRH + MSG), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!a || !b || !mr || !seen)
		die("QP/MR", errno);
	if ((rc = ibv_query_gid(ctx, 1, 0, &gid)) || (rc = tv_ud_ready(a)) || (rc = tv_ud_ready(b)))
		die("GID / UD QP to RTS", rc);
	ah = tv_ah(pd, &gid);
	if (!ah)
		die("ibv_create_ah", errno);

	for (uint32_t slot = 0; slot < RQ_DEPTH; slot++) {
		struct ibv_sge sge = { (uintptr_t)mem + (WINDOW + slot) * (GRH + MSG), GRH + MSG, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

		if ((rc = ibv_post_recv(b, &wr, &bad)))
			die("ibv_post_recv", rc);
	}
	while (sent < n) {
		uint32_t w = n - sent < WINDOW ? n - sent : WINDOW, done = 0;

		for (uint32_t k = 0; k < w; k++) {
			unsigned char *p = mem + k * (GRH + MSG);
			struct ibv_sge sge = { (uintptr_t)p, MSG, mr->lkey };
			struct ibv_send_wr wr = { .wr_id = sent + k, .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
					   *bad;
			uint32_t idx = sent + k;

			memcpy(p, &idx, sizeof(idx));
			memset(p + sizeof(idx), (int)(idx & 0xFF), MSG - sizeof(idx));
			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = b->qp_num;
			wr.wr.ud.remote_qkey = TV_QKEY;
			if ((rc = ibv_post_send(a, &wr, &bad)))
				die("ibv_post_send", rc);
		}
		while (done < w) {
			if ((rc = tv_start_poll(scq, 10000)))
				die("send completion", rc);
			do {
				if (scq->status != IBV_WC_SUCCESS || scq->wr_id != sent + done)
					die("send completion status / order", (long)scq->wr_id);
				done++;
			} while (ibv_next_poll(scq) == 0);
			ibv_end_poll(scq);
		}
		sent += w;
		received += drain(b, rcq, mr, mem, seen, sent, QUIET_MS);
	}
	/* stragglers a loaded machine delayed past a window's quiet time */
	received += drain(b, rcq, mr, mem, seen, sent, FINAL_QUIET_MS);
	printf("sent %u received %u dropped %u\n", n, received, n - received);
	printf("drops:");
	for (uint32_t i = 0; i < n; i++)
		if (!seen[i])
			printf(" %u", i);
	printf("\n");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(scq));
	ibv_destroy_cq(ibv_cq_ex_to_cq(rcq));
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(mem);
	free(seen);
	return 0;
}
