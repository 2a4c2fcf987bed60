/*
 * traffic_tm.c - tag matching (docs/tag-matching.md) through the verbs API
 * on uroce0: a client RC QP sends to a server RC QP on a tag-matching SRQ
 * at MTU 1024, over the device's own loopback.
 *
 * Cases (each asserts exact statuses, opcodes, wc_flags, wr_ids, byte
 * counts, tags and bytes):
 * - caps: tm_caps as a ConnectX-5 (127 tags, 32768 ops, 1 SGE, 64-byte
 *   rendezvous header, IBV_TM_CAP_RC); ibv_create_srq_ex refusals (no TM
 *   attr, no CQ, 0 / 128 tags, 0 / 32769 ops); ibv_post_srq_ops on a basic
 *   SRQ, an unknown flag, two SGEs, a DEL of a free handle, a UD QP on
 *   the TM-SRQ: EINVAL.
 * - list_ops: signalled ADD / DEL / SYNC give TM_ADD / TM_DEL / TM_SYNC with
 *   their wr_ids and tag 0; unsignalled ones nothing; max_ops signalled
 *   operations unpolled, then ENOMEM.
 * - messages: a table of one-message cases: EAGER 64 KiB matched (TMH
 *   stripped), matched under a mask, a wrong mask (unexpected), a deleted
 *   tag (unexpected), NO_TAG, a TMH of an unknown opcode and a message
 *   shorter than a TMH (ordinary receives), two matching tags (the older
 *   one wins).
 * - sync: after an unexpected message a listed tag no longer matches until
 *   SYNC reports the count; a SYNC ahead of the device's count is EINVAL;
 *   a DEL of a consumed tag completes with IBV_WC_TM_ERR.
 * - rndv: 200 rendezvous requests for 64 KiB: the server's CONSUMED (MATCH)
 *   then EXPECTED (DATA_VALID) completions, the data READ from the client,
 *   the FIN (the request's TMH and RVH, opcode FIN) received by the client;
 *   a request longer than the tag's buffer: IBV_WC_LOC_LEN_ERR, no FIN;
 *   a forged rkey in the RVH: IBV_WC_REM_ACCESS_ERR, no FIN.
 * - many_tags: 127 tags listed, the 128th ENOMEM; 127 messages in reverse
 *   tag order each land in its own tag's buffer; 2000 EAGER messages of
 *   4 KiB through reposted tags.
 */
#include "check_main.h"

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 20000
#define BIG 65536u      /* message and buffer bytes */
#define TMH 16u
#define NTAGS 127u
#define SRQ_WQES 64u

struct tm_env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *scq;      /* server: the TM-SRQ's CQ and the QP's */
	struct ibv_cq *ccq;         /* client */
	struct ibv_srq *srq;
	struct ibv_qp *sqp, *cqp;
	struct ibv_mr *smr, *cmr;
	unsigned char *sbuf, *cbuf; /* server: NTAGS + SRQ_WQES buffers of BIG */
	union ibv_gid gid;
};

#define SBUF_LEN ((size_t)(NTAGS + SRQ_WQES) * BIG)
static unsigned char *tag_buf(struct tm_env *e, unsigned int i) { return e->sbuf + (size_t)i * BIG; }
static unsigned char *wqe_buf(struct tm_env *e, unsigned int i) { return tag_buf(e, NTAGS + i); }

static struct ibv_srq *tm_srq(struct tm_env *e, uint32_t max_ops)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = SRQ_WQES, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
			     IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = e->pd,
		.cq = ibv_cq_ex_to_cq(e->scq),
		.tm_cap = { .max_num_tags = NTAGS, .max_ops = max_ops },
	};

	return ibv_create_srq_ex(e->ctx, &a);
}

