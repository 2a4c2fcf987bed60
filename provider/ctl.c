/*
 * ctl.c - request/reply exchanges with the daemon over the control socket.
 *
 * abi.h "Transport": one SOCK_SEQPACKET datagram per request and per reply,
 * both of fixed size per opcode, descriptors as SCM_RIGHTS on the same
 * datagram, strictly one outstanding request per connection (ctl_lock).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "uroce.h"
#include "uroce/fdmsg.h"

int uroce_ctl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static int send_req(int sock, const void *req, size_t len, const int *fds, int nfds)
{
	ssize_t n;

	do
		n = uroce_send_fds(sock, req, len, fds, nfds, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

/* Receives one reply; returns its size or -1. Descriptors go to rfds (extras closed). */
static ssize_t recv_resp(int sock, void *buf, size_t len, int *rfds, int max_rfds, int *nrfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * UROCE_MSG_MAX_FDS)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
	};
	ssize_t n;

	*nrfds = 0;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		int cnt, fd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int i = 0; i < cnt; i++) {
			memcpy(&fd, CMSG_DATA(cm) + (size_t)i * sizeof(int), sizeof(int));
			if (*nrfds < max_rfds)
				rfds[(*nrfds)++] = fd;
			else
				close(fd);
		}
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		errno = EMSGSIZE;
		return -1;
	}
	return n;
}

static const char *op_name(unsigned int op)
{
	static const char *const names[] = {
		[UROCE_OP_HELLO] = "HELLO", [UROCE_OP_QUERY_PORT] = "QUERY_PORT",
		[UROCE_OP_ALLOC_PD] = "ALLOC_PD", [UROCE_OP_DEALLOC_PD] = "DEALLOC_PD",
		[UROCE_OP_REG_MR] = "REG_MR", [UROCE_OP_DEREG_MR] = "DEREG_MR",
		[UROCE_OP_CREATE_CQ] = "CREATE_CQ", [UROCE_OP_DESTROY_CQ] = "DESTROY_CQ",
		[UROCE_OP_CREATE_QP] = "CREATE_QP", [UROCE_OP_MODIFY_QP] = "MODIFY_QP",
		[UROCE_OP_QUERY_QP] = "QUERY_QP", [UROCE_OP_DESTROY_QP] = "DESTROY_QP",
		[UROCE_OP_CREATE_AH] = "CREATE_AH", [UROCE_OP_DESTROY_AH] = "DESTROY_AH",
	};
	return op < sizeof(names) / sizeof(names[0]) && names[op] ? names[op] : "request";
}

/* The connection broke: say so once; every later request fails with EIO at once. */
static void lost(struct uroce_context *ctx, unsigned int opcode, const char *why)
{
	ctx->lost = true;
	fprintf(stderr, UROCE_LOG_PREFIX "%s: lost the daemon during %s (%s); requests now fail with EIO\n",
		ctx->hello.dev_name[0] ? ctx->hello.dev_name : "device", op_name(opcode), why);
}

int uroce_ctl_call(struct uroce_context *ctx, unsigned int opcode,
		   void *req, size_t req_len, const int *fds, int nfds,
		   void *resp, size_t resp_len, int *rfds, int *nrfds)
{
	struct uroce_hdr *h = req;
	struct uroce_hdr *r = resp;
	int dummy_n, max_rfds = nrfds ? *nrfds : 0;
	int ret;

	if (!nrfds)
		nrfds = &dummy_n;
	*nrfds = 0;
	if (ctx->dead)
		return ENODEV;
	if (getpid() != ctx->pid) {
		/* A fork child shares the parent's connection: its requests would
		 * take the parent's replies. Checked before locking: ctl_lock may
		 * have been held by another thread at fork(). */
		if (!ctx->lost)
			fprintf(stderr, UROCE_LOG_PREFIX "%s: context of pid %d used in pid %d (after fork); "
				"verbs objects do not survive fork(), requests fail with EIO\n",
				ctx->hello.dev_name, (int)ctx->pid, (int)getpid());
		ctx->lost = true;
		return EIO;
	}

	pthread_mutex_lock(&ctx->ctl_lock);
	memset(h, 0, sizeof(*h));
	h->magic = UROCE_MSG_MAGIC;
	h->version = UROCE_ABI_VERSION;
	h->opcode = (uint16_t)opcode;
	h->seq = ++ctx->seq;
	h->length = (uint32_t)req_len;
	if (ctx->lost) {
		ret = EIO;
		goto out;
	}
	if (send_req(ctx->sock, req, req_len, fds, nfds)) {
		lost(ctx, opcode, strerror(errno));
		ret = EIO;
		goto out;
	}
	ssize_t n = recv_resp(ctx->sock, resp, resp_len, rfds, max_rfds, nrfds);
	if (n < 0 || n == 0) {
		lost(ctx, opcode, n == 0 ? "connection closed" : strerror(errno));
		ret = EIO;
	} else if ((size_t)n != resp_len || r->magic != UROCE_MSG_MAGIC ||
		   r->opcode != opcode || r->seq != h->seq || r->length != (uint32_t)n) {
		char why[64];

		/* Out of step with the daemon: later replies cannot be trusted either. */
		snprintf(why, sizeof(why), "malformed reply of %zd bytes", n);
		lost(ctx, opcode, why);
		ret = EIO;
	} else if (r->status < 0) {
		ret = EIO;
	} else {
		ret = r->status;
	}
out:
	pthread_mutex_unlock(&ctx->ctl_lock);
	if (ret) {
		for (int i = 0; i < *nrfds; i++)
			close(rfds[i]);
		*nrfds = 0;
	}
	return ret;
}
