/*
 * ctl.c - request/reply exchanges with the daemon over the control socket.
 *
 * abi.h "Transport": one SOCK_SEQPACKET datagram per request and per reply,
 * both of fixed size per opcode, descriptors as SCM_RIGHTS on the same
 * datagram, strictly one outstanding request per connection (ctx->ctl->lock).
 *
 * After fork() the child holds the same connection. Device memory belongs to
 * the device, not to a process's address space, so a child may allocate and
 * free it on the inherited context, as on a kernel verbs file a child
 * shares (pyverbs' test_multi_process_alloc_dm): those requests take turns
 * with the parent's under a process-shared lock and one seq counter
 * (struct uroce_ctl_shared). Every other request of a child fails with EIO:
 * the daemon would read the parent's memory for it.
 *
 * Every exchange is bounded (docs/provider.md, "When the daemon goes away"):
 * a daemon that stopped (SIGSTOP, a debugger) leaves the socket open, so
 * without a bound a verb would hang. After UROCE_CTL_TIMEOUT_MS the call
 * fails with ETIMEDOUT; the reply the daemon may still send is recognised by
 * its older seq and discarded by the next call.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/un.h>
#include <unistd.h>

#include "env.h"
#include "liveness.h"
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

int uroce_ctl_shared_init(struct uroce_context *ctx)
{
	pthread_mutexattr_t ma;
	void *p = mmap(NULL, sizeof(*ctx->ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ret;

	if (p == MAP_FAILED)
		return errno;
	ctx->ctl = p;
	pthread_mutexattr_init(&ma);
	ret = pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	if (!ret)
		ret = pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	if (!ret)
		ret = pthread_mutex_init(&ctx->ctl->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	if (ret) {
		munmap(p, sizeof(*ctx->ctl));
		ctx->ctl = NULL;
	}
	return ret;
}

void uroce_ctl_shared_free(struct uroce_context *ctx)
{
	if (!ctx->ctl)
		return;
	if (getpid() == ctx->pid)
		pthread_mutex_destroy(&ctx->ctl->lock);
	munmap(ctx->ctl, sizeof(*ctx->ctl));
	ctx->ctl = NULL;
}

/* Requests a fork child may send on its parent's connection: they name no
 * memory of the sender (device memory is the device's). */
static bool fork_safe(unsigned int opcode)
{
	return opcode == UROCE_OP_ALLOC_DM || opcode == UROCE_OP_FREE_DM;
}

/* Takes the connection's lock. A holder that died (a fork child killed in
 * the middle of a request) may have left its reply unread: counted stale. */
static void ctl_lock(struct uroce_ctl_shared *s)
{
	if (pthread_mutex_lock(&s->lock) != EOWNERDEAD)
		return;
	if (s->in_flight) {
		s->stale_replies++;
		s->in_flight = 0;
	}
	pthread_mutex_consistent(&s->lock);
}

