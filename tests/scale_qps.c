/*
 * scale_qps.c - uroce0 at scale, through the public verbs API (run inside
 * `uroce run` by tests/scale_qps.sh and scripts/check-scale).
 *
 *   scale_qps qps N PID [MAX_BYTES]
 *     One context creates N RC QPs (N even, one shared send CQ and one
 *     receive CQ of N entries), connects QP 2i with QP 2i+1 (path MTU 1024),
 *     moves all of them to RTS, then every QP sends one 64-byte message to
 *     its partner (in batches of BATCH pairs); each receive completion must be
 *     IBV_WC_SUCCESS / IBV_WC_RECV, byte_len 64, on the right QP, and the
 *     received bytes must equal the partner's pattern byte for byte.
 *     The daemon (process PID) is measured from /proc/PID/smaps_rollup before
 *     the QPs exist and after they reach RTS (idle, nothing posted): the
 *     growth of its anonymous memory (Pss_Anon, its heap) divided by N is
 *     "bytes per idle QP"; the QP rings are shared memory (Pss_Shmem) and
 *     printed apart. With MAX_BYTES, bytes per idle QP must not exceed it.
 *     The daemon's descriptors may grow by its source-port sockets only
 *     (at most SPORT_SOCKETS), not by one per QP.
 *
 *   scale_qps open N PID
 *     N child processes in turn, each: ibv_open_device, alloc PD, create CQ
 *     and RC QP, move the QP to INIT, destroy all, close, exit 0. After a
 *     warm-up of WARMUP children, the daemon's open descriptor count
 *     (/proc/PID/fd) must be the same before and after the N, once the
 *     daemon has seen every client go (its status reports 0 clients); its
 *     VmRSS is printed before and after (the caller bounds it).
 *
 * Prints one "scale: ..." line per figure; exit 0 iff every check held,
 * 1 with a "FAIL: ..." message otherwise.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define MSG 64             /* bytes of each message */
#define BATCH 512          /* pairs sending at once */
#define WARMUP 20          /* children before the open measurement */
#define POLL_MS 120000     /* deadline of one batch's completions */
#define SPORT_SOCKETS 1024 /* the daemon's bound on source-port sockets (docs/daemon.md) */

static void die(const char *what, long long v)
{
	fprintf(stderr, "FAIL: %s (%lld)\n", what, v);
	exit(1);
}

/* Daemon memory figures in kB (smaps_rollup; VmRSS from status). */
struct dmem {
	long rss, pss_anon, pss_shmem, vmrss;
};

static long field_kb(const char *path, const char *name)
{
	char line[256];
	size_t n = strlen(name);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		die("open /proc file of the daemon", errno);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	if (v < 0)
		die("field missing in /proc file", (long long)n);
	return v;
}

static void dmem_read(long pid, struct dmem *m)
{
	char p[64], s[64];

	snprintf(p, sizeof(p), "/proc/%ld/smaps_rollup", pid);
	snprintf(s, sizeof(s), "/proc/%ld/status", pid);
	m->rss = field_kb(p, "Rss");
	m->pss_anon = field_kb(p, "Pss_Anon");
	m->pss_shmem = field_kb(p, "Pss_Shmem");
	m->vmrss = field_kb(s, "VmRSS");
}

