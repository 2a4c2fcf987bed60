/*
 * traffic_raw_tso.c - TSO on raw packet QPs (IBV_WR_TSO, ibv_wr_send_tso)
 * between uroce0 (02:00:7f:00:00:01) and uroce1 (02:00:7f:00:00:02) on one
 * VXLAN segment (tests/traffic_raw_tso.sh starts them). The receiver sees
 * each segment as a frame; the test rebuilds every expected segment itself
 * (header rules of the kernel's tcp_gso_segment: IPv4 length and ID, TCP
 * sequence, FIN/PSH on the last segment, CWR on the first; checksums by
 * RFC 1071 here), compares every byte and reassembles the payload. The
 * negative paths give mlx5's errno or completion status.
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
#define RQ_DEPTH 128
#define SLOT 2048
#define PAYLOAD_MAX (1u << 18)
#define TSO_HDR 128
#define TCP_PORT 7001

static const uint8_t mac0[6] = { 0x02, 0x00, 0x7f, 0x00, 0x00, 0x01 };
static const uint8_t mac1[6] = { 0x02, 0x00, 0x7f, 0x00, 0x00, 0x02 };

struct rawq {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;            /* RQ_DEPTH receive slots, then PAYLOAD_MAX + 64 bytes to send */
	uint32_t posted;
	struct ibv_flow *flow;
};

static void post_recv_one(struct rawq *q)
{
	uint32_t slot = q->posted % RQ_DEPTH;
	struct ibv_sge sge = { (uintptr_t)(q->buf + (size_t)slot * SLOT), SLOT, q->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = q->posted, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(q->qp, &wr, &bad), 0);
	q->posted++;
}

static uint8_t *send_area(struct rawq *q)
{
	return q->buf + (size_t)RQ_DEPTH * SLOT;
}

/* A raw QP of device NAME in RTS, TSO headers up to TSO_HDR bytes, the
 * extended post API with SEND and TSO; RQ_DEPTH receives posted. */
static void rawq_open(struct rawq *q, const char *name)
{
	struct ibv_cq_init_attr_ex cqa = { .cqe = 4 * RQ_DEPTH,
					   .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM };
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 16, .max_recv_wr = RQ_DEPTH, .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.max_tso_header = TSO_HDR,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	memset(q, 0, sizeof(*q));
	q->ctx = tv_open(name);
	ck_assert(q->ctx);
	q->pd = ibv_alloc_pd(q->ctx);
	q->cq = ibv_create_cq_ex(q->ctx, &cqa);
	ck_assert(q->pd && q->cq);
	ia.pd = q->pd;
	ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(q->cq);
	q->qp = ibv_create_qp_ex(q->ctx, &ia);
	ck_assert_msg(q->qp, "raw QP with max_tso_header %d: %s", TSO_HDR, strerror(errno));
	q->buf = calloc(1, (size_t)RQ_DEPTH * SLOT + PAYLOAD_MAX + 64);
	q->mr = ibv_reg_mr(q->pd, q->buf, (size_t)RQ_DEPTH * SLOT + PAYLOAD_MAX + 64, IBV_ACCESS_LOCAL_WRITE);
	ck_assert(q->buf && q->mr);
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
	if (q->flow)
		ck_assert_int_eq(ibv_destroy_flow(q->flow), 0);
	ck_assert_int_eq(ibv_destroy_qp(q->qp), 0);
	ibv_dereg_mr(q->mr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(q->cq));
	ibv_dealloc_pd(q->pd);
	ibv_close_device(q->ctx);
	free(q->buf);
}

/* A rule on Q for TCP destination port PORT (IPv4 or IPv6 as V6). */
static struct ibv_flow *tcp_rule(struct rawq *q, bool v6, uint16_t port)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_tcp_udp tcp;
	} f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .num_of_specs = 2, .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth),
			 .val.ether_type = htons(v6 ? 0x86dd : 0x0800), .mask.ether_type = 0xffff },
		.tcp = { .type = IBV_FLOW_SPEC_TCP, .size = sizeof(f.tcp), .val.dst_port = htons(port),
			 .mask.dst_port = 0xffff },
	};
	struct ibv_flow *fl = ibv_create_flow(q->qp, &f.attr);

	ck_assert_msg(fl, "ibv_create_flow: %s", strerror(errno));
	return fl;
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

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

