/*
 * traffic_raw.c - raw packet QPs (IBV_QPT_RAW_PACKET) and flow steering
 * through the public verbs API: uroce0 (127.0.0.1, MAC 02:00:7f:00:00:01)
 * and uroce1 (127.0.0.2, MAC 02:00:7f:00:00:02) on one VXLAN segment
 * (tests/traffic_raw.sh starts them). Every frame is checked byte for byte
 * at the receiver, every CQE field the test can see exactly (byte_len,
 * wc_flags, opcode, qp_num, flow tag, C-VLAN), IBV_SEND_IP_CSUM by
 * recomputing the checksums here (RFC 1071), and the negative paths give
 * the errno / completion status mlx5 gives.
 */
#include "config.h"
#include "tests/check_main.h"
#include "tests/traffic_verbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TMO 20000
#define RQ_DEPTH 64
#define SLOT 9216                /* receive buffer per WQE */
#define WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_CVLAN | \
		  IBV_WC_EX_WITH_FLOW_TAG)

static const uint8_t mac0[6] = { 0x02, 0x00, 0x7f, 0x00, 0x00, 0x01 };
static const uint8_t mac1[6] = { 0x02, 0x00, 0x7f, 0x00, 0x00, 0x02 };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

struct rawq {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;            /* RQ_DEPTH receive slots, then one send slot */
	uint32_t posted;         /* receive WQEs posted (slot = posted % RQ_DEPTH) */
};

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_context *c = tv_open(name);

	ck_assert_msg(c, "open %s", name);
	return c;
}

static void post_recv_one(struct rawq *q)
{
	uint32_t slot = q->posted % RQ_DEPTH;
	struct ibv_sge sge = { (uintptr_t)(q->buf + (size_t)slot * SLOT), SLOT, q->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = q->posted, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(q->qp, &wr, &bad), 0);
	q->posted++;
}

/* A raw QP on CTX (a new context of device NAME) in RTS with RQ_DEPTH
 * receive WQEs posted. */
static void rawq_open(struct rawq *q, const char *name)
{
	struct ibv_cq_init_attr_ex cqa = { .cqe = 4 * RQ_DEPTH, .wc_flags = WC_FLAGS };
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = RQ_DEPTH, .max_recv_wr = RQ_DEPTH, .max_send_sge = 2,
			 .max_recv_sge = 1, .max_inline_data = 64 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	memset(q, 0, sizeof(*q));
	q->ctx = open_dev(name);
	q->pd = ibv_alloc_pd(q->ctx);
	ck_assert(q->pd);
	q->cq = ibv_create_cq_ex(q->ctx, &cqa);
	ck_assert_msg(q->cq, "create_cq_ex with CVLAN | FLOW_TAG: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(q->cq);
	q->qp = ibv_create_qp(q->pd, &ia);
	ck_assert_msg(q->qp, "create raw packet QP: %s", strerror(errno));
	q->buf = calloc(RQ_DEPTH + 1, SLOT);
	q->mr = ibv_reg_mr(q->pd, q->buf, (size_t)(RQ_DEPTH + 1) * SLOT, IBV_ACCESS_LOCAL_WRITE);
	ck_assert(q->mr);
	ck_assert_int_eq(ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PORT), 0);
	for (int i = 0; i < RQ_DEPTH; i++)
		post_recv_one(q);
	a.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(ibv_modify_qp(q->qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(ibv_modify_qp(q->qp, &a, IBV_QP_STATE), 0);
}

static void rawq_close(struct rawq *q)
{
	ck_assert_int_eq(ibv_destroy_qp(q->qp), 0);
	ibv_dereg_mr(q->mr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(q->cq));
	ibv_dealloc_pd(q->pd);
	ibv_close_device(q->ctx);
	free(q->buf);
}

/* A NORMAL rule on Q: destination MAC (and ether type if non-zero), UDP
 * destination port if non-zero, a tag if TAG >= 0, DROP if DROP. */
static struct ibv_flow *rule(struct rawq *q, const uint8_t *dmac, uint16_t etype, uint16_t udp_dport,
			     long tag, bool drop, uint16_t prio)
{
	struct {
		struct ibv_flow_attr attr;
		uint8_t specs[512];
	} f;
	uint8_t *p = f.specs;
	struct ibv_flow *flow;

	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.priority = prio;
	f.attr.port = 1;
	if (dmac || etype) {
		struct ibv_flow_spec_eth e = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(e) };

		if (dmac) {
			memcpy(e.val.dst_mac, dmac, 6);
			memset(e.mask.dst_mac, 0xff, 6);
		}
		if (etype) {
			e.val.ether_type = htons(etype);
			e.mask.ether_type = 0xffff;
		}
		memcpy(p, &e, sizeof(e));
		p += sizeof(e);
		f.attr.num_of_specs++;
	}
	if (udp_dport) {
		struct ibv_flow_spec_ipv4 ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(ip) };
		struct ibv_flow_spec_tcp_udp u = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(u) };

		memcpy(p, &ip, sizeof(ip));
		p += sizeof(ip);
		u.val.dst_port = htons(udp_dport);
		u.mask.dst_port = 0xffff;
		memcpy(p, &u, sizeof(u));
		p += sizeof(u);
		f.attr.num_of_specs += 2;
	}
	if (tag >= 0) {
		struct ibv_flow_spec_action_tag t = { .type = IBV_FLOW_SPEC_ACTION_TAG, .size = sizeof(t),
						      .tag_id = (uint32_t)tag };

		memcpy(p, &t, sizeof(t));
		p += sizeof(t);
		f.attr.num_of_specs++;
	}
	if (drop) {
		struct ibv_flow_spec_action_drop d = { .type = IBV_FLOW_SPEC_ACTION_DROP, .size = sizeof(d) };

		memcpy(p, &d, sizeof(d));
		p += sizeof(d);
		f.attr.num_of_specs++;
	}
	f.attr.size = (uint16_t)(sizeof(f.attr) + (size_t)(p - f.specs));
	flow = ibv_create_flow(q->qp, &f.attr);
	ck_assert_msg(flow, "ibv_create_flow: %s", strerror(errno));
	return flow;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/*
 * Builds an Ethernet/IPv4/UDP frame of LEN bytes (>= 42) in F: DMAC,
 * SMAC, optional 802.1Q TCI (VLAN != 0), 10.0.0.1:SPORT -> 10.0.0.2:DPORT,
 * payload bytes from SEED, checksums zero (or filled here if FILL).
 * Returns the L3 offset.
 */
