/*
 * daemon_wqe_reader.c - unit tests of emu/nic/wqe_reader.c: well-formed send
 * (SGE list, inline, UD with AH) and receive WQEs convert field for field;
 * every malformed WQE (stale wqe_index, unknown flags, too many SGEs,
 * byte_len mismatch or overflow, inline too long, foreign or missing AH, QPN
 * out of range, no ring) gets its errno. SRQ WQEs: the tag comes back as
 * wr_index; a tag >= max_wr or too many SGEs is EINVAL.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/wqe_reader.h"

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct ctl_client cl;
static struct ctl_qp qp;
static struct ctl_pd pd1 = { .handle = 1, .pdn = 1 }, pd2 = { .handle = 2, .pdn = 2 };
static struct ctl_ah ah1, ah2;
static struct uroce_qp_ring_layout lay;
static void *ring;

static void setup(void)
{
	uint32_t h;

	memset(&cl, 0, sizeof(cl));
	memset(&qp, 0, sizeof(qp));
	qp.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 2,
				      .max_recv_sge = 2, .max_inline_data = 64 };
	uroce_qp_caps_round(&qp.cap);
	uroce_qp_ring_layout(&qp.cap, &lay);
	ring = calloc(1, lay.size);
	qp.ring = ring;
	qp.ring_size = lay.size;
	qp.type = IBV_QPT_RC;
	qp.pd = &pd1;
	ah1 = (struct ctl_ah){ .pd = &pd1 };
	ah1.attr.is_global = 1;
	ah1.attr.grh.dgid.raw[15] = 0x42;
	ah2 = (struct ctl_ah){ .pd = &pd2 };
	ck_assert_int_eq(objtab_add(&cl.ahs, &ah1, &h), 0);
	ck_assert_uint_eq(h, 1);
	ck_assert_int_eq(objtab_add(&cl.ahs, &ah2, &h), 0);
	ck_assert_uint_eq(h, 2);
}

static void teardown(void)
{
	objtab_fini(&cl.ahs);
	free(ring);
}

static struct uroce_send_wqe *sq(uint32_t n)
{
	return (struct uroce_send_wqe *)((char *)ring + lay.sq_offset + (n & 3) * lay.sq_stride);
}

static struct uroce_sge *sq_sge(uint32_t n)
{
	return (struct uroce_sge *)(sq(n) + 1);
}

/* A good 2-SGE RDMA WRITE with immediate in slot n. */
static void good_send(uint32_t n)
{
	struct uroce_send_wqe *w = sq(n);

	memset(w, 0, lay.sq_stride);
	w->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	w->flags = UROCE_WQE_SIGNALED | UROCE_WQE_SOLICITED;
	w->num_sge = 2;
	w->wqe_index = (uint16_t)n;
	w->byte_len = 300;
	w->imm_data = 0x11223344;
	w->remote_addr = 0x7000;
	w->rkey = 0x1234;
	sq_sge(n)[0] = (struct uroce_sge){ .addr = 0x1000, .length = 100, .lkey = 0x100 };
	sq_sge(n)[1] = (struct uroce_sge){ .addr = 0x2000, .length = 200, .lkey = 0x200 };
}