/* A TSO header in H: Ethernet, IPv4 (ID 0x1234, DF, TTL 64) or IPv6, TCP
 * from port 40000 to PORT, sequence SEQ, flags FLAGS, 12 bytes of options
 * (NOP NOP timestamp) when OPTS. Length and checksum fields hold junk the
 * segmentation must overwrite. Returns its length. */
static uint16_t tso_hdr(uint8_t *h, bool v6, uint16_t port, uint32_t seq, uint8_t flags, bool opts)
{
	size_t l3 = 14, l4 = l3 + (v6 ? 40 : 20), thl = opts ? 32 : 20;
	uint8_t *t = h + l4;

	memset(h, 0, l4 + thl);
	memcpy(h, mac1, 6);
	memcpy(h + 6, mac0, 6);
	put16(h + 12, v6 ? 0x86dd : 0x0800);
	if (v6) {
		h[l3] = 0x60;
		put16(h + l3 + 4, 0xbeef);
		h[l3 + 6] = 6;
		h[l3 + 7] = 64;
		h[l3 + 8] = 0xfd;
		h[l3 + 23] = 1;
		h[l3 + 24] = 0xfd;
		h[l3 + 39] = 2;
	} else {
		h[l3] = 0x45;
		put16(h + l3 + 2, 0xbeef);
		put16(h + l3 + 4, 0x1234);
		h[l3 + 6] = 0x40;
		h[l3 + 8] = 64;
		h[l3 + 9] = 6;
		put16(h + l3 + 10, 0xdead);
		memcpy(h + l3 + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	}
	put16(t, 40000);
	put16(t + 2, port);
	put32(t + 4, seq);
	put32(t + 8, 0x01020304);
	t[12] = (uint8_t)(thl / 4 << 4);
	t[13] = flags;
	put16(t + 14, 0xfaf0);
	put16(t + 16, 0xbad0);
	if (opts) {
		t[20] = t[21] = 1;
		t[22] = 8;
		t[23] = 10;
		put32(t + 24, 0x11223344);
		put32(t + 28, 0x55667788);
	}
	return (uint16_t)(l4 + thl);
}

/* Expected segment I of a payload of LEN bytes cut at MSS behind header H
 * (HLEN bytes), into OUT; returns its length. */
static size_t expect_seg(const uint8_t *h, size_t hlen, bool v6, const uint8_t *pl, size_t len, size_t mss,
			 size_t i, size_t n, uint8_t *out)
{
	size_t l3 = 14, l4 = l3 + (v6 ? 40 : 20), seg = len - i * mss < mss ? len - i * mss : mss;
	uint8_t *t = out + l4;
	uint32_t sum;
	uint16_t c;

	memcpy(out, h, hlen);
	memcpy(out + hlen, pl + i * mss, seg);
	if (v6) {
		put16(out + l3 + 4, (uint32_t)(hlen - l4 + seg));
	} else {
		put16(out + l3 + 2, (uint32_t)(hlen - l3 + seg));
		put16(out + l3 + 4, 0x1234 + (uint32_t)i);
		put16(out + l3 + 10, 0);
		put16(out + l3 + 10, (uint16_t)~csum_fold(csum_add(0, out + l3, 20)));
	}
	put32(t + 4, (uint32_t)(0xfffff000u + i * mss)); /* the sequence wraps */
	if (i + 1 < n)
		t[13] &= (uint8_t)~0x09; /* FIN, PSH */
	if (i > 0)
		t[13] &= (uint8_t)~0x80; /* CWR */
	put16(t + 16, 0);
	sum = v6 ? csum_add(0, out + l3 + 8, 32) : csum_add(0, out + l3 + 12, 8);
	sum += 6 + (uint32_t)(hlen - l4 + seg);
	c = (uint16_t)~csum_fold(csum_add(sum, t, hlen - l4 + seg));
	put16(t + 16, c);
	return hlen + seg;
}

/* Waits for the send completion on Q: returns its status (and opcode). */
static enum ibv_wc_status send_done(struct rawq *q, enum ibv_wc_opcode *op)
{
	enum ibv_wc_status st;

	ck_assert_int_eq(tv_start_poll(q->cq, TMO), 0);
	st = q->cq->status;
	*op = st == IBV_WC_SUCCESS ? ibv_wc_read_opcode(q->cq) : IBV_WC_SEND;
	ibv_end_poll(q->cq);
	return st;
}

/* Receives N segments on R and checks each against expect_seg; the
 * payload reassembled from them equals PL. */
static void recv_segments(struct rawq *r, const uint8_t *h, size_t hlen, bool v6, const uint8_t *pl, size_t len,
			  size_t mss, size_t n)
{
	static uint8_t want[SLOT], joined[PAYLOAD_MAX];
	size_t got = 0;

	for (size_t i = 0; i < n; i++) {
		size_t wl = expect_seg(h, hlen, v6, pl, len, mss, i, n, want);
		uint32_t bl, flags;
		uint64_t id;
		const uint8_t *d;

		ck_assert_int_eq(tv_start_poll(r->cq, TMO), 0);
		ck_assert_int_eq(r->cq->status, IBV_WC_SUCCESS);
		ck_assert_int_eq(ibv_wc_read_opcode(r->cq), IBV_WC_RECV);
		bl = ibv_wc_read_byte_len(r->cq);
		flags = ibv_wc_read_wc_flags(r->cq);
		id = r->cq->wr_id;
		ibv_end_poll(r->cq);
		ck_assert_uint_eq(bl, wl);
		/* IPv4 with both checksums right: the CQE says so */
		ck_assert_uint_eq(flags & IBV_WC_IP_CSUM_OK, v6 ? 0 : IBV_WC_IP_CSUM_OK);
		d = r->buf + (size_t)(id % RQ_DEPTH) * SLOT;
		for (size_t z = 0; z < wl; z++)
			ck_assert_msg(d[z] == want[z], "segment %zu of %zu, byte %zu: %02x, expected %02x", i, n, z,
				      d[z], want[z]);
		memcpy(joined + got, d + hlen, wl - hlen);
		got += wl - hlen;
		post_recv_one(r);
	}
	ck_assert_uint_eq(got, len);
	ck_assert(!memcmp(joined, pl, len));
}

START_TEST(test_caps)
{
	struct ibv_context *c = tv_open("uroce0");
	struct ibv_device_attr_ex a;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET, .cap = { .max_send_wr = 1, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
	};
	struct ibv_qp *qp;

	ck_assert(c);
	ck_assert_int_eq(ibv_query_device_ex(c, NULL, &a), 0);
	ck_assert_uint_eq(a.tso_caps.max_tso, 262144);
	ck_assert_uint_eq(a.tso_caps.supported_qpts, 1u << IBV_QPT_RAW_PACKET);
	pd = ibv_alloc_pd(c);
	cq = ibv_create_cq(c, 4, NULL, NULL, 0);
	ia.pd = pd;
	ia.send_cq = ia.recv_cq = cq;
	/* the largest header one SGE leaves room for, and one byte more */
	ia.max_tso_header = 432;
	qp = ibv_create_qp_ex(c, &ia);
	ck_assert_msg(qp, "max_tso_header 432: %s", strerror(errno));
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ia.max_tso_header = 433;
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp_ex(c, &ia));
	ck_assert_int_eq(errno, EINVAL);
	/* 16 SGEs: 192 bytes */
	ia.cap.max_send_sge = 16;
	ia.max_tso_header = 192;
	qp = ibv_create_qp_ex(c, &ia);
	ck_assert(qp);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ia.max_tso_header = 193;
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp_ex(c, &ia));
	ck_assert_int_eq(errno, EINVAL);
	/* RC: no TSO header (mlx5: raw packet only), no TSO op */
	ia.qp_type = IBV_QPT_RC;
	ia.max_tso_header = 64;
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp_ex(c, &ia));
	ck_assert_int_eq(errno, EINVAL);
	ia.max_tso_header = 0;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO;
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp_ex(c, &ia));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
}
END_TEST

