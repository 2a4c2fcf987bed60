/*
 * traffic_wq.c - the receive WQ flags and the striding RQ through the
 * public API, on one device (uroce0, MAC 02:00:7f:00:00:01; started by
 * tests/traffic_wq.sh): a raw QP sends frames to the device's own MAC, a
 * rule on UDP port 7000 gives them to an RSS QP whose table holds one WQ
 * (docs/raw-packet.md §5). Checked exactly: the C-VLAN stripped and
 * reported (ibv_wc_read_cvlan), the FCS bytes against a CRC-32 written
 * here, what DELAY_DROP holds and releases, and where a striding WQ puts N
 * frames (urocedv_wc_read_stride, the bytes at each stride).
 */
#include "config.h"
#include "tests/check_main.h"
#include "tests/traffic_verbs.h"

#include <infiniband/urocedv.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TMO 20000
#define SLOT 2048                /* receive buffer per ordinary WQE */
#define NWR 128
#define BUF_BYTES (1u << 20)     /* receive area: NWR slots, or striding WQEs */
#define PORT 7000

static const uint8_t mac0[6] = { 0x02, 0x00, 0x7f, 0x00, 0x00, 0x01 };
static const uint8_t src_mac[6] = { 0x02, 0x00, 0x0a, 0x00, 0x00, 0x09 };

struct wqt {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq;      /* the sender's */
	struct ibv_qp *sqp;      /* raw QP that sends */
	struct ibv_cq_ex *cq;    /* the WQ's */
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp *rss;
	struct ibv_flow *flow;
	struct ibv_mr *mr;
	uint8_t *buf;            /* BUF_BYTES of receive area, then 16 KiB to send from */
};

/* Reference CRC-32 (IEEE 802.3), bit by bit. */
static uint32_t ref_crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

/* Ethernet (optional 802.1Q TCI) / IPv4 / UDP to port PORT, LEN bytes,
 * payload from SEED, checksums zero. */
static void frame(uint8_t *f, size_t len, uint16_t vlan, uint32_t seed)
{
	size_t l3 = vlan ? 18 : 14, ulen = len - l3 - 20;
	uint8_t *ip = f + l3, *u = ip + 20;

	memset(f, 0, len);
	memcpy(f, mac0, 6);
	memcpy(f + 6, src_mac, 6);
	if (vlan) {
		f[12] = 0x81;
		f[14] = (uint8_t)(vlan >> 8);
		f[15] = (uint8_t)vlan;
	}
	f[l3 - 2] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)((len - l3) >> 8);
	ip[3] = (uint8_t)(len - l3);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	u[0] = 0x10;
	u[2] = (uint8_t)(PORT >> 8);
	u[3] = (uint8_t)(PORT & 0xff);
	u[4] = (uint8_t)(ulen >> 8);
	u[5] = (uint8_t)ulen;
	for (size_t i = 8; i < ulen; i++)
		u[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

static struct ibv_flow *udp_rule(struct ibv_qp *qp)
{
	struct {
		struct ibv_flow_attr a;
		struct ibv_flow_spec_ipv4 ip;
		struct ibv_flow_spec_tcp_udp udp;
	} r = {
		.a = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(r), .num_of_specs = 2, .port = 1 },
		.ip = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(r.ip) },
		.udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(r.udp), .val.dst_port = htons(PORT),
			 .mask.dst_port = 0xffff },
	};
	struct ibv_flow *fl = ibv_create_flow(qp, &r.a);

	ck_assert_msg(fl, "ibv_create_flow: %s", strerror(errno));
	return fl;
}

/* The device, a sending raw QP in RTS, and one WQ (FLAGS; striding when DV)
 * behind an RSS QP with a rule on UDP port PORT. The WQ is left in RESET. */