static size_t udp_frame(uint8_t *f, size_t len, const uint8_t *dmac, const uint8_t *smac, uint16_t vlan,
			uint16_t sport, uint16_t dport, uint32_t seed, bool fill)
{
	size_t l3 = vlan ? 18 : 14, ulen = len - l3 - 20;
	uint8_t *ip = f + l3, *u = ip + 20;

	memset(f, 0, len);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	if (vlan) {
		f[12] = 0x81;
		f[14] = (uint8_t)(vlan >> 8);
		f[15] = (uint8_t)vlan;
	}
	f[l3 - 2] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)((len - l3) >> 8);
	ip[3] = (uint8_t)(len - l3);
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	u[0] = (uint8_t)(sport >> 8);
	u[1] = (uint8_t)sport;
	u[2] = (uint8_t)(dport >> 8);
	u[3] = (uint8_t)dport;
	u[4] = (uint8_t)(ulen >> 8);
	u[5] = (uint8_t)ulen;
	for (size_t i = 8; i < ulen; i++)
		u[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
	if (fill) {
		uint16_t c = (uint16_t)~csum_fold(csum_add(0, ip, 20));
		uint32_t s;

		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
		s = csum_add(0, ip + 12, 8) + 17 + (uint32_t)ulen;
		c = (uint16_t)~csum_fold(csum_add(s, u, ulen));
		if (!c)
			c = 0xffff;
		u[6] = (uint8_t)(c >> 8);
		u[7] = (uint8_t)c;
	}
	return l3;
}

/* Sends LEN bytes of FRAME (copied into Q's send slot; in two SGEs when
 * SPLIT) with SEND_FLAGS and waits for the send completion: returns its status. */
static enum ibv_wc_status send_frame(struct rawq *q, const uint8_t *frame, size_t len, unsigned int flags,
				     bool split)
{
	uint8_t *s = q->buf + (size_t)RQ_DEPTH * SLOT;
	struct ibv_sge sge[2] = { { (uintptr_t)s, (uint32_t)len, q->mr->lkey } };
	struct ibv_send_wr wr = { .wr_id = 0x5e, .sg_list = sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | flags }, *bad;
	enum ibv_wc_status st;

	memcpy(s, frame, len);
	if (split && len > 20) {
		sge[0].length = 20;
		sge[1] = (struct ibv_sge){ (uintptr_t)s + 20, (uint32_t)len - 20, q->mr->lkey };
		wr.num_sge = 2;
	}
	ck_assert_int_eq(ibv_post_send(q->qp, &wr, &bad), 0);
	ck_assert_int_eq(tv_start_poll(q->cq, TMO), 0);
	ck_assert_int_eq(q->cq->wr_id, 0x5e);
	st = q->cq->status;
	if (st == IBV_WC_SUCCESS) {
		ck_assert_int_eq(ibv_wc_read_opcode(q->cq), IBV_WC_SEND);
		ck_assert_uint_eq(ibv_wc_read_qp_num(q->cq), q->qp->qp_num);
	}
	ibv_end_poll(q->cq);
	return st;
}

struct rx {
	uint64_t wr_id;
	uint32_t byte_len, qp_num, flow_tag;
	unsigned int wc_flags;
	uint16_t cvlan;
	enum ibv_wc_status status;
	const uint8_t *data;
};

/* Waits for Q's next receive completion (send completions skipped) and
 * reposts its WQE afterwards (the caller reads data first: the repost
 * happens at the next call). */
static void recv_frame(struct rawq *q, struct rx *r)
{
	ck_assert_int_eq(tv_start_poll(q->cq, TMO), 0);
	r->wr_id = q->cq->wr_id;
	r->status = q->cq->status;
	r->qp_num = ibv_wc_read_qp_num(q->cq);
	if (r->status == IBV_WC_SUCCESS) {
		ck_assert_int_eq(ibv_wc_read_opcode(q->cq), IBV_WC_RECV);
		r->byte_len = ibv_wc_read_byte_len(q->cq);
		r->wc_flags = ibv_wc_read_wc_flags(q->cq);
		r->cvlan = ibv_wc_read_cvlan(q->cq);
		r->flow_tag = ibv_wc_read_flow_tag(q->cq);
	}
	ibv_end_poll(q->cq);
	r->data = q->buf + (size_t)(r->wr_id % RQ_DEPTH) * SLOT;
}

/* Nothing arrives at Q within MS milliseconds. */
static void expect_nothing(struct rawq *q, int ms)
{
	int rc = tv_start_poll(q->cq, ms);

	if (rc == 0)
		ibv_end_poll(q->cq);
	ck_assert_msg(rc == ETIMEDOUT, "a completion arrived where none should (rc %d)", rc);
}