static void fill_payload(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 29 + (i >> 9));
}

/* 64 KiB in one ibv_post_send IBV_WR_TSO, MSS 1448, IPv4 + TCP with
 * options (66-byte header, 1514-byte segments), flags CWR|ACK|PSH|FIN,
 * IBV_SEND_IP_CSUM: 46 segments, 45 of 1448 bytes and one of 376. Then
 * 1000 more sends of varied sizes and MSS. */
START_TEST(test_tso_ipv4)
{
	struct rawq s, r;
	uint8_t h[TSO_HDR];
	uint8_t *pl;
	enum ibv_wc_opcode op;

	rawq_open(&s, "uroce0");
	rawq_open(&r, "uroce1");
	r.flow = tcp_rule(&r, false, TCP_PORT);
	pl = send_area(&s);
	for (int k = 0; k < 200; k++) {
		size_t len = k == 0 ? 65536 : (size_t)(k * 331) % 20000, mss = k == 0 ? 1448 : 536 + (size_t)k % 912;
		size_t n = len <= mss ? 1 : (len + mss - 1) / mss;
		uint16_t hl = tso_hdr(h, false, TCP_PORT, 0xfffff000u, 0x80 | 0x10 | 0x08 | 0x01, k % 2 == 0);
		struct ibv_sge sge[2] = { { (uintptr_t)pl, (uint32_t)(len / 3), s.mr->lkey },
					  { (uintptr_t)pl + len / 3, (uint32_t)(len - len / 3), s.mr->lkey } };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)k, .sg_list = sge, .num_sge = 2, .opcode = IBV_WR_TSO,
					  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM }, *bad;

		if (k == 0)
			ck_assert_uint_eq(n, 46);
		wr.tso.hdr = h;
		wr.tso.hdr_sz = hl;
		wr.tso.mss = (uint16_t)mss;
		fill_payload(pl, len, (uint32_t)k);
		ck_assert_int_eq(ibv_post_send(s.qp, &wr, &bad), 0);
		ck_assert_int_eq(send_done(&s, &op), IBV_WC_SUCCESS);
		ck_assert_int_eq(op, IBV_WC_TSO);
		recv_segments(&r, h, hl, false, pl, len, mss, n);
	}
	rawq_close(&s);
	rawq_close(&r);
}
END_TEST

