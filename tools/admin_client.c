/*
 * admin_client.c - `uroced --admin SOCK status | link up|down |
 * capture start FILE | capture stop | shutdown | fault set tx|rx|both SPEC`:
 * one request on the control
 * socket, the answer printed. Exit status 0 ok, 1 daemon refused (reason on
 * stderr), 2 cannot connect or bad usage (docs/daemon.md).
 */
#include "config.h"
#include "emu/ctl/admin.h"
#include "emu/nic/fault_spec.h"
#include "uroce/abi.h"
#include "uroce/fdmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int usage(void)
{
	fprintf(stderr, "usage: uroced --admin SOCK status | link up|down | capture start FILE | "
			"capture stop | shutdown | fault set tx|rx|both SPEC\n");
	return 2;
}

static int connect_sock(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Send REQ (+ optional SEND_FD), receive the reply into RESP and at most one
 * descriptor into *recv_fd. Returns the reply status (0 or errno), or -1 with
 * errno for a transport failure. */
static int transact(int s, void *req, size_t len, int send_fd, void *resp, size_t resp_len,
		    int *recv_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * UROCE_MSG_MAX_FDS)];
		struct cmsghdr align;
	} ctrl;
	struct iovec iov = { .iov_base = resp, .iov_len = resp_len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (uroce_send_fds(s, req, len, &send_fd, send_fd >= 0, MSG_NOSIGNAL) != (ssize_t)len)
		return -1;
	mh.msg_control = ctrl.buf;
	mh.msg_controllen = sizeof(ctrl.buf);
	n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
	if (n < (ssize_t)sizeof(struct uroce_hdr)) {
		errno = n < 0 ? errno : EPROTO;
		return -1;
	}
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && recv_fd)
			memcpy(recv_fd, CMSG_DATA(cm), sizeof(int));
	return ((struct uroce_hdr *)resp)->status;
}

static void fill_hdr(struct uroce_hdr *h, unsigned int op)
{
	memset(h, 0, sizeof(*h));
	h->magic = UROCE_MSG_MAGIC;
	h->version = UROCE_ABI_VERSION;
	h->opcode = (uint16_t)op;
	h->seq = 1;
	h->length = (uint32_t)uroce_req_size(op);
}

int admin_client_main(const char *sock, int argc, char **argv)
{
	_Alignas(8) unsigned char req[UROCE_MSG_MAX] = { 0 }, resp[UROCE_MSG_MAX] = { 0 };
	struct uroce_hdr *h = (void *)req;
	int s, rc, send_fd = -1, recv_fd = -1;
	unsigned int op;

	if (argc < 1)
		return usage();
	if (!strcmp(argv[0], "status") && argc == 1) {
		op = UROCE_OP_ADMIN_STATUS;
	} else if (!strcmp(argv[0], "link") && argc == 2 &&
		   (!strcmp(argv[1], "up") || !strcmp(argv[1], "down"))) {
		op = UROCE_OP_ADMIN_LINK;
	} else if (!strcmp(argv[0], "capture") && argc == 3 && !strcmp(argv[1], "start")) {
		op = UROCE_OP_ADMIN_CAPTURE_START;
	} else if (!strcmp(argv[0], "capture") && argc == 2 && !strcmp(argv[1], "stop")) {
		op = UROCE_OP_ADMIN_CAPTURE_STOP;
	} else if (!strcmp(argv[0], "shutdown") && argc == 1) {
		op = UROCE_OP_ADMIN_SHUTDOWN;
	} else if (!strcmp(argv[0], "fault") && argc == 4 && !strcmp(argv[1], "set")) {
		struct uroce_admin_fault_req *fr = (void *)req;
		struct fault_cfg cfg;
		char err[512];

		op = UROCE_OP_ADMIN_FAULT;
		fr->dir = !strcmp(argv[2], "tx") ? 0 : !strcmp(argv[2], "rx") ? 1 : !strcmp(argv[2], "both") ? 2 : 3;
		if (fr->dir == 3)
			return usage();
		/* checked here for a clear message; the daemon checks again */
		if (fault_spec_parse(argv[3], &cfg, err, sizeof(err))) {
			fprintf(stderr, "uroced --admin: %s\n", err);
			return 1;
		}
		snprintf(fr->spec, sizeof(fr->spec), "%s", argv[3]);
	} else {
		return usage();
	}
	fill_hdr(h, op); /* the header only: a fault request's body stays */
	if (op == UROCE_OP_ADMIN_LINK)
		((struct uroce_admin_link_req *)req)->up = !strcmp(argv[1], "up");
	if (op == UROCE_OP_ADMIN_CAPTURE_START) {
		/* No O_TRUNC: if a capture already runs into this file, EBUSY must
		 * leave it intact; the daemon truncates when it starts writing. */
		if (!strcmp(argv[2], "-")) {
			/* live: the daemon writes into our stdout (a pipe) */
			if (isatty(STDOUT_FILENO)) {
				fprintf(stderr, "uroced --admin: capture start -: stdout is a terminal; "
						"pipe it into a reader (| tshark -i -)\n");
				return 1;
			}
			send_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		} else {
			send_fd = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		}
		if (send_fd < 0) {
			fprintf(stderr, "uroced --admin: cannot open %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
	}
	s = connect_sock(sock);
	if (s < 0) {
		fprintf(stderr, "uroced --admin: cannot connect to %s: %s\n", sock, strerror(errno));
		if (send_fd >= 0)
			close(send_fd);
		return 2;
	}
	rc = transact(s, req, h->length, send_fd, resp, sizeof(resp), &recv_fd);
	if (send_fd >= 0)
		close(send_fd);
	if (rc < 0) {
		fprintf(stderr, "uroced --admin: %s: no reply from %s: %s\n", argv[0], sock, strerror(errno));
		close(s);
		return 2;
	}
	if (rc > 0) {
		fprintf(stderr, "uroced --admin: %s refused: %s\n", argv[0], strerror(rc));
		close(s);
		if (recv_fd >= 0)
			close(recv_fd);
		return 1;
	}
	if (op == UROCE_OP_ADMIN_STATUS) {
		char buf[4096];
		ssize_t n;

		if (recv_fd < 0) {
			fprintf(stderr, "uroced --admin: status reply without its text\n");
			close(s);
			return 1;
		}
		while ((n = read(recv_fd, buf, sizeof(buf))) > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		close(recv_fd);
	} else if (op == UROCE_OP_ADMIN_SHUTDOWN) {
		/* Wait (up to 10 s) until the daemon has closed our connection:
		 * then it has released every client and is exiting. */
		struct pollfd p = { .fd = s, .events = POLLIN };
		char b;

		while (poll(&p, 1, 10000) > 0 && recv(s, &b, 1, 0) > 0)
			;
	}
	close(s);
	return 0;
}
