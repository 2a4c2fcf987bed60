/*
 * traffic_badicrc.c - packets with a bad ICRC are dropped by uroced before
 * they can do anything, seen end to end (run by traffic_badicrc.sh inside
 * `uroce run`, against a daemon on 127.0.0.1 UDP port PORT).
 *
 * Usage: traffic_badicrc PORT
 * Two RC QPs A and B on uroce0 are connected to each other (PSNs 0). B has
 * a receive posted and an MR open to remote writes. From a plain UDP
 * socket, packets are forged onto the wire at B as if A had sent them,
 * each with the right PSN, QPN, rkey and address but the ICRC's last byte
 * flipped (IBTA 9.8 / Annex A17.4: a packet whose ICRC does not match is
 * silently dropped):
 *   1. SEND ONLY, PSN 0, 32 bytes: no receive completion may appear;
 *   2. RDMA WRITE ONLY, PSN 0, 64 bytes at MR + 100: no byte may change.
 * Then the same two packets with a good ICRC (WRITE at PSN 0, SEND at
 * PSN 1) must be accepted: the bytes land, the receive completes with
 * byte_len 32 and the payload. That proves the corrupted ones would have
 * been seen had the daemon accepted them. The shell wrapper checks the
 * daemon counted exactly the two drops. Exit 0 iff all hold.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/packet.h"
#include "traffic_verbs.h"
#include "uroce/roce.h"
#include "soft_check.h"

#define DEV "uroce0"
#define MR_LEN 8192
#define WRITE_OFF 100
#define WRITE_LEN 64
#define SEND_LEN 32
#define QUIET_MS 500	/* how long a dropped packet gets to show up anyway */


static void die(const char *what, int err)
{
	fprintf(stderr, "FAIL: %s: %s\n", what, strerror(err));
	exit(1);
}

struct wire {
	int fd;
	struct sockaddr_in to;
	struct roce_l3 l3;
};

static void wire_open(struct wire *w, uint16_t port)
{
	struct sockaddr_in me = { .sin_family = AF_INET };
	socklen_t ml = sizeof(me);

	w->fd = socket(AF_INET, SOCK_DGRAM, 0);
	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (w->fd < 0 || bind(w->fd, (struct sockaddr *)&me, sizeof(me)) ||
	    getsockname(w->fd, (struct sockaddr *)&me, &ml))
		die("UDP socket", errno);
	memset(&w->to, 0, sizeof(w->to));
	w->to.sin_family = AF_INET;
	w->to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	w->to.sin_port = htons(port);
	memset(&w->l3, 0, sizeof(w->l3));
	w->l3.kind = ROCE_L3_IPV4;
	roce_addr_from_ipv4(w->l3.src, 0x7F000001);
	roce_addr_from_ipv4(w->l3.dst, 0x7F000001);
	w->l3.sport = ntohs(me.sin_port);
	w->l3.dport = port;
}

/* Send one packet built from H and PAYLOAD; BAD_ICRC flips the ICRC's last bit. */
static void wire_send(struct wire *w, const struct roce_hdrs *h, const void *payload,
		      uint32_t len, int bad_icrc)
{
	uint8_t pkt[2048];
	size_t n;
	int rc = roce_build_udp(pkt, sizeof(pkt), &w->l3, h, payload, len, &n);

	if (rc != ROCE_OK)
		die("roce_build_udp", EINVAL);
	if (bad_icrc)
		pkt[n - 1] ^= 1;
	if (sendto(w->fd, pkt, n, 0, (struct sockaddr *)&w->to, sizeof(w->to)) != (ssize_t)n)
		die("sendto", errno);
}