/* IPv6 through the extended API (ibv_wr_send_tso then wr_set_sge_list,
 * and then inline data), without IBV_SEND_IP_CSUM on the inline one: its
 * TCP checksum field is the header's. */
START_TEST(test_tso_ipv6_ex)
{
	struct rawq s, r;
	uint8_t h[TSO_HDR];
	uint8_t *pl;
	struct ibv_qp_ex *x;
	enum ibv_wc_opcode op;
	uint16_t hl = tso_hdr(h, true, TCP_PORT + 1, 0xfffff000u, 0x10 | 0x08, false);

	rawq_open(&s, "uroce0");
	rawq_open(&r, "uroce1");
	r.flow = tcp_rule(&r, true, TCP_PORT + 1);
	x = ibv_qp_to_qp_ex(s.qp);
	ck_assert(x);
	pl = send_area(&s);
	fill_payload(pl, 30000, 7);
	{
		struct ibv_sge sge[2] = { { (uintptr_t)pl, 1000, s.mr->lkey }, { (uintptr_t)pl + 1000, 29000, s.mr->lkey } };

		ibv_wr_start(x);
		x->wr_id = 1;
		x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM;
		ibv_wr_send_tso(x, h, hl, 1440);
		ibv_wr_set_sge_list(x, 2, sge);
		ck_assert_int_eq(ibv_wr_complete(x), 0);
	}
	ck_assert_int_eq(send_done(&s, &op), IBV_WC_SUCCESS);
	ck_assert_int_eq(op, IBV_WC_TSO);
	recv_segments(&r, h, hl, true, pl, 30000, 1440, 21);
	/* inline payload, no checksum offload: 3 segments of 20, 20, 10 */
	{
		static uint8_t want[SLOT];
		uint8_t *t;

		ibv_wr_start(x);
		x->wr_id = 2;
		x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		ibv_wr_send_tso(x, h, hl, 20);
		ibv_wr_set_inline_data(x, pl, 50);
		ck_assert_int_eq(ibv_wr_complete(x), 0);
		ck_assert_int_eq(send_done(&s, &op), IBV_WC_SUCCESS);
		for (size_t i = 0; i < 3; i++) {
			size_t wl = expect_seg(h, hl, true, pl, 50, 20, i, 3, want);
			const uint8_t *d;

			t = want + 14 + 40;
			put16(t + 16, 0xbad0); /* as the header had it */
			ck_assert_int_eq(tv_start_poll(r.cq, TMO), 0);
			ck_assert_int_eq(r.cq->status, IBV_WC_SUCCESS);
			ck_assert_uint_eq(ibv_wc_read_byte_len(r.cq), wl);
			d = r.buf + (size_t)(r.cq->wr_id % RQ_DEPTH) * SLOT;
			ibv_end_poll(r.cq);
			ck_assert(!memcmp(d, want, wl));
			post_recv_one(&r);
		}
	}
	rawq_close(&s);
	rawq_close(&r);
}
END_TEST

