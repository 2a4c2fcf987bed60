/*
 * traffic_mcast.c - ibv_attach_mcast / ibv_detach_mcast and UD multicast
 * delivery (docs/multicast.md), under `uroce run` with uroce0 (127.0.0.1)
 * and uroce1 (127.0.0.2) on one VXLAN segment (tests/traffic_mcast.sh).
 * Cases:
 *   errors      RC QP, unicast GID, detach of a group not attached,
 *               attach twice, destroy while attached (EBUSY); the limits
 *               of ibv_query_device, each reached: 241st QP of a group,
 *               4097th attachment, 1025th group (ENOMEM)
 *   delivery    one sender, two attached QPs and one not attached on
 *               uroce0: 2000 datagrams of 1024 bytes each reach both
 *               attached QPs exactly once, in order, with their bytes,
 *               src_qp and the GRH naming the group; none reaches the
 *               third; a wrong Q_Key reaches nobody; after a detach the
 *               detached QP gets nothing more
 *   two_devices the same group on uroce0 and uroce1: 1000 datagrams from
 *               uroce0 reach the QPs of both devices; then from uroce1
 */
#include "config.h"
#include "tests/check_main.h"
#include "tests/traffic_verbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MSG 1024u
#define GRH 40u
#define SLOT (MSG + GRH)
#define RQ 256u

/* ::ffff:239.1.2.3 as cma.c makes it for an IPv4 group on RoCEv2 */
static union ibv_gid group_gid(uint8_t last)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff, [12] = 239, [13] = 1, [14] = 2 } };

	g.raw[15] = last;
	return g;
}

struct ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	uint32_t posted;
};

static void ep_open(struct ep *e, struct ibv_context *ctx)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD, .cap = { .max_send_wr = RQ, .max_recv_wr = RQ,
									  .max_send_sge = 1, .max_recv_sge = 1 } };

	memset(e, 0, sizeof(*e));
	e->ctx = ctx;
	ck_assert_ptr_nonnull(e->pd = ibv_alloc_pd(ctx));
	ck_assert_ptr_nonnull(e->cq = ibv_create_cq(ctx, 2 * RQ, NULL, NULL, 0));
	ia.send_cq = ia.recv_cq = e->cq;
	ck_assert_ptr_nonnull(e->qp = ibv_create_qp(e->pd, &ia));
	ck_assert_int_eq(tv_ud_ready(e->qp), 0);
	e->buf = calloc(RQ, SLOT);
	ck_assert_ptr_nonnull(e->buf);
	ck_assert_ptr_nonnull(e->mr = ibv_reg_mr(e->pd, e->buf, (size_t)RQ * SLOT, IBV_ACCESS_LOCAL_WRITE));
}