static void env_open(struct tm_env *e, uint32_t max_ops)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4096, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 64,
		.max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1 } };

	memset(e, 0, sizeof(*e));
	e->ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(e->ctx);
	ck_assert_int_eq(ibv_query_gid(e->ctx, 1, 0, &e->gid), 0);
	e->pd = ibv_alloc_pd(e->ctx);
	ck_assert_ptr_nonnull(e->pd);
	e->scq = ibv_create_cq_ex(e->ctx, &ca);
	ck_assert_ptr_nonnull(e->scq);
	e->ccq = ibv_create_cq(e->ctx, 4096, NULL, NULL, 0);
	ck_assert_ptr_nonnull(e->ccq);
	e->srq = tm_srq(e, max_ops);
	ck_assert_ptr_nonnull(e->srq);
	e->sbuf = calloc(1, SBUF_LEN);
	e->cbuf = calloc(1, 3 * BIG);
	ck_assert_ptr_nonnull(e->sbuf);
	ck_assert_ptr_nonnull(e->cbuf);
	e->smr = ibv_reg_mr(e->pd, e->sbuf, SBUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	e->cmr = ibv_reg_mr(e->pd, e->cbuf, 3 * BIG,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(e->smr);
	ck_assert_ptr_nonnull(e->cmr);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(e->scq);
	qa.srq = e->srq;
	e->sqp = ibv_create_qp(e->pd, &qa);
	ck_assert_ptr_nonnull(e->sqp);
	qa.send_cq = qa.recv_cq = e->ccq;
	qa.srq = NULL;
	qa.cap.max_recv_wr = 64; /* the create above wrote back 0 (an SRQ's QP) */
	e->cqp = ibv_create_qp(e->pd, &qa);
	ck_assert_ptr_nonnull(e->cqp);
	ck_assert_int_eq(tv_rc_connect(e->sqp, e->cqp->qp_num, &e->gid, IBV_MTU_1024, 14), 0);
	ck_assert_int_eq(tv_rc_connect(e->cqp, e->sqp->qp_num, &e->gid, IBV_MTU_1024, 14), 0);
}

static void env_close(struct tm_env *e)
{
	ck_assert_int_eq(ibv_destroy_qp(e->sqp), 0);
	ck_assert_int_eq(ibv_destroy_qp(e->cqp), 0);
	ck_assert_int_eq(ibv_destroy_srq(e->srq), 0);
	ck_assert_int_eq(ibv_dereg_mr(e->smr), 0);
	ck_assert_int_eq(ibv_dereg_mr(e->cmr), 0);
	ck_assert_int_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(e->scq)), 0);
	ck_assert_int_eq(ibv_destroy_cq(e->ccq), 0);
	ck_assert_int_eq(ibv_dealloc_pd(e->pd), 0);
	ck_assert_int_eq(ibv_close_device(e->ctx), 0);
	free(e->sbuf);
	free(e->cbuf);
}

/* One server completion, every field the tests check. */
struct scqe {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	unsigned int flags;
	uint32_t byte_len;
	struct ibv_wc_tm_info tm;
};

static struct scqe spoll(struct tm_env *e)
{
	struct scqe c;

	ck_assert_int_eq(tv_start_poll(e->scq, WAIT_MS), 0);
	c.wr_id = e->scq->wr_id;
	c.status = e->scq->status;
	c.opcode = ibv_wc_read_opcode(e->scq);
	c.flags = ibv_wc_read_wc_flags(e->scq);
	c.byte_len = ibv_wc_read_byte_len(e->scq);
	ibv_wc_read_tm_info(e->scq, &c.tm);
	ibv_end_poll(e->scq);
	return c;
}

static void snone(struct tm_env *e)
{
	ck_assert_int_eq(ibv_start_poll(e->scq, &(struct ibv_poll_cq_attr){ 0 }), ENOENT);
}

#define CK_CQE(c, wid, st, op, fl, len, tg)                                                     \
	do {                                                                                    \
		ck_assert_uint_eq((c).wr_id, (wid));                                            \
		ck_assert_int_eq((c).status, (st));                                             \
		ck_assert_int_eq((c).opcode, (op));                                             \
		ck_assert_uint_eq((c).flags, (fl));                                             \
		if ((st) == IBV_WC_SUCCESS)                                                     \
			ck_assert_uint_eq((c).byte_len, (len));                                 \
		ck_assert_uint_eq((c).tm.tag, (tg));                                            \
	} while (0)

