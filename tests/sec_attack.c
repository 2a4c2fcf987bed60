/*
 * sec_attack.c - attacks on a system-wide uroced by a local user, for
 * tests/it_security.sh (run as an unprivileged user). Prints one "ok: ..."
 * line per expectation met; exit 0 if all are met, 1 otherwise.
 *
 *   sec_attack setuid SOCK   the setuid-exec attack (docs/security.md):
 *       a child connects twice (the daemon takes its pid from SO_PEERCRED),
 *       says HELLO on the second connection and registers a buffer, hands
 *       its /proc/self/mem and /proc/self/maps descriptors to the parent,
 *       then execs the setuid-root /usr/bin/passwd, which blocks reading a
 *       pipe. The parent, holding the same connections, then tries: HELLO
 *       with the child's pid and its own descriptors (EPERM), with the
 *       child's pre-exec descriptors (ESRCH), and REG_MR through the child's
 *       HELLO'd connection at the child's old buffer and at stack addresses
 *       (EFAULT): nothing of passwd's memory becomes reachable.
 *   sec_attack spam SOCK N   N requests the daemon refuses (EPROTO), on one
 *       connection; prints "refused=N".
 *   sec_attack flood SOCK N_CONN N_PD   open connections with HELLO until
 *       one fails, then ALLOC_PD on the first until one fails; prints
 *       "conns=K errno=NAME" and "pds=K errno=NAME", then waits for EOF on
 *       stdin (holding everything) before exiting.
 */
#include "config.h"
#include "daemon_proto.h"
#include "uroce/fdmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void expect(const char *what, int want, int got)
{
	if (want == got) {
		printf("ok: %s: %s\n", what, want ? strerror(want) : "0");
	} else {
		printf("FAIL: %s: want %d (%s), got %d (%s)\n", what, want, strerror(want), got,
		       got > 0 ? strerror(got) : "-");
		failures++;
	}
}

/* HELLO on S naming PID with descriptors MEM and MAPS (a fresh async peer). */
static int hello_as(int s, pid_t pid, int mem, int maps)
{
	struct uroce_hello_req req;
	struct uroce_hello_resp resp;
	int sp[2], fds[3], out[4], nout = 0, rc;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return errno;
	memset(&req, 0, sizeof(req));
	dp_hdr(&req, UROCE_OP_HELLO, 1);
	req.abi_version = UROCE_ABI_VERSION;
	req.pid = (uint32_t)pid;
	fds[0] = sp[1];
	fds[1] = mem;
	fds[2] = maps;
	rc = dp_call(s, &req, fds, 3, &resp, sizeof(resp), out, &nout);
	while (nout > 0)
		close(out[--nout]);
	close(sp[0]);
	close(sp[1]);
	return rc < 0 ? EIO : rc;
}

static char buf[65536];

/* The child: connect twice, HELLO + ALLOC_PD + REG_MR on the second, pass
 * everything to the parent over CH, wait for "go", exec passwd. */
static void child(const char *sock, int ch, int stdin_fd)
{
	struct dp_session ss;
	struct uroce_reg_mr_resp mr;
	uint32_t pd;
	int fds[4];
	uint64_t addr = (uintptr_t)buf;
	char go;

	fds[0] = dp_connect(sock);
	if (dp_open(&ss, sock) || dp_alloc_pd(&ss, &pd) ||
	    dp_reg_mr(&ss, pd, addr, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &mr))
		_exit(3);
	fds[1] = ss.s;
	fds[2] = open("/proc/self/mem", O_RDWR); /* kept across exec on purpose */
	fds[3] = open("/proc/self/maps", O_RDONLY);
	if (fds[0] < 0 || fds[2] < 0 || fds[3] < 0 || uroce_send_fds(ch, &addr, sizeof(addr), fds, 4, 0) < 0 ||
	    write(ch, &pd, sizeof(pd)) != sizeof(pd) || read(ch, &go, 1) != 1)
		_exit(4);
	dup2(stdin_fd, 0);
	{
		/* passwd's prompts must not interleave with our "ok:" lines */
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
	}
	execl("/usr/bin/passwd", "passwd", (char *)NULL);
	_exit(5);
}

