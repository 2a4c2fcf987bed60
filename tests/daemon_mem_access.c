/*
 * daemon_mem_access.c - unit tests of emu/nic/mem_access.c: key lookup (live,
 * key+1, stale), PD check, bounds (exact fit, one byte past, before the MR,
 * 64-bit wrap-around from hostile addr/len), access flags, and real copies
 * through pread/pwrite on /proc/self/mem (this process is the MR's owner),
 * incl. FAULT on an unmapped page inside a registered range, FAULT without
 * any copy when the mm behind the owner's mem fd is gone, and FAULT without
 * a mem fd; REG_MR's range check (mapped, readable, writable for write
 * access) against this process's own mappings; memory windows (bound,
 * bounds, rights, PD, the type 2 QPN check, rkey only).
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_access.h"
#include "emu/obj/objects.h"

#include "check_main.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static struct uroce_dev dev;
static struct ctl_client owner;
static struct ctl_pd pd1 = { .pdn = 1 }, pd2 = { .pdn = 2 };
static struct ctl_mr mr_rw, mr_ro, mr_hole;
static unsigned char mem[8192];
static void *hole;

static void setup(void)
{
	memset(&dev, 0, sizeof(dev));
	ck_assert_int_eq(keytab_init(&dev.keys, 16), 0);
	owner.pid = getpid();
	owner.mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(owner.mem_fd, 0);
	owner.maps_fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(owner.maps_fd, 0);
	mr_rw = (struct ctl_mr){ .pd = &pd1, .addr = (uintptr_t)mem, .length = 4096,
			     .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			     .owner = &owner };
	mr_ro = (struct ctl_mr){ .pd = &pd2, .addr = (uintptr_t)mem + 4096, .length = 4096, .access = 0, .owner = &owner };
	ck_assert_int_eq(keytab_alloc(&dev.keys, &mr_rw, &mr_rw.key), 0);
	ck_assert_int_eq(keytab_alloc(&dev.keys, &mr_ro, &mr_ro.key), 0);
	hole = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(hole, MAP_FAILED);
	munmap((char *)hole + 4096, 4096); /* middle page unmapped */
	mr_hole = (struct ctl_mr){ .pd = &pd1, .addr = (uintptr_t)hole, .length = 3 * 4096,
			       .access = IBV_ACCESS_LOCAL_WRITE, .owner = &owner };
	ck_assert_int_eq(keytab_alloc(&dev.keys, &mr_hole, &mr_hole.key), 0);
	memset(mem, 0, sizeof(mem));
}

static void teardown(void)
{
	if (owner.mem_fd >= 0)
		close(owner.mem_fd);
	if (owner.maps_fd >= 0)
		close(owner.maps_fd);
	munmap(hole, 4096);
	munmap((char *)hole + 8192, 4096);
	keytab_fini(&dev.keys);
}

#define CHK(pdn, key, addr, len, acc) \
	mem_access(&dev, pdn, true, key, (uint64_t)(addr), NULL, len, acc, XPORT_MEM_CHECK)

START_TEST(checks)
{
	uint64_t a = mr_rw.addr;

	ck_assert_int_eq(CHK(1, mr_rw.key, a, 4096, IBV_ACCESS_REMOTE_WRITE), XPORT_MEM_OK);
	ck_assert_int_eq(CHK(1, mr_rw.key + 1, a, 1, 0), XPORT_MEM_BAD_KEY);
	ck_assert_int_eq(CHK(1, 0, a, 1, 0), XPORT_MEM_BAD_KEY);
	ck_assert_int_eq(CHK(2, mr_rw.key, a, 1, 0), XPORT_MEM_BAD_PD);
	ck_assert_int_eq(CHK(1, mr_rw.key, a + 1, 4096, 0), XPORT_MEM_BOUNDS);     /* one past */
	ck_assert_int_eq(CHK(1, mr_rw.key, a + 4095, 1, 0), XPORT_MEM_OK);         /* last byte */
	ck_assert_int_eq(CHK(1, mr_rw.key, a - 1, 2, 0), XPORT_MEM_BOUNDS);        /* before */
	ck_assert_int_eq(CHK(1, mr_rw.key, a + 4096, 1, 0), XPORT_MEM_BOUNDS);
	ck_assert_int_eq(CHK(1, mr_rw.key, ~0ull - 10, 100, 0), XPORT_MEM_BOUNDS);  /* wraps */
	ck_assert_int_eq(CHK(1, mr_rw.key, a + 10, 0xFFFFFFFF, 0), XPORT_MEM_BOUNDS);
	ck_assert_int_eq(CHK(1, mr_rw.key, 0, 0, 0), XPORT_MEM_OK);                /* len 0: key only */
	ck_assert_int_eq(CHK(2, mr_ro.key, mr_ro.addr, 8, 0), XPORT_MEM_OK);       /* local read */
	ck_assert_int_eq(CHK(2, mr_ro.key, mr_ro.addr, 8, IBV_ACCESS_REMOTE_READ), XPORT_MEM_ACCESS);
	ck_assert_int_eq(CHK(2, mr_ro.key, mr_ro.addr, 8, IBV_ACCESS_LOCAL_WRITE), XPORT_MEM_ACCESS);
	ck_assert_int_eq(CHK(1, mr_rw.key, a, 8, IBV_ACCESS_REMOTE_ATOMIC), XPORT_MEM_ACCESS);
	/* a freed key is dead */
	ck_assert_int_eq(keytab_free(&dev.keys, mr_ro.key), 0);
	ck_assert_int_eq(CHK(2, mr_ro.key, mr_ro.addr, 8, 0), XPORT_MEM_BAD_KEY);
}
END_TEST