/* TAG_ADD of tag/mask with tag buffer I (LEN bytes), recv_wr_id RID; FLAGS. */
static int add_tag(struct tm_env *e, uint64_t tag, uint64_t mask, unsigned int i, uint32_t len,
		   uint64_t rid, uint64_t wr_id, unsigned int flags, uint32_t *handle)
{
	struct ibv_sge sge = { (uintptr_t)tag_buf(e, i), len, e->smr->lkey };
	struct ibv_ops_wr wr = { .wr_id = wr_id, .opcode = IBV_WR_TAG_ADD, .flags = flags };
	struct ibv_ops_wr *bad = NULL;
	int rc;

	wr.tm.add.recv_wr_id = rid;
	wr.tm.add.tag = tag;
	wr.tm.add.mask = mask;
	wr.tm.add.sg_list = &sge;
	wr.tm.add.num_sge = 1;
	rc = ibv_post_srq_ops(e->srq, &wr, &bad);
	if (!rc && handle)
		*handle = wr.tm.handle;
	return rc;
}

static int tm_op(struct tm_env *e, enum ibv_ops_wr_opcode op, uint32_t handle, uint32_t cnt,
		 unsigned int flags, uint64_t wr_id)
{
	struct ibv_ops_wr wr = { .wr_id = wr_id, .opcode = op, .flags = flags };
	struct ibv_ops_wr *bad = NULL;

	wr.tm.handle = handle;
	wr.tm.unexpected_cnt = cnt;
	return ibv_post_srq_ops(e->srq, &wr, &bad);
}

static void post_wqe(struct tm_env *e, unsigned int i, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)wqe_buf(e, i), BIG, e->smr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_srq_recv(e->srq, &wr, &bad), 0);
}

/* The client's buffer at OFF: a TMH (op, app_ctx, tag), then LEN - 16
 * pattern bytes of SEED. */
static void fill_msg(struct tm_env *e, size_t off, uint8_t op, uint32_t app_ctx, uint64_t tag,
		     uint32_t len, unsigned int seed)
{
	struct ibv_tmh h = { .opcode = op, .app_ctx = htobe32(app_ctx), .tag = htobe64(tag) };

	for (uint32_t k = 0; k < len; k++)
		e->cbuf[off + k] = (unsigned char)(k * 7 + seed);
	memcpy(e->cbuf + off, &h, len < sizeof(h) ? len : sizeof(h));
}

/* SEND of the client's buffer [off, off + len), waits for its completion. */
static void csend(struct tm_env *e, size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)e->cbuf + off, len, e->cmr->lkey };
	struct ibv_send_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	ck_assert_int_eq(ibv_post_send(e->cqp, &wr, &bad), 0);
	ck_assert_int_eq(tv_poll_one(e->ccq, WAIT_MS, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_SEND);
	ck_assert_uint_eq(wc.wr_id, 77);
}

