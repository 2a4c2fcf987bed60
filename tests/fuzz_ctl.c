/*
 * fuzz_ctl.c - libFuzzer harness of the daemon's control protocol: the real
 * uroced control plane (emu/, the engine, the netstack) runs in this process
 * on a real AF_UNIX SOCK_SEQPACKET socket; each input is a connection that
 * sends a sequence of requests, each with descriptors of chosen kinds (the
 * process's own /proc/self/mem and maps, memfds of several sizes, sockets,
 * eventfds, pipes, /dev/null). Every opcode of enum uroce_op and unknown ones
 * are reachable; the header is either made valid (magic, version, length of
 * the opcode) or left as the input says.
 *
 * Checked after every input, beyond what ASan/UBSan see: the daemon answers
 * every request with exactly one reply whose header echoes the opcode and
 * sequence number (or opcode INVALID for a datagram shorter than a header),
 * and once the connection is closed, every object it created is gone:
 * no client, and the device's PD/MR/CQ/QP/AH totals are back to zero.
 *
 * Input: records of
 *   byte 0     opcode selector (index into the opcode list; >= its size:
 *              the byte itself is the opcode)
 *   byte 1     flags: bit 0 raw header (no fix-up), bit 1 short datagram
 *              (the body's length byte decides the size), bit 2 CREATE_CQ's
 *              nent set to 256 (the size of the CQ-ring memfd kind), bit 3
 *              REG_MR's range moved into a buffer this process has mapped
 *   byte 2     number of descriptors (mod 4)
 *   bytes 3-5  descriptor kinds (mod FD_KINDS)
 *   byte 6     body length (bytes after the header; up to UROCE_MSG_MAX)
 *   body       that many bytes (zero-padded at the end of the input)
 */
#include "config.h"
#include "emu/ctl/server.h"
#include "emu/nic/device.h"
#include "emu/eth/eth.h"
#include "emu/log.h"
#include "uroce/abi.h"
#include "uroce/fdmsg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static struct uroce_dev dev;
static struct ev_loop *loop;
static char sock_path[108];
static char work_dir[64];
static unsigned char mr_buf[65536] __attribute__((aligned(4096)));
static bool verbose; /* FUZZ_CTL_VERBOSE set: print each reply's status */

static const uint16_t opcodes[] = {
	UROCE_OP_HELLO, UROCE_OP_QUERY_PORT, UROCE_OP_ALLOC_PD, UROCE_OP_DEALLOC_PD,
	UROCE_OP_REG_MR, UROCE_OP_DEREG_MR, UROCE_OP_CREATE_CQ, UROCE_OP_DESTROY_CQ,
	UROCE_OP_CREATE_QP, UROCE_OP_MODIFY_QP, UROCE_OP_QUERY_QP, UROCE_OP_DESTROY_QP,
	UROCE_OP_CREATE_AH, UROCE_OP_DESTROY_AH, UROCE_OP_ADMIN_STATUS, UROCE_OP_ADMIN_LINK,
	UROCE_OP_ADMIN_CAPTURE_START, UROCE_OP_ADMIN_CAPTURE_STOP, UROCE_OP_ADMIN_SHUTDOWN,
	UROCE_OP_INVALID, UROCE_OP_CREATE_SRQ, UROCE_OP_MODIFY_SRQ, UROCE_OP_QUERY_SRQ,
	UROCE_OP_DESTROY_SRQ, UROCE_OP_ADMIN_FAULT, UROCE_OP_ALLOC_MW, UROCE_OP_DEALLOC_MW,
	UROCE_OP_REREG_MR, UROCE_OP_RESIZE_CQ, UROCE_OP_MODIFY_CQ,
	UROCE_OP_ADVISE_MR,
	UROCE_OP_OPEN_XRCD, UROCE_OP_CLOSE_XRCD, UROCE_OP_CREATE_XRC_SRQ, UROCE_OP_CREATE_XRC_QP,
	UROCE_OP_CREATE_TM_SRQ, UROCE_OP_TM_OP,
};
#define N_OPCODES (sizeof(opcodes) / sizeof(opcodes[0]))

enum fd_kind {
	FD_PROC_MEM,      /* /proc/self/mem O_RDWR: what HELLO wants second */
	FD_PROC_MAPS,     /* /proc/self/maps O_RDONLY: HELLO's third */
	FD_SOCKET,        /* one end of a SEQPACKET pair: HELLO's async peer */
	FD_MEMFD_SMALL,   /* 4 KiB memfd */
	FD_MEMFD_CQ,      /* memfd sized for a 256-entry CQ ring */
	FD_MEMFD_QP,      /* 1 MiB memfd (a QP ring of moderate caps fits) */
	FD_EVENTFD,
	FD_PIPE_W,
	FD_DEVNULL,
	FD_PROC_MEM_RO,   /* /proc/self/mem with the wrong access mode */
	FD_MEMFD_UNSEALED, /* 1 MiB memfd without F_SEAL_SHRINK */
	FD_KINDS
};

