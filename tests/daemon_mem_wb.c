/*
 * daemon_mem_wb.c - unit tests of emu/nic/mem_wb.c, the write-behind of
 * registered-memory writes, through mem_access_qp on this process's own
 * /proc/self/mem (this process owns the MRs), with exact counts:
 * 16 contiguous 4 KiB writes (a 64 KiB message at MTU 4096) stay out of
 * memory and then land with ONE pwrite; 40 of them make two runs (the
 * 128 KiB cap); a non-contiguous write, a write of another QP and one of
 * MEM_WB_CAP bytes write the pending run first; a READ of the same bytes
 * sees the new data; cq_push writes the pending run before the CQE; a run
 * staged by another prepare watcher of the loop turn (as udp_port_settle
 * and the doorbell watchers stage the datagrams they read) is written
 * before the loop polls, whichever watcher was started first; a run
 * whose memory was unmapped is lost, counted once (mem_write_faults) and
 * reported to its QP's mem_sync exactly once, not to another QP.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/cq_ring.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_access.h"
#include "emu/nic/mem_wb.h"

#include "check_main.h"
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PKT 4096u
#define QPN 0x11u

static struct uroce_dev dev;
static struct ctl_client owner;
static struct ctl_pd pd = { .pdn = 1 };
static struct ctl_mr mr;
static unsigned char mem[256 * 1024];
static unsigned char pkt[MEM_WB_CAP];

static void setup(void)
{
	memset(&dev, 0, sizeof(dev));
	memset(&owner, 0, sizeof(owner));
	ck_assert_int_eq(keytab_init(&dev.keys, 16), 0);
	owner.dev = &dev;
	owner.id = 7;
	owner.mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(owner.mem_fd, 0);
	owner.maps_fd = -1;
	mr = (struct ctl_mr){ .pd = &pd, .addr = (uintptr_t)mem, .length = sizeof(mem),
			      .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ,
			      .owner = &owner };
	ck_assert_int_eq(keytab_alloc(&dev.keys, &mr, &mr.key), 0);
	ck_assert_int_eq(mem_wb_init(&dev), 0); /* no loop: no ev_prepare */
	ck_assert_ptr_nonnull(dev.wb);
	memset(mem, 0, sizeof(mem));
	for (unsigned int i = 0; i < sizeof(pkt); i++)
		pkt[i] = (unsigned char)(i * 7 + 3);
}

static void teardown(void)
{
	mem_wb_fini(&dev);
	ck_assert_ptr_null(dev.wb);
	close(owner.mem_fd);
	keytab_fini(&dev.keys);
}

/* A responder's WRITE of LEN bytes of pkt (from byte SRC) at OFF of mem. */
static enum xport_mem_status wr(uint32_t qpn, uint64_t off, uint32_t src, uint32_t len)
{
	return mem_access_qp(&dev, 1, qpn, true, mr.key, mr.addr + off, pkt + src, len,
			     IBV_ACCESS_REMOTE_WRITE, XPORT_MEM_WRITE);
}

static bool zero(uint64_t off, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (mem[off + i])
			return false;
	return true;
}

START_TEST(contiguous_one_pwrite)
{
	const struct mem_wb_stats *st = &dev.wb->st;

	for (uint32_t i = 0; i < 16; i++)
		ck_assert_int_eq(wr(QPN, i * PKT, i * PKT, PKT), XPORT_MEM_OK);
	ck_assert_uint_eq(st->staged, 16);
	ck_assert_uint_eq(st->pwrites, 0);
	ck_assert(zero(0, 16 * PKT)); /* deferred: nothing in memory yet */
	mem_wb_flush(&dev);
	ck_assert_uint_eq(st->pwrites, 1);
	ck_assert_uint_eq(st->bytes, 16 * PKT);
	ck_assert_int_eq(memcmp(mem, pkt, 16 * PKT), 0);
	ck_assert(zero(16 * PKT, 1));
	mem_wb_flush(&dev); /* nothing pending: no call */
	ck_assert_uint_eq(st->pwrites, 1);
}
END_TEST

START_TEST(cap_makes_two_runs)
{
	const struct mem_wb_stats *st = &dev.wb->st;

	/* 40 packets: 32 fill the 128 KiB run, the 33rd writes it first */
	for (uint32_t i = 0; i < 40; i++)
		ck_assert_int_eq(wr(QPN, i * PKT, (i % 32) * PKT, PKT), XPORT_MEM_OK);
	ck_assert_uint_eq(st->pwrites, 1);
	ck_assert_int_eq(memcmp(mem, pkt, 32 * PKT), 0);
	ck_assert(zero(32 * PKT, 8 * PKT));
	mem_wb_flush(&dev);
	ck_assert_uint_eq(st->pwrites, 2);
	ck_assert_uint_eq(st->bytes, 40 * PKT);
	ck_assert_int_eq(memcmp(mem + 32 * PKT, pkt, 8 * PKT), 0);
}
END_TEST