START_TEST(caps)
{
	struct tm_env e;
	struct ibv_device_attr_ex da;
	struct ibv_srq_init_attr_ex a;
	struct ibv_srq_init_attr ba = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *basic;
	struct ibv_sge two[2] = { { (uintptr_t)0, 0, 0 }, { (uintptr_t)0, 0, 0 } };
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_ADD }, *bad;
	static const struct { const char *name; uint64_t drop_mask; uint32_t tags, ops; } bad_attr[] = {
		{ "no IBV_SRQ_INIT_ATTR_TM", IBV_SRQ_INIT_ATTR_TM, 4, 4 },
		{ "no IBV_SRQ_INIT_ATTR_CQ", IBV_SRQ_INIT_ATTR_CQ, 4, 4 },
		{ "max_num_tags 0", 0, 0, 4 },
		{ "max_num_tags 128", 0, 128, 4 },
		{ "max_ops 0", 0, 4, 0 },
		{ "max_ops 32769", 0, 4, 32769 },
	};

	env_open(&e, 16);
	ck_assert_int_eq(ibv_query_device_ex(e.ctx, NULL, &da), 0);
	ck_assert_uint_eq(da.tm_caps.max_rndv_hdr_size, 64);
	ck_assert_uint_eq(da.tm_caps.max_num_tags, 127);
	ck_assert_uint_eq(da.tm_caps.flags, IBV_TM_CAP_RC);
	ck_assert_uint_eq(da.tm_caps.max_ops, 32768);
	ck_assert_uint_eq(da.tm_caps.max_sge, 1);
	for (unsigned int k = 0; k < sizeof(bad_attr) / sizeof(bad_attr[0]); k++) {
		memset(&a, 0, sizeof(a));
		a.attr.max_wr = 4;
		a.attr.max_sge = 1;
		a.comp_mask = (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
			       IBV_SRQ_INIT_ATTR_TM) & ~(uint32_t)bad_attr[k].drop_mask;
		a.srq_type = IBV_SRQT_TM;
		a.pd = e.pd;
		a.cq = ibv_cq_ex_to_cq(e.scq);
		a.tm_cap.max_num_tags = bad_attr[k].tags;
		a.tm_cap.max_ops = bad_attr[k].ops;
		errno = 0;
		ck_assert_msg(!ibv_create_srq_ex(e.ctx, &a) && errno == EINVAL, "%s: errno %d",
			      bad_attr[k].name, errno);
	}
	/* tag matching is for RC: a UD QP on the TM-SRQ is refused */
	{
		struct ibv_qp_init_attr ua = { .qp_type = IBV_QPT_UD, .srq = e.srq,
			.send_cq = ibv_cq_ex_to_cq(e.scq), .recv_cq = ibv_cq_ex_to_cq(e.scq),
			.cap = { .max_send_wr = 4, .max_send_sge = 1 } };

		errno = 0;
		ck_assert_ptr_null(ibv_create_qp(e.pd, &ua));
		ck_assert_int_eq(errno, EINVAL);
	}
	basic = ibv_create_srq(e.pd, &ba);
	ck_assert_ptr_nonnull(basic);
	ck_assert_int_eq(ibv_post_srq_ops(basic, &wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	ck_assert_int_eq(ibv_destroy_srq(basic), 0);
	wr.flags = 1u << 5;
	ck_assert_int_eq(ibv_post_srq_ops(e.srq, &wr, &bad), EINVAL);
	wr.flags = 0;
	wr.tm.add.sg_list = two;
	wr.tm.add.num_sge = 2;
	ck_assert_int_eq(ibv_post_srq_ops(e.srq, &wr, &bad), EINVAL);
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_DEL, 5, 0, IBV_OPS_SIGNALED, 1), EINVAL);
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_DEL, 128, 0, IBV_OPS_SIGNALED, 1), EINVAL);
	snone(&e);
	env_close(&e);
}
END_TEST

START_TEST(list_ops)
{
	struct tm_env e;
	struct scqe c;
	uint32_t h1, h2;

	env_open(&e, 4);
	ck_assert_int_eq(add_tag(&e, 0x11, ~0ull, 0, BIG, 1001, 501, IBV_OPS_SIGNALED, &h1), 0);
	c = spoll(&e);
	CK_CQE(c, 501, IBV_WC_SUCCESS, IBV_WC_TM_ADD, 0, 0, 0);
	ck_assert_int_eq(add_tag(&e, 0x22, ~0ull, 1, BIG, 1002, 502, 0, &h2), 0);
	ck_assert_uint_ne(h1, h2);
	snone(&e);
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_DEL, h1, 0, IBV_OPS_SIGNALED, 503), 0);
	c = spoll(&e);
	CK_CQE(c, 503, IBV_WC_SUCCESS, IBV_WC_TM_DEL, 0, 0, 0);
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_DEL, h2, 0, 0, 504), 0);
	snone(&e);
	/* both free again: a DEL of either is refused */
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_DEL, h1, 0, IBV_OPS_SIGNALED, 505), EINVAL);
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_DEL, h2, 0, IBV_OPS_SIGNALED, 505), EINVAL);
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_SYNC, 0, 0, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 506), 0);
	c = spoll(&e);
	CK_CQE(c, 506, IBV_WC_SUCCESS, IBV_WC_TM_SYNC, 0, 0, 0);
	/* max_ops 4: four signalled operations unpolled, the fifth ENOMEM */
	for (unsigned int k = 0; k < 4; k++)
		ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_SYNC, 0, 0, IBV_OPS_SIGNALED, 600 + k), 0);
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_SYNC, 0, 0, IBV_OPS_SIGNALED, 604), ENOMEM);
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_SYNC, 0, 0, 0, 605), 0);
	for (unsigned int k = 0; k < 4; k++) {
		c = spoll(&e);
		CK_CQE(c, 600 + k, IBV_WC_SUCCESS, IBV_WC_TM_SYNC, 0, 0, 0);
	}
	snone(&e);
	env_close(&e);
}
END_TEST