/* The bound of one exchange in ms: UROCE_CTL_TIMEOUT_MS (1..3600000) or the default. */
static int ctl_timeout_ms(void)
{
	static bool warned;

	return (int)uroce_env_num("UROCE_CTL_TIMEOUT_MS", 1, 3600000, UROCE_CTL_TIMEOUT_DEFAULT_MS, &warned);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until sock is ready for events or deadline (ms) passes: 0, or -1 with errno (ETIMEDOUT). */
static int wait_ready(int sock, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = sock, .events = events };
	int64_t left;
	int r;

	for (;;) {
		left = deadline - now_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

static int send_req(int sock, const void *req, size_t len, const int *fds, int nfds,
		    int64_t deadline)
{
	ssize_t n;

	for (;;) {
		n = uroce_send_fds(sock, req, len, fds, nfds, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0 || (errno != EINTR && errno != EAGAIN))
			break;
		if (errno == EAGAIN && wait_ready(sock, POLLOUT, deadline))
			return -1;
	}
	return n == (ssize_t)len ? 0 : -1;
}

/* Receives one reply; returns its size or -1. Descriptors go to rfds (extras closed). */
static ssize_t recv_resp(int sock, void *buf, size_t len, int *rfds, int max_rfds, int *nrfds,
			 int64_t deadline)
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
	if (wait_ready(sock, POLLIN, deadline))
		return -1;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
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

/*
 * Receives the reply to request seq, discarding late replies to requests
 * that timed out (older seq; their descriptors closed). Returns the reply's
 * size, 0 at end of file, or -1 with errno (ETIMEDOUT at the deadline).
 */
static ssize_t recv_reply(struct uroce_context *ctx, uint32_t seq, void *resp, size_t resp_len,
			  int *rfds, int max_rfds, int *nrfds, int64_t deadline)
{
	const struct uroce_hdr *r = resp;
	ssize_t n;

	for (;;) {
		n = recv_resp(ctx->sock, resp, resp_len, rfds, max_rfds, nrfds, deadline);
		if (n < (ssize_t)sizeof(*r) || !ctx->ctl->stale_replies || r->magic != UROCE_MSG_MAGIC ||
		    (int32_t)(r->seq - seq) >= 0)
			return n;
		ctx->ctl->stale_replies--;
		for (int i = 0; i < *nrfds; i++)
			close(rfds[i]);
		*nrfds = 0;
	}
}

/* No reply in time: one line on stderr per call, ETIMEDOUT. */
static int timed_out(struct uroce_context *ctx, unsigned int opcode)
{
	fprintf(stderr, UROCE_LOG_PREFIX "%s: no reply from the daemon to %s within %d ms "
		"(is uroced stopped?): ETIMEDOUT\n", ctx->hello.dev_name, op_name(opcode),
		ctl_timeout_ms());
	return ETIMEDOUT;
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
		return EIO;
	if (getpid() != ctx->pid && !fork_safe(opcode)) {
		/* A fork child's request would name the parent's memory. */
		if (!__atomic_exchange_n(&ctx->fork_said, true, __ATOMIC_RELAXED))
			fprintf(stderr, UROCE_LOG_PREFIX "%s: context of pid %d used in pid %d (after fork); "
				"verbs objects do not survive fork(), requests other than device memory fail with EIO\n",
				ctx->hello.dev_name, (int)ctx->pid, (int)getpid());
		return EIO;
	}

	ctl_lock(ctx->ctl);
	memset(h, 0, sizeof(*h));
	h->magic = UROCE_MSG_MAGIC;
	h->version = UROCE_ABI_VERSION;
	h->opcode = (uint16_t)opcode;
	h->seq = ++ctx->ctl->seq;
	if (!h->seq)
		h->seq = ++ctx->ctl->seq; /* 0 is in_flight's "none" */
	h->length = (uint32_t)req_len;
	if (ctx->lost) {
		ret = EIO;
		goto out;
	}
	int64_t deadline = now_ms() + ctl_timeout_ms();

	if (send_req(ctx->sock, req, req_len, fds, nfds, deadline)) {
		if (errno == ETIMEDOUT) {
			ret = timed_out(ctx, opcode);
			goto out;
		}
		lost(ctx, opcode, strerror(errno));
		ret = EIO;
		goto out;
	}
	ctx->ctl->in_flight = h->seq;
	ssize_t n = recv_reply(ctx, h->seq, resp, resp_len, rfds, max_rfds, nrfds, deadline);
	ctx->ctl->in_flight = 0;
	if (n < 0 && errno == ETIMEDOUT) {
		ctx->ctl->stale_replies++;
		ret = timed_out(ctx, opcode);
	} else if (n < 0 || n == 0) {
		lost(ctx, opcode, n == 0 ? "connection closed" : strerror(errno));
		if (n == 0)
			uroce_ctx_set_gone(ctx, "its end of the control socket closed");
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
	pthread_mutex_unlock(&ctx->ctl->lock);
	if (ret) {
		for (int i = 0; i < *nrfds; i++)
			close(rfds[i]);
		*nrfds = 0;
	}
	return ret;
}
