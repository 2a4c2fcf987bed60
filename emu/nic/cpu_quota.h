/*
 * cpu_quota.h - the CPU quota of the daemon's cgroup, in CPUs.
 *
 * A container started with a CPU limit (docker --cpus, a Kubernetes CPU
 * limit, systemd CPUQuota=) gets a CFS bandwidth quota: QUOTA microseconds
 * of CPU time per PERIOD for the whole group. The poll window
 * (poll_window.h) spends CPU time while it waits, so below one CPU it is
 * off by default. Read from cgroup v2's cpu.max ("QUOTA PERIOD" or
 * "max PERIOD", Documentation/admin-guide/cgroup-v2.rst) or cgroup v1's
 * cpu.cfs_quota_us (-1: none) and cpu.cfs_period_us
 * (Documentation/scheduler/sched-bwc.rst), on the cgroup named in
 * /proc/self/cgroup and each of its ancestors.
 */
#ifndef UROCE_EMU_NIC_CPU_QUOTA_H
#define UROCE_EMU_NIC_CPU_QUOTA_H

/*
 * The smallest quota / period along the path from the cgroup named in
 * PROC_CGROUP (a file in the format of /proc/self/cgroup) to its root,
 * under ROOT (where the hierarchies are mounted: "/sys/fs/cgroup"; a v1
 * controller under ROOT/cpu,cpuacct or ROOT/cpu). Returns that number of
 * CPUs (0.5 for a quota of half a CPU), or -1 when no quota applies or none
 * could be read.
 */
double cpu_quota_cpus(const char *proc_cgroup, const char *root);

#endif
