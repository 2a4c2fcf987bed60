/*
 * daemon_cpu_quota.c - unit tests of the cgroup CPU quota reader
 * (emu/nic/cpu_quota.c) on cgroup trees written to a temporary directory:
 * cgroup v2 cpu.max ("max" and a number, the smallest along the path up,
 * a missing file), cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us under
 * "cpu,cpuacct" and under "cpu", v1 lines of other controllers ignored
 * (cpuset, cpuacct alone), malformed lines, an unreadable /proc file; and
 * the machine's own /proc/self/cgroup read without error.
 */
#include "config.h"
#include "emu/nic/cpu_quota.h"

#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];
static char cgfile[128];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (p = dir + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(dir, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/uroce-cpuq-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(cgfile, sizeof(cgfile), "%s/proc-self-cgroup", root);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(v2_quota_and_ancestors)
{
	put("proc-self-cgroup", "0::/a/b\n");
	put("a/b/cpu.max", "150000 100000\n");
	put("a/cpu.max", "max 100000\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), 1.5);
	/* a parent's smaller quota wins */
	put("a/cpu.max", "50000 100000\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), 0.5);
	/* no limit anywhere: -1 */
	put("a/cpu.max", "max 100000\n");
	put("a/b/cpu.max", "max 100000\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), -1);
}
END_TEST

START_TEST(v2_missing_or_bad)
{
	put("proc-self-cgroup", "0::/c\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), -1);
	put("c/cpu.max", "garbage\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), -1);
	put("c/cpu.max", "25000 0\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), -1);
	put("c/cpu.max", "25000 100000\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), 0.25);
	put("proc-self-cgroup", "no colons here\n0:relative\n0::c\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), -1);
	ck_assert_double_eq(cpu_quota_cpus("/nonexistent/cgroup", root), -1);
}
END_TEST

START_TEST(v1_controllers)
{
	put("proc-self-cgroup", "5:cpuset:/d\n4:cpuacct:/d\n3:cpu,cpuacct:/d\n");
	put("cpuset/d/cpu.cfs_quota_us", "10000\n");
	put("cpuset/d/cpu.cfs_period_us", "100000\n");
	put("cpu,cpuacct/d/cpu.cfs_quota_us", "200000\n");
	put("cpu,cpuacct/d/cpu.cfs_period_us", "100000\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), 2);
	put("cpu,cpuacct/d/cpu.cfs_quota_us", "-1\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), -1);
	/* the hierarchy mounted as "cpu" only */
	put("proc-self-cgroup", "3:cpu,cpuacct:/e\n");
	put("cpu/e/cpu.cfs_quota_us", "75000\n");
	put("cpu/e/cpu.cfs_period_us", "100000\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), 0.75);
	/* both versions: the smaller */
	put("proc-self-cgroup", "3:cpu:/e\n0::/f\n");
	put("f/cpu.max", "50000 100000\n");
	ck_assert_double_eq(cpu_quota_cpus(cgfile, root), 0.5);
}
END_TEST

START_TEST(this_machine)
{
	double q = cpu_quota_cpus("/proc/self/cgroup", "/sys/fs/cgroup");

	ck_assert(q == -1 || q > 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpu_quota");
	TCase *tc = tcase_create("cpu_quota");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, v2_quota_and_ancestors);
	tcase_add_test(tc, v2_missing_or_bad);
	tcase_add_test(tc, v1_controllers);
	tcase_add_test(tc, this_machine);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
