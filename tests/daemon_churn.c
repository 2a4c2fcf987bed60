/*
 * daemon_churn.c - client-lifetime tests of uroced (tests/daemon_cleanup.sh,
 * tests/daemon_admin.sh).
 *
 *   daemon_churn SOCK hold        create objects (pd=1 mr=2 cq=2 qp=2 ah=1),
 *                                 print "ready" and wait to be killed
 *   daemon_churn SOCK cycles N    N x (connect, HELLO, create PD/MR/CQ/QP/AH,
 *                                 destroy half of them, close with the rest
 *                                 still alive); then object totals must be 0
 *                                 and the daemon's VmRSS (after a warm-up of
 *                                 50 cycles) may grow by at most RSS_BOUND_KB
 *   daemon_churn SOCK flood N     N connections at once, then all closed;
 *                                 the daemon must serve again afterwards
 *   daemon_churn SOCK events UROCED
 *                                 async events of `link down|up` and
 *                                 `shutdown`, QUERY_PORT state, clock page
 * Exit 0 on success, 1 on a failed check (message on stderr).
 */
#include "config.h"
#include "daemon_proto.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Allowed VmRSS growth of the daemon over the measured cycles (kB). One
 * cycle allocates ~10 objects; a leak of even 1 KiB per cycle over 1000
 * cycles exceeds this bound. */
#define RSS_BOUND_KB 512

static const char *sock;

static __attribute__((noreturn)) void die(const char *what, int rc)
{
	fprintf(stderr, "FAIL %s: %s (%d)\n", what, rc > 0 ? strerror(rc) : "transport error", rc);
	exit(1);
}

/* What the MRs register: mapped read-write memory (REG_MR checks). */
static unsigned char mrmem[65536 + 4096] __attribute__((aligned(4096)));

static void objects(struct dp_session *ss, int with_channel, uint32_t out[8])
{
	struct uroce_reg_mr_resp m;
	struct uroce_create_qp_resp q;
	struct uroce_create_ah_req ah = { 0 };
	struct uroce_handle_resp ahr;
	int sp[2] = { -1, -1 }, rc;

	if ((rc = dp_alloc_pd(ss, &out[0])))
		die("ALLOC_PD", rc);
	if ((rc = dp_reg_mr(ss, out[0], (uintptr_t)mrmem, 65536, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, &m)))
		die("REG_MR", rc);
	out[1] = m.handle;
	if ((rc = dp_reg_mr(ss, out[0], (uintptr_t)mrmem + 65536, 4096, 0, &m)))
		die("REG_MR", rc);
	out[2] = m.handle;
	if (with_channel && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		die("socketpair", errno);
	if ((rc = dp_create_cq(ss, 64, sp[1], &out[3])))
		die("CREATE_CQ", rc);
	if (sp[1] >= 0) {
		close(sp[1]);
		close(sp[0]);
	}
	if ((rc = dp_create_cq(ss, 7, -1, &out[4])))
		die("CREATE_CQ", rc);
	if ((rc = dp_create_qp(ss, IBV_QPT_RC, out[0], out[3], &q)))
		die("CREATE_QP RC", rc);
	out[5] = q.handle;
	if ((rc = dp_create_qp(ss, IBV_QPT_UD, out[0], out[4], &q)))
		die("CREATE_QP UD", rc);
	out[6] = q.handle;
	dp_hdr(&ah, UROCE_OP_CREATE_AH, 8);
	ah.pd_handle = out[0];
	ah.attr.is_global = 1;
	ah.attr.port_num = 1;
	ah.attr.grh.hop_limit = 64;
	if ((rc = dp_call(ss->s, &ah, NULL, 0, &ahr, sizeof(ahr), NULL, NULL)))
		die("CREATE_AH", rc);
	out[7] = ahr.handle;
}

static long vmrss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(fp);
	return kb;
}

/* Wait (at most 10 s) until the daemon reports no objects and no clients. */
static void expect_zero(const char *when)
{
	struct dp_totals t = { 0 };
	int i, rc = 0;

	for (i = 0; i < 100; i++) {
		rc = dp_status_totals(sock, &t);
		if (!rc && !(t.clients | t.pd | t.mr | t.cq | t.qp | t.ah))
			return;
		usleep(100000);
	}
	if (rc)
		die(when, rc);
	fprintf(stderr, "FAIL %s: totals clients=%u pd=%u mr=%u cq=%u qp=%u ah=%u, expected all 0\n",
		when, t.clients, t.pd, t.mr, t.cq, t.qp, t.ah);
	exit(1);
}

