/*
 * daemon_cq_ring.c - unit tests of the CQ ring in the daemon (emu/ctl/obj_cq.c):
 * owner bit per lap, consumer-index doorbell and overrun (IBV_EVENT_CQ_ERR /
 * IGNORE_OVERRUN), and arming: one event per arm, only for CQEs written after
 * the arm (pending ones do not fire), an arm word stored but not yet read when
 * a CQE is written still fires, solicited-only arms, unchanged words ignored.
 * The CQ is driven in-process with a real socketpair as completion channel.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"
#include "emu/nic/cq_ring.h"

#include "check_main.h"
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

#define NENT 8

static struct uroce_dev dev;
static struct ctl_client cl;
static struct ctl_cq cq;
static int chan[2], asy[2];
static void *ring;

static void setup(void)
{
	uint32_t i;

	memset(&cl, 0, sizeof(cl));
	memset(&cq, 0, sizeof(cq));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, chan), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, asy), 0);
	fcntl(chan[0], F_SETFL, O_NONBLOCK);
	fcntl(asy[0], F_SETFL, O_NONBLOCK);
	ring = aligned_alloc(64, uroce_cq_ring_size(NENT));
	memset(ring, 0, uroce_cq_ring_size(NENT));
	for (i = 0; i < NENT; i++)
		((struct mlx5_cqe64 *)((char *)ring + UROCE_CQ_RING_HDR_SIZE))[i].op_own = 0xF0;
	memset(&dev, 0, sizeof(dev));
	cl.dev = &dev; /* no write-behind: cq_push's flush does nothing */
	cl.id = 1;
	cl.async_fd = asy[1];
	cq.owner = &cl;
	cq.ring = ring;
	cq.nent = NENT;
	cq.cqe = NENT - 1;
	cq.chan_fd = chan[1];
	cq.user_handle = 0xC0FFEE;
}

static void teardown(void)
{
	close(chan[0]);
	close(chan[1]);
	close(asy[0]);
	close(asy[1]);
	free(ring);
}

static struct uroce_cq_ring_hdr *hdr(void) { return ring; }
static struct mlx5_cqe64 *slot(uint32_t i) { return (struct mlx5_cqe64 *)((char *)ring + UROCE_CQ_RING_HDR_SIZE) + i; }

static void set_ci(uint32_t ci) { hdr()->dbrec[0] = htobe32(ci & 0xFFFFFF); }

static void arm(uint32_t sn, int solicited, uint32_t ci)
{
	hdr()->dbrec[1] = htobe32(UROCE_CQ_ARM_CMD | (sn & 3) << 28 | (solicited ? UROCE_CQ_ARM_SOLICITED : 0) |
				  (ci & 0xFFFFFF));
	cq_check_arm(&cq); /* what the doorbell does */
}

/* Completion events waiting on the application's end of the channel. */
static int events(void)
{
	struct ib_uverbs_comp_event_desc ev;
	int n = 0;

	while (recv(chan[0], &ev, sizeof(ev), 0) == (ssize_t)sizeof(ev)) {
		ck_assert_uint_eq(ev.cq_handle, 0xC0FFEE);
		n++;
	}
	return n;
}

static int push(uint8_t opcode, int se, uint32_t tag)
{
	struct mlx5_cqe64 c;

	memset(&c, 0, sizeof(c));
	c.byte_cnt = htobe32(tag);
	c.op_own = (uint8_t)(opcode << 4 | (se ? 2 : 0));
	return cq_push(&cq, &c);
}

START_TEST(owner_bit_per_lap)
{
	uint32_t n;

	for (n = 0; n < 3 * NENT; n++) {
		set_ci(n); /* consumer keeps up */
		ck_assert_int_eq(push(0, 0, n), 0);
		ck_assert_uint_eq(slot(n % NENT)->op_own & 1, (n / NENT) & 1);
		ck_assert_uint_eq(slot(n % NENT)->op_own >> 4, 0);
		ck_assert_uint_eq(be32toh(slot(n % NENT)->byte_cnt), n);
	}
	ck_assert_uint_eq(cq.pi, 3 * NENT);
	ck_assert_int_eq(events(), 0); /* never armed */
}
END_TEST

