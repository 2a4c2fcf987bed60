/*
 * raw_kernel_peer.c - one raw packet QP on uroce0 that talks to the
 * kernel's own stack over the VXLAN segment (tests/raw_kernel_vxlan.sh):
 * it receives the UDP datagram a kernel socket sent to UDP port RPORT (a
 * rule on that port), prints its payload, then sends a UDP datagram built
 * here with zero checksums and IBV_SEND_IP_CSUM to DST_MAC / DST_IP:DPORT
 * from SRC_IP, which the kernel accepts only if the checksums are right.
 *
 * usage: raw_kernel_peer RPORT SRC_MAC SRC_IP DST_MAC DST_IP DPORT PAYLOAD
 * Exit 0 after both; 1 with a message otherwise.
 */
#include "config.h"
#include "tests/traffic_verbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char *what)
{
	fprintf(stderr, "raw_kernel_peer: %s: %s\n", what, strerror(errno));
	return 1;
}

static int mac(const char *s, uint8_t m[6])
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_flow *flow;
	static uint8_t buf[2 * 2048];
	uint8_t smac[6], dmac[6];
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RAW_PACKET, .cap = { 4, 4, 1, 1, 0 } };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct {
		struct ibv_flow_attr a;
		struct ibv_flow_spec_ipv4 ip;
		struct ibv_flow_spec_tcp_udp udp;
	} rule = {
		.a = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(rule), .num_of_specs = 2, .port = 1 },
		.ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(rule.ip) },
		.udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(rule.udp), .mask.dst_port = 0xffff },
	};
	struct ibv_sge sge = { 0 };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM }, *sbad;
	struct ibv_wc wc;
	size_t plen, len, ulen;
	uint8_t *f, *ip, *u;

	if (argc != 8 || mac(argv[2], smac) || mac(argv[4], dmac)) {
		fprintf(stderr, "usage: raw_kernel_peer RPORT SRC_MAC SRC_IP DST_MAC DST_IP DPORT PAYLOAD\n");
		return 1;
	}
	ctx = tv_open("uroce0");
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!pd || !cq)
		return die("pd / cq");
	ia.send_cq = ia.recv_cq = cq;
	qp = ibv_create_qp(pd, &ia);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!qp || !mr)
		return die("qp / mr");
	if (ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PORT))
		return die("INIT");
	sge = (struct ibv_sge){ (uintptr_t)buf, 2048, mr->lkey };
	if (ibv_post_recv(qp, &rwr, &rbad))
		return die("post_recv");
	qa.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &qa, IBV_QP_STATE))
		return die("RTR");
	qa.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &qa, IBV_QP_STATE))
		return die("RTS");
	rule.udp.val.dst_port = htons((uint16_t)atoi(argv[1]));
	flow = ibv_create_flow(qp, &rule.a);
	if (!flow)
		return die("create_flow");
	printf("ready\n");
	fflush(stdout);
	if (tv_poll_one(cq, 60000, &wc) || wc.status != IBV_WC_SUCCESS || wc.wr_id != 1) {
		fprintf(stderr, "raw_kernel_peer: no datagram from the kernel (status %d)\n", wc.status);
		return 1;
	}
	/* Ethernet 14, IPv4 (ihl), UDP 8: print the payload */
	ip = buf + 14;
	u = ip + (ip[0] & 0xF) * 4;
	ulen = (size_t)(u[4] << 8 | u[5]);
	printf("received %u bytes, udp payload \"%.*s\", wc_flags 0x%x\n", wc.byte_len, (int)(ulen - 8), u + 8,
	       wc.wc_flags);
	fflush(stdout);

	plen = strlen(argv[7]);
	len = 14 + 20 + 8 + plen;
	f = buf + 2048;
	memset(f, 0, len);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	ip = f + 14;
	ip[0] = 0x45;
	ip[2] = (uint8_t)((len - 14) >> 8);
	ip[3] = (uint8_t)(len - 14);
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 17;
	if (inet_pton(AF_INET, argv[3], ip + 12) != 1 || inet_pton(AF_INET, argv[5], ip + 16) != 1)
		return die("addresses");
	u = ip + 20;
	u[0] = 0x30;
	u[1] = 0x39; /* source port 12345 */
	u[2] = (uint8_t)(atoi(argv[6]) >> 8);
	u[3] = (uint8_t)atoi(argv[6]);
	u[4] = (uint8_t)((8 + plen) >> 8);
	u[5] = (uint8_t)(8 + plen);
	memcpy(u + 8, argv[7], plen);
	sge = (struct ibv_sge){ (uintptr_t)f, (uint32_t)len, mr->lkey };
	if (ibv_post_send(qp, &swr, &sbad))
		return die("post_send");
	if (tv_poll_one(cq, 60000, &wc) || wc.status != IBV_WC_SUCCESS || wc.wr_id != 2) {
		fprintf(stderr, "raw_kernel_peer: send completion (status %d)\n", wc.status);
		return 1;
	}
	printf("sent %zu bytes\n", len);
	/* every object released, so the sanitizer run sees no leak */
	if (ibv_destroy_flow(flow) || ibv_destroy_qp(qp) || ibv_dereg_mr(mr) || ibv_destroy_cq(cq) ||
	    ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		return die("destroy");
	return 0;
}