static void one_cycle(int n)
{
	struct dp_session ss;
	uint32_t h[8];
	int rc = dp_open(&ss, sock);

	if (rc)
		die("HELLO", rc);
	objects(&ss, n & 1, h);
	/* Destroy some explicitly (QP before its CQ, MR before its PD) ... */
	if ((rc = dp_handle_op(&ss, UROCE_OP_DESTROY_QP, h[5])) ||
	    (rc = dp_handle_op(&ss, UROCE_OP_DESTROY_CQ, h[3])) ||
	    (rc = dp_handle_op(&ss, UROCE_OP_DEREG_MR, h[1])))
		die("destroy", rc);
	/* ... and leave the others to the daemon's cleanup on close. */
	dp_close(&ss);
}

static int cycles(int n)
{
	struct dp_session probe;
	long before, after;
	pid_t daemon;
	int i, rc;

	if ((rc = dp_open(&probe, sock)))
		die("HELLO", rc);
	daemon = (pid_t)probe.hello.daemon_pid;
	dp_close(&probe);
	for (i = 0; i < 50; i++)
		one_cycle(i);
	expect_zero("after warm-up");
	before = vmrss_kb(daemon);
	for (i = 0; i < n; i++)
		one_cycle(i);
	expect_zero("after the cycles");
	after = vmrss_kb(daemon);
	printf("%d cycles: daemon VmRSS %ld kB -> %ld kB (bound +%d kB); totals 0\n", n, before, after,
	       RSS_BOUND_KB);
	if (before < 0 || after < 0) {
		fprintf(stderr, "FAIL cannot read /proc/%d/status\n", (int)daemon);
		return 1;
	}
	if (getenv("UROCE_ASAN")) {
		/* make check-asan: ASan's quarantine keeps freed memory, so VmRSS
		 * says nothing; LeakSanitizer checks the daemon at its exit */
		printf("VmRSS bound not applied: the daemon is built with ASan (leaks: LeakSanitizer at its exit)\n");
		return 0;
	}
	if (after - before > RSS_BOUND_KB) {
		fprintf(stderr, "FAIL daemon VmRSS grew by %ld kB over %d cycles (bound %d kB)\n",
			after - before, n, RSS_BOUND_KB);
		return 1;
	}
	return 0;
}

static int hold(void)
{
	struct dp_session ss;
	uint32_t h[8];
	int rc = dp_open(&ss, sock);

	if (rc)
		die("HELLO", rc);
	objects(&ss, 1, h);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

/* Read one async event (at most 10 s). */
static void expect_event(int fd, uint64_t element, uint32_t type, const char *what)
{
	struct ib_uverbs_async_event_desc ev;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 10000) != 1 || recv(fd, &ev, sizeof(ev), 0) != (ssize_t)sizeof(ev)) {
		fprintf(stderr, "FAIL %s: no async event\n", what);
		exit(1);
	}
	if (ev.element != element || ev.event_type != type) {
		fprintf(stderr, "FAIL %s: event {element %llu, type %u}, expected {%llu, %u}\n", what,
			(unsigned long long)ev.element, ev.event_type, (unsigned long long)element, type);
		exit(1);
	}
	printf("ok   %s: event type %u element %llu\n", what, type, (unsigned long long)element);
}

static void expect_port(struct dp_session *ss, enum ibv_port_state want, const char *what)
{
	struct uroce_query_port_req req = { 0 };
	struct uroce_query_port_resp resp;
	int rc;

	dp_hdr(&req, UROCE_OP_QUERY_PORT, 11);
	req.port_num = 1;
	rc = dp_call(ss->s, &req, NULL, 0, &resp, sizeof(resp), NULL, NULL);
	if (rc)
		die(what, rc);
	if (resp.port.state != want || resp.port.link_layer != IBV_LINK_LAYER_ETHERNET ||
	    resp.port.active_mtu != IBV_MTU_1024 || resp.port.gid_tbl_len != 16) {
		fprintf(stderr, "FAIL %s: state %d mtu %d gid_tbl_len %d, expected %d, %d, 16\n", what,
			resp.port.state, resp.port.active_mtu, resp.port.gid_tbl_len, want, IBV_MTU_1024);
		exit(1);
	}
	printf("ok   %s: QUERY_PORT state %d\n", what, want);
}

static void admin(const char *uroced, const char *args)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "'%s' --admin '%s' %s", uroced, sock, args);
	if (system(cmd) != 0) {
		fprintf(stderr, "FAIL %s\n", cmd);
		exit(1);
	}
}