static void expect_frame(struct rawq *rq, const uint8_t *want, size_t len, unsigned int wc_flags)
{
	struct rx r;

	recv_frame(rq, &r);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(r.byte_len, len);
	ck_assert_uint_eq(r.qp_num, rq->qp->qp_num);
	ck_assert_uint_eq(r.wc_flags, wc_flags);
	ck_assert_msg(!memcmp(r.data, want, len), "frame of %zu bytes differs", len);
	post_recv_one(rq);
}

START_TEST(test_caps)
{
	struct ibv_context *c = open_dev("uroce0");
	struct ibv_device_attr_ex a;

	ck_assert_int_eq(ibv_query_device_ex(c, NULL, &a), 0);
	ck_assert_uint_eq(a.raw_packet_caps, IBV_RAW_PACKET_CAP_IP_CSUM | IBV_RAW_PACKET_CAP_CVLAN_STRIPPING |
						     IBV_RAW_PACKET_CAP_SCATTER_FCS | IBV_RAW_PACKET_CAP_DELAY_DROP);
	ck_assert(a.device_cap_flags_ex & IBV_DEVICE_RAW_IP_CSUM);
	ck_assert(a.orig_attr.device_cap_flags & IBV_DEVICE_RAW_IP_CSUM);
	ibv_close_device(c);
}
END_TEST

/* Every frame length 60..1514 (and 18..59), uroce0 -> uroce1, one and two
 * SGEs, exact bytes and byte_len; no IP_CSUM and zero checksums: the CQE
 * says L3 not OK, so no IBV_WC_IP_CSUM_OK. */
START_TEST(test_two_devices_all_sizes)
{
	static uint8_t f[1514];
	struct rawq a, b;
	struct ibv_flow *fl;

	rawq_open(&a, "uroce0");
	rawq_open(&b, "uroce1");
	fl = rule(&b, mac1, 0, 0, -1, false, 0);
	for (size_t len = 18; len <= 1514; len++) {
		for (size_t i = 0; i < len; i++)
			f[i] = (uint8_t)(len * 3 + i);
		memcpy(f, mac1, 6);
		memcpy(f + 6, mac0, 6);
		f[12] = 0x88;
		f[13] = 0xb5; /* IEEE local experimental ether type */
		ck_assert_int_eq(send_frame(&a, f, len, 0, len & 1), IBV_WC_SUCCESS);
		expect_frame(&b, f, len, 0);
	}
	ck_assert_int_eq(ibv_destroy_flow(fl), 0);
	rawq_close(&a);
	rawq_close(&b);
}
END_TEST

/* IBV_SEND_IP_CSUM: the receiver gets IPv4 and UDP checksums that verify
 * by recomputation here, equal to what this test computes, and the CQE
 * says L3 and L4 OK with an IPv4 header: IBV_WC_IP_CSUM_OK. A frame sent
 * with a wrong UDP checksum and no offload arrives as sent, without it. */
START_TEST(test_ip_csum)
{
	static uint8_t f[1514], want[1514];
	struct rawq a, b;
	struct ibv_flow *fl;
	struct rx r;

	rawq_open(&a, "uroce0");
	rawq_open(&b, "uroce1");
	fl = rule(&b, mac1, 0x0800, 0, -1, false, 0);
	for (size_t len = 60; len <= 1514; len += 13) {
		size_t l3 = udp_frame(f, len, mac1, mac0, 0, 1000 + (uint16_t)len, 4791, (uint32_t)len, false);

		udp_frame(want, len, mac1, mac0, 0, 1000 + (uint16_t)len, 4791, (uint32_t)len, true);
		ck_assert_int_eq(send_frame(&a, f, len, IBV_SEND_IP_CSUM, false), IBV_WC_SUCCESS);
		recv_frame(&b, &r);
		ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(r.byte_len, len);
		ck_assert_uint_eq(r.wc_flags, IBV_WC_IP_CSUM_OK);
		ck_assert_msg(!memcmp(r.data, want, len), "checksummed frame of %zu bytes differs", len);
		/* the header and the pseudo header + datagram each sum to 0xffff */
		ck_assert_uint_eq(csum_fold(csum_add(0, r.data + l3, 20)), 0xffff);
		ck_assert_uint_eq(csum_fold(csum_add(csum_add(0, r.data + l3 + 12, 8) + 17 + (uint32_t)(len - l3 - 20),
						     r.data + l3 + 20, len - l3 - 20)), 0xffff);
		post_recv_one(&b);
	}
	/* wrong UDP checksum, right IPv4 header checksum, no offload */
	udp_frame(f, 200, mac1, mac0, 0, 7, 9, 1, true);
	f[14 + 20 + 6] ^= 0x55;
	ck_assert_int_eq(send_frame(&a, f, 200, 0, false), IBV_WC_SUCCESS);
	expect_frame(&b, f, 200, 0);
	ck_assert_int_eq(ibv_destroy_flow(fl), 0);
	rawq_close(&a);
	rawq_close(&b);
}
END_TEST

/* Two QPs of one device: a frame to the device's own MAC stays inside it
 * and reaches the QP whose rule matches, never the sender; 3000 frames of
 * 64 bytes in bursts of RQ_DEPTH, each checked. */