START_TEST(copies)
{
	unsigned char buf[300];
	int i;

	for (i = 0; i < 300; i++)
		buf[i] = (unsigned char)(i * 7);
	ck_assert_int_eq(mem_access(&dev, 1, true, mr_rw.key, mr_rw.addr + 3796, buf, 300,
				    IBV_ACCESS_REMOTE_WRITE, XPORT_MEM_WRITE), XPORT_MEM_OK);
	ck_assert_int_eq(memcmp(mem + 3796, buf, 300), 0);
	ck_assert_uint_eq(mem[3795], 0);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(mem_access(&dev, 1, false, mr_rw.key, mr_rw.addr + 3796, buf, 300, 0, XPORT_MEM_READ),
			 XPORT_MEM_OK);
	for (i = 0; i < 300; i++)
		ck_assert_uint_eq(buf[i], (unsigned char)(i * 7));
	/* the range is registered but its middle page is not mapped */
	ck_assert_int_eq(mem_access(&dev, 1, false, mr_hole.key, mr_hole.addr + 4000, buf, 200, 0, XPORT_MEM_READ),
			 XPORT_MEM_FAULT);
	ck_assert_int_eq(mem_access(&dev, 1, false, mr_hole.key, mr_hole.addr + 8192, buf, 200,
				    IBV_ACCESS_LOCAL_WRITE, XPORT_MEM_WRITE), XPORT_MEM_OK);
}
END_TEST

/* The mem fd was opened on a process that is gone now (as after an exit or
 * an execve: the mm it is bound to has no users): nothing is copied, though
 * the pid and the MR are unchanged. Without a mem fd: FAULT too. */
/* Access through a memory window's rkey (mem_access_qp): bound only,
 * its own bounds and rights, its PD, type 2 by its QP only, rkey only,
 * then the MR's memory. */