/*
 * One message against a fresh list. tags: the listed (tag, mask) pairs,
 * tag buffer k for pair k, recv_wr_id 100 + k (up to 2); del_first: the
 * first is deleted before the message. The expected receive: opcode, flags,
 * wr_id (100 + k for a tag, 9 for the SRQ WQE), byte_len, the tag in
 * tm_info, and where the bytes went (tag buffer want_buf, or -1 the WQE)
 * starting from message byte want_from.
 */
struct msg_case {
	const char *name;
	uint8_t tmh_op;
	uint64_t tag;
	uint32_t len;
	unsigned int ntags;
	uint64_t tags[2], masks[2];
	bool del_first;
	enum ibv_wc_opcode want_op;
	unsigned int want_flags;
	uint64_t want_wr_id;
	uint32_t want_len;
	uint64_t want_tag;
	int want_buf;
	uint32_t want_from;
};

#define M (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID)
static const struct msg_case msg_cases[] = {
	{ "EAGER 64 KiB, exact tag", IBV_TMH_EAGER, 0xabcdef0123456789ull, BIG, 1,
	  { 0xabcdef0123456789ull }, { ~0ull }, false, IBV_WC_TM_RECV, M, 100, BIG - TMH,
	  0xabcdef0123456789ull, 0, TMH },
	{ "EAGER under mask 0xff00", IBV_TMH_EAGER, 0x12ff, 3000, 1, { 0x1234 }, { 0xff00 }, false,
	  IBV_WC_TM_RECV, M, 100, 3000 - TMH, 0x12ff, 0, TMH },
	{ "wrong mask: 0x2234 vs 0x1234/0xff00, 64 KiB", IBV_TMH_EAGER, 0x2234, BIG, 1, { 0x1234 },
	  { 0xff00 }, false, IBV_WC_TM_RECV, 0, 9, BIG, 0, -1, 0 },
	{ "tag deleted before its message", IBV_TMH_EAGER, 0x55, 2048, 1, { 0x55 }, { ~0ull }, true,
	  IBV_WC_TM_RECV, 0, 9, 2048, 0, -1, 0 },
	{ "NO_TAG with a listed tag, 64 KiB", IBV_TMH_NO_TAG, 0x55, BIG, 1, { 0x55 }, { ~0ull }, false,
	  IBV_WC_TM_NO_TAG, 0, 9, BIG, 0, -1, 0 },
	{ "TMH opcode 7: an ordinary receive", 7, 0x55, 1500, 1, { 0x55 }, { ~0ull }, false,
	  IBV_WC_RECV, 0, 9, 1500, 0, -1, 0 },
	{ "FIN at a TM-SRQ: an ordinary receive", IBV_TMH_FIN, 0x55, 32, 1, { 0x55 }, { ~0ull },
	  false, IBV_WC_RECV, 0, 9, 32, 0, -1, 0 },
	{ "8 bytes, shorter than a TMH", IBV_TMH_EAGER, 0x55, 8, 1, { 0x55 }, { ~0ull }, false,
	  IBV_WC_RECV, 0, 9, 8, 0, -1, 0 },
	{ "two matching tags: the older wins", IBV_TMH_EAGER, 0x77, 4096, 2, { 0x77, 0x70 },
	  { ~0ull, 0xf0 }, false, IBV_WC_TM_RECV, M, 100, 4096 - TMH, 0x77, 0, TMH },
	{ "older tag deleted: the younger matches", IBV_TMH_EAGER, 0x77, 4096, 2, { 0x77, 0x70 },
	  { ~0ull, 0xf0 }, true, IBV_WC_TM_RECV, M, 101, 4096 - TMH, 0x77, 1, TMH },
};
#undef M