START_TEST(test_one_device_many)
{
	struct rawq a, b;
	struct ibv_flow *fl;
	uint32_t n = 0;

	rawq_open(&a, "uroce0");
	rawq_open(&b, "uroce0");
	fl = rule(&b, mac0, 0x88b5, 0, -1, false, 0);
	while (n < 3000) {
		struct ibv_sge sge[RQ_DEPTH];
		struct ibv_send_wr wr[RQ_DEPTH], *bad;
		uint8_t *s = a.buf + (size_t)RQ_DEPTH * SLOT;
		/* 48 a post: more than a client's doorbell budget of a loop
		 * turn (32, emu/nic/doorbell.h), fewer than b's receive WQEs */
		int k = RQ_DEPTH * 3 / 4;

		for (int i = 0; i < k; i++) {
			uint8_t *p = s + (size_t)i * 64;

			memset(p, 0, 64);
			memcpy(p, mac0, 6);
			memcpy(p + 6, mac0, 6);
			p[12] = 0x88;
			p[13] = 0xb5;
			memcpy(p + 14, &(uint32_t){ n + (uint32_t)i }, 4);
			sge[i] = (struct ibv_sge){ (uintptr_t)p, 64, a.mr->lkey };
			wr[i] = (struct ibv_send_wr){ .wr_id = n + (uint32_t)i, .sg_list = &sge[i], .num_sge = 1,
						      .opcode = IBV_WR_SEND,
						      .send_flags = i == k - 1 ? IBV_SEND_SIGNALED : 0,
						      .next = i == k - 1 ? NULL : &wr[i + 1] };
		}
		ck_assert_int_eq(ibv_post_send(a.qp, wr, &bad), 0);
		ck_assert_int_eq(tv_start_poll(a.cq, TMO), 0);
		ck_assert_int_eq(a.cq->status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(a.cq->wr_id, n + (uint32_t)k - 1);
		ibv_end_poll(a.cq);
		for (int i = 0; i < k; i++) {
			struct rx r;
			uint32_t seq;

			recv_frame(&b, &r);
			ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
			ck_assert_uint_eq(r.byte_len, 64);
			memcpy(&seq, r.data + 14, 4);
			ck_assert_uint_eq(seq, n + (uint32_t)i);
			ck_assert(!memcmp(r.data, mac0, 6));
			post_recv_one(&b);
		}
		n += (uint32_t)k;
	}
	/* the sender's own frames never came back to it */
	expect_nothing(&a, 200);
	ck_assert_int_eq(ibv_destroy_flow(fl), 0);
	rawq_close(&a);
	rawq_close(&b);
}
END_TEST

/* Steering: two QPs on uroce1 with rules on UDP ports 5001 and 5002; a
 * frame for each reaches only its QP; a frame matching no rule reaches
 * nobody (counted by the daemon, checked by traffic_raw.sh); a tag rule's
 * tag comes in the CQE (read_flow_tag), the 802.1Q TCI in read_cvlan; a
 * higher-priority DROP rule drops; broadcast goes to a rule on ff:..:ff. */
START_TEST(test_steering)
{
	static uint8_t f[300];
	struct rawq a, b1, b2;
	struct ibv_flow *f1, *f2, *f3, *f4;
	struct rx r;

	rawq_open(&a, "uroce0");
	rawq_open(&b1, "uroce1");
	rawq_open(&b2, "uroce1");
	f1 = rule(&b1, NULL, 0, 5001, 0x123456, false, 1);
	f2 = rule(&b2, NULL, 0, 5002, -1, false, 1);
	udp_frame(f, 300, mac1, mac0, 0, 9, 5001, 1, true);
	ck_assert_int_eq(send_frame(&a, f, 300, 0, false), IBV_WC_SUCCESS);
	recv_frame(&b1, &r);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(r.byte_len, 300);
	ck_assert_uint_eq(r.flow_tag, 0x123456);
	ck_assert_uint_eq(r.qp_num, b1.qp->qp_num);
	ck_assert_uint_eq(r.cvlan, 0);
	ck_assert_uint_eq(r.wc_flags, IBV_WC_IP_CSUM_OK);
	ck_assert(!memcmp(r.data, f, 300));
	post_recv_one(&b1);
	expect_nothing(&b2, 300);

	/* VLAN 5, priority 3: the TCI in the CQE; no tag on this rule */
	udp_frame(f, 300, mac1, mac0, 0x6005, 9, 5002, 2, true);
	ck_assert_int_eq(send_frame(&a, f, 300, 0, false), IBV_WC_SUCCESS);
	recv_frame(&b2, &r);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(r.cvlan, 0x6005);
	ck_assert_uint_eq(r.flow_tag, 0);
	ck_assert_uint_eq(r.qp_num, b2.qp->qp_num);
	ck_assert(!memcmp(r.data, f, 300));
	post_recv_one(&b2);
	expect_nothing(&b1, 300);

	/* UDP port 5003: no rule; 4 frames dropped at uroce1 */
	udp_frame(f, 300, mac1, mac0, 0, 9, 5003, 3, true);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(send_frame(&a, f, 300, 0, false), IBV_WC_SUCCESS);
	expect_nothing(&b1, 300);
	expect_nothing(&b2, 100);

	/* a DROP rule at priority 0 on port 5001 wins over f1 (priority 1) */
	f3 = rule(&b2, NULL, 0, 5001, -1, true, 0);
	udp_frame(f, 300, mac1, mac0, 0, 9, 5001, 4, true);
	ck_assert_int_eq(send_frame(&a, f, 300, 0, false), IBV_WC_SUCCESS);
	expect_nothing(&b1, 300);
	expect_nothing(&b2, 100);
	/* a QP with rules cannot be destroyed (uverbs' use count) */
	ck_assert_int_eq(ibv_destroy_qp(b2.qp), EBUSY);
	ck_assert_int_eq(ibv_destroy_flow(f3), 0);
	ck_assert_int_eq(send_frame(&a, f, 300, 0, false), IBV_WC_SUCCESS);
	expect_frame(&b1, f, 300, IBV_WC_IP_CSUM_OK);

	/* broadcast: to the peers, taken by a rule on the broadcast MAC */
	f4 = rule(&b2, bcast, 0, 0, 7, false, 0);
	udp_frame(f, 300, bcast, mac0, 0, 9, 5001, 5, true);
	ck_assert_int_eq(send_frame(&a, f, 300, 0, false), IBV_WC_SUCCESS);
	recv_frame(&b2, &r);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(r.flow_tag, 7);
	ck_assert(!memcmp(r.data, f, 300));
	post_recv_one(&b2);
	expect_nothing(&b1, 300);

	ck_assert_int_eq(ibv_destroy_flow(f4), 0);
	ck_assert_int_eq(ibv_destroy_flow(f1), 0);
	ck_assert_int_eq(ibv_destroy_flow(f2), 0);
	rawq_close(&a);
	rawq_close(&b1);
	rawq_close(&b2);
}
END_TEST

/* The default and sniffer rule types: ALL_DEFAULT takes what no NORMAL
 * rule takes, SNIFFER sees every frame of the port, sent ones included. */
START_TEST(test_default_sniffer)
{
	static uint8_t f[100];
	struct rawq a, b, s;
	struct ibv_flow_attr at = { .type = IBV_FLOW_ATTR_ALL_DEFAULT, .size = sizeof(at), .port = 1 };
	struct ibv_flow *fd, *fs;

	rawq_open(&a, "uroce0");
	rawq_open(&b, "uroce1");
	rawq_open(&s, "uroce0");
	fd = ibv_create_flow(b.qp, &at);
	ck_assert_msg(fd, "ALL_DEFAULT rule: %s", strerror(errno));
	at.type = IBV_FLOW_ATTR_SNIFFER;
	fs = ibv_create_flow(s.qp, &at);
	ck_assert_msg(fs, "SNIFFER rule: %s", strerror(errno));
	udp_frame(f, 100, mac1, mac0, 0, 1, 2, 9, true);
	ck_assert_int_eq(send_frame(&a, f, 100, 0, false), IBV_WC_SUCCESS);
	expect_frame(&b, f, 100, IBV_WC_IP_CSUM_OK);
	expect_frame(&s, f, 100, IBV_WC_IP_CSUM_OK);
	ck_assert_int_eq(ibv_destroy_flow(fd), 0);
	ck_assert_int_eq(ibv_destroy_flow(fs), 0);
	rawq_close(&a);
	rawq_close(&b);
	rawq_close(&s);
}
END_TEST

/* A rule with ETH dst MAC (or, with DROP, UDP dport) and a COUNT action:
 * priority 1, the DROP one 0. */
static struct ibv_flow *count_rule(struct rawq *q, const uint8_t *dmac, uint16_t udp_dport,
				   struct ibv_counters *k, bool drop)
{
	struct {
		struct ibv_flow_attr attr;
		uint8_t specs[256];
	} f;
	uint8_t *p = f.specs;
	struct ibv_flow_spec_counter_action c = { .type = IBV_FLOW_SPEC_ACTION_COUNT, .size = sizeof(c),
						  .counters = k };

	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.port = 1;
	f.attr.priority = drop ? 0 : 1;
	if (dmac) {
		struct ibv_flow_spec_eth e = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(e) };

		memcpy(e.val.dst_mac, dmac, 6);
		memset(e.mask.dst_mac, 0xff, 6);
		memcpy(p, &e, sizeof(e));
		p += sizeof(e);
		f.attr.num_of_specs++;
	} else {
		struct ibv_flow_spec_ipv4 ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(ip) };
		struct ibv_flow_spec_tcp_udp u = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(u),
						   .val.dst_port = htons(udp_dport), .mask.dst_port = 0xffff };

		memcpy(p, &ip, sizeof(ip));
		p += sizeof(ip);
		memcpy(p, &u, sizeof(u));
		p += sizeof(u);
		f.attr.num_of_specs += 2;
	}
	memcpy(p, &c, sizeof(c));
	p += sizeof(c);
	f.attr.num_of_specs++;
	if (drop) {
		struct ibv_flow_spec_action_drop d = { .type = IBV_FLOW_SPEC_ACTION_DROP, .size = sizeof(d) };

		memcpy(p, &d, sizeof(d));
		p += sizeof(d);
		f.attr.num_of_specs++;
	}
	f.attr.size = (uint16_t)(sizeof(f.attr) + (size_t)(p - f.specs));
	return ibv_create_flow(q->qp, &f.attr);
}