static void wqt_open(struct wqt *t, uint32_t flags, struct urocedv_wq_init_attr *dv)
{
	static const uint8_t key[40] = { 1 };
	struct ibv_cq_init_attr_ex cqa = { .cqe = 1024, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN |
							IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_CVLAN };
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = 64, .max_send_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = NWR, .max_sge = 1,
				       .comp_mask = IBV_WQ_INIT_ATTR_FLAGS, .create_flags = flags };

	memset(t, 0, sizeof(*t));
	t->ctx = tv_open("uroce0");
	ck_assert(t->ctx);
	t->pd = ibv_alloc_pd(t->ctx);
	t->scq = ibv_create_cq(t->ctx, 128, NULL, NULL, 0);
	t->cq = ibv_create_cq_ex(t->ctx, &cqa);
	ck_assert(t->pd && t->scq && t->cq);
	ia.send_cq = ia.recv_cq = t->scq;
	t->sqp = ibv_create_qp(t->pd, &ia);
	ck_assert_msg(t->sqp, "raw QP: %s", strerror(errno));
	ck_assert_int_eq(ibv_modify_qp(t->sqp, &a, IBV_QP_STATE | IBV_QP_PORT), 0);
	a.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(ibv_modify_qp(t->sqp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(ibv_modify_qp(t->sqp, &a, IBV_QP_STATE), 0);
	t->buf = aligned_alloc(4096, BUF_BYTES + 16384);
	ck_assert(t->buf);
	memset(t->buf, 0xee, BUF_BYTES + 16384);
	t->mr = ibv_reg_mr(t->pd, t->buf, BUF_BYTES + 16384, IBV_ACCESS_LOCAL_WRITE);
	ck_assert(t->mr);
	wa.pd = t->pd;
	wa.cq = ibv_cq_ex_to_cq(t->cq);
	t->wq = dv ? urocedv_create_wq(t->ctx, &wa, dv) : ibv_create_wq(t->ctx, &wa);
	ck_assert_msg(t->wq, "create WQ (flags 0x%x): %s", flags, strerror(errno));
	t->tbl = ibv_create_rwq_ind_table(t->ctx, &(struct ibv_rwq_ind_table_init_attr){
							  .log_ind_tbl_size = 0, .ind_tbl = &t->wq });
	ck_assert(t->tbl);
	{
		struct ibv_qp_init_attr_ex x = {
			.qp_type = IBV_QPT_RAW_PACKET,
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH,
			.pd = t->pd, .rwq_ind_tbl = t->tbl,
			.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ, .rx_hash_key_len = 40,
					  .rx_hash_key = (uint8_t *)key,
					  .rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 },
		};

		t->rss = ibv_create_qp_ex(t->ctx, &x);
		ck_assert_msg(t->rss, "RSS QP: %s", strerror(errno));
	}
	t->flow = udp_rule(t->rss);
}

static void wqt_close(struct wqt *t)
{
	ck_assert_int_eq(ibv_destroy_flow(t->flow), 0);
	ck_assert_int_eq(ibv_destroy_qp(t->rss), 0);
	ck_assert_int_eq(ibv_destroy_rwq_ind_table(t->tbl), 0);
	ck_assert_int_eq(ibv_destroy_wq(t->wq), 0);
	ck_assert_int_eq(ibv_destroy_qp(t->sqp), 0);
	ibv_dereg_mr(t->mr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(t->cq));
	ibv_destroy_cq(t->scq);
	ibv_dealloc_pd(t->pd);
	ibv_close_device(t->ctx);
	free(t->buf);
}

static void wq_state(struct wqt *t, enum ibv_wq_state s)
{
	struct ibv_wq_attr m = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = s };

	ck_assert_int_eq(ibv_modify_wq(t->wq, &m), 0);
}

static int wq_flags(struct wqt *t, uint32_t flags, uint32_t mask)
{
	struct ibv_wq_attr m = { .attr_mask = IBV_WQ_ATTR_FLAGS, .flags = flags, .flags_mask = mask };

	return ibv_modify_wq(t->wq, &m);
}

/* Posts ordinary receive WQE number N (slot N % NWR). */
static void post_slot(struct wqt *t, uint32_t n)
{
	struct ibv_sge sge = { (uintptr_t)(t->buf + (size_t)(n % NWR) * SLOT), SLOT, t->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = n, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_wq_recv(t->wq, &wr, &bad), 0);
}