START_TEST(overrun_is_cq_error)
{
	struct ib_uverbs_async_event_desc ev;
	uint32_t n;

	set_ci(0);
	for (n = 0; n < NENT; n++)
		ck_assert_int_eq(push(2, 0, n), 0);
	ck_assert_int_eq(push(2, 0, 99), EOVERFLOW);
	ck_assert_int_eq(recv(asy[0], &ev, sizeof(ev), 0), (int)sizeof(ev));
	ck_assert_uint_eq(ev.element, 0xC0FFEE);
	ck_assert_uint_eq(ev.event_type, IBV_EVENT_CQ_ERR);
	ck_assert_uint_eq(cq.async_events, 1);
	set_ci(NENT);
	ck_assert_int_eq(push(2, 0, 100), EIO); /* stays in error */
	ck_assert_uint_eq(be32toh(slot(0)->byte_cnt), 0); /* nothing overwritten */
}
END_TEST

/* The async socket is full: the CQ_ERR record is lost and not counted in
 * the CQ's async events (DESTROY_CQ would announce an event that never
 * comes), but the CQ is in error all the same. */
START_TEST(overrun_event_lost_not_counted)
{
	struct ib_uverbs_async_event_desc ev = { .element = 1, .event_type = IBV_EVENT_PORT_ACTIVE };
	uint32_t n, filled = 0;

	while (send(asy[1], &ev, sizeof(ev), MSG_DONTWAIT) == (ssize_t)sizeof(ev))
		filled++;
	ck_assert_uint_gt(filled, 0);
	set_ci(0);
	for (n = 0; n < NENT; n++)
		ck_assert_int_eq(push(2, 0, n), 0);
	ck_assert_int_eq(push(2, 0, 99), EOVERFLOW);
	ck_assert_uint_eq(cq.async_events, 0);
	ck_assert_uint_eq(cl.async_dropped, 1);
	ck_assert_uint_eq(cl.async_events, 0);
	set_ci(NENT);
	ck_assert_int_eq(push(2, 0, 100), EIO);
}
END_TEST

START_TEST(ignore_overrun_overwrites)
{
	uint32_t n;

	cq.flags = UROCE_CQ_IGNORE_OVERRUN;
	set_ci(0);
	for (n = 0; n < NENT + 2; n++)
		ck_assert_int_eq(push(2, 0, n), 0);
	ck_assert_uint_eq(be32toh(slot(0)->byte_cnt), NENT);
	ck_assert_uint_eq(slot(0)->op_own & 1, 1);
	ck_assert_uint_eq(cq.async_events, 0);
}
END_TEST

START_TEST(arm_then_cqe)
{
	set_ci(0);
	arm(0, 0, 0);
	ck_assert_int_eq(events(), 0);  /* empty CQ: no event yet */
	ck_assert_int_eq(push(2, 0, 1), 0);
	ck_assert_int_eq(events(), 1);
	ck_assert_int_eq(push(2, 0, 2), 0);
	ck_assert_int_eq(events(), 0);  /* one-shot */
	ck_assert_uint_eq(cq.comp_events, 1);
}
END_TEST

START_TEST(pending_cqes_do_not_fire)
{
	/* A CQE is already in the ring when the consumer arms: no event for
	 * it (the consumer polls after arming); the next CQE fires. */
	set_ci(0);
	ck_assert_int_eq(push(2, 0, 1), 0);
	ck_assert_int_eq(events(), 0);
	arm(0, 0, 0);
	ck_assert_int_eq(events(), 0);
	ck_assert_int_eq(push(2, 0, 2), 0);
	ck_assert_int_eq(events(), 1);
	/* ibv_rc_pingpong -t -e: event, ack (sn 1), re-arm while that CQE is
	 * still unpolled, poll it: no second event until a new CQE. */
	arm(1, 0, 1);
	set_ci(2);
	ck_assert_int_eq(events(), 0);
	ck_assert_int_eq(push(2, 0, 3), 0);
	ck_assert_int_eq(events(), 1);
}
END_TEST