/* The COUNT action (ibv_create_counters(3), static attach as mlx5): a rule
 * counting the 7 frames it takes (packets at index 0, bytes at 1, both at
 * 2), a DROP rule counting the 3 it drops; attach and destroy refused while
 * bound (EBUSY), a flow-bound attach and an unknown description refused
 * (EOPNOTSUPP), a rule on counters with nothing attached EINVAL. */
START_TEST(test_count)
{
	static uint8_t f[200];
	struct rawq a, b;
	struct ibv_counters *k, *kd, *empty;
	struct ibv_counter_attach_attr at = { .counter_desc = IBV_COUNTER_PACKETS, .index = 0 };
	struct ibv_flow *fl, *fd;
	uint64_t v[3], bytes = 0;

	rawq_open(&a, "uroce0");
	rawq_open(&b, "uroce1");
	k = ibv_create_counters(b.ctx, &(struct ibv_counters_init_attr){ 0 });
	kd = ibv_create_counters(b.ctx, &(struct ibv_counters_init_attr){ 0 });
	empty = ibv_create_counters(b.ctx, &(struct ibv_counters_init_attr){ 0 });
	ck_assert_msg(k && kd && empty, "ibv_create_counters: %s", strerror(errno));
	ck_assert_int_eq(ibv_attach_counters_point_flow(k, &at, NULL), 0);
	at.counter_desc = IBV_COUNTER_BYTES;
	at.index = 1;
	ck_assert_int_eq(ibv_attach_counters_point_flow(k, &at, NULL), 0);
	at.index = 2;
	ck_assert_int_eq(ibv_attach_counters_point_flow(k, &at, NULL), 0);
	at.counter_desc = IBV_COUNTER_PACKETS;
	ck_assert_int_eq(ibv_attach_counters_point_flow(k, &at, NULL), 0);
	at.index = 0;
	ck_assert_int_eq(ibv_attach_counters_point_flow(kd, &at, NULL), 0);
	at.counter_desc = (enum ibv_counter_description)7;
	ck_assert_int_eq(ibv_attach_counters_point_flow(kd, &at, NULL), EOPNOTSUPP);
	errno = 0;
	ck_assert_ptr_null(count_rule(&b, mac1, 0, empty, false));
	ck_assert_int_eq(errno, EINVAL);
	fl = count_rule(&b, mac1, 0, k, false);
	ck_assert_msg(fl, "count rule: %s", strerror(errno));
	fd = count_rule(&b, NULL, 7777, kd, true);
	ck_assert_msg(fd, "drop + count rule: %s", strerror(errno));
	at.counter_desc = IBV_COUNTER_PACKETS;
	ck_assert_int_eq(ibv_attach_counters_point_flow(k, &at, NULL), EBUSY);
	ck_assert_int_eq(ibv_attach_counters_point_flow(k, &at, fl), EOPNOTSUPP);
	ck_assert_int_eq(ibv_destroy_counters(k), EBUSY);
	for (size_t len = 100; len < 107; len++) {
		udp_frame(f, len, mac1, mac0, 0, 9, 5000, (uint32_t)len, true);
		ck_assert_int_eq(send_frame(&a, f, len, 0, false), IBV_WC_SUCCESS);
		expect_frame(&b, f, len, IBV_WC_IP_CSUM_OK);
		bytes += len;
	}
	/* port 7777: the DROP rule (priority 0) wins over the count rule (1),
	 * which does not see these frames */
	udp_frame(f, 150, mac1, mac0, 0, 9, 7777, 1, true);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(send_frame(&a, f, 150, 0, false), IBV_WC_SUCCESS);
	expect_nothing(&b, 300);
	ck_assert_int_eq(ibv_read_counters(k, v, 3, 0), 0);
	ck_assert_uint_eq(v[0], 7);
	ck_assert_uint_eq(v[1], bytes);
	ck_assert_uint_eq(v[2], bytes + 7);
	ck_assert_int_eq(ibv_read_counters(k, v, 2, 0), EINVAL);
	ck_assert_int_eq(ibv_read_counters(kd, v, 1, IBV_READ_COUNTERS_ATTR_PREFER_CACHED), 0);
	ck_assert_uint_eq(v[0], 3);
	ck_assert_int_eq(ibv_destroy_flow(fl), 0);
	ck_assert_int_eq(ibv_destroy_flow(fd), 0);
	ck_assert_int_eq(ibv_destroy_counters(k), 0);
	ck_assert_int_eq(ibv_destroy_counters(kd), 0);
	ck_assert_int_eq(ibv_destroy_counters(empty), 0);
	rawq_close(&a);
	rawq_close(&b);
}
END_TEST