/* Sends LEN bytes of F from the raw QP and waits for its completion. */
static void send_frame(struct wqt *t, const uint8_t *f, size_t len)
{
	uint8_t *s = t->buf + BUF_BYTES;
	struct ibv_sge sge = { (uintptr_t)s, (uint32_t)len, t->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x5e, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	memcpy(s, f, len);
	ck_assert_int_eq(ibv_post_send(t->sqp, &wr, &bad), 0);
	ck_assert_int_eq(tv_poll_one(t->scq, TMO, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 0x5e);
}

struct rx {
	uint64_t wr_id;
	enum ibv_wc_status status;
	uint32_t byte_len, qp_num;
	uint16_t cvlan;
	int stride_rc;
	struct urocedv_stride_info si;
};

static void recv_one(struct wqt *t, struct rx *r)
{
	ck_assert_int_eq(tv_start_poll(t->cq, TMO), 0);
	r->wr_id = t->cq->wr_id;
	r->status = t->cq->status;
	r->qp_num = ibv_wc_read_qp_num(t->cq);
	r->byte_len = r->status == IBV_WC_SUCCESS ? ibv_wc_read_byte_len(t->cq) : 0;
	r->cvlan = r->status == IBV_WC_SUCCESS ? ibv_wc_read_cvlan(t->cq) : 0;
	memset(&r->si, 0, sizeof(r->si));
	r->stride_rc = urocedv_wc_read_stride(t->cq, &r->si);
	ibv_end_poll(t->cq);
}

/* rx_no_wqe of the device's "eth" status line (`uroce status`, run by
 * TRAFFIC_WQ_STATUS from tests/traffic_wq.sh), or -1. */
static long long rx_no_wqe(void)
{
	const char *cmd = getenv("TRAFFIC_WQ_STATUS");
	char line[1024];
	long long v = -1;
	FILE *fp;

	if (!cmd || !(fp = popen(cmd, "r")))
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		const char *f = strstr(line, " rx_no_wqe=");

		if (!strncmp(line, "eth ", 4) && f)
			v = strtoll(f + 11, NULL, 10);
	}
	pclose(fp);
	return v;
}

/* Waits until the device has dropped a frame for want of a WQE since it
 * counted BEFORE: a WQE posted after the send completion could otherwise
 * still take the frame, which is delivered right after that completion is
 * written. */
static void wait_dropped(long long before)
{
	for (int i = 0; i < TMO / 10; i++) {
		if (rx_no_wqe() > before)
			return;
		usleep(10000);
	}
	ck_abort_msg("the frame sent without a WQE was never counted as dropped (rx_no_wqe)");
}

static void expect_nothing(struct wqt *t, int ms)
{
	int rc = tv_start_poll(t->cq, ms);

	if (rc == 0)
		ibv_end_poll(t->cq);
	ck_assert_msg(rc == ETIMEDOUT, "a completion arrived where none should (rc %d)", rc);
}

START_TEST(test_caps_and_errors)
{
	struct ibv_context *c = tv_open("uroce0");
	struct ibv_device_attr_ex a;
	struct urocedv_striding_rq_caps sc;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 8, .max_sge = 1,
				       .comp_mask = IBV_WQ_INIT_ATTR_FLAGS };
	struct urocedv_wq_init_attr dv = { .comp_mask = UROCEDV_WQ_INIT_ATTR_MASK_STRIDING_RQ,
					   .striding_rq_attrs = { 6, 4, 0 } };
	struct ibv_wq *wq;

	ck_assert(c);
	ck_assert_int_eq(ibv_query_device_ex(c, NULL, &a), 0);
	ck_assert_uint_eq(a.raw_packet_caps, IBV_RAW_PACKET_CAP_IP_CSUM | IBV_RAW_PACKET_CAP_CVLAN_STRIPPING |
						     IBV_RAW_PACKET_CAP_SCATTER_FCS | IBV_RAW_PACKET_CAP_DELAY_DROP);
	ck_assert(a.device_cap_flags_ex & IBV_DEVICE_RAW_SCATTER_FCS);
	ck_assert_int_eq(urocedv_query_striding_rq_caps(c, &sc), 0);
	ck_assert_uint_eq(sc.min_single_stride_log_num_of_bytes, 6);
	ck_assert_uint_eq(sc.max_single_stride_log_num_of_bytes, 13);
	ck_assert_uint_eq(sc.min_single_wqe_log_num_of_strides, 3);
	ck_assert_uint_eq(sc.max_single_wqe_log_num_of_strides, 16);
	ck_assert_uint_eq(sc.supported_qpts, 1u << IBV_QPT_RAW_PACKET);
	pd = ibv_alloc_pd(c);
	cq = ibv_create_cq(c, 16, NULL, NULL, 0);
	ck_assert(pd && cq);
	wa.pd = pd;
	wa.cq = cq;
	/* end padding: not implemented; an unknown flag: invalid */
	wa.create_flags = IBV_WQ_FLAGS_PCI_WRITE_END_PADDING;
	errno = 0;
	ck_assert(!ibv_create_wq(c, &wa));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	wa.create_flags = IBV_WQ_FLAGS_RESERVED;
	errno = 0;
	ck_assert(!ibv_create_wq(c, &wa));
	ck_assert_int_eq(errno, EINVAL);
	/* striding values out of range, two SGEs */
	wa.create_flags = 0;
	dv.striding_rq_attrs.single_stride_log_num_of_bytes = 5;
	errno = 0;
	ck_assert(!urocedv_create_wq(c, &wa, &dv));
	ck_assert_int_eq(errno, EINVAL);
	dv.striding_rq_attrs.single_stride_log_num_of_bytes = 14;
	errno = 0;
	ck_assert(!urocedv_create_wq(c, &wa, &dv));
	ck_assert_int_eq(errno, EINVAL);
	dv.striding_rq_attrs.single_stride_log_num_of_bytes = 6;
	dv.striding_rq_attrs.single_wqe_log_num_of_strides = 2;
	errno = 0;
	ck_assert(!urocedv_create_wq(c, &wa, &dv));
	ck_assert_int_eq(errno, EINVAL);
	dv.striding_rq_attrs.single_wqe_log_num_of_strides = 17;
	errno = 0;
	ck_assert(!urocedv_create_wq(c, &wa, &dv));
	ck_assert_int_eq(errno, EINVAL);
	dv.striding_rq_attrs.single_wqe_log_num_of_strides = 4;
	wa.max_sge = 2;
	errno = 0;
	ck_assert(!urocedv_create_wq(c, &wa, &dv));
	ck_assert_int_eq(errno, EINVAL);
	wa.max_sge = 1;
	dv.comp_mask = 2;
	errno = 0;
	ck_assert(!urocedv_create_wq(c, &wa, &dv));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	dv.comp_mask = UROCEDV_WQ_INIT_ATTR_MASK_STRIDING_RQ;
	wq = urocedv_create_wq(c, &wa, &dv);
	ck_assert_msg(wq, "striding WQ: %s", strerror(errno));
	{
		/* a WQE smaller than 16 strides of 64 bytes, or of two SGEs */
		static uint8_t b[2048];
		struct ibv_mr *mr = ibv_reg_mr(pd, b, sizeof(b), IBV_ACCESS_LOCAL_WRITE);
		struct ibv_sge sge[2] = { { (uintptr_t)b, 1023, mr->lkey }, { (uintptr_t)b + 1024, 1024, mr->lkey } };
		struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = sge, .num_sge = 1 }, *bad = NULL;

		ck_assert_int_eq(ibv_post_wq_recv(wq, &wr, &bad), EINVAL);
		ck_assert_ptr_eq(bad, &wr);
		sge[0].length = 1024;
		wr.num_sge = 2;
		ck_assert_int_eq(ibv_post_wq_recv(wq, &wr, &bad), EINVAL);
		wr.num_sge = 1;
		ck_assert_int_eq(ibv_post_wq_recv(wq, &wr, &bad), 0);
		ck_assert_int_eq(ibv_destroy_wq(wq), 0);
		ibv_dereg_mr(mr);
	}
	/* modify: end padding EOPNOTSUPP, unknown bits EINVAL, the three flags 0 */
	wq = ibv_create_wq(c, &wa);
	ck_assert(wq);
	{
		struct ibv_wq_attr m = { .attr_mask = IBV_WQ_ATTR_FLAGS,
					 .flags_mask = IBV_WQ_FLAGS_PCI_WRITE_END_PADDING };

		ck_assert_int_eq(ibv_modify_wq(wq, &m), EOPNOTSUPP);
		m.flags_mask = IBV_WQ_FLAGS_RESERVED;
		ck_assert_int_eq(ibv_modify_wq(wq, &m), EINVAL);
		m.flags_mask = m.flags = IBV_WQ_FLAGS_CVLAN_STRIPPING | IBV_WQ_FLAGS_SCATTER_FCS |
					 IBV_WQ_FLAGS_DELAY_DROP;
		ck_assert_int_eq(ibv_modify_wq(wq, &m), 0);
	}
	ck_assert_int_eq(ibv_destroy_wq(wq), 0);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
}
END_TEST