START_TEST(arm_word_not_yet_read)
{
	/* The arm word is in memory but its doorbell not handled yet when the
	 * CQE is written: cq_push reads it and fires. */
	set_ci(0);
	hdr()->dbrec[1] = htobe32(UROCE_CQ_ARM_CMD | 0);
	ck_assert_int_eq(push(2, 0, 1), 0);
	ck_assert_int_eq(events(), 1);
}
END_TEST

START_TEST(same_word_ignored)
{
	set_ci(0);
	arm(0, 0, 0);
	ck_assert_int_eq(push(2, 0, 1), 0);
	ck_assert_int_eq(events(), 1);
	/* The same word again (no ack, no poll in between) is not a new arm. */
	cq_check_arm(&cq);
	ck_assert_int_eq(push(2, 0, 2), 0);
	ck_assert_int_eq(events(), 0);
	/* A word without the arm command bit is never an arm. */
	hdr()->dbrec[1] = htobe32(1u << 28 | 2);
	cq_check_arm(&cq);
	ck_assert_int_eq(push(2, 0, 3), 0);
	ck_assert_int_eq(events(), 0);
}
END_TEST

START_TEST(initial_zero_word_is_not_an_arm)
{
	/* Provider's zero-filled ring: no event ever without an arm. */
	set_ci(0);
	cq_check_arm(&cq);
	ck_assert_int_eq(push(2, 0, 1), 0);
	ck_assert_int_eq(events(), 0);
}
END_TEST

START_TEST(solicited_only)
{
	set_ci(0);
	arm(0, 1, 0);
	ck_assert_int_eq(push(2, 0, 1), 0);     /* unsolicited receive */
	ck_assert_int_eq(events(), 0);
	ck_assert_int_eq(push(2, 1, 2), 0);     /* SE set */
	ck_assert_int_eq(events(), 1);
	/* Re-arm solicited: a pending solicited CQE does not fire again. */
	arm(1, 1, 0);
	ck_assert_int_eq(events(), 0);
	ck_assert_int_eq(push(2, 0, 3), 0);
	ck_assert_int_eq(events(), 0);
	ck_assert_int_eq(push(13, 0, 4), 0);    /* REQ_ERR wakes a solicited arm */
	ck_assert_int_eq(events(), 1);
	/* Unsolicited arm: any next CQE. */
	arm(2, 0, 4);
	ck_assert_int_eq(push(2, 0, 5), 0);
	ck_assert_int_eq(events(), 1);
}
END_TEST

START_TEST(no_channel)
{
	cq.chan_fd = -1;
	set_ci(0);
	arm(0, 0, 0);
	ck_assert_int_eq(push(2, 0, 1), 0);
	ck_assert(!cq.armed);
	ck_assert_uint_eq(cq.comp_events, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cq_ring");
	TCase *tc = tcase_create("ring");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, owner_bit_per_lap);
	tcase_add_test(tc, overrun_is_cq_error);
	tcase_add_test(tc, overrun_event_lost_not_counted);
	tcase_add_test(tc, ignore_overrun_overwrites);
	tcase_add_test(tc, arm_then_cqe);
	tcase_add_test(tc, pending_cqes_do_not_fire);
	tcase_add_test(tc, arm_word_not_yet_read);
	tcase_add_test(tc, same_word_ignored);
	tcase_add_test(tc, initial_zero_word_is_not_an_arm);
	tcase_add_test(tc, solicited_only);
	tcase_add_test(tc, no_channel);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