START_TEST(messages)
{
	const struct msg_case *k = &msg_cases[_i];
	struct tm_env e;
	struct scqe c;
	uint32_t h[2];
	unsigned char *dst;

	env_open(&e, 16);
	post_wqe(&e, 0, 9);
	for (unsigned int t = 0; t < k->ntags; t++)
		ck_assert_int_eq(add_tag(&e, k->tags[t], k->masks[t], t, BIG, 100 + t, 0, 0, &h[t]), 0);
	if (k->del_first)
		ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_DEL, h[0], 0, 0, 0), 0);
	fill_msg(&e, 0, k->tmh_op, 0x5a5a0000u + (uint32_t)_i, k->tag, k->len, (unsigned int)_i);
	csend(&e, 0, k->len);
	c = spoll(&e);
	ck_assert_msg(c.opcode == k->want_op && c.flags == k->want_flags && c.wr_id == k->want_wr_id,
		      "%s: opcode %d flags 0x%x wr_id %llu", k->name, c.opcode, c.flags,
		      (unsigned long long)c.wr_id);
	CK_CQE(c, k->want_wr_id, IBV_WC_SUCCESS, k->want_op, k->want_flags, k->want_len, k->want_tag);
	if (k->want_flags & IBV_WC_TM_MATCH)
		ck_assert_uint_eq(c.tm.priv, 0x5a5a0000u + (uint32_t)_i);
	dst = k->want_buf < 0 ? wqe_buf(&e, 0) : tag_buf(&e, (unsigned int)k->want_buf);
	ck_assert_msg(!memcmp(dst, e.cbuf + k->want_from, k->len - k->want_from), "%s: bytes",
		      k->name);
	/* nothing past the message in the buffer it used */
	ck_assert_uint_eq(dst[k->len - k->want_from], 0);
	snone(&e);
	env_close(&e);
}
END_TEST

START_TEST(sync)
{
	struct tm_env e;
	struct scqe c;
	uint32_t h;

	env_open(&e, 16);
	post_wqe(&e, 0, 9);
	post_wqe(&e, 1, 10);
	ck_assert_int_eq(add_tag(&e, 0x42, ~0ull, 0, BIG, 100, 0, 0, &h), 0);
	/* unexpected: 0x43 */
	fill_msg(&e, 0, IBV_TMH_EAGER, 0, 0x43, 1024, 1);
	csend(&e, 0, 1024);
	c = spoll(&e);
	CK_CQE(c, 9, IBV_WC_SUCCESS, IBV_WC_TM_RECV, 0, 1024, 0);
	/* 0x42 is listed, but software has not reported the unexpected one */
	fill_msg(&e, 0, IBV_TMH_EAGER, 0, 0x42, 1024, 2);
	csend(&e, 0, 1024);
	c = spoll(&e);
	CK_CQE(c, 10, IBV_WC_SUCCESS, IBV_WC_TM_RECV, 0, 1024, 0);
	ck_assert(!memcmp(wqe_buf(&e, 1), e.cbuf, 1024));
	/* a count ahead of the device's (2): refused; 2: accepted */
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_SYNC, 0, 3, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 7),
			 EINVAL);
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_SYNC, 0, 2, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 8), 0);
	c = spoll(&e);
	CK_CQE(c, 8, IBV_WC_SUCCESS, IBV_WC_TM_SYNC, 0, 0, 0);
	/* in step: 0x42 matches now */
	fill_msg(&e, 0, IBV_TMH_EAGER, 0, 0x42, 1024, 3);
	csend(&e, 0, 1024);
	c = spoll(&e);
	CK_CQE(c, 100, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID,
	       1024 - TMH, 0x42);
	ck_assert(!memcmp(tag_buf(&e, 0), e.cbuf + TMH, 1024 - TMH));
	/* added at the reported count: no SYNC asked */
	ck_assert_int_eq(add_tag(&e, 0x45, ~0ull, 2, BIG, 102, 12, IBV_OPS_SIGNALED, &h), 0);
	c = spoll(&e);
	CK_CQE(c, 12, IBV_WC_SUCCESS, IBV_WC_TM_ADD, 0, 0, 0);
	snone(&e);
	env_close(&e);
}
END_TEST