/* CVLAN stripping: a tagged frame arrives 4 bytes shorter, without its tag,
 * its TCI in the CQE; an untagged one unchanged. Turned off by
 * ibv_modify_wq, the tag stays in the frame. */
START_TEST(test_cvlan)
{
	static const uint16_t tci[] = { 0x6005, 0x0001, 0xefff, 0x2abc };
	static uint8_t f[1518], want[1518];
	struct wqt t;
	struct rx r;
	uint32_t n = 0;

	wqt_open(&t, IBV_WQ_FLAGS_CVLAN_STRIPPING, NULL);
	for (int i = 0; i < 64; i++)
		post_slot(&t, n++);
	wq_state(&t, IBV_WQS_RDY);
	for (unsigned int i = 0; i < 4 * 8; i++) {
		uint16_t v = tci[i % 4];
		size_t len = 64 + (size_t)i * 45;

		frame(f, len, v, i);
		memcpy(want, f, 12);
		memcpy(want + 12, f + 16, len - 16);
		send_frame(&t, f, len);
		recv_one(&t, &r);
		ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(r.wr_id, i);
		ck_assert_uint_eq(r.qp_num, t.wq->wq_num);
		ck_assert_uint_eq(r.byte_len, len - 4);
		ck_assert_uint_eq(r.cvlan, v);
		ck_assert_int_eq(r.stride_rc, EINVAL);
		ck_assert_msg(!memcmp(t.buf + (size_t)(i % NWR) * SLOT, want, len - 4),
			      "frame %u (TCI 0x%04x) stripped wrong", i, v);
		/* nothing written past the frame */
		ck_assert_uint_eq(t.buf[(size_t)(i % NWR) * SLOT + len - 4], 0xee);
	}
	/* untagged: as sent, C-VLAN 0 */
	frame(f, 300, 0, 99);
	send_frame(&t, f, 300);
	recv_one(&t, &r);
	ck_assert_uint_eq(r.byte_len, 300);
	ck_assert_uint_eq(r.cvlan, 0);
	ck_assert(!memcmp(t.buf + (size_t)(32 % NWR) * SLOT, f, 300));
	/* stripping off: the tag stays, its TCI is still reported */
	ck_assert_int_eq(wq_flags(&t, 0, IBV_WQ_FLAGS_CVLAN_STRIPPING), 0);
	frame(f, 300, 0x6005, 100);
	send_frame(&t, f, 300);
	recv_one(&t, &r);
	ck_assert_uint_eq(r.wr_id, 33);
	ck_assert_uint_eq(r.byte_len, 300);
	ck_assert_uint_eq(r.cvlan, 0x6005);
	ck_assert(!memcmp(t.buf + (size_t)33 * SLOT, f, 300));
	/* and on again */
	ck_assert_int_eq(wq_flags(&t, IBV_WQ_FLAGS_CVLAN_STRIPPING, IBV_WQ_FLAGS_CVLAN_STRIPPING), 0);
	send_frame(&t, f, 300);
	recv_one(&t, &r);
	ck_assert_uint_eq(r.wr_id, 34);
	ck_assert_uint_eq(r.byte_len, 296);
	ck_assert_uint_eq(r.cvlan, 0x6005);
	ck_assert(!memcmp(t.buf + (size_t)34 * SLOT + 12, f + 16, 284));
	wqt_close(&t);
}
END_TEST