/* Jumbo frames at MTU 9000 (traffic_raw.sh): 1515..9014 bytes in steps of
 * 571 and 9014 itself, then 9018 with an 802.1Q tag, each exact; a tagged
 * frame counts the tag beyond the MTU, an untagged one does not (9015 fails
 * in test_errors). */
START_TEST(test_jumbo)
{
	static uint8_t f[9018];
	struct rawq a, b;
	struct ibv_flow *fl;

	rawq_open(&a, "uroce0");
	rawq_open(&b, "uroce1");
	fl = rule(&b, mac1, 0, 0, -1, false, 0);
	for (size_t len = 1515; len <= 9014; len = len == 9014 ? 9015 : len + 571 > 9014 ? 9014 : len + 571) {
		for (size_t i = 0; i < len; i++)
			f[i] = (uint8_t)(len + i * 5);
		memcpy(f, mac1, 6);
		memcpy(f + 6, mac0, 6);
		f[12] = 0x88;
		f[13] = 0xb5;
		ck_assert_int_eq(send_frame(&a, f, len, 0, true), IBV_WC_SUCCESS);
		expect_frame(&b, f, len, 0);
	}
	udp_frame(f, 9018, mac1, mac0, 0x0123, 9, 9, 7, true);
	ck_assert_int_eq(send_frame(&a, f, 9018, 0, false), IBV_WC_SUCCESS);
	expect_frame(&b, f, 9018, IBV_WC_IP_CSUM_OK);
	ck_assert_int_eq(ibv_destroy_flow(fl), 0);
	rawq_close(&a);
	rawq_close(&b);
}
END_TEST