static int do_setuid(const char *sock)
{
	int ch[2], in[2], fds[4], own_mem, own_maps, i, rc;
	struct dp_session ss = { .s = -1 };
	struct uroce_reg_mr_resp mr;
	char comm[64] = "", path[64];
	uint64_t addr = 0;
	uint32_t pd = 0;
	pid_t pid;
	FILE *fp;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, ch) < 0 || pipe(in) < 0)
		return 2;
	pid = fork();
	if (pid == 0) {
		close(ch[0]);
		close(in[1]);
		child(sock, ch[1], in[0]);
	}
	close(ch[1]);
	close(in[0]);
	{
		union {
			char b[CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr a;
		} ctrl;
		struct iovec iov = { .iov_base = &addr, .iov_len = sizeof(addr) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl.b,
				     .msg_controllen = sizeof(ctrl.b) };
		struct cmsghdr *cm;

		if (recvmsg(ch[0], &mh, 0) != sizeof(addr) || !(cm = CMSG_FIRSTHDR(&mh)) ||
		    read(ch[0], &pd, sizeof(pd)) != sizeof(pd)) {
			printf("FAIL: the child did not set up (HELLO/REG_MR as itself)\n");
			return 1;
		}
		memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	}
	printf("ok: child pid %d registered %zu bytes at 0x%llx before exec\n", (int)pid, sizeof(buf),
	       (unsigned long long)addr);
	if (write(ch[0], "g", 1) != 1)
		return 2;
	/* wait until the child is passwd (comm is readable even then) */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	for (i = 0; i < 500 && strcmp(comm, "passwd\n"); i++) {
		usleep(10000);
		fp = fopen(path, "r");
		if (fp) {
			if (!fgets(comm, sizeof(comm), fp))
				comm[0] = 0;
			fclose(fp);
		}
	}
	expect("the child is now the setuid program passwd", 0, strcmp(comm, "passwd\n") ? EINVAL : 0);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	rc = open(path, O_RDWR) < 0 ? errno : 0;
	expect("our own open of passwd's /proc/PID/mem", EACCES, rc);

	own_mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	own_maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	expect("HELLO with passwd's pid and our own /proc/self descriptors",
	       EPERM, hello_as(fds[0], pid, own_mem, own_maps));
	expect("HELLO with passwd's pid and the child's pre-exec descriptors",
	       ESRCH, hello_as(fds[0], pid, fds[2], fds[3]));
	/* the child's HELLO'd connection: its descriptors are bound to the old image */
	ss.s = fds[1];
	expect("REG_MR at the child's old buffer (now passwd's address space)", EFAULT,
	       dp_reg_mr(&ss, pd, addr, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &mr));
	expect("REG_MR read-only at the child's old buffer", EFAULT, dp_reg_mr(&ss, pd, addr, 4096, 0, &mr));
	expect("REG_MR at our stack address", EFAULT,
	       dp_reg_mr(&ss, pd, (uintptr_t)&ss & ~4095ull, 4096, 0, &mr));
	/* passwd still blocks: the attack did not disturb it */
	expect("passwd still running", 0, waitpid(pid, &rc, WNOHANG) == 0 ? 0 : ECHILD);
	close(in[1]); /* EOF: passwd gives up */
	kill(pid, SIGTERM);
	waitpid(pid, &rc, 0);
	return failures ? 1 : 0;
}

static int do_flood(const char *sock, int n_conn, int n_pd)
{
	struct dp_session *ss = calloc((size_t)n_conn, sizeof(*ss));
	int i, rc = 0, conns = 0, pds = 0;
	uint32_t h;
	char c;

	for (i = 0; i < n_conn && ss; i++) {
		rc = dp_open(&ss[i], sock);
		if (rc)
			break;
		conns++;
	}
	printf("conns=%d errno=%s\n", conns, rc ? strerrorname_np(rc) : "none");
	rc = 0;
	for (i = 0; conns > 0 && i < n_pd; i++) {
		rc = dp_alloc_pd(&ss[0], &h);
		if (rc)
			break;
		pds++;
	}
	printf("pds=%d errno=%s\n", pds, rc ? strerrorname_np(rc) : "none");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	free(ss); /* the connections stay open until exit */
	return 0;
}

/* N requests on one connection that the daemon must refuse (QUERY_PORT
 * before HELLO: EPROTO); prints how many were answered EPROTO. */
static int do_spam(const char *sock, int n)
{
	struct uroce_query_port_req req;
	struct uroce_query_port_resp resp;
	int s = dp_connect(sock), i, refused = 0;

	for (i = 0; s >= 0 && i < n; i++) {
		memset(&req, 0, sizeof(req));
		dp_hdr(&req, UROCE_OP_QUERY_PORT, (uint32_t)i);
		req.port_num = 1;
		refused += dp_call(s, &req, NULL, 0, &resp, sizeof(resp), NULL, NULL) == EPROTO;
	}
	printf("refused=%d\n", refused);
	if (s >= 0)
		close(s);
	return refused == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "setuid"))
		return do_setuid(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "spam"))
		return do_spam(argv[2], atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "flood"))
		return do_flood(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: sec_attack setuid SOCK | flood SOCK N_CONN N_PD | spam SOCK N\n");
	return 2;
}