/* SCATTER_FCS: 4 more bytes, the CRC-32 of the frame as sent, least
 * significant byte first; with CVLAN stripping the FCS still covers the tag. */
START_TEST(test_fcs)
{
	static uint8_t f[1518];
	static const uint8_t check[] = "123456789";
	struct wqt t;
	struct rx r;
	uint32_t n = 0;

	/* the reference is the IEEE CRC-32: its check value */
	ck_assert_uint_eq(ref_crc32(check, 9), 0xcbf43926u);
	wqt_open(&t, IBV_WQ_FLAGS_SCATTER_FCS, NULL);
	for (int i = 0; i < 100; i++)
		post_slot(&t, n++);
	wq_state(&t, IBV_WQS_RDY);
	for (uint32_t len = 60, i = 0; len <= 1514; len += 17, i++) {
		const uint8_t *got = t.buf + (size_t)(i % NWR) * SLOT;
		uint32_t fcs;

		frame(f, len, 0, len);
		fcs = ref_crc32(f, len);
		send_frame(&t, f, len);
		recv_one(&t, &r);
		ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(r.wr_id, i);
		ck_assert_uint_eq(r.byte_len, len + 4);
		ck_assert_msg(!memcmp(got, f, len), "frame of %u bytes differs", len);
		ck_assert_msg(got[len] == (uint8_t)fcs && got[len + 1] == (uint8_t)(fcs >> 8) &&
				      got[len + 2] == (uint8_t)(fcs >> 16) && got[len + 3] == (uint8_t)(fcs >> 24),
			      "FCS of %u bytes: %02x %02x %02x %02x, want %08x", len, got[len], got[len + 1],
			      got[len + 2], got[len + 3], fcs);
	}
	/* 86 frames so far; stripping and FCS together */
	ck_assert_int_eq(wq_flags(&t, IBV_WQ_FLAGS_CVLAN_STRIPPING, IBV_WQ_FLAGS_CVLAN_STRIPPING), 0);
	{
		const uint8_t *got = t.buf + (size_t)86 * SLOT;
		uint32_t fcs;

		frame(f, 200, 0x0123, 7);
		fcs = ref_crc32(f, 200);
		send_frame(&t, f, 200);
		recv_one(&t, &r);
		ck_assert_uint_eq(r.wr_id, 86);
		ck_assert_uint_eq(r.byte_len, 200);
		ck_assert_uint_eq(r.cvlan, 0x0123);
		ck_assert(!memcmp(got, f, 12));
		ck_assert(!memcmp(got + 12, f + 16, 184));
		ck_assert_uint_eq(got[196] | got[197] << 8 | got[198] << 16 | (uint32_t)got[199] << 24, fcs);
	}
	/* FCS off: the frame alone */
	ck_assert_int_eq(wq_flags(&t, 0, IBV_WQ_FLAGS_SCATTER_FCS | IBV_WQ_FLAGS_CVLAN_STRIPPING), 0);
	frame(f, 200, 0, 8);
	send_frame(&t, f, 200);
	recv_one(&t, &r);
	ck_assert_uint_eq(r.byte_len, 200);
	ck_assert_uint_eq(t.buf[(size_t)87 * SLOT + 200], 0xee);
	wqt_close(&t);
}
END_TEST

