/*
 * fault_replay.c - the program deterministic replay is shown with (run
 * twice by fault_replay.sh inside `uroce run` against a daemon started with
 * `uroce up --deterministic --seed N --fault ... --pcap FILE`;
 * docs/fault-injection.md, "Deterministic replay").
 *
 * Usage: fault_replay ITERATIONS
 * One process, one context on uroce0, two RC QPs A and B connected to each
 * other (PSNs 0, path MTU 1024), one extended CQ with completion
 * timestamps. Closed loop: iteration i sends message i (1..4000 bytes, so
 * 1..4 packets, content from i; a SEND, or on odd i an RDMA WRITE with
 * immediate, whose RETH carries the rkey) A -> B and waits for both
 * completions, then B -> A and waits for both; receives are reposted
 * before the next send. The buffers sit at a fixed virtual address, since
 * the RETH carries it.
 * Checked: every completion IBV_WC_SUCCESS, the right QP, byte_len and
 * bytes. Prints one line per iteration with the four completions' raw HCA
 * timestamps (the CQEs' own values), which the script hashes.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define BUF 4096
#define DEADLINE_MS 60000
/* outside AddressSanitizer's shadow (x86-64: up to 0x10007fff7fff) and its
 * allocator (from 0x600000000000) */
#define FIXED_ADDR 0x200000000000ull

static void die(const char *what, unsigned long long a, unsigned long long b)
{
	fprintf(stderr, "FAIL: %s (%llu, expected %llu)\n", what, a, b);
	exit(1);
}

static uint32_t msg_size(uint32_t i)
{
	return 1 + (i * 2654435761u >> 8) % 4000;
}

static unsigned char pat(uint32_t i, uint32_t k)
{
	return (unsigned char)(i * 37 + k * 11 + 5);
}

struct ep {
	struct ibv_qp *qp;
	unsigned char *send, *recv;
};

static struct ibv_pd *pd;
static struct ibv_mr *mr;
static struct ibv_cq_ex *cq;

static void post_recv(struct ep *e)
{
	struct ibv_sge sge = { (uintptr_t)e->recv, BUF, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(e->recv, 0, BUF);
	if (ibv_post_recv(e->qp, &wr, &bad))
		die("ibv_post_recv", errno, 0);
}

/* Message I from E to PEER: a SEND, or on odd I an RDMA WRITE with
 * immediate into PEER's receive buffer (its rkey travels in the RETH). */
static void post_send(struct ep *e, struct ep *peer, uint32_t i)
{
	struct ibv_sge sge = { (uintptr_t)e->send, msg_size(i), mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = i % 2 ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(i),
	}, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)peer->recv;
	wr.wr.rdma.rkey = mr->rkey;

	for (uint32_t k = 0; k < msg_size(i); k++)
		e->send[k] = pat(i, k);
	if (ibv_post_send(e->qp, &wr, &bad))
		die("ibv_post_send", errno, 0);
}

/* Wait for the send completion of FROM and the receive completion of TO
 * (either order); their timestamps into ts[0] (send) and ts[1] (receive). */
static void wait_pair(struct ep *from, struct ep *to, uint32_t i, uint64_t ts[2])
{
	int got = 0;

	while (got != 3) {
		struct ibv_qp *qp;
		int rc = tv_start_poll(cq, DEADLINE_MS);

		if (rc)
			die("completion (iteration)", i, rc);
		bool recv = ibv_wc_read_opcode(cq) == IBV_WC_RECV ||
			    ibv_wc_read_opcode(cq) == IBV_WC_RECV_RDMA_WITH_IMM;

		qp = recv ? to->qp : from->qp;
		if (cq->status != IBV_WC_SUCCESS)
			die("completion status", cq->status, IBV_WC_SUCCESS);
		if (ibv_wc_read_qp_num(cq) != qp->qp_num)
			die("completion qp_num", ibv_wc_read_qp_num(cq), qp->qp_num);
		if (recv) {
			if (ibv_wc_read_byte_len(cq) != msg_size(i))
				die("byte_len", ibv_wc_read_byte_len(cq), msg_size(i));
			for (uint32_t k = 0; k < msg_size(i); k++)
				if (to->recv[k] != pat(i, k))
					die("received byte", k, pat(i, k));
			ts[1] = ibv_wc_read_completion_ts(cq);
			got |= 2;
		} else {
			ts[0] = ibv_wc_read_completion_ts(cq);
			got |= 1;
		}
		ibv_end_poll(cq);
	}
}

int main(int argc, char **argv)
{
	uint32_t iters = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 200;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64,
		.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_QP_NUM |
			    IBV_WC_EX_WITH_BYTE_LEN,
	};
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_context *ctx = tv_open(DEV);
	unsigned char *mem;
	union ibv_gid gid;
	struct ep a, b;

	if (!ctx)
		return 1;
	if (ibv_query_gid(ctx, 1, 0, &gid))
		die("ibv_query_gid", errno, 0);
	pd = ibv_alloc_pd(ctx);
	/* at a fixed address: the RETH carries it, and ASLR would move it */
	mem = mmap((void *)FIXED_ADDR, 4 * BUF, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (mem != (void *)FIXED_ADDR)
		die("mmap at a fixed address", (uintptr_t)mem, FIXED_ADDR);
	cq = ibv_create_cq_ex(ctx, &ca);
	if (!pd || !cq)
		die("pd/mem/cq", errno, 0);
	mr = ibv_reg_mr(pd, mem, 4 * BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("ibv_reg_mr", errno, 0);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(cq);
	a.qp = ibv_create_qp(pd, &qa);
	b.qp = ibv_create_qp(pd, &qa);
	if (!a.qp || !b.qp)
		die("ibv_create_qp", errno, 0);
	a.send = mem, a.recv = mem + BUF, b.send = mem + 2 * BUF, b.recv = mem + 3 * BUF;
	if (tv_rc_connect(a.qp, b.qp->qp_num, &gid, IBV_MTU_1024, 10) ||
	    tv_rc_connect(b.qp, a.qp->qp_num, &gid, IBV_MTU_1024, 10))
		die("connect", errno, 0);
	post_recv(&a);
	post_recv(&b);
	for (uint32_t i = 0; i < iters; i++) {
		uint64_t ts[4];

		post_send(&a, &b, i);
		wait_pair(&a, &b, i, ts);
		post_recv(&b);
		post_send(&b, &a, i);
		wait_pair(&b, &a, i, ts + 2);
		post_recv(&a);
		printf("%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", i, ts[0], ts[1], ts[2], ts[3]);
	}
	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	munmap(mem, 4 * BUF);
	return 0;
}