static int open_kind(unsigned k, int *extra)
{
	int p[2], fd;

	*extra = -1;
	switch (k % FD_KINDS) {
	case FD_PROC_MEM: return open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	case FD_PROC_MAPS: return open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	case FD_PROC_MEM_RO: return open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	case FD_SOCKET:
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p))
			return -1;
		*extra = p[1];
		return p[0];
	case FD_MEMFD_SMALL:
	case FD_MEMFD_CQ:
	case FD_MEMFD_QP:
	case FD_MEMFD_UNSEALED:
		fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (fd < 0)
			return -1;
		if (ftruncate(fd, k % FD_KINDS == FD_MEMFD_SMALL ? 4096 :
			      k % FD_KINDS == FD_MEMFD_CQ ? (off_t)uroce_cq_ring_size(256) : 1 << 20) ||
		    (k % FD_KINDS != FD_MEMFD_UNSEALED && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK))) {
			close(fd);
			return -1;
		}
		return fd;
	case FD_EVENTFD: return eventfd(0, EFD_CLOEXEC);
	case FD_PIPE_W:
		if (pipe2(p, O_CLOEXEC))
			return -1;
		*extra = p[0];
		return p[1];
	default: return open("/dev/null", O_RDWR | O_CLOEXEC);
	}
}

/* Run the daemon's loop until nothing is pending (bounded). */
static void pump(void)
{
	for (int i = 0; i < 8; i++)
		ev_run(loop, EVRUN_NOWAIT);
	dev.stopping = false; /* ADMIN_SHUTDOWN: the harness keeps the device */
}

/* When the fuzzer exits: stop the server (it unlinks its socket), close
 * the log and remove it and their directory. */
static void cleanup(void)
{
	char log_path[sizeof(work_dir) + 8];

	ctl_server_stop(&dev, 0);
	ulog_close();
	snprintf(log_path, sizeof(log_path), "%s/log", work_dir);
	unlink(log_path);
	rmdir(work_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	char log_path[sizeof(work_dir) + 8];
	int rc;

	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);
	verbose = getenv("FUZZ_CTL_VERBOSE") != NULL;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	loop = ev_default_loop(EVFLAG_AUTO);
	snprintf(work_dir, sizeof(work_dir), "/tmp/uroce-fuzz-ctl.XXXXXX");
	if (!loop || !mkdtemp(work_dir))
		abort();
	snprintf(log_path, sizeof(log_path), "%s/log", work_dir);
	if (ulog_open(log_path) < 0) /* the daemon's log, out of the way */
		abort();
	ulog_set_level(ULOG_WARN);
	rc = dev_init(&dev, loop, "fuzz0", (struct sockaddr *)&a, sizeof(a), 1024, 16, 1000000, 63);
	if (rc) {
		fprintf(stderr, "fuzz_ctl: dev_init: %s\n", strerror(rc));
		abort();
	}
	snprintf(sock_path, sizeof(sock_path), "%s/ctl", work_dir);
	/* the Ethernet port without a segment: raw QPs, rules, WQs, RSS */
	rc = eth_port_open(&dev, &(struct eth_cfg){ .vni = 1, .mtu = 1500 });
	if (rc) {
		fprintf(stderr, "fuzz_ctl: eth_port_open: %s\n", strerror(rc));
		abort();
	}
	rc = ctl_server_start(&dev, sock_path);
	if (rc) {
		fprintf(stderr, "fuzz_ctl: ctl_server_start: %s\n", strerror(rc));
		abort();
	}
	atexit(cleanup);
	return 0;
}

/* Receive one reply on S into BUF, closing any descriptors it carries.
 * Returns its size, 0 at end of file, -1 if none is waiting. */
