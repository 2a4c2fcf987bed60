/*
 * daemon_xrcd.c - XRC domains at uroced's control socket (OPEN_XRCD,
 * CLOSE_XRCD; include/uroce/abi_xrc.h), two processes sharing domains
 * through files as ibv_open_xrcd(3) describes (tests/daemon_xrcd.sh).
 *
 *   daemon_xrcd SOCK DIR   DIR: an empty directory for the files
 *
 * Process A and a forked process B (each its own connection) open private
 * domains and domains named by files: the same inode gives the same xrcdn
 * in both, O_CREAT / O_EXCL answer as the kernel does (EAGAIN, EINVAL),
 * a domain lives while either process holds a handle and goes with the
 * last one (also when B disconnects without closing). Exit 0 or 1.
 */
#include "config.h"
#include "daemon_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *sock, *dir;
static int failures;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
			failures++;                                        \
		}                                                          \
	} while (0)

/* OPEN_XRCD with FD (-1: none) and OFLAGS; status, handle and xrcdn out. */
static int open_xrcd(struct dp_session *ss, int fd, uint32_t oflags, uint32_t reserved,
		     uint32_t *handle, uint32_t *xrcdn)
{
	struct uroce_open_xrcd_req req = { 0 };
	struct uroce_open_xrcd_resp resp;
	int rc;

	dp_hdr(&req, UROCE_OP_OPEN_XRCD, 29);
	req.oflags = oflags;
	req.reserved = reserved;
	memset(&resp, 0xAA, sizeof(resp));
	rc = dp_call(ss->s, &req, fd >= 0 ? &fd : NULL, fd >= 0, &resp, sizeof(resp), NULL, NULL);
	*handle = rc == 0 ? resp.handle : 0;
	*xrcdn = rc == 0 ? resp.xrcdn : 0;
	return rc;
}

static int file_fd(const char *name, int flags)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags, 0600);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

/* One step of the conversation between A and B: wait for the peer's byte. */
static void step_wait(int rfd)
{
	char b;

	if (read(rfd, &b, 1) != 1)
		exit(1);
}

static void step_go(int wfd)
{
	if (write(wfd, "x", 1) != 1)
		exit(1);
}

/* B: same inode by another open and by a hard link -> A's domain 3; a new
 * file -> a new domain; then hold everything until A says go, and leave
 * without closing (the daemon closes B's handles at disconnect). */
