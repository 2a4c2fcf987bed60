/*
 * main.c - uroced, the emulated RoCEv2 NIC: command line (docs/daemon.md),
 * daemonizing, and the libev loop that runs the control server, the HCA
 * clock and the UDP socket. `uroced --admin SOCK ...` is the admin client.
 */
#include "config.h"
#include "emu/cm/cm.h"
#include "emu/ctl/admin.h"
#include "emu/ctl/server.h"
#include "emu/nic/device.h"
#include "emu/ctl/quota.h"
#include "emu/eth/eth.h"
#include "emu/nic/sysfs_stats.h"
#include "emu/nic/fault_queue.h"
#include "emu/nic/udp_gso.h"
#include "emu/nic/fault_spec.h"
#include "emu/nic/cpu_quota.h"
#include "emu/log.h"
#include "uroce/abi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

struct options {
	const char *dev, *addr, *sock, *pcap, *log, *pidfile, *user, *sysfs;
	struct fault_cfg fault[FAULT_NDIRS];  /* --fault, --fault-rx (--loss into tx) */
	int deterministic;
	uint32_t quota[QUOTA_NKINDS];   /* 0 = default */
	unsigned long port, mtu, gid_tbl_len, clock_bits;
	unsigned long long clock_khz, seed;
	int loss_set;
	uint32_t loss;                  /* --loss, ppm */
	int daemonize;
	int busy_poll;
	uint32_t poll_window_us;        /* --poll-window (poll_window.h) */
	int poll_window_set;            /* given on the command line */
	uint32_t poll_stall_us;         /* --poll-window-stall */
	int kernel_loopback;
	int no_gso;                     /* --no-gso: no UDP_SEGMENT / UDP_GRO (udp_gso.h) */
	uint32_t cm_timeout_ms;         /* --cm-timeout-ms (0 = default) */
	uint32_t cm_max_ids;            /* --max-cm-ids-per-user (0 = default) */
	uint32_t dm_max;                /* --max-dm-per-user, bytes (0 = default) */
	struct eth_cfg eth;             /* --vxlan-port, --vxlan-vni, --vxlan-peer, --eth-mtu */
	const char *vxlan_peers[ETH_PEERS_MAX];
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: uroced --dev NAME --addr IP --sock PATH [--port 4791] [--mtu 4096]\n"
		"              [--gid-tbl-len 16] [--clock-khz 1000000] [--clock-bits 63]\n"
		"              [--pcap FILE] [--loss PERCENT] [--fault SPEC] [--fault-rx SPEC]\n"
		"              [--seed N] [--deterministic] [--busy-poll] [--kernel-loopback] [--no-gso]\n"
		"              [--poll-window USEC] [--poll-window-stall USEC]\n"
		"              [--vxlan-port 4789] [--vxlan-vni 1] [--vxlan-peer IP]... [--eth-mtu 1500]\n"
		"              [--log FILE]\n"
		"              [--pidfile FILE] [--sysfs DIR] [--daemonize] [--user NAME]\n"
		"              [--max-clients-per-user N] [--max-{pd,cq,qp,mr,ah,srq}-per-user N]\n"
		"              [--cm-timeout-ms N] [--max-cm-ids-per-user N]\n"
		"              [--max-dm-per-user BYTES]\n"
		"       uroced --admin SOCK status | link up|down | capture start FILE |\n"
		"              capture stop | shutdown | fault set tx|rx|both SPEC\n");
}