START_TEST(windows)
{
	struct ctl_mw w1 = { .pd = &pd1, .type = IBV_MW_TYPE_1 };
	struct ctl_mw w2 = { .pd = &pd1, .type = IBV_MW_TYPE_2 };
	uint64_t a = mr_rw.addr + 1024;
	unsigned char buf[16] = "window write 01";

	ck_assert_int_eq(keytab_alloc_kind(&dev.keys, &w1, KEYTAB_MW, &w1.rkey), 0);
	ck_assert_int_eq(keytab_alloc_kind(&dev.keys, &w2, KEYTAB_MW, &w2.rkey), 0);
	/* not bound yet */
	ck_assert_int_eq(mem_access_qp(&dev, 1, 0x11, true, w1.rkey, a, NULL, 8, 0, XPORT_MEM_CHECK),
			 XPORT_MEM_BAD_KEY);
	w1.mr = &mr_ro;	/* an MR without remote rights: the window grants them */
	w1.addr = mr_ro.addr + 100;
	w1.length = 200;
	w1.access = IBV_ACCESS_REMOTE_READ;
	w1.pd = &pd2;
	ck_assert_int_eq(mem_access_qp(&dev, 2, 0x11, true, w1.rkey, w1.addr, NULL, 200,
				       IBV_ACCESS_REMOTE_READ, XPORT_MEM_CHECK), XPORT_MEM_OK);
	ck_assert_int_eq(mem_access_qp(&dev, 2, 0x11, true, w1.rkey, w1.addr + 1, NULL, 200,
				       IBV_ACCESS_REMOTE_READ, XPORT_MEM_CHECK), XPORT_MEM_BOUNDS);
	ck_assert_int_eq(mem_access_qp(&dev, 2, 0x11, true, w1.rkey, w1.addr - 1, NULL, 1,
				       IBV_ACCESS_REMOTE_READ, XPORT_MEM_CHECK), XPORT_MEM_BOUNDS);
	ck_assert_int_eq(mem_access_qp(&dev, 2, 0x11, true, w1.rkey, ~0ull - 2, NULL, 8,
				       IBV_ACCESS_REMOTE_READ, XPORT_MEM_CHECK), XPORT_MEM_BOUNDS);
	ck_assert_int_eq(mem_access_qp(&dev, 2, 0x11, true, w1.rkey, w1.addr, NULL, 8,
				       IBV_ACCESS_REMOTE_WRITE, XPORT_MEM_CHECK), XPORT_MEM_ACCESS);
	ck_assert_int_eq(mem_access_qp(&dev, 1, 0x11, true, w1.rkey, w1.addr, NULL, 8,
				       IBV_ACCESS_REMOTE_READ, XPORT_MEM_CHECK), XPORT_MEM_BAD_PD);
	ck_assert_int_eq(mem_access_qp(&dev, 2, 0x11, false, w1.rkey, w1.addr, NULL, 8, 0,
				       XPORT_MEM_CHECK), XPORT_MEM_BAD_KEY);
	ck_assert_int_eq(mem_access_qp(&dev, 2, 0x11, true, w1.rkey + 1, w1.addr, NULL, 8,
				       IBV_ACCESS_REMOTE_READ, XPORT_MEM_CHECK), XPORT_MEM_BAD_KEY);
	/* type 2 bound to QPN 0x12 writes the MR's bytes; QPN 0x11 cannot */
	w2.mr = &mr_rw;
	w2.addr = a;
	w2.length = 16;
	w2.access = IBV_ACCESS_REMOTE_WRITE;
	w2.qpn = 0x12;
	ck_assert_int_eq(mem_access_qp(&dev, 1, 0x11, true, w2.rkey, a, buf, 16,
				       IBV_ACCESS_REMOTE_WRITE, XPORT_MEM_WRITE), XPORT_MEM_BAD_KEY);
	ck_assert_uint_eq(mem[1024], 0);
	ck_assert_int_eq(mem_access_qp(&dev, 1, 0x12, true, w2.rkey, a, buf, 16,
				       IBV_ACCESS_REMOTE_WRITE, XPORT_MEM_WRITE), XPORT_MEM_OK);
	ck_assert_int_eq(memcmp(mem + 1024, buf, 16), 0);
	ck_assert_uint_eq(mem[1023], 0);
	ck_assert_uint_eq(mem[1040], 0);
	/* mem_access (QPN 0) never reaches a type 2 window */
	ck_assert_int_eq(CHK(1, w2.rkey, a, 16, IBV_ACCESS_REMOTE_WRITE), XPORT_MEM_BAD_KEY);
	ck_assert_int_eq(keytab_free(&dev.keys, w1.rkey), 0);
	ck_assert_int_eq(keytab_free(&dev.keys, w2.rkey), 0);
}
END_TEST

START_TEST(dead_owner)
{
	unsigned char buf[16] = { 1 };
	int go[2], fd;
	char path[64];
	char c = 0;
	pid_t child;

	ck_assert_int_eq(pipe(go), 0);
	child = fork();
	if (child == 0) {
		close(go[1]);
		_exit(read(go[0], &c, 1) < 0);
	}
	close(go[0]);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)child);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	close(go[1]);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	close(owner.mem_fd);
	owner.mem_fd = fd; /* the pid is still ours: only the fd counts */
	mem[0] = 0;
	ck_assert_int_eq(mem_access(&dev, 1, true, mr_rw.key, mr_rw.addr, buf, 16, IBV_ACCESS_REMOTE_WRITE,
				    XPORT_MEM_WRITE), XPORT_MEM_FAULT);
	ck_assert_int_eq(mem_access(&dev, 1, true, mr_rw.key, mr_rw.addr, buf, 16, IBV_ACCESS_REMOTE_READ,
				    XPORT_MEM_READ), XPORT_MEM_FAULT);
	ck_assert_uint_eq(mem[0], 0);
	ck_assert_int_eq(CHK(1, mr_rw.key, mr_rw.addr, 16, IBV_ACCESS_REMOTE_WRITE), XPORT_MEM_OK);
	close(owner.mem_fd);
	owner.mem_fd = -1;
	ck_assert_int_eq(mem_access(&dev, 1, true, mr_rw.key, mr_rw.addr, buf, 16, IBV_ACCESS_REMOTE_READ,
				    XPORT_MEM_READ), XPORT_MEM_FAULT);
}
END_TEST