/* 1 if a completion shows up on CQ within MS (left current: caller ends the poll). */
static int completion_within(struct ibv_cq_ex *cq, int ms)
{
	int rc = tv_start_poll(cq, ms);

	if (rc && rc != ETIMEDOUT)
		die("ibv_start_poll", rc);
	return rc == 0;
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	struct ibv_cq_init_attr_ex cqa = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_qp_init_attr qpa = { .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 4, .max_recv_wr = 4,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	unsigned char *mem, wdata[WRITE_LEN], sdata[SEND_LEN];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	union ibv_gid gid;
	struct roce_hdrs h;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 0x77, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct wire w;
	uint64_t t0;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: traffic_badicrc UDP-PORT\n");
		return 2;
	}
	ctx = tv_open(DEV);
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq_ex(ctx, &cqa);
	if (!pd || !cq)
		die("PD/CQ", errno);
	qpa.send_cq = qpa.recv_cq = ibv_cq_ex_to_cq(cq);
	a = ibv_create_qp(pd, &qpa);
	b = ibv_create_qp(pd, &qpa);
	mem = calloc(1, MR_LEN);
	mr = ibv_reg_mr(pd, mem, MR_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!a || !b || !mem || !mr)
		die("QP/MR", errno);
	if ((rc = ibv_query_gid(ctx, 1, 0, &gid)))
		die("ibv_query_gid", rc);
	if ((rc = tv_rc_connect(a, b->qp_num, &gid, IBV_MTU_1024, 14)) ||
	    (rc = tv_rc_connect(b, a->qp_num, &gid, IBV_MTU_1024, 14)))
		die("connect", rc);
	sge.addr = (uintptr_t)mem + 4096;
	sge.length = 4096;
	sge.lkey = mr->lkey;
	if ((rc = ibv_post_recv(b, &rwr, &bad)))
		die("ibv_post_recv", rc);
	for (unsigned i = 0; i < WRITE_LEN; i++)
		wdata[i] = (unsigned char)(0xA0 + i);
	for (unsigned i = 0; i < SEND_LEN; i++)
		sdata[i] = (unsigned char)(0x30 + i);
	wire_open(&w, (uint16_t)atoi(argv[1]));

	/* 1. SEND with a bad ICRC: no receive completion */
	memset(&h, 0, sizeof(h));
	h.opcode = ROCE_OP_RC_SEND_ONLY;
	h.pkey = 0xFFFF;
	h.dqpn = b->qp_num;
	h.psn = 0;
	h.ackreq = 1;
	wire_send(&w, &h, sdata, SEND_LEN, 1);
	if (completion_within(cq, QUIET_MS)) {
		CHECK(0, "SEND with a bad ICRC completed: wr_id 0x%llx status %s",
		      (unsigned long long)cq->wr_id, ibv_wc_status_str(cq->status));
		ibv_end_poll(cq);
	} else {
		printf("ok   SEND ONLY with a bad ICRC: no receive completion in %d ms\n", QUIET_MS);
	}

	/* 2. RDMA WRITE with a bad ICRC: memory unchanged */
	h.opcode = ROCE_OP_RC_WRITE_ONLY;
	h.reth.va = (uintptr_t)mem + WRITE_OFF;
	h.reth.rkey = mr->rkey;
	h.reth.dma_len = WRITE_LEN;
	wire_send(&w, &h, wdata, WRITE_LEN, 1);
	usleep(QUIET_MS * 1000);
	CHECK(all_bytes(mem, 4096, 0), "RDMA WRITE with a bad ICRC changed the MR");
	if (all_bytes(mem, 4096, 0))
		printf("ok   RDMA WRITE ONLY with a bad ICRC: MR unchanged after %d ms\n", QUIET_MS);

	/* 3. the same WRITE with a good ICRC lands */
	wire_send(&w, &h, wdata, WRITE_LEN, 0);
	t0 = tv_now_ms();
	while (memcmp(mem + WRITE_OFF, wdata, WRITE_LEN) && tv_now_ms() - t0 < 10000)
		usleep(1000);
	CHECK(!memcmp(mem + WRITE_OFF, wdata, WRITE_LEN), "RDMA WRITE with a good ICRC did not land");
	CHECK(all_bytes(mem, WRITE_OFF, 0) && all_bytes(mem + WRITE_OFF + WRITE_LEN,
							4096 - WRITE_OFF - WRITE_LEN, 0),
	      "RDMA WRITE with a good ICRC wrote outside its range");

	/* 4. the SEND with a good ICRC (next PSN) completes the receive */
	memset(&h.reth, 0, sizeof(h.reth));
	h.opcode = ROCE_OP_RC_SEND_ONLY;
	h.psn = 1;
	wire_send(&w, &h, sdata, SEND_LEN, 0);
	if (!completion_within(cq, 10000)) {
		CHECK(0, "SEND with a good ICRC: no receive completion");
	} else {
		CHECK(cq->wr_id == 0x77 && cq->status == IBV_WC_SUCCESS &&
		      ibv_wc_read_opcode(cq) == IBV_WC_RECV && ibv_wc_read_byte_len(cq) == SEND_LEN &&
		      ibv_wc_read_qp_num(cq) == b->qp_num,
		      "SEND with a good ICRC: wr_id 0x%llx status %s byte_len %u",
		      (unsigned long long)cq->wr_id, ibv_wc_status_str(cq->status),
		      ibv_wc_read_byte_len(cq));
		CHECK(!memcmp(mem + 4096, sdata, SEND_LEN), "SEND with a good ICRC: payload");
		CHECK(ibv_next_poll(cq) == ENOENT, "a second completion appeared");
		ibv_end_poll(cq);
	}
	if (!failures)
		printf("ok   the same packets with a good ICRC: WRITE landed, SEND completed (%u bytes)\n",
		       SEND_LEN);

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(mem);
	close(w.fd);
	return failures ? 1 : 0;
}