/* Parse an unsigned number in [lo, hi]; on error print and return -1. */
static int parse_num(const char *opt, const char *s, unsigned long long lo, unsigned long long hi,
		     unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "uroced: bad %s '%s': expected %llu..%llu\n", opt, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

/* getopt values of --max-KIND-per-user: OPT_QUOTA + enum quota_kind */
#define OPT_QUOTA 1000
/* getopt values of the Ethernet options */
enum { OPT_VXLAN_PORT = 1100, OPT_VXLAN_VNI, OPT_VXLAN_PEER, OPT_ETH_MTU };
/* getopt value of --max-dm-per-user */
#define OPT_MAX_DM 1200
#define OPT_POLL_WINDOW 1201
#define OPT_POLL_STALL 1202

/* Upper bound of --max-KIND-per-user: the device's own limit. */
static const uint32_t quota_ceiling[QUOTA_NKINDS] = {
	[QUOTA_CLIENTS] = 1000000, [QUOTA_PD] = DEV_MAX_PD, [QUOTA_CQ] = DEV_MAX_CQ,
	[QUOTA_QP] = DEV_MAX_QP, [QUOTA_MR] = DEV_MAX_MR, [QUOTA_AH] = DEV_MAX_AH,
	[QUOTA_SRQ] = DEV_MAX_SRQ,
};

/* --loss P ('l'), --fault SPEC ('f'), --fault-rx SPEC ('F'); -1 on error (printed). */
static int parse_fault_opt(int c, const char *arg, struct options *o)
{
	char spec[64], err[512];
	struct fault_cfg one;

	if (c != 'l') {
		if (fault_spec_parse(arg, &o->fault[c == 'f' ? FAULT_TX : FAULT_RX], err, sizeof(err))) {
			fprintf(stderr, "uroced: --%s: %s\n", c == 'f' ? "fault" : "fault-rx", err);
			return -1;
		}
		return 0;
	}
	snprintf(spec, sizeof(spec), "loss=%.40s", arg);
	if (fault_spec_parse(spec, &one, err, sizeof(err))) {
		fprintf(stderr, "uroced: bad --loss '%s': expected a percentage 0..100\n", arg);
		return -1;
	}
	o->loss = one.loss;
	o->loss_set = 1;
	return 0;
}

static int parse_addr(const char *s, unsigned long port, struct sockaddr_storage *ss, socklen_t *len);

/* --poll-window and --poll-window-stall (poll_window.h), microseconds. */
static int parse_poll_opt(int c, const char *arg, struct options *o)
{
	unsigned long long v;

	if (c == OPT_POLL_WINDOW) {
		if (parse_num("--poll-window", arg, 0, POLL_WINDOW_MAX_US, &v))
			return -1;
		o->poll_window_us = (uint32_t)v;
		o->poll_window_set = 1;
		return 0;
	}
	if (parse_num("--poll-window-stall", arg, 0, POLL_WINDOW_STALL_MAX_US, &v))
		return -1;
	o->poll_stall_us = (uint32_t)v;
	return 0;
}

/* --vxlan-port, --vxlan-vni, --eth-mtu, --vxlan-peer (the peers' addresses
 * are parsed once the port is known: parse_eth_peers). */
static int parse_eth_opt(int c, const char *arg, struct options *o)
{
	unsigned long long v;

	switch (c) {
	case OPT_VXLAN_PORT:
		if (parse_num("--vxlan-port", arg, 0, 65535, &v))
			return -1;
		o->eth.vxlan_port = (uint16_t)v;
		return 0;
	case OPT_VXLAN_VNI:
		if (parse_num("--vxlan-vni", arg, 0, 0xFFFFFF, &v))
			return -1;
		o->eth.vni = (uint32_t)v;
		return 0;
	case OPT_ETH_MTU:
		if (parse_num("--eth-mtu", arg, 68, ETH_MTU_MAX, &v))
			return -1;
		o->eth.mtu = (uint32_t)v;
		return 0;
	default:
		if (o->eth.n_peers == ETH_PEERS_MAX) {
			fprintf(stderr, "uroced: at most %d --vxlan-peer\n", ETH_PEERS_MAX);
			return -1;
		}
		o->vxlan_peers[o->eth.n_peers++] = arg;
		return 0;
	}
}

static int parse_eth_peers(struct options *o)
{
	for (unsigned int i = 0; i < o->eth.n_peers; i++)
		if (parse_addr(o->vxlan_peers[i], o->eth.vxlan_port, &o->eth.peers[i], &o->eth.peer_len[i])) {
			fprintf(stderr, "uroced: bad --vxlan-peer '%s': expected an IPv4 or IPv6 address\n",
				o->vxlan_peers[i]);
			return -1;
		}
	return 0;
}

/* uroced's options (usage() above). */
static const struct option longopts[] = {
	{ "dev", required_argument, NULL, 'd' },
	{ "addr", required_argument, NULL, 'a' },
	{ "sock", required_argument, NULL, 's' },
	{ "port", required_argument, NULL, 'p' },
	{ "mtu", required_argument, NULL, 'm' },
	{ "gid-tbl-len", required_argument, NULL, 'g' },
	{ "clock-khz", required_argument, NULL, 'k' },
	{ "clock-bits", required_argument, NULL, 'b' },
	{ "pcap", required_argument, NULL, 'c' },
	{ "loss", required_argument, NULL, 'l' },
	{ "seed", required_argument, NULL, 'e' },
	{ "fault", required_argument, NULL, 'f' },
	{ "fault-rx", required_argument, NULL, 'F' },
	{ "deterministic", no_argument, NULL, 'T' },
	{ "busy-poll", no_argument, NULL, 'B' },
	{ "kernel-loopback", no_argument, NULL, 'K' },
	{ "no-gso", no_argument, NULL, 'G' },
	{ "poll-window", required_argument, NULL, OPT_POLL_WINDOW },
	{ "poll-window-stall", required_argument, NULL, OPT_POLL_STALL },
	{ "log", required_argument, NULL, 'L' },
	{ "pidfile", required_argument, NULL, 'P' },
	{ "daemonize", no_argument, NULL, 'D' },
	{ "sysfs", required_argument, NULL, 'S' },
	{ "user", required_argument, NULL, 'U' },
	{ "max-clients-per-user", required_argument, NULL, OPT_QUOTA + QUOTA_CLIENTS },
	{ "max-pd-per-user", required_argument, NULL, OPT_QUOTA + QUOTA_PD },
	{ "max-cq-per-user", required_argument, NULL, OPT_QUOTA + QUOTA_CQ },
	{ "max-qp-per-user", required_argument, NULL, OPT_QUOTA + QUOTA_QP },
	{ "max-mr-per-user", required_argument, NULL, OPT_QUOTA + QUOTA_MR },
	{ "max-ah-per-user", required_argument, NULL, OPT_QUOTA + QUOTA_AH },
	{ "max-srq-per-user", required_argument, NULL, OPT_QUOTA + QUOTA_SRQ },
	{ "cm-timeout-ms", required_argument, NULL, 'C' },
	{ "max-cm-ids-per-user", required_argument, NULL, 'I' },
	{ "max-dm-per-user", required_argument, NULL, OPT_MAX_DM },
	{ "vxlan-port", required_argument, NULL, OPT_VXLAN_PORT },
	{ "vxlan-vni", required_argument, NULL, OPT_VXLAN_VNI },
	{ "vxlan-peer", required_argument, NULL, OPT_VXLAN_PEER },
	{ "eth-mtu", required_argument, NULL, OPT_ETH_MTU },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(int argc, char **argv, struct options *o)
{
	unsigned long long v;
	char qopt[32];
	int c;

	memset(o, 0, sizeof(*o));
	o->port = 4791;
	o->mtu = 4096;
	o->poll_window_us = POLL_WINDOW_DEFAULT_US;
	o->poll_stall_us = POLL_WINDOW_STALL_DEFAULT_US;
	o->gid_tbl_len = 16;
	o->clock_khz = 1000000;
	o->clock_bits = 63;
	o->eth.vxlan_port = ETH_VXLAN_PORT_DEFAULT;
	o->eth.vni = ETH_VNI_DEFAULT;
	o->eth.mtu = ETH_MTU_DEFAULT;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'a': o->addr = optarg; break;
		case 's': o->sock = optarg; break;
		case 'c': o->pcap = optarg; break;
		case 'L': o->log = optarg; break;
		case 'P': o->pidfile = optarg; break;
		case 'D': o->daemonize = 1; break;
		case 'S': o->sysfs = optarg; break;
		case 'U': o->user = optarg; break;
		case OPT_QUOTA + QUOTA_CLIENTS: case OPT_QUOTA + QUOTA_PD: case OPT_QUOTA + QUOTA_CQ:
		case OPT_QUOTA + QUOTA_QP: case OPT_QUOTA + QUOTA_MR: case OPT_QUOTA + QUOTA_AH:
		case OPT_QUOTA + QUOTA_SRQ:
			snprintf(qopt, sizeof(qopt), "--max-%s-per-user", quota_name(c - OPT_QUOTA));
			if (parse_num(qopt, optarg, 1, quota_ceiling[c - OPT_QUOTA], &v))
				return -1;
			o->quota[c - OPT_QUOTA] = (uint32_t)v;
			break;
		case 'p':
			if (parse_num("--port", optarg, 0, 65535, &v))
				return -1;
			o->port = v;
			break;
		case 'm':
			if (parse_num("--mtu", optarg, 256, 4096, &v))
				return -1;
			o->mtu = v;
			break;
		case 'g':
			if (parse_num("--gid-tbl-len", optarg, 1, 128, &v))
				return -1;
			o->gid_tbl_len = v;
			break;
		case 'k':
			if (parse_num("--clock-khz", optarg, HCA_CLOCK_KHZ_MIN, HCA_CLOCK_KHZ_MAX, &v))
				return -1;
			o->clock_khz = v;
			break;
		case 'b':
			if (parse_num("--clock-bits", optarg, HCA_CLOCK_BITS_MIN, HCA_CLOCK_BITS_MAX, &v))
				return -1;
			o->clock_bits = v;
			break;
		case 'e':
			if (parse_num("--seed", optarg, 0, ULLONG_MAX, &v))
				return -1;
			o->seed = v;
			break;
		case 'l': case 'f': case 'F':
			if (parse_fault_opt(c, optarg, o))
				return -1;
			break;
		case OPT_VXLAN_PORT: case OPT_VXLAN_VNI: case OPT_ETH_MTU: case OPT_VXLAN_PEER:
			if (parse_eth_opt(c, optarg, o))
				return -1;
			break;
		case 'T': o->deterministic = 1; break;
		case 'B': o->busy_poll = 1; break;
		case 'K': o->kernel_loopback = 1; break;
		case 'G': o->no_gso = 1; break;
		case 'C':
			if (parse_num("--cm-timeout-ms", optarg, 1, 600000, &v))
				return -1;
			o->cm_timeout_ms = (uint32_t)v;
			break;
		case OPT_POLL_WINDOW: case OPT_POLL_STALL:
			if (parse_poll_opt(c, optarg, o))
				return -1;
			break;
		case OPT_MAX_DM:
			if (parse_num("--max-dm-per-user", optarg, UROCE_DM_GRANULE, UROCE_DM_MAX_SIZE, &v))
				return -1;
			o->dm_max = (uint32_t)v;
			break;
		case 'I':
			if (parse_num("--max-cm-ids-per-user", optarg, 1, 1000000, &v))
				return -1;
			o->cm_max_ids = (uint32_t)v;
			break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("uroced %s\n", PACKAGE_VERSION); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "uroced: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!o->dev || !o->addr || !o->sock) {
		fprintf(stderr, "uroced: --dev, --addr and --sock are required\n");
		usage(stderr);
		return -1;
	}
	if (parse_eth_peers(o))
		return -1;
	if (dev_mtu_enum((uint32_t)o->mtu) == 0) {
		fprintf(stderr, "uroced: bad --mtu %lu: must be 256, 512, 1024, 2048 or 4096\n", o->mtu);
		return -1;
	}
	return 0;
}

static int parse_addr(const char *s, unsigned long port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return 0;
	}
	return -1;
}