/* REG_MR's range check against this process's mappings (table-driven):
 * page layout rw | rw (a separate mapping) | ro | none | hole. */
START_TEST(range_check)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 5 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const struct {
		const char *name;
		int first, last; /* pages, inclusive */
		bool write;
		int rc;
	} rows[] = {
		{ "rw page, write", 0, 0, true, 0 },
		{ "two adjacent rw mappings, write", 0, 1, true, 0 },
		{ "read-only page, read", 2, 2, false, 0 },
		{ "read-only page, write", 2, 2, true, EFAULT },
		{ "rw + read-only, write", 1, 2, true, EFAULT },
		{ "rw + read-only, read", 0, 2, false, 0 },
		{ "PROT_NONE page, read", 3, 3, false, EFAULT },
		{ "read-only + PROT_NONE, read", 2, 3, false, EFAULT },
		{ "unmapped page, read", 4, 4, false, EFAULT },
		{ "rw .. unmapped, read", 0, 4, false, EFAULT },
	};
	unsigned int i;

	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(munmap(m + 4 * pg, pg), 0);
	ck_assert_ptr_eq(mmap(m, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), m);
	ck_assert_ptr_eq(mmap(m + pg, pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
			 m + pg);
	ck_assert_int_eq(mprotect(m + 2 * pg, pg, PROT_READ), 0);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t a = (uintptr_t)m + (uint64_t)rows[i].first * pg;
		uint64_t len = (uint64_t)(rows[i].last - rows[i].first + 1) * pg;

		ck_assert_msg(mem_range_check(&owner, a, len, rows[i].write) == rows[i].rc, "%s: got %d, want %d",
			      rows[i].name, mem_range_check(&owner, a, len, rows[i].write), rows[i].rc);
	}
	ck_assert_int_eq(mem_range_check(&owner, 0, 4096, false), EFAULT);          /* NULL */
	ck_assert_int_eq(mem_range_check(&owner, (uintptr_t)mem, 16, true), 0);     /* .bss */
	ck_assert_int_eq(mem_range_check(&owner, 1ull << 63, 4096, false), EFAULT); /* kernel half */
	ck_assert(mem_maps_live(&owner));
	/* maps of an address space that is gone (a child that exited after
	 * opening them): EFAULT for our own mapped .bss, nothing listed */
	{
		int go[2], fd, saved = owner.maps_fd;
		char path[64], c = 0;
		pid_t child;

		ck_assert_int_eq(pipe(go), 0);
		child = fork();
		if (child == 0) {
			close(go[1]);
			_exit(read(go[0], &c, 1) < 0);
		}
		close(go[0]);
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		owner.maps_fd = fd;
		ck_assert(mem_maps_live(&owner)); /* alive: its maps are listed */
		close(go[1]);
		ck_assert_int_eq(waitpid(child, NULL, 0), child);
		ck_assert(!mem_maps_live(&owner));
		ck_assert_int_eq(mem_range_check(&owner, (uintptr_t)mem, 16, true), EFAULT);
		close(fd);
		owner.maps_fd = saved;
	}
	/* no mem fd: EFAULT though mapped */
	close(owner.mem_fd);
	owner.mem_fd = -1;
	ck_assert_int_eq(mem_range_check(&owner, (uintptr_t)mem, 16, true), EFAULT);
	/* no maps fd: EFAULT */
	owner.mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	close(owner.maps_fd);
	owner.maps_fd = -1;
	ck_assert_int_eq(mem_range_check(&owner, (uintptr_t)mem, 16, false), EFAULT);
	ck_assert(!mem_maps_live(&owner));
	munmap(m, 4 * pg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mem_access");
	TCase *tc = tcase_create("mem");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, checks);
	tcase_add_test(tc, copies);
	tcase_add_test(tc, windows);
	tcase_add_test(tc, dead_owner);
	tcase_add_test(tc, range_check);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