static int fd_count(long pid)
{
	char p[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(p, sizeof(p), "/proc/%ld/fd", pid);
	d = opendir(p);
	if (!d)
		die("opendir /proc/PID/fd", errno);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Byte J of the message QP I sends. */
static unsigned char pattern(uint32_t i, uint32_t j)
{
	return (unsigned char)(i * 131u + j * 7u + (i >> 8) + 1u);
}

/* Waits for N completions on CQ into WC[0..n). */
static void poll_n(struct ibv_cq *cq, int n, struct ibv_wc *wc, const char *what)
{
	uint64_t deadline = tv_now_ms() + POLL_MS;
	int got = 0, k;

	while (got < n) {
		k = ibv_poll_cq(cq, n - got, wc + got);
		if (k < 0)
			die("ibv_poll_cq", k);
		got += k;
		if (!k && tv_now_ms() > deadline) {
			fprintf(stderr, "FAIL: %s: %d of %d completions within %d ms\n", what, got, n,
				POLL_MS);
			exit(1);
		}
	}
}

struct scale {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	unsigned char *buf; /* N send slots, then N receive slots, MSG bytes each */
	struct ibv_qp **qp;
	union ibv_gid gid;
	uint32_t n;
};

static void create_qps(struct scale *s)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = s->scq, .recv_cq = s->rcq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	uint32_t i;

	for (i = 0; i < s->n; i++) {
		s->qp[i] = ibv_create_qp(s->pd, &qa);
		if (!s->qp[i]) {
			fprintf(stderr, "FAIL: ibv_create_qp number %u: %s\n", i, strerror(errno));
			exit(1);
		}
	}
	for (i = 0; i < s->n; i++)
		if (tv_rc_connect(s->qp[i], s->qp[i ^ 1]->qp_num, &s->gid, IBV_MTU_1024, 14))
			die("connect QP number", i);
}

/* Pairs [p0, p1): post the receives, then the sends of both ends; check. */
static void send_batch(struct scale *s, uint32_t p0, uint32_t p1, struct ibv_wc *wc)
{
	uint32_t i, n = (p1 - p0) * 2, k;

	for (i = 2 * p0; i < 2 * p1; i++) {
		struct ibv_sge sge = { (uintptr_t)(s->buf + (s->n + i) * MSG), MSG, s->mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(s->qp[i], &rw, &bad))
			die("ibv_post_recv on QP number", i);
	}
	for (i = 2 * p0; i < 2 * p1; i++) {
		struct ibv_sge sge = { (uintptr_t)(s->buf + i * MSG), MSG, s->mr->lkey };
		struct ibv_send_wr sw = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

		if (ibv_post_send(s->qp[i], &sw, &bad))
			die("ibv_post_send on QP number", i);
	}
	poll_n(s->scq, (int)n, wc, "send completions");
	for (k = 0; k < n; k++)
		if (wc[k].status != IBV_WC_SUCCESS || wc[k].opcode != IBV_WC_SEND)
			die("send completion status (wr_id)", (long long)wc[k].wr_id);
	poll_n(s->rcq, (int)n, wc, "receive completions");
	for (k = 0; k < n; k++) {
		i = (uint32_t)wc[k].wr_id;
		if (wc[k].status != IBV_WC_SUCCESS || wc[k].opcode != IBV_WC_RECV ||
		    wc[k].byte_len != MSG || i < 2 * p0 || i >= 2 * p1 ||
		    wc[k].qp_num != s->qp[i]->qp_num) {
			fprintf(stderr, "FAIL: receive completion wr_id %u: %s opcode %d byte_len %u qp 0x%x\n",
				i, ibv_wc_status_str(wc[k].status), wc[k].opcode, wc[k].byte_len,
				wc[k].qp_num);
			exit(1);
		}
		for (uint32_t j = 0; j < MSG; j++)
			if (s->buf[(s->n + i) * MSG + j] != pattern(i ^ 1, j))
				die("received byte differs: QP number", i);
	}
}

static int run_qps(uint32_t n, long pid, long max_bytes)
{
	struct scale s = { .n = n };
	struct dmem m0, m1, m2;
	struct ibv_wc *wc;
	uint64_t t0, t1, t2;
	uint32_t i, j;
	long per_qp;
	int f0, f2;

	if (n < 2 || n % 2 || n > 1u << 20)
		die("N must be even, 2..2^20", n);
	s.ctx = tv_open(DEV);
	if (!s.ctx)
		return 1;
	if (ibv_query_gid(s.ctx, 1, 0, &s.gid))
		die("ibv_query_gid", errno);
	{
		struct ibv_device_attr da;

		if (ibv_query_device(s.ctx, &da))
			die("ibv_query_device", errno);
		printf("scale: device max_qp %d max_cqe %d\n", da.max_qp, da.max_cqe);
		if ((uint32_t)da.max_qp < n || (uint32_t)da.max_cqe < n)
			die("device max_qp / max_cqe below N", da.max_qp);
	}
	s.pd = ibv_alloc_pd(s.ctx);
	s.scq = ibv_create_cq(s.ctx, (int)n, NULL, NULL, 0);
	s.rcq = ibv_create_cq(s.ctx, (int)n, NULL, NULL, 0);
	s.buf = calloc(2 * (size_t)n, MSG);
	s.qp = calloc(n, sizeof(*s.qp));
	wc = calloc(2 * BATCH, sizeof(*wc));
	if (!s.pd || !s.scq || !s.rcq || !s.buf || !s.qp || !wc)
		die("pd/cq/buffers", errno);
	s.mr = ibv_reg_mr(s.pd, s.buf, 2 * (size_t)n * MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!s.mr)
		die("ibv_reg_mr", errno);
	for (i = 0; i < n; i++)
		for (j = 0; j < MSG; j++)
			s.buf[(size_t)i * MSG + j] = pattern(i, j);
	f0 = fd_count(pid);
	dmem_read(pid, &m0);
	t0 = tv_now_ms();
	create_qps(&s);
	t1 = tv_now_ms();
	dmem_read(pid, &m1);
	per_qp = (m1.pss_anon - m0.pss_anon) * 1024 / (long)n;
	printf("scale: %u RC QPs created and in RTS in %llu ms\n", n, (unsigned long long)(t1 - t0));
	printf("scale: daemon before: Rss %ld kB Pss_Anon %ld kB Pss_Shmem %ld kB\n", m0.rss,
	       m0.pss_anon, m0.pss_shmem);
	printf("scale: daemon idle:   Rss %ld kB Pss_Anon %ld kB Pss_Shmem %ld kB\n", m1.rss,
	       m1.pss_anon, m1.pss_shmem);
	printf("scale: daemon bytes per idle QP: %ld (heap), rings %ld (shared, touched)\n", per_qp,
	       (m1.pss_shmem - m0.pss_shmem) * 1024 / (long)n);
	for (i = 0; i < n / 2; i += BATCH)
		send_batch(&s, i, i + BATCH < n / 2 ? i + BATCH : n / 2, wc);
	t2 = tv_now_ms();
	dmem_read(pid, &m2);
	f2 = fd_count(pid);
	printf("scale: %u messages of %d bytes, one per QP, byte-exact, in %llu ms\n", n, MSG,
	       (unsigned long long)(t2 - t1));
	printf("scale: daemon after traffic: Rss %ld kB Pss_Anon %ld kB (%ld bytes per QP)\n", m2.rss,
	       m2.pss_anon, (m2.pss_anon - m0.pss_anon) * 1024 / (long)n);
	for (i = 0; i < n; i++)
		if (ibv_destroy_qp(s.qp[i]))
			die("ibv_destroy_qp number", i);
	if (ibv_dereg_mr(s.mr) || ibv_destroy_cq(s.scq) || ibv_destroy_cq(s.rcq) ||
	    ibv_dealloc_pd(s.pd) || ibv_close_device(s.ctx))
		die("teardown", errno);
	free(s.qp);
	free(s.buf);
	free(wc);
	printf("scale: daemon fds before the QPs %d, after traffic %d\n", f0, f2);
	if (f2 - f0 > SPORT_SOCKETS) {
		fprintf(stderr, "FAIL: daemon fds grew by %d > %d\n", f2 - f0, SPORT_SOCKETS);
		return 1;
	}
	if (max_bytes > 0 && per_qp > max_bytes) {
		fprintf(stderr, "FAIL: daemon bytes per idle QP %ld > %ld\n", per_qp, max_bytes);
		return 1;
	}
	return 0;
}

/* One child: the objects a short-lived verbs program makes, then gone. */
static int one_client(void)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_context *ctx = tv_open(DEV);
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	if (!ctx)
		return 2;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	qa.send_cq = qa.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp)
		return 3;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return 4;
	if (ibv_destroy_qp(qp) || ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		return 5;
	return 0;
}