static struct uroce_dev dev;
static ev_signal sig_term, sig_int;

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	ulog(ULOG_INFO, "signal %d: shutting down", w->signum);
	ev_break(loop, EVBREAK_ALL);
}

/* Report start-up failure to the waiting parent (daemonize) and stderr. */
static int fail_start(int pipe_fd, const char *fmt, const char *arg, int err)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg, strerror(err));
	fprintf(stderr, "uroced: %s\n", msg);
	ulog(ULOG_ERR, "%s", msg);
	if (pipe_fd >= 0 && write(pipe_fd, msg, strlen(msg)) < 0)
		return 1;
	return 1;
}

/*
 * Become USER (its uid, its primary gid, no supplementary groups) for good,
 * after everything that needs root is set up (sockets bound, files opened,
 * priority raised). The daemon holds other processes' /proc/self/mem
 * descriptors: it stays non-dumpable, so no process of USER can ptrace it
 * or open its /proc files (proc(5), PR_SET_DUMPABLE in prctl(2)).
 * Returns 0 or an errno (ENOENT: no such user).
 */
static int drop_privileges(const char *user)
{
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(user);
	if (!pw)
		return errno ? errno : ENOENT;
	if (setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
		return errno;
	if (pw->pw_uid != 0 && setuid(0) == 0)
		return EPERM;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return errno;
	return 0;
}

static int write_pidfile(const char *path)
{
	FILE *fp = fopen(path, "we");

	if (!fp)
		return errno;
	fprintf(fp, "%d\n", (int)getpid());
	return fclose(fp) ? errno : 0;
}

/* Each client holds a few descriptors (socket, async, doorbell, memory, one
 * per CQ channel): use all the hard limit allows (quota.h keeps a reserve). */
static void raise_nofile_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * --daemonize: fork(2); the child continues in a new session with
 * pipefd[1] open (daemon_ready closes it; an error written there is the
 * parent's signal to fail). Returns -1 in the child; in the parent, or when
 * pipe2/fork fail, the process exit status: 0 once the child listens (it
 * closed the pipe without writing), 1 otherwise.
 */
static int daemonize(int pipefd[2])
{
	char msg[512];
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		perror("uroced: pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("uroced: fork");
		return 1;
	}
	if (pid > 0) {
		close(pipefd[1]);
		/* the child already printed any message to stderr */
		return read(pipefd[0], msg, sizeof(msg) - 1) > 0 ? 1 : 0;
	}
	close(pipefd[0]);
	pipefd[0] = -1;
	setsid();
	return -1;
}

/* The daemonized child is up: detach from the terminal's stdio and let the
 * parent exit 0 by closing ready_fd. */
static void daemon_ready(int ready_fd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		/* Nobody may wait on our inherited stderr. What the C library
		 * and the sanitizers print there when the daemon dies (an
		 * abort's reason, a UBSan report, which ignores log_path when
		 * linked with ASan) lands in the log (--log), after its
		 * lines: the file is shared, opened with O_APPEND. */
		dup2(ulog_fd() >= 0 ? ulog_fd() : null, 2);
		close(null);
	}
	close(ready_fd);
}

/* Applications busy-poll their CQs (a NIC is hardware and never waits for a
 * CPU); on a small machine they would starve the daemon that does the NIC's
 * work: measured 3.9 ms per ibv_rc_pingpong iteration on 2 cores at nice 0,
 * 0.26 ms at -15. Raise our priority when allowed. */
static void raise_priority(void)
{
	if (setpriority(PRIO_PROCESS, 0, -10) == 0)
		ulog(ULOG_INFO, "running at nice -10 (ahead of busy-polling applications)");
	else
		ulog(ULOG_INFO, "cannot raise priority (%s): busy-polling applications may slow the device",
		     strerror(errno));
}

/* --busy-poll: an idle watcher is always active, so the loop never sleeps
 * in epoll_wait (libev polls with timeout 0 while one is): a doorbell or a
 * datagram is seen without the wake-up of a sleeping thread, at the price
 * of one CPU kept busy. */
static ev_idle busy_idle;

static void on_busy_idle(struct ev_loop *loop, ev_idle *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
}

/* --busy-poll, or else the --poll-window (off in deterministic mode, whose
 * time is virtual). */
static void start_polling(struct ev_loop *loop, struct options *o)
{
	if (o->busy_poll) {
		ev_idle_init(&busy_idle, on_busy_idle);
		ev_idle_start(loop, &busy_idle);
		dev.busy_poll = true;
		ulog(ULOG_INFO, "busy-polling: the event loop never sleeps (one CPU kept busy)");
	}
	if (o->busy_poll || o->deterministic)
		o->poll_window_us = 0;
	if (o->poll_window_us && !o->poll_window_set) {
		double cpus = cpu_quota_cpus("/proc/self/cgroup", "/sys/fs/cgroup");

		if (cpus >= 0 && cpus < 1) {
			ulog(ULOG_INFO, "no poll window: the cgroup's CPU quota is %.2f CPUs "
			     "(--poll-window USEC sets one anyway)", cpus);
			o->poll_window_us = 0;
		}
	}
	poll_window_start(&dev, o->poll_window_us, o->poll_stall_us);
	if (o->poll_window_us)
		ulog(ULOG_INFO, "polling for %u us after traffic before the event loop sleeps "
		     "(shut for %u ms after a yield that lost the CPU for over %u us)",
		     o->poll_window_us, POLL_WINDOW_BACKOFF_MS, o->poll_stall_us);
}

int main(int argc, char **argv)
{
	struct options o;
	struct sockaddr_storage ss;
	socklen_t sslen;
	struct ev_loop *loop;
	int pipefd[2] = { -1, -1 };
	int rc;

	if (argc >= 2 && !strcmp(argv[1], "--admin")) {
		if (argc < 4) {
			usage(stderr);
			return 2;
		}
		return admin_client_main(argv[2], argc - 3, argv + 3);
	}
	if (parse_args(argc, argv, &o))
		return 1;
	if (parse_addr(o.addr, o.port, &ss, &sslen)) {
		fprintf(stderr, "uroced: bad --addr '%s': not an IPv4 or IPv6 address\n", o.addr);
		return 1;
	}
	if (ulog_open(o.log) < 0) {
		fprintf(stderr, "uroced: cannot open log %s: %s\n", o.log, strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	raise_nofile_limit();
	if (o.daemonize && (rc = daemonize(pipefd)) >= 0)
		return rc; /* the parent, or fork failed */

	loop = ev_default_loop(EVFLAG_AUTO);
	if (!loop)
		return fail_start(pipefd[1], "cannot create the event loop%s: %s", "", ENOMEM);
	rc = dev_init(&dev, loop, o.dev, (struct sockaddr *)&ss, sslen, (uint32_t)o.mtu,
		      (uint32_t)o.gid_tbl_len, o.clock_khz, (uint32_t)o.clock_bits);
	if (rc)
		return fail_start(pipefd[1], "device %s: %s", o.dev, rc);
	memcpy(dev.quota.max, o.quota, sizeof(dev.quota.max));
	dev.quota.max_dm = o.dm_max;
	rc = eth_port_open(&dev, &o.eth);
	if (rc)
		return fail_start(pipefd[1], "device %s Ethernet port: %s", o.dev, rc);
	dev.seed = o.seed;
	if (o.loss_set)
		o.fault[FAULT_TX].loss = o.loss;
	fault_dev_seed(&dev, o.seed);
	fault_dev_set(&dev, FAULT_TX, &o.fault[FAULT_TX]);
	fault_dev_set(&dev, FAULT_RX, &o.fault[FAULT_RX]);
	udp_gso_setup(&dev.udp, o.no_gso);
	if (o.kernel_loopback) {
		/* datagrams to self through the kernel's UDP loopback, where
		 * tcpdump -i lo sees them (emu/nic/loopback.h) */
		dev.udp.lb.off = true;
		ulog(ULOG_INFO, "datagrams to %s itself go through the kernel's UDP loopback", dev.name);
	}
	if (o.deterministic) {
		/* virtual time; memory keys from the seed (docs/fault-injection.md) */
		ev_timer_stop(loop, &dev.clock_timer);
		nic_vtime_enable(&dev);
		keytab_seed(&dev.keys, o.seed);
		ulog(ULOG_INFO, "deterministic mode, seed %llu: virtual HCA clock", o.seed);
	}
	if (o.pcap) {
		char err[256] = "";

		rc = admin_capture_open(&dev, o.pcap, err, sizeof(err));
		if (rc)
			return fail_start(pipefd[1], "cannot capture to %s: %s", o.pcap, rc);
		snprintf(dev.capture_path, sizeof(dev.capture_path), "%s", o.pcap);
	}
	rc = cm_dev_init(&dev, o.cm_timeout_ms, o.cm_max_ids);
	if (rc)
		return fail_start(pipefd[1], "connection manager of %s: %s", o.dev, rc);
	rc = ctl_server_start(&dev, o.sock);
	if (rc)
		return fail_start(pipefd[1], "control socket %s: %s", o.sock,
				  rc == EADDRINUSE ? EADDRINUSE : rc);
	/* counters in the device tree: opened while we may still be root */
	if (o.sysfs && (rc = sysfs_stats_open(&dev, o.sysfs)))
		return fail_start(pipefd[1], "counter files in %s: %s", o.sysfs, rc);
	if (o.pidfile && (rc = write_pidfile(o.pidfile)))
		return fail_start(pipefd[1], "pidfile %s: %s", o.pidfile, rc);

	ev_signal_init(&sig_term, on_signal, SIGTERM);
	ev_signal_start(loop, &sig_term);
	ev_signal_init(&sig_int, on_signal, SIGINT);
	ev_signal_start(loop, &sig_int);

	raise_priority(); /* while we may: before dropping to --user */
	if (o.user && (rc = drop_privileges(o.user)))
		return fail_start(pipefd[1], "cannot run as user %s: %s", o.user, rc);
	if (o.user)
		ulog(ULOG_INFO, "running as user %s (uid %d)", o.user, (int)getuid());
	ulog(ULOG_INFO, "%s up: addr %s udp port %u mtu %u gid_tbl_len %u clock %llu kHz %u bits sock %s",
	     dev.name, dev.addr_str, dev.port, dev.mtu, dev.gid_tbl_len,
	     (unsigned long long)dev.clock.freq_khz, dev.clock.bits, o.sock);
	start_polling(loop, &o);
	if (o.daemonize)
		daemon_ready(pipefd[1]);

	ev_run(loop, 0);

	ctl_server_stop(&dev, 1);
	sysfs_stats_close(&dev);
	if (dev.capture)
		admin_capture_close(&dev);
	cm_dev_fini(&dev);
	eth_port_close(&dev);
	dev_fini(&dev);
	if (o.pidfile)
		unlink(o.pidfile);
	ulog(ULOG_INFO, "%s down", dev.name);
	ulog_close();
	return 0;
}