/* Negative paths, each with mlx5's (or the kernel's) answer. */
START_TEST(test_errors)
{
	static uint8_t f[9100];
	struct rawq a;
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RAW_PACKET, .cap = { 1, 1, 1, 1, 0 } };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge sge;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(fa), .port = 1 };

	rawq_open(&a, "uroce0");
	/* with an SRQ: EINVAL */
	srq = ibv_create_srq(a.pd, &sa);
	ck_assert(srq);
	ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(a.cq);
	ia.srq = srq;
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp(a.pd, &ia));
	ck_assert_int_eq(errno, EINVAL);
	ia.srq = NULL;
	/* no send CQ: EINVAL */
	ia.send_cq = NULL;
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp(a.pd, &ia));
	ck_assert_int_eq(errno, EINVAL);
	ia.send_cq = ibv_cq_ex_to_cq(a.cq);
	/* RESET -> INIT needs the port (ib_modify_qp_is_ok); port 2 does not exist */
	qp = ibv_create_qp(a.pd, &ia);
	ck_assert(qp);
	ck_assert_int_eq(ibv_modify_qp(qp, &qa, IBV_QP_STATE), EINVAL);
	qa.port_num = 2;
	ck_assert_int_eq(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PORT), EINVAL);
	/* a Q_Key is not an attribute of a raw QP */
	qa.port_num = 1;
	ck_assert_int_eq(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_QKEY), EINVAL);
	ck_assert_int_eq(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PORT), 0);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	/* a flow on a QP that is not a raw packet QP: EINVAL */
	{
		struct ibv_qp_init_attr ua = { .qp_type = IBV_QPT_UD, .send_cq = ia.send_cq,
					       .recv_cq = ia.recv_cq, .cap = { 1, 1, 1, 1, 0 } };
		struct ibv_qp *ud = ibv_create_qp(a.pd, &ua);

		ck_assert(ud);
		errno = 0;
		ck_assert_ptr_null(ibv_create_flow(ud, &fa));
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_int_eq(ibv_destroy_qp(ud), 0);
	}
	/* a GRE spec: EOPNOTSUPP (VXLAN: traffic_raw_tunnel.c) */
	{
		struct {
			struct ibv_flow_attr attr;
			struct ibv_flow_spec_gre t;
		} ft = { .attr = fa };

		ft.attr.num_of_specs = 1;
		ft.attr.size = sizeof(ft);
		ft.t.type = IBV_FLOW_SPEC_GRE;
		ft.t.size = sizeof(ft.t);
		errno = 0;
		ck_assert_ptr_null(ibv_create_flow(a.qp, &ft.attr));
		ck_assert_int_eq(errno, EOPNOTSUPP);
	}
	/* opcodes other than SEND: EINVAL at post; a frame under 18 bytes: EINVAL */
	sge = (struct ibv_sge){ (uintptr_t)a.buf, 17, a.mr->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ck_assert_int_eq(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	wr.opcode = IBV_WR_SEND;
	ck_assert_int_eq(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	/* 9015 bytes without a VLAN tag: longer than MTU 9000 allows; the WQE
	 * completes with a local length error and the QP goes to ERR */
	memset(f, 0, sizeof(f));
	memcpy(f, mac1, 6);
	memcpy(f + 6, mac0, 6);
	f[12] = 0x88;
	f[13] = 0xb5;
	ck_assert_int_eq(send_frame(&a, f, 9015, 0, false), IBV_WC_LOC_LEN_ERR);
	{
		struct ibv_qp_attr q;
		struct ibv_qp_init_attr qi;
		struct rx r;

		ck_assert_int_eq(ibv_query_qp(a.qp, &q, IBV_QP_STATE, &qi), 0);
		ck_assert_int_eq(q.qp_state, IBV_QPS_ERR);
		/* its receive WQEs are flushed */
		recv_frame(&a, &r);
		ck_assert_int_eq(r.status, IBV_WC_WR_FLUSH_ERR);
		ck_assert_uint_eq(r.wr_id, 0);
	}
	rawq_close(&a);
}
END_TEST

/* The test's own Toeplitz (Microsoft RSS): for every set input bit, the 32
 * key bits starting there. */
static uint32_t ref_toeplitz(const uint8_t *key, size_t klen, const uint8_t *in, size_t n)
{
	uint32_t h = 0;

	for (size_t bit = 0; bit < n * 8; bit++) {
		uint32_t w = 0;

		if (!(in[bit / 8] >> (7 - bit % 8) & 1))
			continue;
		for (size_t k = bit; k < bit + 32; k++)
			w = w << 1 | (k / 8 < klen ? (uint32_t)(key[k / 8] >> (7 - k % 8)) & 1 : 0);
		h ^= w;
	}
	return h;
}

#define RSS_WQS 8
#define RSS_WR 16
#define RSS_SLOT 256

/* RSS: 8 WQs on 2 CQs in an indirection table, an RSS QP hashing source and
 * destination IPv4 and UDP ports with the user's key, a rule on UDP port
 * 6000. 2000 frames from uroce0 with different 4-tuples: each lands on
 * exactly the WQ the test's Toeplitz and the table select (its CQ, its
 * wq_num in qp_num, its wr_id, the exact bytes); every WQ gets some. Busy
 * objects refuse to go (EBUSY), an RSS QP has no states (EOPNOTSUPP). */
START_TEST(test_rss)
{
	static const uint8_t key[40] = {
		0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a,
		0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9, 0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7,
		0xd9, 0x56, 0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a,
	};
	static uint8_t f[128];
	struct rawq a;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_wq *wq[RSS_WQS];
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp *rss;
	struct ibv_flow *fl;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	unsigned int per_wq[RSS_WQS] = { 0 };
	struct ibv_wc wc;

	rawq_open(&a, "uroce0");
	ctx = open_dev("uroce1");
	pd = ibv_alloc_pd(ctx);
	cq[0] = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cq[1] = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	ck_assert(pd && cq[0] && cq[1]);
	buf = calloc(RSS_WQS * RSS_WR, RSS_SLOT);
	mr = ibv_reg_mr(pd, buf, RSS_WQS * RSS_WR * RSS_SLOT, IBV_ACCESS_LOCAL_WRITE);
	ck_assert(mr);
	for (int i = 0; i < RSS_WQS; i++) {
		struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = RSS_WR, .max_sge = 1,
					       .pd = pd, .cq = cq[i % 2] };
		struct ibv_wq_attr m = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };

		wq[i] = ibv_create_wq(ctx, &wa);
		ck_assert_msg(wq[i], "ibv_create_wq: %s", strerror(errno));
		ck_assert_uint_eq(wa.max_wr, RSS_WR);
		ck_assert_int_eq(wq[i]->state, IBV_WQS_RESET);
		for (int k = 0; k < RSS_WR; k++) {
			uint64_t id = (uint64_t)i << 8 | (uint64_t)k;
			struct ibv_sge sge = { (uintptr_t)(buf + (size_t)(i * RSS_WR + k) * RSS_SLOT), RSS_SLOT,
					       mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

			ck_assert_int_eq(ibv_post_wq_recv(wq[i], &wr, &bad), 0);
		}
		ck_assert_int_eq(ibv_modify_wq(wq[i], &m), 0);
		ck_assert_int_eq(wq[i]->state, IBV_WQS_RDY);
	}
	tbl = ibv_create_rwq_ind_table(ctx, &(struct ibv_rwq_ind_table_init_attr){ .log_ind_tbl_size = 3,
										   .ind_tbl = wq });
	ck_assert_msg(tbl, "ibv_create_rwq_ind_table: %s", strerror(errno));
	{
		struct ibv_qp_init_attr_ex ia = {
			.qp_type = IBV_QPT_RAW_PACKET,
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH,
			.pd = pd, .rwq_ind_tbl = tbl,
			.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ, .rx_hash_key_len = 40,
					  .rx_hash_key = (uint8_t *)key,
					  .rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
								 IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP },
		};

		rss = ibv_create_qp_ex(ctx, &ia);
		ck_assert_msg(rss, "RSS QP: %s", strerror(errno));
	}
	ck_assert_int_eq(ibv_modify_qp(rss, &qa, IBV_QP_STATE | IBV_QP_PORT), EOPNOTSUPP);
	ck_assert_int_eq(ibv_destroy_wq(wq[3]), EBUSY);
	ck_assert_int_eq(ibv_destroy_rwq_ind_table(tbl), EBUSY);
	{
		struct rawq shim = { .qp = rss };

		fl = rule(&shim, NULL, 0, 6000, -1, false, 0);
	}
	for (uint32_t n = 0; n < 2000; n++) {
		uint8_t *ip = f + 14, *u = ip + 20, in[12];
		uint32_t h, want;
		uint8_t *got;

		udp_frame(f, sizeof(f), mac1, mac0, 0, (uint16_t)(1024 + n * 13), 6000, n, false);
		ip[12] = 10;
		ip[13] = (uint8_t)(n >> 8);
		ip[14] = (uint8_t)n;
		ip[15] = (uint8_t)(n * 7);
		memcpy(in, ip + 12, 8);
		memcpy(in + 8, u, 4);
		h = ref_toeplitz(key, sizeof(key), in, sizeof(in));
		want = h & (RSS_WQS - 1);
		ck_assert_int_eq(send_frame(&a, f, sizeof(f), 0, false), IBV_WC_SUCCESS);
		ck_assert_int_eq(tv_poll_one(cq[want % 2], TMO, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.qp_num, wq[want]->wq_num);
		ck_assert_uint_eq(wc.wr_id >> 8, want);
		ck_assert_uint_eq(wc.byte_len, sizeof(f));
		ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
		got = buf + (size_t)(want * RSS_WR + (wc.wr_id & 0xff)) * RSS_SLOT;
		for (size_t z = 0; z < sizeof(f); z++)
			ck_assert_msg(got[z] == f[z], "frame %u differs at byte %zu: %02x, sent %02x", n, z, got[z], f[z]);
		per_wq[want]++;
		{
			struct ibv_sge sge = { (uintptr_t)got, RSS_SLOT, mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = wc.wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

			ck_assert_int_eq(ibv_post_wq_recv(wq[want], &wr, &bad), 0);
		}
	}
	for (int i = 0; i < RSS_WQS; i++)
		ck_assert_msg(per_wq[i] > 0, "WQ %d got no frame", i);
	/* nothing went anywhere else */
	ck_assert_int_eq(ibv_poll_cq(cq[0], 1, &wc), 0);
	ck_assert_int_eq(ibv_poll_cq(cq[1], 1, &wc), 0);
	/* a WQ in ERR flushes what it holds */
	{
		struct ibv_wq_attr m = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_ERR };

		ck_assert_int_eq(ibv_modify_wq(wq[0], &m), 0);
		ck_assert_int_eq(wq[0]->state, IBV_WQS_ERR);
		for (int k = 0; k < RSS_WR; k++) {
			ck_assert_int_eq(tv_poll_one(cq[0], TMO, &wc), 0);
			ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
			ck_assert_uint_eq(wc.qp_num, wq[0]->wq_num);
		}
	}
	ck_assert_int_eq(ibv_destroy_flow(fl), 0);
	ck_assert_int_eq(ibv_destroy_qp(rss), 0);
	ck_assert_int_eq(ibv_destroy_rwq_ind_table(tbl), 0);
	for (int i = 0; i < RSS_WQS; i++)
		ck_assert_int_eq(ibv_destroy_wq(wq[i]), 0);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq[0]);
	ibv_destroy_cq(cq[1]);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	rawq_close(&a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_raw");
	TCase *tc = tcase_create("raw");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_caps);
	tcase_add_test(tc, test_two_devices_all_sizes);
	tcase_add_test(tc, test_ip_csum);
	tcase_add_test(tc, test_one_device_many);
	tcase_add_test(tc, test_steering);
	tcase_add_test(tc, test_default_sniffer);
	tcase_add_test(tc, test_jumbo);
	tcase_add_test(tc, test_count);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_rss);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