static void children(int n, int from)
{
	for (int i = 0; i < n; i++) {
		int st;
		pid_t p = fork();

		if (p < 0)
			die("fork", errno);
		if (p == 0)
			_exit(one_client());
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "FAIL: child %d: status 0x%x\n", from + i, st);
			exit(1);
		}
	}
}

/* The daemon's fd count once it has closed every departed client (it sees
 * the hangup asynchronously): waits until the count stops at EXPECT or up
 * to 10 s, and returns the last count. */
static int fd_settled(long pid, int expect)
{
	int n = fd_count(pid);

	for (int i = 0; i < 1000 && n != expect; i++) {
		usleep(10000);
		n = fd_count(pid);
	}
	return n;
}

static int run_open(int n, long pid)
{
	struct dmem m0, m1;
	int f0, f1;
	uint64_t t0;

	children(WARMUP, 0);
	f0 = fd_settled(pid, -1);
	dmem_read(pid, &m0);
	t0 = tv_now_ms();
	children(n, WARMUP);
	f1 = fd_settled(pid, f0);
	dmem_read(pid, &m1);
	printf("scale: %d processes opened uroce0 in turn (pd, cq, qp to INIT, close) in %llu ms\n", n,
	       (unsigned long long)(tv_now_ms() - t0));
	printf("scale: daemon fds before %d after %d\n", f0, f1);
	printf("scale: daemon VmRSS before %ld kB after %ld kB\n", m0.vmrss, m1.vmrss);
	if (f0 != f1) {
		fprintf(stderr, "FAIL: daemon fd count changed: %d -> %d\n", f0, f1);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit rl;

	if (argc < 4)
		die("usage: scale_qps qps N PID [MAX_BYTES] | open N PID", argc);
	/* no descriptor per QP is kept, but libibverbs and the rings need a few */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "qps"))
		return run_qps((uint32_t)strtoul(argv[2], NULL, 0), strtol(argv[3], NULL, 0),
			       argc > 4 ? strtol(argv[4], NULL, 0) : 0);
	if (!strcmp(argv[1], "open"))
		return run_open((int)strtol(argv[2], NULL, 0), strtol(argv[3], NULL, 0));
	die("unknown mode", 0);
}