/* Refused at post (EINVAL, as mlx5): header under 18 bytes or over
 * max_tso_header, MSS 0, SGEs over max_tso, a QP without max_tso_header.
 * Refused by the daemon (completion, QP to ERR): a UDP header
 * (IBV_WC_LOC_QP_OP_ERR), header + MSS over the MTU (IBV_WC_LOC_LEN_ERR). */
START_TEST(test_tso_errors)
{
	struct rawq s;
	uint8_t h[TSO_HDR + 8];
	uint16_t hl = tso_hdr(h, false, TCP_PORT, 1, 0x10, false);
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_TSO,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	enum ibv_wc_opcode op;

	rawq_open(&s, "uroce0");
	sge = (struct ibv_sge){ (uintptr_t)send_area(&s), 4000, s.mr->lkey };
	wr.tso.hdr = h;
	wr.tso.mss = 1000;
	wr.tso.hdr_sz = 17;
	ck_assert_int_eq(ibv_post_send(s.qp, &wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	wr.tso.hdr_sz = TSO_HDR + 1;
	ck_assert_int_eq(ibv_post_send(s.qp, &wr, &bad), EINVAL);
	wr.tso.hdr_sz = hl;
	wr.tso.mss = 0;
	ck_assert_int_eq(ibv_post_send(s.qp, &wr, &bad), EINVAL);
	wr.tso.mss = 1000;
	sge.length = 262145;
	ck_assert_int_eq(ibv_post_send(s.qp, &wr, &bad), EINVAL);
	/* an ibv_wr_send_tso error fails the whole batch */
	{
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(s.qp);

		ibv_wr_start(x);
		ibv_wr_send_tso(x, h, 17, 1000);
		ibv_wr_set_sge(x, s.mr->lkey, (uintptr_t)send_area(&s), 100);
		ck_assert_int_eq(ibv_wr_complete(x), EINVAL);
	}
	/* a segment of 66 + 1449 bytes is longer than MTU 1500 allows */
	sge.length = 4000;
	wr.tso.mss = 1500 - 20 - 20 + 1;
	ck_assert_int_eq(ibv_post_send(s.qp, &wr, &bad), 0);
	ck_assert_int_eq(send_done(&s, &op), IBV_WC_LOC_LEN_ERR);
	rawq_close(&s);

	/* UDP is no TSO header */
	rawq_open(&s, "uroce0");
	sge = (struct ibv_sge){ (uintptr_t)send_area(&s), 4000, s.mr->lkey };
	h[14 + 9] = 17;
	wr.tso.mss = 1000;
	ck_assert_int_eq(ibv_post_send(s.qp, &wr, &bad), 0);
	ck_assert_int_eq(send_done(&s, &op), IBV_WC_LOC_QP_OP_ERR);
	rawq_close(&s);

	/* no max_tso_header: every TSO post is EINVAL (mlx5: header over 0) */
	{
		struct ibv_context *c = tv_open("uroce0");
		struct ibv_pd *pd = ibv_alloc_pd(c);
		struct ibv_cq *cq = ibv_create_cq(c, 4, NULL, NULL, 0);
		struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq, .recv_cq = cq,
					       .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
		struct ibv_qp *qp = ibv_create_qp(pd, &ia);
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
		uint8_t b[64];
		struct ibv_mr *mr = ibv_reg_mr(pd, b, sizeof(b), 0);

		ck_assert(qp && mr);
		ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT), 0);
		a.qp_state = IBV_QPS_RTR;
		ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
		a.qp_state = IBV_QPS_RTS;
		ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
		sge = (struct ibv_sge){ (uintptr_t)b, sizeof(b), mr->lkey };
		h[14 + 9] = 6;
		ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), EINVAL);
		ck_assert_int_eq(ibv_destroy_qp(qp), 0);
		ibv_dereg_mr(mr);
		ibv_destroy_cq(cq);
		ibv_dealloc_pd(pd);
		ibv_close_device(c);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_raw_tso");
	TCase *tc = tcase_create("tso");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_caps);
	tcase_add_test(tc, test_tso_ipv4);
	tcase_add_test(tc, test_tso_ipv6_ex);
	tcase_add_test(tc, test_tso_errors);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