START_TEST(sync_req)
{
	struct tm_env e;
	struct scqe c;
	uint32_t h;

	env_open(&e, 16);
	post_wqe(&e, 0, 9);
	ck_assert_int_eq(add_tag(&e, 0x1, ~0ull, 0, BIG, 100, 0, 0, &h), 0);
	fill_msg(&e, 0, IBV_TMH_EAGER, 0, 0x2, 64, 1);
	csend(&e, 0, 64);
	c = spoll(&e);
	CK_CQE(c, 9, IBV_WC_SUCCESS, IBV_WC_TM_RECV, 0, 64, 0);
	/* added at count 0 while the device counts 1: SYNC_REQ */
	ck_assert_int_eq(add_tag(&e, 0x3, ~0ull, 1, BIG, 101, 21, IBV_OPS_SIGNALED, &h), 0);
	c = spoll(&e);
	CK_CQE(c, 21, IBV_WC_SUCCESS, IBV_WC_TM_ADD, IBV_WC_TM_SYNC_REQ, 0, 0);
	/* reported (SYNC with count 1): the next ADD is in step */
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_SYNC, 0, 1, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 23), 0);
	c = spoll(&e);
	CK_CQE(c, 23, IBV_WC_SUCCESS, IBV_WC_TM_SYNC, 0, 0, 0);
	ck_assert_int_eq(add_tag(&e, 0x4, ~0ull, 2, BIG, 102, 22, IBV_OPS_SIGNALED, &h), 0);
	c = spoll(&e);
	CK_CQE(c, 22, IBV_WC_SUCCESS, IBV_WC_TM_ADD, 0, 0, 0);
	/* a DEL posted after a message consumed its tag, before the receive
	 * was polled: the receive, then TM_DEL with IBV_WC_TM_ERR */
	fill_msg(&e, 0, IBV_TMH_EAGER, 0, 0x4, 64, 2);
	csend(&e, 0, 64);
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_DEL, h, 0, IBV_OPS_SIGNALED, 24), 0);
	c = spoll(&e);
	CK_CQE(c, 102, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID,
	       64 - TMH, 0x4);
	c = spoll(&e);
	CK_CQE(c, 24, IBV_WC_TM_ERR, IBV_WC_TM_DEL, 0, 0, 0);
	/* the entry is free now: another DEL is refused */
	ck_assert_int_eq(tm_op(&e, IBV_WR_TAG_DEL, h, 0, IBV_OPS_SIGNALED, 25), EINVAL);
	snone(&e);
	env_close(&e);
}
END_TEST

/* A rendezvous request at the client's buffer offset 0 for LEN bytes at
 * offset BIG, tag TAG: TMH + RVH, 32 bytes. */
static void rndv_req(struct tm_env *e, uint64_t tag, uint32_t len, unsigned int seed)
{
	struct ibv_rvh r = { .va = htobe64((uintptr_t)e->cbuf + BIG), .rkey = htobe32(e->cmr->rkey),
			     .len = htobe32(len) };

	for (uint32_t k = 0; k < BIG; k++)
		e->cbuf[BIG + k] = (unsigned char)(k * 13 + seed);
	fill_msg(e, 0, IBV_TMH_RNDV, seed, tag, TMH, 0);
	memcpy(e->cbuf + TMH, &r, sizeof(r));
}

static void crecv(struct tm_env *e, unsigned char *buf, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)buf, 64, e->cmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_msg(ibv_post_recv(e->cqp, &wr, &bad) == 0, "post_recv %llu", (unsigned long long)wr_id);
}