/* The clock page the daemon started with --clock-khz 250000 --clock-bits 40. */
static void check_clock(struct dp_session *ss)
{
	const struct uroce_clock_page *p;
	struct uroce_clock_snap s;
	struct timespec rt0, rt1;
	uint64_t c0, c1, wall;
	void *w;

	p = mmap(NULL, UROCE_CLOCK_PAGE_SIZE, PROT_READ, MAP_SHARED, ss->clock_fd, 0);
	if (p == MAP_FAILED)
		die("mmap clock page", errno);
	if (p->magic != UROCE_CLOCK_MAGIC || p->freq_khz != 250000 || p->bits != 40 ||
	    p->mask != (1ull << 40) - 1 || ss->hello.hca_core_clock_khz != 250000 ||
	    ss->hello.timestamp_mask != (1ull << 40) - 1) {
		fprintf(stderr, "FAIL clock page: magic %x freq %llu bits %u mask %llx\n", p->magic,
			(unsigned long long)p->freq_khz, p->bits, (unsigned long long)p->mask);
		exit(1);
	}
	/* Clients must not be able to write the shared page. */
	w = mmap(NULL, UROCE_CLOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, ss->clock_fd, 0);
	if (w != MAP_FAILED) {
		fprintf(stderr, "FAIL clock page can be mapped writable by a client\n");
		exit(1);
	}
	clock_gettime(CLOCK_REALTIME, &rt0);
	c0 = uroce_clock_now(p);
	c1 = uroce_clock_now(p);
	clock_gettime(CLOCK_REALTIME, &rt1);
	if (((c1 - c0) & p->mask) > p->mask / 2) {
		fprintf(stderr, "FAIL clock went backwards: %llu then %llu\n", (unsigned long long)c0,
			(unsigned long long)c1);
		exit(1);
	}
	uroce_clock_snapshot(p, &s);
	wall = uroce_clock_to_wall_ns(&s, c0);
	/* The conversion must land between the two CLOCK_REALTIME readings,
	 * give or take the fixed-point rounding (a few ns per second since the
	 * last re-base); 1 ms of slack. */
	if (wall + 1000000 < (uint64_t)rt0.tv_sec * 1000000000u + (uint64_t)rt0.tv_nsec ||
	    wall > (uint64_t)rt1.tv_sec * 1000000000u + (uint64_t)rt1.tv_nsec + 1000000) {
		fprintf(stderr, "FAIL cycles->wallclock %llu outside [%lld.%09ld, %lld.%09ld]\n",
			(unsigned long long)wall, (long long)rt0.tv_sec, rt0.tv_nsec,
			(long long)rt1.tv_sec, rt1.tv_nsec);
		exit(1);
	}
	munmap((void *)p, UROCE_CLOCK_PAGE_SIZE);
	printf("ok   clock page: 250000 kHz, 40 bits, read-only, cycles->wallclock consistent\n");
}

static int events(const char *uroced)
{
	struct dp_session ss;
	char b;
	int rc = dp_open(&ss, sock);

	if (rc)
		die("HELLO", rc);
	check_clock(&ss);
	expect_port(&ss, IBV_PORT_ACTIVE, "initial port");
	admin(uroced, "link down");
	expect_event(ss.async_fd, 1, IBV_EVENT_PORT_ERR, "link down");
	expect_port(&ss, IBV_PORT_DOWN, "after link down");
	admin(uroced, "link down"); /* no change, no event */
	admin(uroced, "link up");
	expect_event(ss.async_fd, 1, IBV_EVENT_PORT_ACTIVE, "link up");
	expect_port(&ss, IBV_PORT_ACTIVE, "after link up");
	admin(uroced, "shutdown");
	expect_event(ss.async_fd, 1, IBV_EVENT_DEVICE_FATAL, "shutdown");
	if (recv(ss.s, &b, 1, 0) != 0) {
		fprintf(stderr, "FAIL control socket still open after shutdown\n");
		return 1;
	}
	printf("ok   control connection closed by the daemon after shutdown\n");
	dp_close(&ss);
	return 0;
}

/* Open N connections at once (more than the daemon's descriptor limit in
 * tests/daemon_cleanup.sh), then close them all: the daemon must survive
 * running out of descriptors and serve again afterwards. */
static int flood(int n)
{
	int *fds = calloc((size_t)n, sizeof(int)), i, opened = 0;

	if (!fds)
		return 1;
	for (i = 0; i < n; i++) {
		fds[i] = dp_connect(sock);
		opened += fds[i] >= 0;
	}
	usleep(300000); /* let the daemon hit its limit while they are open */
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	printf("flood: %d of %d connections opened and closed\n", opened, n);
	expect_zero("after the flood");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: daemon_churn SOCK hold | cycles N | events UROCED\n");
		return 2;
	}
	sock = argv[1];
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[2], "hold"))
		return hold();
	if (!strcmp(argv[2], "cycles") && argc == 4)
		return cycles(atoi(argv[3]));
	if (!strcmp(argv[2], "flood") && argc == 4)
		return flood(atoi(argv[3]));
	if (!strcmp(argv[2], "events") && argc == 4)
		return events(argv[3]);
	fprintf(stderr, "daemon_churn: bad arguments\n");
	return 2;
}
