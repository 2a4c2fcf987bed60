/*
 * traffic_raw_tunnel.c - steering and RSS on VXLAN-encapsulated frames
 * (docs/raw-packet.md §4, §5): a raw QP on uroce0 sends frames that carry
 * VXLAN themselves (outer Ethernet / IPv4 / UDP 4789 / VXLAN / inner
 * Ethernet / IPv4 / TCP) to uroce1, where IBV_FLOW_SPEC_VXLAN_TUNNEL rules
 * pick them by VNI, IBV_FLOW_SPEC_INNER specs by inner headers, and an RSS
 * QP with IBV_RX_HASH_INNER spreads them by their inner 5-tuple over the WQ
 * the test's own Toeplitz selects. tests/traffic_raw_tunnel.sh starts the
 * devices.
 */
#include "config.h"
#include "tests/check_main.h"
#include "tests/traffic_verbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TMO 20000
#define DEPTH 64
#define SLOT 256
#define FLEN 120                 /* 14 + 20 + 8 + 8 + 14 + 20 + 20 + 16 */

static const uint8_t mac0[6] = { 0x02, 0x00, 0x7f, 0x00, 0x00, 0x01 };
static const uint8_t mac1[6] = { 0x02, 0x00, 0x7f, 0x00, 0x00, 0x02 };

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static void dev_open(struct dev *d, const char *name, size_t bytes)
{
	d->ctx = tv_open(name);
	ck_assert(d->ctx);
	d->pd = ibv_alloc_pd(d->ctx);
	d->buf = calloc(1, bytes);
	d->mr = ibv_reg_mr(d->pd, d->buf, bytes, IBV_ACCESS_LOCAL_WRITE);
	ck_assert(d->pd && d->mr);
}

static void dev_close(struct dev *d)
{
	ibv_dereg_mr(d->mr);
	ibv_dealloc_pd(d->pd);
	ibv_close_device(d->ctx);
	free(d->buf);
}

/* A raw QP of D on CQ in RTS; N receives of SLOT bytes at d->buf + BASE. */
static struct ibv_qp *raw_qp(struct dev *d, struct ibv_cq *cq, size_t base, int n)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq, .recv_cq = cq,
				       .cap = { .max_send_wr = 4, .max_recv_wr = DEPTH, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(d->pd, &ia);

	ck_assert(qp);
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT), 0);
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)(d->buf + base + (size_t)i * SLOT), SLOT, d->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

		ck_assert_int_eq(ibv_post_recv(qp, &wr, &bad), 0);
	}
	a.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	return qp;
}

static void repost(struct dev *d, struct ibv_qp *qp, size_t base, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)(d->buf + base + (size_t)id * SLOT), SLOT, d->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(qp, &wr, &bad), 0);
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A VXLAN-carrying frame of FLEN bytes in F: outer 10.1.0.1 -> 10.1.0.2,
 * UDP OSPORT -> 4789 (or OUTER_DPORT when not 4789: then not VXLAN), VNI,
 * inner 02:..:0a -> 02:..:0b, ISRC -> IDST, TCP ISPORT -> IDPORT. */
static void vx_frame(uint8_t *f, uint16_t outer_dport, uint32_t vni, uint32_t isrc, uint32_t idst,
		     uint16_t isport, uint16_t idport)
{
	uint8_t *ip = f + 14, *u = ip + 20, *v = u + 8, *e = v + 8, *iip = e + 14, *t = iip + 20;

	memset(f, 0, FLEN);
	memcpy(f, mac1, 6);
	memcpy(f + 6, mac0, 6);
	put16(f + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, FLEN - 14);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, "\x0a\x01\x00\x01\x0a\x01\x00\x02", 8);
	put16(u, 49152);
	put16(u + 2, outer_dport);
	put16(u + 4, FLEN - 34);
	v[0] = 0x08;
	v[4] = (uint8_t)(vni >> 16);
	v[5] = (uint8_t)(vni >> 8);
	v[6] = (uint8_t)vni;
	memcpy(e, "\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a\x08\x00", 14);
	iip[0] = 0x45;
	put16(iip + 2, FLEN - 14 - 50);
	iip[8] = 64;
	iip[9] = 6;
	put16(iip + 12, isrc >> 16);
	put16(iip + 14, isrc & 0xffff);
	put16(iip + 16, idst >> 16);
	put16(iip + 18, idst & 0xffff);
	put16(t, isport);
	put16(t + 2, idport);
	t[12] = 0x50;
	t[13] = 0x10;
	for (int i = 0; i < 16; i++)
		t[20 + i] = (uint8_t)(vni + (uint32_t)i);
}