static void ep_close(struct ep *e)
{
	ck_assert_int_eq(ibv_destroy_qp(e->qp), 0);
	ck_assert_int_eq(ibv_dereg_mr(e->mr), 0);
	ck_assert_int_eq(ibv_destroy_cq(e->cq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(e->pd), 0);
	free(e->buf);
}

static void post_recv(struct ep *e)
{
	uint32_t i = e->posted++ % RQ;
	struct ibv_sge sge = { .addr = (uintptr_t)(e->buf + (size_t)i * SLOT), .length = SLOT, .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(e->qp, &wr, &bad), 0);
}

static void fill_rq(struct ep *e)
{
	for (uint32_t i = 0; i < RQ; i++)
		post_recv(e);
}

/* Datagram SEQ: MSG bytes, each (seq + k) & 0xff, seq in the first 4. */
static void pattern(unsigned char *p, uint32_t seq)
{
	for (uint32_t k = 0; k < MSG; k++)
		p[k] = (unsigned char)(seq + k);
	memcpy(p, &seq, 4);
}

static void send_one(struct ep *s, struct ibv_ah *ah, uint32_t seq, uint32_t qkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = MSG, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	pattern(s->buf, seq);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = qkey;
	ck_assert_int_eq(ibv_post_send(s->qp, &wr, &bad), 0);
	ck_assert_int_eq(tv_poll_one(s->cq, 10000, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, seq);
}

/* The next completion of R is datagram SEQ from SRC_QPN to group G. */
static void expect_recv(struct ep *r, uint32_t seq, uint32_t src_qpn, const union ibv_gid *g)
{
	unsigned char want[MSG];
	struct ibv_wc wc;
	unsigned char *slot;

	ck_assert_int_eq(tv_poll_one(r->cq, 10000, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
	ck_assert_uint_eq(wc.byte_len, SLOT);
	ck_assert_uint_eq(wc.src_qp, src_qpn);
	ck_assert_uint_eq(wc.qp_num, r->qp->qp_num);
	ck_assert(wc.wc_flags & IBV_WC_GRH);
	slot = r->buf + (size_t)wc.wr_id * SLOT;
	/* GRH area: 20 zero bytes and the IPv4 header, destination the group */
	ck_assert_int_eq(slot[20] >> 4, 4);
	ck_assert_mem_eq(slot + 20 + 16, g->raw + 12, 4);
	pattern(want, seq);
	ck_assert_mem_eq(slot + GRH, want, MSG);
	post_recv(r);
}

static struct ibv_ah *group_ah(struct ep *s, const union ibv_gid *g)
{
	struct ibv_ah *ah = tv_ah(s->pd, g);

	ck_assert_ptr_nonnull(ah);
	return ah;
}

START_TEST(errors)
{
	struct ibv_context *ctx = tv_open("uroce0");
	struct ibv_device_attr da;
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 1, .max_recv_wr = 1,
									  .max_send_sge = 1, .max_recv_sge = 1 } };
	union ibv_gid g = group_gid(1), uni = { .raw = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 } };
	union ibv_gid v6 = { .raw = { 0xff, 0x0e, [15] = 7 } };
	struct ibv_qp *rc, **q;
	struct ep e;
	unsigned int i, k;

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(ibv_query_device(ctx, &da), 0);
	ck_assert_int_eq(da.max_mcast_grp, 1024);
	ck_assert_int_eq(da.max_mcast_qp_attach, 240);
	ck_assert_int_eq(da.max_total_mcast_qp_attach, 4096);
	ep_open(&e, ctx);
	ia.send_cq = ia.recv_cq = e.cq;
	ck_assert_ptr_nonnull(rc = ibv_create_qp(e.pd, &ia));
	ck_assert_int_eq(ibv_attach_mcast(rc, &g, 0), EINVAL);
	ck_assert_int_eq(ibv_attach_mcast(e.qp, &uni, 0), EINVAL);
	ck_assert_int_eq(ibv_detach_mcast(e.qp, &g, 0), EINVAL);
	ck_assert_int_eq(ibv_attach_mcast(e.qp, &g, 0), 0);
	ck_assert_int_eq(ibv_attach_mcast(e.qp, &g, 0), 0);
	ck_assert_int_eq(ibv_attach_mcast(e.qp, &v6, 0), 0);
	ck_assert_int_eq(ibv_destroy_qp(e.qp), EBUSY);
	ck_assert_int_eq(ibv_detach_mcast(e.qp, &g, 0), 0);
	ck_assert_int_eq(ibv_detach_mcast(e.qp, &g, 0), EINVAL);
	ck_assert_int_eq(ibv_destroy_qp(e.qp), EBUSY);
	ck_assert_int_eq(ibv_detach_mcast(e.qp, &v6, 0), 0);
	ck_assert_int_eq(ibv_destroy_qp(rc), 0);

	/* 241 UD QPs: a group takes 240; 17 groups of 240 and 16 more make
	 * the 4096 attachments of the device; then one group more each */
	q = calloc(241, sizeof(*q));
	ia.qp_type = IBV_QPT_UD;
	for (i = 0; i < 241; i++)
		ck_assert_ptr_nonnull(q[i] = ibv_create_qp(e.pd, &ia));
	for (k = 0; k < 17; k++) {
		union ibv_gid gk = group_gid((uint8_t)(10 + k));

		for (i = 0; i < 240; i++)
			ck_assert_int_eq(ibv_attach_mcast(q[i], &gk, 0), 0);
		ck_assert_int_eq(ibv_attach_mcast(q[240], &gk, 0), ENOMEM);
	}
	for (i = 0; i < 16; i++) {
		union ibv_gid gk = group_gid(100);

		ck_assert_int_eq(ibv_attach_mcast(q[i], &gk, 0), 0);
	}
	{
		union ibv_gid gk = group_gid(100), gn = group_gid(101);

		ck_assert_int_eq(ibv_attach_mcast(q[16], &gk, 0), ENOMEM);
		ck_assert_int_eq(ibv_attach_mcast(q[240], &gn, 0), ENOMEM);
		/* destroying a context's QPs needs their groups left first */
		for (i = 0; i < 16; i++)
			ck_assert_int_eq(ibv_detach_mcast(q[i], &gk, 0), 0);
	}
	for (k = 0; k < 17; k++) {
		union ibv_gid gk = group_gid((uint8_t)(10 + k));

		for (i = 0; i < 240; i++)
			ck_assert_int_eq(ibv_detach_mcast(q[i], &gk, 0), 0);
	}
	/* 1024 groups, then the 1025th */
	for (k = 0; k < 1025; k++) {
		union ibv_gid gk = { .raw = { 0xff, 0x0e, [13] = 1, [14] = (uint8_t)(k >> 8), [15] = (uint8_t)k } };

		ck_assert_int_eq(ibv_attach_mcast(q[0], &gk, 0), k < 1024 ? 0 : ENOMEM);
	}
	for (k = 0; k < 1024; k++) {
		union ibv_gid gk = { .raw = { 0xff, 0x0e, [13] = 1, [14] = (uint8_t)(k >> 8), [15] = (uint8_t)k } };

		ck_assert_int_eq(ibv_detach_mcast(q[0], &gk, 0), 0);
	}
	for (i = 0; i < 241; i++)
		ck_assert_int_eq(ibv_destroy_qp(q[i]), 0);
	free(q);
	ep_close(&e);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(delivery)
{
	struct ibv_context *ctx = tv_open("uroce0");
	union ibv_gid g = group_gid(1), marker = group_gid(2);
	struct ep s, r1, r2, r3;
	struct ibv_ah *ah, *mah;
	struct ibv_wc wc;
	uint32_t i;

	ck_assert_ptr_nonnull(ctx);
	ep_open(&s, ctx);
	ep_open(&r1, ctx);
	ep_open(&r2, ctx);
	ep_open(&r3, ctx);
	fill_rq(&r1);
	fill_rq(&r2);
	fill_rq(&r3);
	ck_assert_int_eq(ibv_attach_mcast(r1.qp, &g, 0), 0);
	ck_assert_int_eq(ibv_attach_mcast(r2.qp, &g, 0), 0);
	ck_assert_int_eq(ibv_attach_mcast(r2.qp, &marker, 0), 0);
	ck_assert_int_eq(ibv_attach_mcast(r3.qp, &marker, 0), 0);
	ah = group_ah(&s, &g);
	mah = group_ah(&s, &marker);
	for (i = 0; i < 2000; i++) {
		send_one(&s, ah, i, TV_QKEY);
		expect_recv(&r1, i, s.qp->qp_num, &g);
		expect_recv(&r2, i, s.qp->qp_num, &g);
	}
	/* a wrong Q_Key reaches nobody; the marker then reaches r2 and r3
	 * first: they got nothing before it */
	send_one(&s, ah, 5000, TV_QKEY + 1);
	send_one(&s, mah, 5001, TV_QKEY);
	expect_recv(&r2, 5001, s.qp->qp_num, &marker);
	expect_recv(&r3, 5001, s.qp->qp_num, &marker);
	send_one(&s, ah, 5002, TV_QKEY);
	expect_recv(&r1, 5002, s.qp->qp_num, &g);
	expect_recv(&r2, 5002, s.qp->qp_num, &g);
	/* detach stops delivery: r1 gets 100 more, r2 none before the marker */
	ck_assert_int_eq(ibv_detach_mcast(r2.qp, &g, 0), 0);
	for (i = 0; i < 100; i++) {
		send_one(&s, ah, 6000 + i, TV_QKEY);
		expect_recv(&r1, 6000 + i, s.qp->qp_num, &g);
	}
	send_one(&s, mah, 7000, TV_QKEY);
	expect_recv(&r2, 7000, s.qp->qp_num, &marker);
	expect_recv(&r3, 7000, s.qp->qp_num, &marker);
	ck_assert_int_eq(ibv_poll_cq(r1.cq, 1, &wc), 0);
	ck_assert_int_eq(ibv_poll_cq(r2.cq, 1, &wc), 0);
	ck_assert_int_eq(ibv_poll_cq(r3.cq, 1, &wc), 0);
	ck_assert_int_eq(ibv_detach_mcast(r1.qp, &g, 0), 0);
	ck_assert_int_eq(ibv_detach_mcast(r2.qp, &marker, 0), 0);
	ck_assert_int_eq(ibv_detach_mcast(r3.qp, &marker, 0), 0);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
	ck_assert_int_eq(ibv_destroy_ah(mah), 0);
	ep_close(&r3);
	ep_close(&r2);
	ep_close(&r1);
	ep_close(&s);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(two_devices)
{
	struct ibv_context *c0 = tv_open("uroce0"), *c1 = tv_open("uroce1");
	union ibv_gid g = group_gid(3);
	struct ep s0, s1, r0, r1;
	struct ibv_ah *ah0, *ah1;
	uint32_t i;

	ck_assert_ptr_nonnull(c0);
	ck_assert_ptr_nonnull(c1);
	ep_open(&s0, c0);
	ep_open(&r0, c0);
	ep_open(&s1, c1);
	ep_open(&r1, c1);
	fill_rq(&r0);
	fill_rq(&r1);
	ck_assert_int_eq(ibv_attach_mcast(r0.qp, &g, 0), 0);
	ck_assert_int_eq(ibv_attach_mcast(r1.qp, &g, 0), 0);
	ah0 = group_ah(&s0, &g);
	ah1 = group_ah(&s1, &g);
	for (i = 0; i < 1000; i++) {
		send_one(&s0, ah0, i, TV_QKEY);
		expect_recv(&r0, i, s0.qp->qp_num, &g);
		expect_recv(&r1, i, s0.qp->qp_num, &g);
	}
	for (i = 0; i < 1000; i++) {
		send_one(&s1, ah1, 10000 + i, TV_QKEY);
		expect_recv(&r0, 10000 + i, s1.qp->qp_num, &g);
		expect_recv(&r1, 10000 + i, s1.qp->qp_num, &g);
	}
	ck_assert_int_eq(ibv_detach_mcast(r0.qp, &g, 0), 0);
	ck_assert_int_eq(ibv_detach_mcast(r1.qp, &g, 0), 0);
	ck_assert_int_eq(ibv_destroy_ah(ah0), 0);
	ck_assert_int_eq(ibv_destroy_ah(ah1), 0);
	ep_close(&r1);
	ep_close(&s1);
	ep_close(&r0);
	ep_close(&s0);
	ck_assert_int_eq(ibv_close_device(c1), 0);
	ck_assert_int_eq(ibv_close_device(c0), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_mcast");
	TCase *tc = tcase_create("mcast");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, delivery);
	tcase_add_test(tc, two_devices);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