START_TEST(noncontiguous_flushes_first)
{
	const struct mem_wb_stats *st = &dev.wb->st;

	ck_assert_int_eq(wr(QPN, 0, 0, 100), XPORT_MEM_OK);
	ck_assert_uint_eq(st->pwrites, 0);
	/* a gap of 100 bytes: the first run is written before this one is staged */
	ck_assert_int_eq(wr(QPN, 200, 200, 100), XPORT_MEM_OK);
	ck_assert_uint_eq(st->pwrites, 1);
	ck_assert_int_eq(memcmp(mem, pkt, 100), 0);
	ck_assert(zero(100, 200));
	/* contiguous but another QP: written first too */
	ck_assert_int_eq(wr(QPN + 1, 300, 300, 100), XPORT_MEM_OK);
	ck_assert_uint_eq(st->pwrites, 2);
	ck_assert_int_eq(memcmp(mem + 200, pkt + 200, 100), 0);
	ck_assert(zero(300, 100));
	/* a write of MEM_WB_CAP bytes: the run first, then itself at once */
	ck_assert_int_eq(wr(QPN, 400, 0, MEM_WB_CAP), XPORT_MEM_OK);
	ck_assert_uint_eq(st->pwrites, 4);
	ck_assert_int_eq(memcmp(mem + 300, pkt + 300, 100), 0);
	ck_assert_int_eq(memcmp(mem + 400, pkt, MEM_WB_CAP), 0);
	ck_assert_uint_eq(st->staged, 3);
	ck_assert_uint_eq(st->bytes, 300 + MEM_WB_CAP);
}
END_TEST

START_TEST(read_sees_new_data)
{
	unsigned char buf[2 * PKT];

	ck_assert_int_eq(wr(QPN, 8192, 0, PKT), XPORT_MEM_OK);
	ck_assert_int_eq(wr(QPN, 8192 + PKT, PKT, PKT), XPORT_MEM_OK);
	ck_assert(zero(8192, 2 * PKT));
	ck_assert_int_eq(mem_access_qp(&dev, 1, QPN, true, mr.key, mr.addr + 8192, buf, sizeof(buf),
				       IBV_ACCESS_REMOTE_READ, XPORT_MEM_READ), XPORT_MEM_OK);
	ck_assert_int_eq(memcmp(buf, pkt, sizeof(buf)), 0);
	ck_assert_uint_eq(dev.wb->st.pwrites, 1);
	/* a CHECK reads nothing: the run stays pending */
	ck_assert_int_eq(wr(QPN, 0, 0, 64), XPORT_MEM_OK);
	ck_assert_int_eq(mem_access_qp(&dev, 1, QPN, true, mr.key, mr.addr, NULL, 64,
				       IBV_ACCESS_REMOTE_WRITE, XPORT_MEM_CHECK), XPORT_MEM_OK);
	ck_assert_uint_eq(dev.wb->st.pwrites, 1);
	ck_assert(zero(0, 64));
}
END_TEST

START_TEST(cq_push_flushes_first)
{
	enum { NENT = 8 };
	void *ring = aligned_alloc(64, uroce_cq_ring_size(NENT));
	struct mlx5_cqe64 cqe, *slot;
	struct ctl_cq cq;

	ck_assert_ptr_nonnull(ring);
	memset(ring, 0, uroce_cq_ring_size(NENT));
	memset(&cq, 0, sizeof(cq));
	cq.owner = &owner;
	cq.ring = ring;
	cq.nent = NENT;
	cq.cqe = NENT - 1;
	cq.chan_fd = -1;
	memset(&cqe, 0, sizeof(cqe));
	cqe.byte_cnt = htobe32(3 * PKT);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_int_eq(wr(QPN, i * PKT, i * PKT, PKT), XPORT_MEM_OK);
	ck_assert(zero(0, 3 * PKT));
	ck_assert_int_eq(cq_push(&cq, &cqe), 0);
	ck_assert_uint_eq(dev.wb->st.pwrites, 1);
	ck_assert_int_eq(memcmp(mem, pkt, 3 * PKT), 0);
	slot = (struct mlx5_cqe64 *)((char *)ring + UROCE_CQ_RING_HDR_SIZE);
	ck_assert_uint_eq(be32toh(slot->byte_cnt), 3 * PKT);
	free(ring);
}
END_TEST