static ssize_t recv_reply(int s, unsigned char *buf, size_t size)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(8 * sizeof(int))];
	} ctl;
	struct iovec iov = { buf, size };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			    .msg_controllen = sizeof(ctl.b) };
	ssize_t r = recvmsg(s, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (r < 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
				close(((int *)CMSG_DATA(c))[i]);
	return r;
}

/* Read the reply to the request just sent (OP, SEQ, SENT_LEN bytes) and
 * check it: exactly one, a full header echoing opcode and seq (opcode
 * INVALID and EBADMSG for a datagram shorter than a header), a
 * non-negative status. Returns false when the daemon closed the
 * connection (it may drop a client it refuses). */
static bool check_reply(int s, uint16_t op, uint32_t seq, size_t sent_len)
{
	unsigned char buf[UROCE_MSG_MAX + 64];
	const struct uroce_hdr *h = (const void *)buf;
	ssize_t r = recv_reply(s, buf, sizeof(buf));

	if (r == 0)
		return false;
	if (r < (ssize_t)sizeof(struct uroce_hdr)) {
		fprintf(stderr, "fuzz_ctl: op %u: no reply or a short one (%zd)\n", op, r);
		abort();
	}
	if (sent_len < sizeof(struct uroce_hdr) ?
	    h->opcode != UROCE_OP_INVALID || h->status != EBADMSG :
	    h->opcode != op || h->seq != seq || h->status < 0) {
		fprintf(stderr, "fuzz_ctl: op %u seq %u: reply op %u seq %u status %d\n", op, seq,
			h->opcode, h->seq, h->status);
		abort();
	}
	if (verbose)
		fprintf(stderr, "fuzz_ctl: op %u seq %u -> status %d\n", op, seq, h->status);
	r = recv_reply(s, buf, sizeof(buf));
	if (r > 0) {
		fprintf(stderr, "fuzz_ctl: op %u: a second reply\n", op);
		abort();
	}
	return r != 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned char msg[UROCE_MSG_MAX + 64];
	int s, fds[4], extra[4], sent_fds[4], n_sent;
	uint32_t seq = 0;
	size_t at = 0;

	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		abort();
	memcpy(sa.sun_path, sock_path, sizeof(sock_path));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		abort();
	pump();
	while (at + 7 <= size && seq < 64) {
		const uint8_t *r = data + at;
		uint16_t op = r[0] < N_OPCODES ? opcodes[r[0]] : r[0];
		unsigned nfds = r[2] % 4;
		size_t body = r[6] * 4 > UROCE_MSG_MAX ? UROCE_MSG_MAX : r[6] * 4u;
		size_t len = sizeof(struct uroce_hdr) + body, avail;
		struct uroce_hdr *h = (void *)msg;

		at += 7;
		memset(msg, 0, sizeof(msg));
		avail = size - at < body ? size - at : body;
		memcpy(msg + sizeof(*h), data + at, avail);
		at += avail;
		if (!(r[1] & 1)) {
			h->magic = UROCE_MSG_MAGIC;
			h->version = UROCE_ABI_VERSION;
			h->opcode = op;
			if (uroce_req_size(op)) {
				len = uroce_req_size(op);
				h->length = (uint32_t)len;
			}
			h->seq = ++seq;
			h->status = 0;
			h->reserved = 0;
			if (op == UROCE_OP_HELLO) {
				struct uroce_hello_req *hr = (void *)msg;

				hr->abi_version = UROCE_ABI_VERSION;
				hr->pid = (uint32_t)getpid();
			}
			if (op == UROCE_OP_CREATE_CQ && (r[1] & 4))
				((struct uroce_create_cq_req *)msg)->nent = 256;
			if (op == UROCE_OP_RESIZE_CQ && (r[1] & 4))
				((struct uroce_resize_cq_req *)msg)->nent = 256;
			if (op == UROCE_OP_REREG_MR && (r[1] & 8)) {
				struct uroce_rereg_mr_req *rr = (void *)msg;
				uint64_t off = rr->addr % sizeof(mr_buf);

				rr->addr = (uintptr_t)mr_buf + off;
				if (rr->length > sizeof(mr_buf) - off)
					rr->length = sizeof(mr_buf) - off;
			}
			if (op == UROCE_OP_REG_MR && (r[1] & 8)) {
				/* memory this process really has mapped */
				struct uroce_reg_mr_req *mr = (void *)msg;
				uint64_t off = mr->addr % sizeof(mr_buf);

				mr->addr = (uintptr_t)mr_buf + off;
				if (mr->length > sizeof(mr_buf) - off)
					mr->length = sizeof(mr_buf) - off;
			}
		} else {
			h->seq = ++seq;
			op = h->opcode;
		}
		if (r[1] & 2)
			len = r[6] % (sizeof(struct uroce_hdr) + 8);
		for (unsigned i = 0; i < nfds; i++)
			fds[i] = open_kind(r[3 + i], &extra[i]);
		n_sent = 0;
		for (unsigned i = 0; i < nfds; i++)
			if (fds[i] >= 0)
				sent_fds[n_sent++] = fds[i];
		if (!len)
			len = 1;
		if (uroce_send_fds(s, msg, len, sent_fds, n_sent, MSG_NOSIGNAL) < 0)
			len = 0; /* not sent: the daemon dropped us */
		for (unsigned i = 0; i < nfds; i++) {
			if (fds[i] >= 0)
				close(fds[i]);
			if (extra[i] >= 0)
				close(extra[i]);
		}
		pump();
		if (!len || !check_reply(s, op, h->seq, len))
			break;
	}
	close(s);
	pump();
	if (dev.n_clients || dev.clients || dev.counts.pd || dev.counts.mr || dev.counts.cq ||
	    dev.counts.qp || dev.counts.ah || dev.counts.srq) {
		fprintf(stderr, "fuzz_ctl: leaked after close: clients %u pd %u mr %u cq %u qp %u ah %u srq %u\n",
			dev.n_clients, dev.counts.pd, dev.counts.mr, dev.counts.cq, dev.counts.qp,
			dev.counts.ah, dev.counts.srq);
		abort();
	}
	return 0;
}