START_TEST(send_sge)
{
	struct xport_send_wqe o;

	good_send(0x10006);
	ck_assert_int_eq(wqe_read_send(&cl, &qp, 0x10006, &o), 0);
	ck_assert_uint_eq(o.wr_index, 0x10006);
	ck_assert_int_eq(o.opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
	ck_assert_uint_eq(o.send_flags, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	ck_assert_uint_eq(o.imm_data, 0x11223344);
	ck_assert_uint_eq(o.remote_addr, 0x7000);
	ck_assert_uint_eq(o.rkey, 0x1234);
	ck_assert_uint_eq(o.num_sge, 2);
	ck_assert_uint_eq(o.sg_list[1].addr, 0x2000);
	ck_assert_uint_eq(o.sg_list[1].length, 200);
	ck_assert_uint_eq(o.sg_list[1].lkey, 0x200);
	ck_assert_uint_eq(o.inline_len, 0);
}
END_TEST

START_TEST(send_inline_and_ud)
{
	struct xport_send_wqe o;
	struct uroce_send_wqe *w = sq(1);

	memset(w, 0, lay.sq_stride);
	w->opcode = IBV_WR_SEND;
	w->flags = UROCE_WQE_INLINE;
	w->wqe_index = 1;
	w->byte_len = 64;
	memset(w + 1, 0x5a, 64);
	w->ah_handle = 1;
	w->remote_qpn = 0xFFFFFF;
	w->remote_qkey = 0x80000000;
	qp.type = IBV_QPT_UD;
	ck_assert_int_eq(wqe_read_send(&cl, &qp, 1, &o), 0);
	ck_assert_uint_eq(o.send_flags, IBV_SEND_INLINE);
	ck_assert_uint_eq(o.inline_len, 64);
	ck_assert_uint_eq(o.inline_data[63], 0x5a);
	ck_assert_uint_eq(o.num_sge, 0);
	ck_assert_uint_eq(o.dgid.raw[15], 0x42);
	ck_assert_uint_eq(o.remote_qpn, 0xFFFFFF);
	ck_assert_uint_eq(o.remote_qkey, 0x80000000);
	w->ah_handle = 2; /* an AH of another PD */
	ck_assert_int_eq(wqe_read_send(&cl, &qp, 1, &o), EINVAL);
	w->ah_handle = 3; /* no such AH */
	ck_assert_int_eq(wqe_read_send(&cl, &qp, 1, &o), EINVAL);
	w->ah_handle = 1;
	w->remote_qpn = 1u << 24;
	ck_assert_int_eq(wqe_read_send(&cl, &qp, 1, &o), EINVAL);
}
END_TEST

/* One defect per row on top of good_send(2). */
static void stale_index(struct uroce_send_wqe *w) { w->wqe_index = 6; }
static void bad_flags(struct uroce_send_wqe *w) { w->flags |= 0x80; }
static void three_sges(struct uroce_send_wqe *w) { w->num_sge = 3; w->byte_len = 300; }
static void len_mismatch(struct uroce_send_wqe *w) { w->byte_len = 299; }
static void len_overflow(struct uroce_send_wqe *w)
{
	sq_sge(2)[0].length = 0xFFFFFFFF;
	sq_sge(2)[1].length = 301;
	w->byte_len = 300; /* the 32-bit sum would wrap to 300 */
}
static void inline_long(struct uroce_send_wqe *w) { w->flags = UROCE_WQE_INLINE; w->byte_len = 65; }
static void inline_huge(struct uroce_send_wqe *w) { w->flags = UROCE_WQE_INLINE; w->byte_len = 0xFFFFFFFF; }

static const struct {
	const char *name;
	void (*mutate)(struct uroce_send_wqe *);
	int rc;
} bad_rows[] = {
	{ "wqe_index of another lap", stale_index, EINVAL },
	{ "unknown flag", bad_flags, EINVAL },
	{ "3 SGEs on a 2-SGE QP", three_sges, EINVAL },
	{ "byte_len != sum of SGEs", len_mismatch, EINVAL },
	{ "SGE lengths overflow 32 bits", len_overflow, EINVAL },
	{ "inline above max_inline_data", inline_long, EINVAL },
	{ "inline length 2^32-1", inline_huge, EINVAL },
};

START_TEST(send_malformed)
{
	struct xport_send_wqe o;
	int i;

	for (i = 0; i < (int)(sizeof(bad_rows) / sizeof(bad_rows[0])); i++) {
		good_send(2);
		ck_assert_int_eq(wqe_read_send(&cl, &qp, 2, &o), 0);
		bad_rows[i].mutate(sq(2));
		ck_assert_msg(wqe_read_send(&cl, &qp, 2, &o) == bad_rows[i].rc, "%s", bad_rows[i].name);
	}
	qp.ring = NULL;
	ck_assert_int_eq(wqe_read_send(&cl, &qp, 2, &o), ENODEV);
}
END_TEST

START_TEST(recv)
{
	struct uroce_recv_wqe *w = (struct uroce_recv_wqe *)((char *)ring + lay.rq_offset + 3 * lay.rq_stride);
	struct uroce_sge *s = (struct uroce_sge *)(w + 1);
	struct xport_recv_wqe o;

	w->wqe_index = 7;
	w->num_sge = 2;
	s[0] = (struct uroce_sge){ .addr = 0x9000, .length = 4096, .lkey = 0x300 };
	s[1] = (struct uroce_sge){ .addr = 0xA000, .length = 1, .lkey = 0x301 };
	ck_assert_int_eq(wqe_read_recv(&qp, 7, &o), 0);
	ck_assert_uint_eq(o.wr_index, 7);
	ck_assert_uint_eq(o.num_sge, 2);
	ck_assert_uint_eq(o.sg_list[0].length, 4096);
	ck_assert_uint_eq(o.sg_list[1].lkey, 0x301);
	ck_assert_int_eq(wqe_read_recv(&qp, 3, &o), EINVAL); /* slot holds WQE 7, not 3 */
	w->num_sge = 3;
	ck_assert_int_eq(wqe_read_recv(&qp, 7, &o), EINVAL);
	qp.cap.max_recv_wr = 0;
	ck_assert_int_eq(wqe_read_recv(&qp, 7, &o), ENODEV);
}
END_TEST

/* SRQ ring: WQE number n in slot n & (max_wr-1), wqe_index is the tag. */
START_TEST(srq)
{
	struct ctl_srq sq = { .max_wr = 8, .max_sge = 2 };
	uint32_t stride;
	uint64_t size;
	struct uroce_recv_wqe *w;
	struct uroce_sge *s;
	struct xport_recv_wqe o;

	uroce_srq_ring_layout(sq.max_wr, sq.max_sge, &stride, &size);
	ck_assert_uint_eq(stride, 64);
	ck_assert_uint_eq(size, 4096);
	sq.ring = calloc(1, size);
	ck_assert_ptr_nonnull(sq.ring);
	/* WQE 13 lives in slot 5 and carries tag 2 */
	w = (struct uroce_recv_wqe *)((char *)sq.ring + UROCE_SRQ_RING_HDR_SIZE + 5 * stride);
	s = (struct uroce_sge *)(w + 1);
	w->wqe_index = 2;
	w->num_sge = 2;
	s[0] = (struct uroce_sge){ .addr = 0x9000, .length = 100, .lkey = 0x300 };
	s[1] = (struct uroce_sge){ .addr = 0xA000, .length = 28, .lkey = 0x301 };
	ck_assert_int_eq(wqe_read_srq(&sq, 13, &o), 0);
	ck_assert_uint_eq(o.wr_index, 2);
	ck_assert_uint_eq(o.num_sge, 2);
	ck_assert_uint_eq(o.sg_list[0].addr, 0x9000);
	ck_assert_uint_eq(o.sg_list[1].length, 28);
	ck_assert_uint_eq(o.sg_list[1].lkey, 0x301);
	w->wqe_index = 8; /* tag out of range */
	ck_assert_int_eq(wqe_read_srq(&sq, 13, &o), EINVAL);
	w->wqe_index = 7;
	w->num_sge = 3;
	ck_assert_int_eq(wqe_read_srq(&sq, 13, &o), EINVAL);
	free(sq.ring);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wqe_reader");
	TCase *tc = tcase_create("wqe");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, send_sge);
	tcase_add_test(tc, send_inline_and_ud);
	tcase_add_test(tc, send_malformed);
	tcase_add_test(tc, recv);
	tcase_add_test(tc, srq);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