/* DELAY_DROP: frames that find no WQE wait (up to 64) and go into the WQEs
 * posted later, in order; without the flag they are dropped. */
START_TEST(test_delay_drop)
{
	static uint8_t f[600];
	struct wqt t;
	struct rx r;
	uint32_t n = 0;
	long long drops;

	wqt_open(&t, IBV_WQ_FLAGS_DELAY_DROP, NULL);
	wq_state(&t, IBV_WQS_RDY);
	for (uint32_t i = 0; i < 70; i++) {
		frame(f, 100 + i * 7, 0, i);
		send_frame(&t, f, 100 + i * 7);
	}
	expect_nothing(&t, 200);
	for (uint32_t i = 0; i < 70; i++)
		post_slot(&t, n++);
	/* the first 64 held arrive, in order; the 6 beyond the limit were dropped */
	for (uint32_t i = 0; i < 64; i++) {
		recv_one(&t, &r);
		ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(r.wr_id, i);
		ck_assert_uint_eq(r.byte_len, 100 + i * 7);
		frame(f, 100 + i * 7, 0, i);
		ck_assert_msg(!memcmp(t.buf + (size_t)i * SLOT, f, 100 + i * 7), "held frame %u differs", i);
	}
	expect_nothing(&t, 200);
	/* 6 WQEs left: a new frame takes the next one at once */
	frame(f, 80, 0, 500);
	send_frame(&t, f, 80);
	recv_one(&t, &r);
	ck_assert_uint_eq(r.wr_id, 64);
	ck_assert_uint_eq(r.byte_len, 80);
	/* the flag off: a frame without a WQE is gone for good */
	for (uint32_t i = 0; i < 5; i++) {
		send_frame(&t, f, 80);
		recv_one(&t, &r);
		ck_assert_uint_eq(r.wr_id, 65 + i);
	}
	ck_assert_int_eq(wq_flags(&t, 0, IBV_WQ_FLAGS_DELAY_DROP), 0);
	drops = rx_no_wqe();
	ck_assert_int_ge(drops, 0);
	send_frame(&t, f, 80);
	wait_dropped(drops);
	post_slot(&t, n++);
	expect_nothing(&t, 300);
	/* on again, then ERR: held frames are dropped, WQEs flushed */
	ck_assert_int_eq(wq_flags(&t, IBV_WQ_FLAGS_DELAY_DROP, IBV_WQ_FLAGS_DELAY_DROP), 0);
	send_frame(&t, f, 80); /* takes WQE 70 */
	recv_one(&t, &r);
	ck_assert_uint_eq(r.wr_id, 70);
	send_frame(&t, f, 80); /* held */
	wq_state(&t, IBV_WQS_ERR);
	post_slot(&t, n++);
	recv_one(&t, &r);
	ck_assert_int_eq(r.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(r.wr_id, 71);
	expect_nothing(&t, 200);
	wqt_close(&t);
}
END_TEST

/* Where frame k of a striding WQ must land, computed here. */
struct place {
	uint32_t wqe, stride, strides;
	bool filler;
	uint32_t len;            /* 0 for a filler */
};

/* Striding RQ: 16 strides of 64 bytes per WQE (1 KiB), 12 WQEs; frames of
 * assorted sizes packed several to a WQE at stride boundaries, a filler
 * where the next frame does not fit, each frame's bytes at its stride;
 * then the same with two_byte_shift. */
static void striding_case(uint8_t shift)
{
	enum { LOG_STRIDE = 6, LOG_NUM = 4, NWQE = 12 };
	const uint32_t stride = 1u << LOG_STRIDE, nstr = 1u << LOG_NUM, wqe_bytes = stride * nstr;
	const uint32_t pad = shift ? 2 : 0; /* two_byte_shift_en: two zero bytes first */
	static const uint32_t sizes[] = { 60, 64, 100, 128, 200, 65, 500, 1000, 90, 300, 63, 700, 127, 129,
					   1022, 60, 256, 190, 400, 62 };
	struct urocedv_wq_init_attr dv = { .comp_mask = UROCEDV_WQ_INIT_ATTR_MASK_STRIDING_RQ,
					   .striding_rq_attrs = { LOG_STRIDE, LOG_NUM, shift } };
	static uint8_t f[1100];
	struct place pl[64];
	unsigned int np = 0, frames = 0;
	uint32_t wqe = 0, next = 0;
	struct wqt t;
	struct rx r;

	/* the expected placement */
	for (unsigned int k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t need = (sizes[k] + pad + stride - 1) / stride;

		if (next + need > nstr) {
			pl[np++] = (struct place){ wqe, next, nstr - next, true, 0 };
			wqe++;
			next = 0;
		}
		pl[np++] = (struct place){ wqe, next, need, false, sizes[k] };
		next += need;
		if (next == nstr) {
			wqe++;
			next = 0;
		}
	}
	ck_assert_uint_lt(wqe, NWQE);

	wqt_open(&t, 0, &dv);
	for (uint32_t i = 0; i < NWQE; i++) {
		struct ibv_sge sge = { (uintptr_t)(t.buf + (size_t)i * wqe_bytes), wqe_bytes, t.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 0x100 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		ck_assert_int_eq(ibv_post_wq_recv(t.wq, &wr, &bad), 0);
	}
	wq_state(&t, IBV_WQS_RDY);
	for (unsigned int k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		frame(f, sizes[k], 0, k);
		send_frame(&t, f, sizes[k]);
	}
	for (unsigned int i = 0; i < np; i++) {
		const struct place *p = &pl[i];
		bool done = p->stride + p->strides == nstr;

		recv_one(&t, &r);
		ck_assert_msg(r.status == IBV_WC_SUCCESS, "completion %u: status %d", i, r.status);
		ck_assert_uint_eq(r.wr_id, 0x100 + p->wqe);
		ck_assert_uint_eq(r.qp_num, t.wq->wq_num);
		ck_assert_uint_eq(r.byte_len, p->len);
		ck_assert_int_eq(r.stride_rc, 0);
		ck_assert_uint_eq(r.si.byte_len, p->len);
		ck_assert_uint_eq(r.si.stride_index, p->stride);
		ck_assert_uint_eq(r.si.strides, p->strides);
		ck_assert_uint_eq(r.si.filler, p->filler);
		ck_assert_uint_eq(r.si.wqe_done, done);
		if (!p->filler) {
			const uint8_t *at = t.buf + (size_t)p->wqe * wqe_bytes + (size_t)p->stride * stride;

			frame(f, p->len, 0, frames);
			if (pad)
				ck_assert_msg(at[0] == 0 && at[1] == 0, "frame %u: shift bytes not zero", frames);
			ck_assert_msg(!memcmp(at + pad, f, p->len), "frame %u (%u bytes at WQE %u stride %u) differs",
				      frames, p->len, p->wqe, p->stride);
			frames++;
		}
	}
	ck_assert_uint_eq(frames, sizeof(sizes) / sizeof(sizes[0]));
	expect_nothing(&t, 200);
	/* a frame longer than a whole WQE: local length error, the WQ in error */
	{
		static uint8_t big[1100];

		frame(big, 1030, 0, 1);
		send_frame(&t, big, 1030);
		recv_one(&t, &r);
		ck_assert_int_eq(r.status, IBV_WC_LOC_LEN_ERR);
		ck_assert_uint_eq(r.wr_id, 0x100 + wqe);
		ck_assert_int_eq(r.stride_rc, EINVAL);
		for (uint32_t i = wqe + 1; i < NWQE; i++) {
			recv_one(&t, &r);
			ck_assert_int_eq(r.status, IBV_WC_WR_FLUSH_ERR);
			ck_assert_uint_eq(r.wr_id, 0x100 + i);
		}
	}
	wqt_close(&t);
}

START_TEST(test_striding)
{
	striding_case(0);
}
END_TEST

START_TEST(test_striding_shift)
{
	striding_case(1);
}
END_TEST

/* Posts WQE number WQE + NWQE in the buffer WQE number WQE used. */
static void repost(struct wqt *t, uint32_t wqe, uint32_t wqe_bytes, uint32_t nwqe)
{
	struct ibv_sge sge = { (uintptr_t)(t->buf + (size_t)(wqe % nwqe) * wqe_bytes), wqe_bytes, t->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wqe + nwqe, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_wq_recv(t->wq, &wr, &bad), 0);
}

/* Many frames through a striding WQ: 4000 frames of 60..1400 bytes through
 * 16 WQEs of 64 strides of 256 bytes, each WQE reposted when done. */
START_TEST(test_striding_many)
{
	enum { LOG_STRIDE = 8, LOG_NUM = 6, NWQE = 16, N = 4000 };
	const uint32_t stride = 1u << LOG_STRIDE, nstr = 1u << LOG_NUM, wqe_bytes = stride * nstr;
	struct urocedv_wq_init_attr dv = { .comp_mask = UROCEDV_WQ_INIT_ATTR_MASK_STRIDING_RQ,
					   .striding_rq_attrs = { LOG_STRIDE, LOG_NUM, 0 } };
	static uint8_t f[1500];
	uint32_t wqe = 0, next = 0, fillers = 0;
	struct wqt t;
	struct rx r;

	wqt_open(&t, 0, &dv);
	for (uint32_t i = 0; i < NWQE; i++) {
		struct ibv_sge sge = { (uintptr_t)(t.buf + (size_t)i * wqe_bytes), wqe_bytes, t.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

		ck_assert_int_eq(ibv_post_wq_recv(t.wq, &wr, &bad), 0);
	}
	wq_state(&t, IBV_WQS_RDY);
	for (uint32_t k = 0; k < N; k++) {
		uint32_t len = 60 + (k * 337) % 1341, need = (len + stride - 1) / stride;

		frame(f, len, 0, k);
		send_frame(&t, f, len);
		if (next + need > nstr) {
			/* a filler uses up the WQE, the frame goes to the next */
			recv_one(&t, &r);
			ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
			ck_assert_uint_eq(r.byte_len, 0);
			ck_assert_uint_eq(r.si.filler, 1);
			ck_assert_uint_eq(r.si.stride_index, next);
			ck_assert_uint_eq(r.si.strides, nstr - next);
			ck_assert_uint_eq(r.wr_id, wqe);
			ck_assert_uint_eq(r.si.wqe_done, 1);
			fillers++;
			repost(&t, wqe, wqe_bytes, NWQE);
			wqe++;
			next = 0;
		}
		recv_one(&t, &r);
		ck_assert_msg(r.status == IBV_WC_SUCCESS && r.stride_rc == 0 && !r.si.filler,
			      "frame %u: status %d", k, r.status);
		ck_assert_uint_eq(r.wr_id, wqe);
		ck_assert_uint_eq(r.byte_len, len);
		ck_assert_uint_eq(r.si.stride_index, next);
		ck_assert_uint_eq(r.si.strides, need);
		ck_assert_msg(!memcmp(t.buf + (size_t)(wqe % NWQE) * wqe_bytes + (size_t)next * stride, f, len),
			      "frame %u differs", k);
		next += need;
		ck_assert_uint_eq(r.si.wqe_done, next == nstr);
		if (next == nstr) {
			repost(&t, wqe, wqe_bytes, NWQE);
			wqe++;
			next = 0;
		}
	}
	ck_assert_uint_gt(fillers, 0);
	ck_assert_uint_gt(wqe, 100);
	wqt_close(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_wq");
	TCase *tc = tcase_create("wq");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_caps_and_errors);
	tcase_add_test(tc, test_cvlan);
	tcase_add_test(tc, test_fcs);
	tcase_add_test(tc, test_delay_drop);
	tcase_add_test(tc, test_striding);
	tcase_add_test(tc, test_striding_shift);
	tcase_add_test(tc, test_striding_many);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