static int proc_b(int rfd, int wfd)
{
	struct dp_session ss;
	uint32_t h, n, hf;
	int rc, f;

	if ((rc = dp_open(&ss, sock))) {
		fprintf(stderr, "B: HELLO %d\n", rc);
		return 1;
	}
	step_wait(rfd);
	f = file_fd("f", O_RDONLY);
	rc = open_xrcd(&ss, f, 0, 0, &hf, &n);
	CHECK(rc == 0 && n == 3 && hf == 1, "B: f -> rc %d xrcdn %u handle %u (want 0, 3, 1)", rc, n, hf);
	close(f);
	f = file_fd("f.link", O_RDONLY);
	rc = open_xrcd(&ss, f, O_CREAT | O_EXCL, 0, &h, &n);
	CHECK(rc == EINVAL, "B: link O_EXCL -> rc %d (want EINVAL)", rc);
	rc = open_xrcd(&ss, f, O_CREAT, 0, &h, &n);
	CHECK(rc == 0 && n == 3 && h == 2, "B: link -> rc %d xrcdn %u handle %u (want 0, 3, 2)", rc, n, h);
	close(f);
	f = file_fd("g", O_RDWR | O_CREAT);
	rc = open_xrcd(&ss, f, O_CREAT | O_EXCL, 0, &h, &n);
	CHECK(rc == 0 && n == 4 && h == 3, "B: g -> rc %d xrcdn %u handle %u (want 0, 4, 3)", rc, n, h);
	close(f);
	/* A's handle numbers mean nothing here: 4 is none of B's */
	rc = dp_handle_op(&ss, UROCE_OP_CLOSE_XRCD, 4);
	CHECK(rc == EINVAL, "B: CLOSE_XRCD 4 -> %d (want EINVAL)", rc);
	rc = dp_handle_op(&ss, UROCE_OP_CLOSE_XRCD, hf);
	CHECK(rc == 0, "B: CLOSE_XRCD f -> %d", rc);
	rc = dp_handle_op(&ss, UROCE_OP_CLOSE_XRCD, hf);
	CHECK(rc == EINVAL, "B: CLOSE_XRCD f twice -> %d (want EINVAL)", rc);
	step_go(wfd);
	step_wait(rfd);
	dp_close(&ss);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct dp_session ss;
	uint32_t h, n, hf1, hf2, priv[UROCE_MAX_XRCD];
	int a2b[2], b2a[2], rc, f, st, two[2];
	char p1[512], p2[512];
	pid_t pid;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SOCK DIR\n", argv[0]);
		return 2;
	}
	sock = argv[1];
	dir = argv[2];
	if (pipe(a2b) || pipe(b2a))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(a2b[1]);
		close(b2a[0]);
		_exit(proc_b(a2b[0], b2a[1]));
	}
	close(a2b[0]);
	close(b2a[1]);
	if ((rc = dp_open(&ss, sock))) {
		fprintf(stderr, "A: HELLO %d\n", rc);
		return 1;
	}

	/* private domains: each open a new one */
	rc = open_xrcd(&ss, -1, 0, 0, &h, &n);
	CHECK(rc == 0 && h == 1 && n == 1, "private 1: rc %d handle %u xrcdn %u", rc, h, n);
	rc = open_xrcd(&ss, -1, O_CREAT | O_EXCL, 0, &h, &n);
	CHECK(rc == 0 && h == 2 && n == 2, "private 2: rc %d handle %u xrcdn %u", rc, h, n);
	rc = open_xrcd(&ss, -1, 0, 1, &h, &n);
	CHECK(rc == EINVAL, "reserved 1: rc %d (want EINVAL)", rc);

	/* a file: EAGAIN until created, EINVAL for O_EXCL once it exists */
	f = file_fd("f", O_RDWR | O_CREAT);
	rc = open_xrcd(&ss, f, 0, 0, &h, &n);
	CHECK(rc == EAGAIN, "f without O_CREAT: rc %d (want EAGAIN)", rc);
	rc = open_xrcd(&ss, f, O_CREAT, 0, &hf1, &n);
	CHECK(rc == 0 && hf1 == 3 && n == 3, "f O_CREAT: rc %d handle %u xrcdn %u", rc, hf1, n);
	rc = open_xrcd(&ss, f, O_CREAT | O_EXCL, 0, &h, &n);
	CHECK(rc == EINVAL, "f O_CREAT|O_EXCL again: rc %d (want EINVAL)", rc);
	rc = open_xrcd(&ss, f, 0, 0, &hf2, &n);
	CHECK(rc == 0 && hf2 == 4 && n == 3, "f again: rc %d handle %u xrcdn %u", rc, hf2, n);
	two[0] = f;
	two[1] = f;
	{
		struct uroce_open_xrcd_req req = { 0 };
		struct uroce_open_xrcd_resp resp;

		dp_hdr(&req, UROCE_OP_OPEN_XRCD, 30);
		rc = dp_call(ss.s, &req, two, 2, &resp, sizeof(resp), NULL, NULL);
		CHECK(rc == EINVAL, "two descriptors: rc %d (want EINVAL)", rc);
	}
	close(f);
	snprintf(p1, sizeof(p1), "%s/f", dir);
	snprintf(p2, sizeof(p2), "%s/f.link", dir);
	if (link(p1, p2)) {
		perror("link");
		return 1;
	}

	/* B shares f (as 3) and creates g (4), closes one of its two f handles */
	step_go(a2b[1]);
	step_wait(b2a[0]);
	/* A lets go of f: B's handle keeps domain 3 */
	CHECK(dp_handle_op(&ss, UROCE_OP_CLOSE_XRCD, hf1) == 0, "close f 1");
	CHECK(dp_handle_op(&ss, UROCE_OP_CLOSE_XRCD, hf2) == 0, "close f 2");
	f = file_fd("f", O_RDONLY);
	rc = open_xrcd(&ss, f, 0, 0, &hf1, &n);
	CHECK(rc == 0 && n == 3, "f while B holds it: rc %d xrcdn %u (want 0, 3)", rc, n);
	CHECK(dp_handle_op(&ss, UROCE_OP_CLOSE_XRCD, hf1) == 0, "close f 3");
	/* B leaves without closing: its f and g domains go with it */
	step_go(a2b[1]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		CHECK(0, "process B failed (status 0x%x)", st);
	/* B's disconnect reaches the daemon on B's socket, in no fixed order
	 * with A's next request: wait until the daemon counts one client */
	for (int i = 0; i < 2000; i++) {
		struct dp_totals t;

		if (dp_status_totals(sock, &t) == 0 && t.clients == 1)
			break;
		usleep(5000);
	}
	rc = open_xrcd(&ss, f, 0, 0, &h, &n);
	CHECK(rc == EAGAIN, "f after B left: rc %d (want EAGAIN)", rc);
	close(f);
	f = file_fd("g", O_RDONLY);
	rc = open_xrcd(&ss, f, 0, 0, &h, &n);
	CHECK(rc == EAGAIN, "g after B left: rc %d (want EAGAIN)", rc);
	/* the lowest free number is used again */
	rc = open_xrcd(&ss, f, O_CREAT, 0, &h, &n);
	CHECK(rc == 0 && n == 3 && h == 3, "g created again: rc %d handle %u xrcdn %u (want 0, 3, 3)", rc, h, n);
	close(f);
	CHECK(dp_handle_op(&ss, UROCE_OP_CLOSE_XRCD, h) == 0, "close g");

	/* the limit: UROCE_MAX_XRCD domains on the device (2 are open) */
	for (unsigned i = 0; i < UROCE_MAX_XRCD - 2; i++) {
		rc = open_xrcd(&ss, -1, 0, 0, &priv[i], &n);
		if (rc) {
			CHECK(0, "private %u: rc %d", i, rc);
			break;
		}
	}
	rc = open_xrcd(&ss, -1, 0, 0, &h, &n);
	CHECK(rc == ENOMEM, "domain %u: rc %d (want ENOMEM)", UROCE_MAX_XRCD + 1, rc);
	for (unsigned i = 0; i < UROCE_MAX_XRCD - 2; i++)
		CHECK(dp_handle_op(&ss, UROCE_OP_CLOSE_XRCD, priv[i]) == 0, "close private %u", i);
	rc = open_xrcd(&ss, -1, 0, 0, &h, &n);
	CHECK(rc == 0 && n == 3, "after the limit: rc %d xrcdn %u (want 0, 3)", rc, n);
	CHECK(dp_handle_op(&ss, UROCE_OP_CLOSE_XRCD, 1) == 0, "close private 1");
	CHECK(dp_handle_op(&ss, UROCE_OP_CLOSE_XRCD, 1) == EINVAL, "close private 1 twice");
	dp_close(&ss);
	if (failures)
		return 1;
	printf("ok: XRC domains shared by inode between two processes, private ones, limits\n");
	return 0;
}