/* A prepare watcher that stages a 64 KiB message, as udp_port_settle does
 * when it reads the device's own datagrams before the loop polls. */
static void stage_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	unsigned int *ran = w->data;

	(void)loop;
	(void)revents;
	for (uint32_t i = 0; i < 16; i++)
		ck_assert_int_eq(wr(QPN, i * PKT, i * PKT, PKT), XPORT_MEM_OK);
	(*ran)++;
}

START_TEST(flushed_before_loop_polls)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	ev_prepare stager;
	unsigned int ran = 0;

	ck_assert_ptr_nonnull(loop);
	mem_wb_fini(&dev); /* the fixture's has no loop */
	/* started first: libev runs prepare watchers of one priority last
	 * started first, so only mem_wb's priority puts its flush after this */
	ev_prepare_init(&stager, stage_cb);
	stager.data = &ran;
	ev_prepare_start(loop, &stager);
	dev.loop = loop;
	ck_assert_int_eq(mem_wb_init(&dev), 0);
	ev_run(loop, EVRUN_NOWAIT);
	ck_assert_uint_eq(ran, 1);
	ck_assert_uint_eq(dev.wb->st.staged, 16);
	ck_assert_uint_eq(dev.wb->st.pwrites, 1);
	ck_assert_int_eq(dev.wb->fd, -1); /* nothing pending while polling */
	ck_assert_int_eq(memcmp(mem, pkt, 16 * PKT), 0);
	ev_prepare_stop(loop, &stager);
	mem_wb_fini(&dev);
	dev.loop = NULL;
	ev_loop_destroy(loop);
	ck_assert_int_eq(mem_wb_init(&dev), 0); /* for the fixture's teardown */
}
END_TEST

START_TEST(unmapped_run_is_a_fault)
{
	char *m = mmap(NULL, 2 * PKT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ctl_mr mr2 = { .pd = &pd, .addr = (uintptr_t)m, .length = 2 * PKT,
			      .access = IBV_ACCESS_REMOTE_WRITE, .owner = &owner };
	const struct mem_wb_stats *st = &dev.wb->st;

	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(keytab_alloc(&dev.keys, &mr2, &mr2.key), 0);
	for (uint32_t i = 0; i < 2; i++)
		ck_assert_int_eq(mem_access_qp(&dev, 1, QPN, true, mr2.key, mr2.addr + i * PKT, pkt, PKT,
					       IBV_ACCESS_REMOTE_WRITE, XPORT_MEM_WRITE), XPORT_MEM_OK);
	ck_assert_int_eq(munmap(m, 2 * PKT), 0); /* under the registered MR */
	ck_assert_int_eq(mem_wb_sync(&dev, QPN + 1), 0); /* another QP: not its failure */
	ck_assert_uint_eq(st->pwrites, 1);
	ck_assert_uint_eq(st->faults, 1);
	ck_assert_uint_eq(st->bytes, 0);
	ck_assert_int_eq(mem_wb_sync(&dev, QPN), -1); /* reported once */
	ck_assert_int_eq(mem_wb_sync(&dev, QPN), 0);
	ck_assert_uint_eq(st->pwrites, 1);
	/* the device carries on: the next write of the same QP lands */
	ck_assert_int_eq(wr(QPN, 0, 0, PKT), XPORT_MEM_OK);
	ck_assert_int_eq(mem_wb_sync(&dev, QPN), 0);
	ck_assert_int_eq(memcmp(mem, pkt, PKT), 0);
	ck_assert_uint_eq(st->faults, 1);
	/* a failure not yet reported is forgotten with its QP (destroyed) */
	ck_assert_int_eq(mem_access_qp(&dev, 1, QPN, true, mr2.key, mr2.addr, pkt, PKT,
				       IBV_ACCESS_REMOTE_WRITE, XPORT_MEM_WRITE), XPORT_MEM_OK);
	mem_wb_forget_qp(&dev, QPN);
	ck_assert_uint_eq(st->faults, 2);
	ck_assert_int_eq(mem_wb_sync(&dev, QPN), 0);
	ck_assert_int_eq(keytab_free(&dev.keys, mr2.key), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mem_wb");
	TCase *tc = tcase_create("write_behind");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, contiguous_one_pwrite);
	tcase_add_test(tc, cap_makes_two_runs);
	tcase_add_test(tc, noncontiguous_flushes_first);
	tcase_add_test(tc, read_sees_new_data);
	tcase_add_test(tc, cq_push_flushes_first);
	tcase_add_test(tc, flushed_before_loop_polls);
	tcase_add_test(tc, unmapped_run_is_a_fault);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
