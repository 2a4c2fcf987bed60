/*
 * cpu_quota.c - the CPU quota of the daemon's cgroup (cpu_quota.h).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/nic/cpu_quota.h"

/* Up to two numbers from FILE; returns how many were read ("max" reads as
 * -1, as v1's "no quota"). */
static int read_nums(const char *file, double *a, double *b)
{
	char buf[64];
	FILE *f = fopen(file, "re");
	int n;

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	if (strncmp(buf, "max", 3) == 0) {
		*a = -1;
		return 1 + sscanf(buf + 3, "%lf", b);
	}
	n = sscanf(buf, "%lf %lf", a, b);
	return n < 0 ? 0 : n;
}

/* The quota of the one cgroup at DIR, in CPUs, or -1. */
static double quota_at(const char *dir, int v2)
{
	char file[PATH_MAX + 32];
	double q = -1, period = 0, unused;

	if (v2) {
		snprintf(file, sizeof(file), "%s/cpu.max", dir);
		if (read_nums(file, &q, &period) != 2)
			return -1;
	} else {
		snprintf(file, sizeof(file), "%s/cpu.cfs_quota_us", dir);
		if (read_nums(file, &q, &period) < 1)
			return -1;
		snprintf(file, sizeof(file), "%s/cpu.cfs_period_us", dir);
		if (read_nums(file, &period, &unused) < 1)
			return -1;
	}
	return (q < 0 || period <= 0) ? -1 : q / period;
}

/* The smallest quota from BASE + PATH up to BASE + "/". */
static double walk_up(const char *base, char *path, int v2)
{
	char dir[PATH_MAX];
	double best = -1;

	for (;;) {
		double q;
		char *slash;

		snprintf(dir, sizeof(dir), "%s%s", base, path);
		q = quota_at(dir, v2);
		if (q >= 0 && (best < 0 || q < best))
			best = q;
		slash = strrchr(path, '/');
		if (!slash || slash == path)
			break;
		*slash = '\0';
	}
	return best;
}

/* Whether the comma-separated controller list CTL names "cpu". */
static int names_cpu(const char *ctl)
{
	size_t n;

	for (; *ctl; ctl += n + (ctl[n] == ',')) {
		n = strcspn(ctl, ",");
		if (n == 3 && strncmp(ctl, "cpu", 3) == 0)
			return 1;
	}
	return 0;
}

/* One line of /proc/self/cgroup: "ID:CONTROLLERS:PATH". */
static double quota_of_line(const char *root, char *line)
{
	char base[PATH_MAX];
	char *ctl = strchr(line, ':');
	char *path = ctl ? strchr(ctl + 1, ':') : NULL;
	double q;

	if (!path)
		return -1;
	*ctl++ = '\0';
	*path++ = '\0';
	path[strcspn(path, "\n")] = '\0';
	if (path[0] != '/')
		return -1;
	if (ctl[0] == '\0')
		return walk_up(root, path, 1);
	if (!names_cpu(ctl))
		return -1;
	snprintf(base, sizeof(base), "%s/%s", root, ctl);
	q = walk_up(base, path, 0);
	if (q < 0) {
		snprintf(base, sizeof(base), "%s/cpu", root);
		q = walk_up(base, path, 0);
	}
	return q;
}

double cpu_quota_cpus(const char *proc_cgroup, const char *root)
{
	char line[PATH_MAX + 64];
	double best = -1;
	FILE *f = fopen(proc_cgroup, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		double q = quota_of_line(root, line);

		if (q >= 0 && (best < 0 || q < best))
			best = q;
	}
	fclose(f);
	return best;
}
