/*
 * traffic_fairness.c - one big RDMA READ through uroce0 (run by
 * traffic_fairness.sh inside `uroce run`), so the script can show that the
 * daemon stays responsive while it streams the READ response.
 *
 * Usage: traffic_fairness MIB
 * One process, two contexts (A reads, B is read) and one RC QP each, path
 * MTU 4096. B's MIB MiB buffer holds a byte pattern; A posts one signaled
 * RDMA READ of all of it, prints "reading" (flushed) and waits for the
 * completion, sleeping 1 ms between polls so the daemon gets the CPU.
 * Checked exactly: the completion is IBV_WC_SUCCESS / IBV_WC_RDMA_READ with
 * byte_len MIB MiB, and A's buffer equals B's pattern byte for byte. Prints
 * "read N bytes in T ms, byte-exact"; exit 0 iff all hold.
 *
 * Usage: traffic_fairness --victim MIB
 * The target of a forged READ (traffic_forged_read.sh): the same two
 * connected QPs, but B's MIB MiB MR covers a MAP_NORESERVE mapping that is
 * never written (reads see zero pages, so 1 GiB costs no memory). Prints
 * "victim qpn Q va V rkey K psn 0" (B's QPN, MR address and rkey, the PSN
 * B's responder expects) and sleeps until stdin reaches end of file.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define DEADLINE_MS 600000


static void die(const char *what, long long v)
{
	fprintf(stderr, "FAIL: %s (%lld)\n", what, v);
	exit(1);
}

static void side_open(struct tv_side *s, size_t len, bool sparse)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	s->ctx = tv_open(DEV);
	if (!s->ctx)
		exit(1);
	if (ibv_query_gid(s->ctx, 1, 0, &s->gid))
		die("ibv_query_gid", errno);
	s->pd = ibv_alloc_pd(s->ctx);
	if (sparse) {
		s->buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (s->buf == MAP_FAILED)
			s->buf = NULL;
	} else {
		s->buf = calloc(1, len);
	}
	s->cq = ibv_create_cq(s->ctx, 8, NULL, NULL, 0);
	if (!s->pd || !s->buf || !s->cq)
		die("pd/buf/cq", errno);
	s->mr = ibv_reg_mr(s->pd, s->buf, len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!s->mr)
		die("ibv_reg_mr", errno);
	qa.send_cq = qa.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &qa);
	if (!s->qp)
		die("ibv_create_qp", errno);
}

int main(int argc, char **argv)
{
	bool victim = argc > 2 && !strcmp(argv[1], "--victim");
	size_t mib = argc > 1 ? strtoul(argv[victim ? 2 : 1], NULL, 0) : 256, len = mib << 20;
	struct tv_side a, b;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	uint64_t t0, deadline;
	int n;

	if (!mib || mib > 2047)
		die("MIB must be 1..2047", (long long)mib);
	side_open(&a, len, victim);
	side_open(&b, len, victim);
	if (tv_rc_connect(a.qp, b.qp->qp_num, &b.gid, IBV_MTU_4096, 14) ||
	    tv_rc_connect(b.qp, a.qp->qp_num, &a.gid, IBV_MTU_4096, 14))
		die("connect", errno);
	if (victim) {
		char line[64];

		printf("victim qpn %u va %llu rkey %u psn 0\n", b.qp->qp_num,
		       (unsigned long long)(uintptr_t)b.buf, b.mr->rkey);
		fflush(stdout);
		while (fgets(line, sizeof(line), stdin))
			;
		return 0;
	}
	for (size_t i = 0; i < len; i++)
		b.buf[i] = (unsigned char)(i * 7 + (i >> 12) + 3);
	sge = (struct ibv_sge){ (uintptr_t)a.buf, (uint32_t)len, a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf;
	wr.wr.rdma.rkey = b.mr->rkey;
	t0 = tv_now_ms();
	deadline = t0 + DEADLINE_MS;
	if (ibv_post_send(a.qp, &wr, &bad))
		die("ibv_post_send", errno);
	printf("reading\n");
	fflush(stdout);
	while ((n = ibv_poll_cq(a.cq, 1, &wc)) == 0) {
		if (tv_now_ms() > deadline)
			die("no completion before the deadline (ms)", DEADLINE_MS);
		usleep(1000);
	}
	if (n < 0)
		die("ibv_poll_cq", n);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RDMA_READ || wc.wr_id != 1 ||
	    wc.byte_len != len) {
		fprintf(stderr, "FAIL: completion status %s opcode %d wr_id %llu byte_len %u\n",
			ibv_wc_status_str(wc.status), wc.opcode, (unsigned long long)wc.wr_id,
			wc.byte_len);
		return 1;
	}
	for (size_t i = 0; i < len; i++)
		if (a.buf[i] != b.buf[i])
			die("first differing byte at offset", (long long)i);
	printf("read %zu bytes in %llu ms, byte-exact\n", len,
	       (unsigned long long)(tv_now_ms() - t0));
	return 0;
}