static void send_one(struct dev *d, struct ibv_qp *qp, struct ibv_cq *cq, const uint8_t *f)
{
	struct ibv_sge sge = { (uintptr_t)d->buf, FLEN, d->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	memcpy(d->buf, f, FLEN);
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
	ck_assert_int_eq(tv_poll_one(cq, TMO, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
}

/* Specs for a rule, appended one by one. */
struct rulebuf {
	struct ibv_flow_attr attr;
	uint8_t specs[512];
	size_t len;
};

static void rb_init(struct rulebuf *b, enum ibv_flow_attr_type type)
{
	memset(b, 0, sizeof(*b));
	b->attr.type = type;
	b->attr.port = 1;
}

static void rb_add(struct rulebuf *b, const void *spec, size_t n)
{
	memcpy(b->specs + b->len, spec, n);
	b->len += n;
	b->attr.num_of_specs++;
	b->attr.size = (uint16_t)(sizeof(b->attr) + b->len);
}

static void rb_vni(struct rulebuf *b, uint32_t vni, uint32_t mask)
{
	struct ibv_flow_spec_tunnel t = { .type = IBV_FLOW_SPEC_VXLAN_TUNNEL, .size = sizeof(t),
					  .val.tunnel_id = htonl(vni), .mask.tunnel_id = htonl(mask) };

	rb_add(b, &t, sizeof(t));
}

static void rb_inner_tcp(struct rulebuf *b, uint16_t dport)
{
	struct ibv_flow_spec_tcp_udp t = { .type = IBV_FLOW_SPEC_TCP | IBV_FLOW_SPEC_INNER, .size = sizeof(t),
					   .val.dst_port = htons(dport), .mask.dst_port = 0xffff };

	rb_add(b, &t, sizeof(t));
}

static void rb_tag(struct rulebuf *b, uint32_t tag)
{
	struct ibv_flow_spec_action_tag t = { .type = IBV_FLOW_SPEC_ACTION_TAG, .size = sizeof(t), .tag_id = tag };

	rb_add(b, &t, sizeof(t));
}

static struct ibv_flow *rb_create(struct ibv_qp *qp, struct rulebuf *b)
{
	struct ibv_flow *fl = ibv_create_flow(qp, &b->attr);

	ck_assert_msg(fl, "ibv_create_flow: %s", strerror(errno));
	return fl;
}

static int rb_refused(struct ibv_qp *qp, struct rulebuf *b)
{
	errno = 0;
	ck_assert_ptr_null(ibv_create_flow(qp, &b->attr));
	return errno;
}

/* Expects the next completion on CQ: a receive of the frame F on QP with
 * tag TAG (byte for byte); reposts it. */
static void expect_on(struct dev *d, struct ibv_qp *qp, struct ibv_cq_ex *cq, size_t base, const uint8_t *f,
		      uint32_t tag)
{
	uint64_t id;

	ck_assert_int_eq(tv_start_poll(cq, TMO), 0);
	ck_assert_int_eq(cq->status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(ibv_wc_read_qp_num(cq), qp->qp_num);
	ck_assert_uint_eq(ibv_wc_read_byte_len(cq), FLEN);
	ck_assert_uint_eq(ibv_wc_read_flow_tag(cq), tag);
	id = cq->wr_id;
	ibv_end_poll(cq);
	ck_assert(!memcmp(d->buf + base + id * SLOT, f, FLEN));
	repost(d, qp, base, id);
}

static void expect_none(struct ibv_cq_ex *cq)
{
	int rc = tv_start_poll(cq, 300);

	if (rc == 0)
		ibv_end_poll(cq);
	ck_assert_msg(rc == ETIMEDOUT, "a frame arrived where none should");
}

/* Rules on uroce1: A = VNI 0x123456 and inner TCP port 80 (tag 1), B =
 * VNI 0x654321 under mask 0xffff00 (tag 2), C = outer UDP 4789 only (tag
 * 3, priority 5: the lowest). Frames land exactly as their VNI and inner
 * port say; a frame on UDP 4790 is no VXLAN, so the inner spec never sees
 * port 80 in it. Refused: a VNI over 24 bits, two tunnel specs, a tunnel
 * spec on a default rule (EINVAL), inner ESP and inner tunnel (EOPNOTSUPP). */
START_TEST(test_tunnel_steering)
{
	struct dev s, r;
	struct ibv_cq *scq;
	struct ibv_cq_ex *rcq;
	struct ibv_cq_init_attr_ex cqa = { .cqe = 256, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
									IBV_WC_EX_WITH_FLOW_TAG };
	struct ibv_qp *sq, *qa, *qb;
	struct ibv_flow *fa, *fb, *fc;
	struct rulebuf b;
	uint8_t f[FLEN];

	dev_open(&s, "uroce0", 4096);
	dev_open(&r, "uroce1", 2 * DEPTH * SLOT);
	scq = ibv_create_cq(s.ctx, 16, NULL, NULL, 0);
	rcq = ibv_create_cq_ex(r.ctx, &cqa);
	ck_assert(scq && rcq);
	sq = raw_qp(&s, scq, 0, 0);
	qa = raw_qp(&r, ibv_cq_ex_to_cq(rcq), 0, DEPTH);
	qb = raw_qp(&r, ibv_cq_ex_to_cq(rcq), DEPTH * SLOT, DEPTH);
	rb_init(&b, IBV_FLOW_ATTR_NORMAL);
	rb_vni(&b, 0x123456, 0xffffff);
	rb_inner_tcp(&b, 80);
	rb_tag(&b, 1);
	fa = rb_create(qa, &b);
	rb_init(&b, IBV_FLOW_ATTR_NORMAL);
	rb_vni(&b, 0x654321, 0xffff00);
	rb_tag(&b, 2);
	fb = rb_create(qb, &b);
	{
		struct ibv_flow_spec_ipv4 ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(ip) };
		struct ibv_flow_spec_tcp_udp u = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(u),
						   .val.dst_port = htons(4789), .mask.dst_port = 0xffff };

		rb_init(&b, IBV_FLOW_ATTR_NORMAL);
		b.attr.priority = 5;
		rb_add(&b, &ip, sizeof(ip));
		rb_add(&b, &u, sizeof(u));
		rb_tag(&b, 3);
		fc = rb_create(qb, &b);
	}
	for (uint32_t n = 0; n < 300; n++) {
		switch (n % 5) {
		case 0: /* A */
			vx_frame(f, 4789, 0x123456, 0xc0a80001 + n, 0xc0a80101, (uint16_t)(1000 + n), 80);
			send_one(&s, sq, scq, f);
			expect_on(&r, qa, rcq, 0, f, 1);
			break;
		case 1: /* VNI of A, inner port 81: only C */
			vx_frame(f, 4789, 0x123456, 0xc0a80001, 0xc0a80101, 1000, 81);
			send_one(&s, sq, scq, f);
			expect_on(&r, qb, rcq, DEPTH * SLOT, f, 3);
			break;
		case 2: /* B: 0x6543xx */
			vx_frame(f, 4789, 0x654300 + (n & 0xff), 0x0a000001, 0x0a000002, 5, 80);
			send_one(&s, sq, scq, f);
			expect_on(&r, qb, rcq, DEPTH * SLOT, f, 2);
			break;
		case 3: /* VNI 0x123457 port 80: not A, only C */
			vx_frame(f, 4789, 0x123457, 0xc0a80001, 0xc0a80101, 1000, 80);
			send_one(&s, sq, scq, f);
			expect_on(&r, qb, rcq, DEPTH * SLOT, f, 3);
			break;
		case 4: /* UDP 4790: no VXLAN, no rule */
			vx_frame(f, 4790, 0x123456, 0xc0a80001, 0xc0a80101, 1000, 80);
			send_one(&s, sq, scq, f);
			expect_none(rcq);
			break;
		}
	}
	rb_init(&b, IBV_FLOW_ATTR_NORMAL);
	rb_vni(&b, 0x1000000, 0xffffffff);
	ck_assert_int_eq(rb_refused(qa, &b), EINVAL);
	rb_init(&b, IBV_FLOW_ATTR_NORMAL);
	rb_vni(&b, 1, 0xffffff);
	rb_vni(&b, 2, 0xffffff);
	ck_assert_int_eq(rb_refused(qa, &b), EINVAL);
	rb_init(&b, IBV_FLOW_ATTR_ALL_DEFAULT);
	rb_vni(&b, 1, 0xffffff);
	ck_assert_int_eq(rb_refused(qa, &b), EINVAL);
	{
		struct ibv_flow_spec_esp e = { .type = IBV_FLOW_SPEC_ESP | IBV_FLOW_SPEC_INNER, .size = sizeof(e) };
		struct ibv_flow_spec_tunnel t = { .type = IBV_FLOW_SPEC_VXLAN_TUNNEL | IBV_FLOW_SPEC_INNER,
						  .size = sizeof(t) };

		rb_init(&b, IBV_FLOW_ATTR_NORMAL);
		rb_add(&b, &e, sizeof(e));
		ck_assert_int_eq(rb_refused(qa, &b), EOPNOTSUPP);
		rb_init(&b, IBV_FLOW_ATTR_NORMAL);
		rb_add(&b, &t, sizeof(t));
		ck_assert_int_eq(rb_refused(qa, &b), EOPNOTSUPP);
	}
	ck_assert_int_eq(ibv_destroy_flow(fa), 0);
	ck_assert_int_eq(ibv_destroy_flow(fb), 0);
	ck_assert_int_eq(ibv_destroy_flow(fc), 0);
	ck_assert_int_eq(ibv_destroy_qp(qa), 0);
	ck_assert_int_eq(ibv_destroy_qp(qb), 0);
	ck_assert_int_eq(ibv_destroy_qp(sq), 0);
	ibv_destroy_cq(ibv_cq_ex_to_cq(rcq));
	ibv_destroy_cq(scq);
	dev_close(&s);
	dev_close(&r);
}
END_TEST

/* The test's own Toeplitz: for every set input bit, the 32 key bits
 * starting there. */
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

#define WQS 8
#define WQ_WR 16

/* RSS on inner fields: 8 WQs, hash INNER | SRC/DST IPV4 | SRC/DST TCP
 * ports, a rule for VNI 0x777. 2000 frames with the same outer headers and
 * different inner 4-tuples: each on the WQ the reference Toeplitz of its
 * inner fields selects, every WQ used. A QP without INNER over the same
 * frames hashes the one outer 4-tuple: all on one WQ. IPSEC_SPI stays
 * EOPNOTSUPP. */
START_TEST(test_inner_rss)
{
	static const uint8_t key[40] = {
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
		0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
		0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	};
	struct dev s, r;
	struct ibv_cq *scq, *cq;
	struct ibv_qp *sq, *rss[2];
	struct ibv_wq *wq[WQS];
	struct ibv_rwq_ind_table *tbl;
	struct ibv_flow *fl[2];
	unsigned int per[WQS] = { 0 };
	struct rulebuf b;
	uint8_t f[FLEN];
	struct ibv_wc wc;

	dev_open(&s, "uroce0", 4096);
	dev_open(&r, "uroce1", WQS * WQ_WR * SLOT);
	scq = ibv_create_cq(s.ctx, 16, NULL, NULL, 0);
	cq = ibv_create_cq(r.ctx, 256, NULL, NULL, 0);
	sq = raw_qp(&s, scq, 0, 0);
	for (int i = 0; i < WQS; i++) {
		struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = WQ_WR, .max_sge = 1, .pd = r.pd,
					       .cq = cq };
		struct ibv_wq_attr m = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };

		wq[i] = ibv_create_wq(r.ctx, &wa);
		ck_assert(wq[i]);
		for (int k = 0; k < WQ_WR; k++) {
			struct ibv_sge sge = { (uintptr_t)(r.buf + (size_t)(i * WQ_WR + k) * SLOT), SLOT, r.mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = (uint64_t)(i * WQ_WR + k), .sg_list = &sge, .num_sge = 1 },
					   *bad;

			ck_assert_int_eq(ibv_post_wq_recv(wq[i], &wr, &bad), 0);
		}
		ck_assert_int_eq(ibv_modify_wq(wq[i], &m), 0);
	}
	tbl = ibv_create_rwq_ind_table(r.ctx, &(struct ibv_rwq_ind_table_init_attr){ .log_ind_tbl_size = 3,
										     .ind_tbl = wq });
	ck_assert(tbl);
	for (int k = 0; k < 3; k++) {
		uint64_t fields = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
		struct ibv_qp_init_attr_ex ia = {
			.qp_type = IBV_QPT_RAW_PACKET,
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH,
			.pd = r.pd, .rwq_ind_tbl = tbl,
			.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ, .rx_hash_key_len = 40,
					  .rx_hash_key = (uint8_t *)key },
		};

		fields |= k == 0 ? IBV_RX_HASH_INNER | IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP :
			  k == 1 ? IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP : IBV_RX_HASH_IPSEC_SPI;
		ia.rx_hash_conf.rx_hash_fields_mask = fields;
		if (k == 2) {
			errno = 0;
			ck_assert_ptr_null(ibv_create_qp_ex(r.ctx, &ia));
			ck_assert_int_eq(errno, EOPNOTSUPP);
			break;
		}
		rss[k] = ibv_create_qp_ex(r.ctx, &ia);
		ck_assert_msg(rss[k], "RSS QP: %s", strerror(errno));
	}
	rb_init(&b, IBV_FLOW_ATTR_NORMAL);
	rb_vni(&b, 0x777, 0xffffff);
	fl[0] = rb_create(rss[0], &b);
	rb_init(&b, IBV_FLOW_ATTR_NORMAL);
	rb_vni(&b, 0x778, 0xffffff);
	fl[1] = rb_create(rss[1], &b);
	for (uint32_t n = 0; n < 2200; n++) {
		bool inner = n < 2000;
		uint32_t isrc = 0xc0a80000 + n * 7, idst = 0xac100000 + n * 13;
		uint16_t isp = (uint16_t)(1024 + n * 31), idp = (uint16_t)(80 + n % 300);
		uint8_t in[12];
		unsigned int want;

		vx_frame(f, 4789, inner ? 0x777 : 0x778, isrc, idst, isp, idp);
		/* the input: inner addresses and ports, or the outer ones */
		memcpy(in, inner ? f + 50 + 14 + 12 : f + 14 + 12, 8);
		memcpy(in + 8, inner ? f + 50 + 34 : f + 34, 4);
		want = ref_toeplitz(key, sizeof(key), in, sizeof(in)) & (WQS - 1);
		send_one(&s, sq, scq, f);
		ck_assert_int_eq(tv_poll_one(cq, TMO, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_msg(wc.qp_num == wq[want]->wq_num, "frame %u: WQ %u, expected WQ %u (num %u)", n, wc.qp_num,
			      want, wq[want]->wq_num);
		ck_assert_uint_eq(wc.byte_len, FLEN);
		ck_assert(!memcmp(r.buf + wc.wr_id * SLOT, f, FLEN));
		if (inner)
			per[want]++;
		{
			struct ibv_sge sge = { (uintptr_t)(r.buf + wc.wr_id * SLOT), SLOT, r.mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = wc.wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

			ck_assert_int_eq(ibv_post_wq_recv(wq[want], &wr, &bad), 0);
		}
	}
	for (int i = 0; i < WQS; i++)
		ck_assert_msg(per[i] > 100, "WQ %d got %u of 2000 frames", i, per[i]);
	ck_assert_int_eq(ibv_destroy_flow(fl[0]), 0);
	ck_assert_int_eq(ibv_destroy_flow(fl[1]), 0);
	ck_assert_int_eq(ibv_destroy_qp(rss[0]), 0);
	ck_assert_int_eq(ibv_destroy_qp(rss[1]), 0);
	ck_assert_int_eq(ibv_destroy_rwq_ind_table(tbl), 0);
	for (int i = 0; i < WQS; i++)
		ck_assert_int_eq(ibv_destroy_wq(wq[i]), 0);
	ck_assert_int_eq(ibv_destroy_qp(sq), 0);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(scq);
	dev_close(&s);
	dev_close(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_raw_tunnel");
	TCase *tc = tcase_create("tunnel");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_tunnel_steering);
	tcase_add_test(tc, test_inner_rss);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