START_TEST(rndv)
{
	struct tm_env e;
	struct scqe c;
	struct ibv_wc wc;
	unsigned char fin[64];
	uint32_t h;

	env_open(&e, 16);
	/* the client receives each FIN at its buffer's third 64 KiB */
	for (unsigned int it = 0; it < 200; it++) {
		uint64_t tag = 0x1000 + it;

		memset(tag_buf(&e, 0), 0, BIG);
		ck_assert_int_eq(add_tag(&e, tag, ~0ull, 0, BIG, 300 + it, 0, 0, &h), 0);
		rndv_req(&e, tag, BIG, it);
		memset(fin, 0, sizeof(fin));
		crecv(&e, e.cbuf + 2 * BIG, 900 + it);
		csend(&e, 0, 2 * TMH);
		c = spoll(&e);
		CK_CQE(c, 300 + it, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, 0, tag);
		ck_assert_uint_eq(c.tm.priv, it);
		c = spoll(&e);
		CK_CQE(c, 300 + it, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_DATA_VALID, BIG, 0);
		ck_assert(!memcmp(tag_buf(&e, 0), e.cbuf + BIG, BIG));
		ck_assert_int_eq(tv_poll_one(e.ccq, WAIT_MS, &wc), 0);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_int_eq(wc.opcode, IBV_WC_RECV);
		ck_assert_uint_eq(wc.wr_id, 900 + it);
		ck_assert_uint_eq(wc.byte_len, 2 * TMH);
		memcpy(fin, e.cbuf + 2 * BIG, 2 * TMH);
		/* the request's TMH and RVH, opcode FIN */
		ck_assert_uint_eq(fin[0], IBV_TMH_FIN);
		ck_assert(!memcmp(fin + 1, e.cbuf + 1, 2 * TMH - 1));
	}
	/* longer than the tag's buffer: LOC_LEN_ERR, nothing read, no FIN */
	memset(tag_buf(&e, 0), 0, BIG);
	ck_assert_int_eq(add_tag(&e, 0x9, ~0ull, 0, 1000, 400, 0, 0, &h), 0);
	rndv_req(&e, 0x9, 1001, 1);
	csend(&e, 0, 2 * TMH);
	c = spoll(&e);
	CK_CQE(c, 400, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, 0, 0x9);
	c = spoll(&e);
	ck_assert_uint_eq(c.wr_id, 400);
	ck_assert_int_eq(c.status, IBV_WC_LOC_LEN_ERR);
	ck_assert_uint_eq(tag_buf(&e, 0)[0], 0);
	snone(&e);
	ck_assert_int_eq(ibv_poll_cq(e.ccq, 1, &wc), 0);
	/* a forged RVH (rkey + 1): the READ fails, the tag completes with
	 * REM_ACCESS_ERR, no FIN (the server QP is in error after it) */
	ck_assert_int_eq(add_tag(&e, 0xa, ~0ull, 0, BIG, 401, 0, 0, &h), 0);
	rndv_req(&e, 0xa, 100, 2);
	{
		uint32_t bad_rkey = htobe32(e.cmr->rkey + 1);

		struct ibv_sge sge = { (uintptr_t)e.cbuf, 2 * TMH, e.cmr->lkey };
		struct ibv_send_wr wr = { .wr_id = 78, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND }, *bad;

		memcpy(e.cbuf + TMH + 8, &bad_rkey, 4);
		/* unsignalled: the client's responder NAKs the READ and its QP
		 * goes to error too, which may flush the SEND before its ACK */
		ck_assert_int_eq(ibv_post_send(e.cqp, &wr, &bad), 0);
	}
	c = spoll(&e);
	CK_CQE(c, 401, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, 0, 0xa);
	c = spoll(&e);
	ck_assert_uint_eq(c.wr_id, 401);
	ck_assert_int_eq(c.status, IBV_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(tag_buf(&e, 0)[0], 0);
	env_close(&e);
}
END_TEST

START_TEST(many_tags)
{
	struct tm_env e;
	struct scqe c;
	uint32_t h;

	env_open(&e, 16);
	for (unsigned int t = 0; t < NTAGS; t++)
		ck_assert_int_eq(add_tag(&e, 0x100 + t, ~0ull, t, 4096, 2000 + t, 0, 0, &h), 0);
	ck_assert_int_eq(add_tag(&e, 0x999, ~0ull, 0, 4096, 1, 0, 0, &h), ENOMEM);
	for (unsigned int n = 0; n < NTAGS; n++) {
		unsigned int t = NTAGS - 1 - n;

		fill_msg(&e, 0, IBV_TMH_EAGER, t, 0x100 + t, 4096, t);
		csend(&e, 0, 4096);
		c = spoll(&e);
		CK_CQE(c, 2000 + t, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		       IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 4096 - TMH, 0x100 + t);
		ck_assert(!memcmp(tag_buf(&e, t), e.cbuf + TMH, 4096 - TMH));
	}
	/* 2000 more through reposted tags, 8 listed at a time */
	for (unsigned int n = 0; n < 2000; n++) {
		unsigned int t = n % 8;

		ck_assert_int_eq(add_tag(&e, n, ~0ull, t, 4096, 5000 + n, 0, 0, &h), 0);
		fill_msg(&e, 0, IBV_TMH_EAGER, n, n, 4096, n);
		csend(&e, 0, 4096);
		c = spoll(&e);
		CK_CQE(c, 5000 + n, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		       IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 4096 - TMH, n);
		ck_assert(!memcmp(tag_buf(&e, t), e.cbuf + TMH, 4096 - TMH));
	}
	snone(&e);
	env_close(&e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_tm");
	TCase *tc = tcase_create("tm");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, caps);
	tcase_add_test(tc, list_ops);
	tcase_add_loop_test(tc, messages, 0, sizeof(msg_cases) / sizeof(msg_cases[0]));
	tcase_add_test(tc, sync);
	tcase_add_test(tc, sync_req);
	tcase_add_test(tc, rndv);
	tcase_add_test(tc, many_tags);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
