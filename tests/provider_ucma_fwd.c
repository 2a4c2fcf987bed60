/*
 * provider_ucma_fwd: the provider's rdma_ucm forwarding (provider/ucma_chan.c,
 * ucma_cmd.c, ucma_event.c, ucma_addr.c) against two fake daemons speaking
 * uroce/abi_cm.h, one per device (uroce0 at 127.0.0.1, uroce1 at 127.0.0.2).
 * Commands are written as librdmacm writes them (struct rdma_ucm_cmd_hdr +
 * command) through ucma_cmd_write, the write hook's body. Checked: CM_HELLO
 * (pid, conn_tag, the channel's socket as fd[0], one connection per device
 * used), CREATE_ID sent only when an address decides the device, kept
 * SET_OPTIONs replayed with their optval bytes, ids translated both ways,
 * answers copied to `response`, the daemon's errno returned, events mapped
 * (CONNECT_REQUEST's new id, dropped events of destroyed ids, a refused
 * connect request destroyed in the daemon), events_reported, close.
 * No daemon, no libibverbs device: ucma_dev_list is this file's.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "check_main.h"
#include "ucma.h"
#include "uroce/fdmsg.h"

/* enum rdma_cm_event_type (<rdma/rdma_cma.h>, which clashes with <rdma/rdma_user_cm.h>). */
#define RDMA_CM_EVENT_ADDR_RESOLVED 0
#define RDMA_CM_EVENT_CONNECT_REQUEST 4
#define RDMA_CM_EVENT_DISCONNECTED 10

#define MAX_LOG 64
#define MAX_CONNS 8

struct logged {
	uint32_t conn_tag;
	uint32_t cmd;
	uint16_t in_len, out_len;
	uint8_t in[UROCE_UCMA_IN_MAX];
};

/* One fake daemon: answers CM_HELLO and UCMA on its own socket, logs every request. */
struct fake {
	char path[108];
	int lsock;
	pthread_t th;
	pthread_mutex_t lock;
	int stop[2];
	/* what it saw */
	int nhello;
	uint32_t hello_pid[MAX_CONNS], hello_tag[MAX_CONNS];
	int hello_fd[MAX_CONNS]; /* the event socket received, kept */
	int nlog;
	struct logged log[MAX_LOG];
	int closed; /* connections the provider closed */
	/* what it answers */
	int status[32]; /* by command */
	uint32_t next_handle;
};

static struct fake fk[2];
static const char *const fk_addr[2] = { "127.0.0.1", "127.0.0.2" };

int ucma_dev_list(struct ucma_dev *devs)
{
	for (int i = 0; i < 2; i++) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&devs[i].addr;

		memset(&devs[i], 0, sizeof(devs[i]));
		snprintf(devs[i].name, sizeof(devs[i].name), "uroce%d", i);
		snprintf(devs[i].sock_path, sizeof(devs[i].sock_path), "%s", fk[i].path);
		s4->sin_family = AF_INET;
		inet_pton(AF_INET, fk_addr[i], &s4->sin_addr);
	}
	return 2;
}

/* The conn_tag of the connection sock (from its HELLO), kept per socket. */
struct conn_state {
	int sock;
	uint32_t tag;
};

static void serve_one(struct fake *f, struct conn_state *cs)
{
	union {
		struct uroce_cm_hello_req hello;
		struct uroce_ucma_req ucma;
		uint8_t raw[UROCE_MSG_MAX];
	} req;
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = &req, .iov_len = sizeof(req) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	ssize_t n = recvmsg(cs->sock, &mh, MSG_CMSG_CLOEXEC);
	int rfd = -1;

	if (n <= 0) {
		close(cs->sock);
		cs->sock = -1;
		pthread_mutex_lock(&f->lock);
		f->closed++;
		pthread_mutex_unlock(&f->lock);
		return;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&rfd, CMSG_DATA(c), sizeof(int));
	pthread_mutex_lock(&f->lock);
	if (req.hello.hdr.opcode == UROCE_OP_CM_HELLO) {
		struct uroce_cm_hello_resp r = { .hdr = req.hello.hdr };

		r.hdr.length = sizeof(r);
		if (f->nhello < MAX_CONNS) {
			f->hello_pid[f->nhello] = req.hello.pid;
			f->hello_tag[f->nhello] = req.hello.conn_tag;
			f->hello_fd[f->nhello++] = rfd;
		}
		cs->tag = req.hello.conn_tag;
		r.client_id = 1;
		r.node_guid = 0x02007ffffe000001ULL;
		send(cs->sock, &r, sizeof(r), MSG_NOSIGNAL);
	} else {
		struct uroce_ucma_resp r;
		struct logged *l = f->nlog < MAX_LOG ? &f->log[f->nlog++] : NULL;
		uint32_t cmd = req.ucma.cmd;

		memset(&r, 0, sizeof(r));
		r.hdr = req.ucma.hdr;
		r.hdr.length = sizeof(r);
		if (l) {
			l->conn_tag = cs->tag;
			l->cmd = cmd;
			l->in_len = req.ucma.in_len;
			l->out_len = req.ucma.out_len;
			memcpy(l->in, req.ucma.in, sizeof(l->in));
		}
		r.hdr.status = cmd < 32 ? f->status[cmd] : EOPNOTSUPP;
		if (!r.hdr.status && cmd == RDMA_USER_CM_CMD_CREATE_ID) {
			uint32_t h = f->next_handle++;

			memcpy(r.out, &h, 4);
			r.out_len = 4;
		} else if (!r.hdr.status && cmd == RDMA_USER_CM_CMD_DESTROY_ID) {
			uint32_t bogus = 77; /* the provider answers its own count */

			memcpy(r.out, &bogus, 4);
			r.out_len = 4;
		} else if (!r.hdr.status && cmd == RDMA_USER_CM_CMD_QUERY_ROUTE) {
			memset(r.out, 0xab, req.ucma.out_len);
			r.out_len = req.ucma.out_len;
		}
		send(cs->sock, &r, sizeof(r), MSG_NOSIGNAL);
		if (rfd >= 0)
			close(rfd);
	}
	pthread_mutex_unlock(&f->lock);
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	struct conn_state cs[MAX_CONNS];
	int ncs = 0;

	for (;;) {
		struct pollfd p[MAX_CONNS + 2];
		int np = 0;

		p[np++] = (struct pollfd){ .fd = f->stop[0], .events = POLLIN };
		p[np++] = (struct pollfd){ .fd = f->lsock, .events = POLLIN };
		for (int i = 0; i < ncs; i++)
			p[np++] = (struct pollfd){ .fd = cs[i].sock, .events = POLLIN };
		if (poll(p, (nfds_t)np, -1) < 0)
			continue;
		if (p[0].revents) {
			char c = 'x';

			if (read(f->stop[0], &c, 1) == 1 && c == 'k') {
				/* the daemon goes away: every connection hangs up */
				for (int i = 0; i < ncs; i++)
					close(cs[i].sock);
				ncs = 0;
				continue;
			}
			break;
		}
		if ((p[1].revents & POLLIN) && ncs < MAX_CONNS) {
			int s = accept4(f->lsock, NULL, NULL, SOCK_CLOEXEC);

			if (s >= 0)
				cs[ncs++] = (struct conn_state){ .sock = s };
		}
		for (int i = 0; i < np - 2; i++)
			if (p[i + 2].revents && cs[i].sock >= 0)
				serve_one(f, &cs[i]);
		for (int i = 0; i < ncs;)
			if (cs[i].sock < 0)
				cs[i] = cs[--ncs];
			else
				i++;
	}
	for (int i = 0; i < ncs; i++)
		close(cs[i].sock);
	return NULL;
}

static void setup(void)
{
	for (int i = 0; i < 2; i++) {
		struct fake *f = &fk[i];
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		memset(f, 0, sizeof(*f));
		pthread_mutex_init(&f->lock, NULL);
		f->next_handle = 100 + 100 * (uint32_t)i;
		snprintf(f->path, sizeof(f->path), "/tmp/uroce-ucma-fwd-%d-%d.sock", (int)getpid(), i);
		unlink(f->path);
		f->lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(f->lsock, 0);
		strcpy(sa.sun_path, f->path);
		ck_assert_int_eq(bind(f->lsock, (struct sockaddr *)&sa, sizeof(sa)), 0);
		ck_assert_int_eq(listen(f->lsock, 8), 0);
		ck_assert_int_eq(pipe(f->stop), 0);
		ck_assert_int_eq(pthread_create(&f->th, NULL, fake_main, f), 0);
	}
}

static void teardown(void)
{
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(write(fk[i].stop[1], "x", 1), 1);
		pthread_join(fk[i].th, NULL);
		close(fk[i].lsock);
		unlink(fk[i].path);
	}
}

/* Writes one command as librdmacm does: count, or -1 with errno. */
static ssize_t ucmd(int fd, uint32_t cmd, const void *body, uint16_t in, uint16_t out)
{
	uint8_t buf[sizeof(struct rdma_ucm_cmd_hdr) + 512];
	struct rdma_ucm_cmd_hdr h = { .cmd = cmd, .in = in, .out = out };
	struct ucma_chan *ch = ucma_chan_get(fd);
	ssize_t n;

	ck_assert_ptr_nonnull(ch);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, in);
	n = ucma_cmd_write(ch, buf, sizeof(h) + in);
	ucma_chan_put(ch);
	if (n >= 0)
		ck_assert_int_eq(n, (ssize_t)(sizeof(h) + in));
	return n;
}

static uint32_t create_id(int fd, uint64_t uid, uint16_t ps)
{
	struct rdma_ucm_create_id_resp r = { .id = 0xdead };
	struct rdma_ucm_create_id c = { .uid = uid, .response = (uintptr_t)&r, .ps = ps };

	ck_assert_int_ge(ucmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(r)), 0);
	return r.id;
}

static int bind_ip(int fd, uint32_t id, const char *a)
{
	struct rdma_ucm_bind_ip c = { .id = id };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&c.addr;

	s4->sin_family = AF_INET;
	inet_pton(AF_INET, a, &s4->sin_addr);
	return ucmd(fd, RDMA_USER_CM_CMD_BIND_IP, &c, sizeof(c), 0) < 0 ? errno : 0;
}

static uint32_t destroy_id(int fd, uint32_t id)
{
	struct rdma_ucm_destroy_id_resp r = { .events_reported = 0xdead };
	struct rdma_ucm_destroy_id c = { .response = (uintptr_t)&r, .id = id };

	ck_assert_int_ge(ucmd(fd, RDMA_USER_CM_CMD_DESTROY_ID, &c, sizeof(c), sizeof(r)), 0);
	return r.events_reported;
}

static int nlog(struct fake *f)
{
	int n;

	pthread_mutex_lock(&f->lock);
	n = f->nlog;
	pthread_mutex_unlock(&f->lock);
	return n;
}

static int get_event(int fd, struct rdma_ucm_event_resp *ev)
{
	struct rdma_ucm_get_event c = { .response = (uintptr_t)ev };

	memset(ev, 0, sizeof(*ev));
	return ucmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &c, sizeof(c), sizeof(*ev)) < 0 ? errno : 0;
}

/* The fake daemon f writes an event into the event socket of its HELLO number k. */
static void daemon_event(struct fake *f, int k, uint32_t handle, uint32_t event, uint64_t uid,
			 int status)
{
	struct uroce_cm_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.conn_tag = f->hello_tag[k];
	ev.resp.id = handle;
	ev.resp.event = event;
	ev.resp.uid = uid;
	ev.resp.status = (uint32_t)status;
	ev.resp.param.conn.private_data_len = 3;
	memcpy(ev.resp.param.conn.private_data, "abc", 3);
	ck_assert_int_eq(send(f->hello_fd[k], &ev, sizeof(ev), MSG_NOSIGNAL), (ssize_t)sizeof(ev));
}

START_TEST(deferred_create_and_replay)
{
	int fd = ucma_chan_open(0);
	uint8_t tos = 0x48;
	struct rdma_ucm_set_option so = { .optval = (uintptr_t)&tos, .level = RDMA_OPTION_ID,
					  .optname = RDMA_OPTION_ID_TOS, .optlen = 1 };
	struct stat a, b;
	uint32_t id;

	ck_assert_int_ge(fd, 0);
	id = create_id(fd, 0x1111, RDMA_PS_TCP);
	ck_assert_uint_eq(id, 0);
	so.id = id;
	ck_assert_int_ge(ucmd(fd, RDMA_USER_CM_CMD_SET_OPTION, &so, sizeof(so), 0), 0);
	/* Kept: no connection, no request yet. */
	ck_assert_int_eq(fk[0].nhello + fk[1].nhello, 0);
	/* 127.0.0.2 is uroce1's: the id goes to the second daemon. */
	ck_assert_int_eq(bind_ip(fd, id, "127.0.0.2"), 0);
	ck_assert_int_eq(fk[0].nhello, 0);
	ck_assert_int_eq(fk[1].nhello, 1);
	ck_assert_uint_eq(fk[1].hello_pid[0], (uint32_t)getpid());
	ck_assert_int_ne(fk[1].hello_tag[0], 0);
	/* fd[0] of CM_HELLO is the other end of the application's channel. */
	ck_assert_int_eq(fstat(fk[1].hello_fd[0], &a), 0);
	ck_assert(S_ISSOCK(a.st_mode));
	ck_assert_int_eq(nlog(&fk[1]), 3);
	ck_assert_uint_eq(fk[1].log[0].cmd, RDMA_USER_CM_CMD_CREATE_ID);
	{
		struct rdma_ucm_create_id c;

		memcpy(&c, fk[1].log[0].in, sizeof(c));
		ck_assert_uint_eq(c.uid, 0x1111);
		ck_assert_uint_eq(c.ps, RDMA_PS_TCP);
		ck_assert_uint_eq(fk[1].log[0].out_len, 4);
	}
	ck_assert_uint_eq(fk[1].log[1].cmd, RDMA_USER_CM_CMD_SET_OPTION);
	ck_assert_uint_eq(fk[1].log[1].in_len, sizeof(so) + 1);
	{
		struct rdma_ucm_set_option s;

		memcpy(&s, fk[1].log[1].in, sizeof(s));
		ck_assert_uint_eq(s.id, 200); /* the daemon's handle */
		ck_assert_uint_eq(s.optname, RDMA_OPTION_ID_TOS);
		ck_assert_uint_eq(s.optlen, 1);
		ck_assert_uint_eq(fk[1].log[1].in[sizeof(s)], 0x48);
	}
	ck_assert_uint_eq(fk[1].log[2].cmd, RDMA_USER_CM_CMD_BIND_IP);
	{
		struct rdma_ucm_bind_ip c;

		memcpy(&c, fk[1].log[2].in, sizeof(c));
		ck_assert_uint_eq(c.id, 200);
		ck_assert_uint_eq(fk[1].log[2].in_len, sizeof(c));
	}
	/* A second id on uroce0 opens the second connection, with the same socket. */
	ck_assert_uint_eq(create_id(fd, 0x2222, RDMA_PS_UDP), 1);
	ck_assert_int_eq(bind_ip(fd, 1, "0.0.0.0"), 0); /* the wildcard: the first device */
	ck_assert_int_eq(fk[0].nhello, 1);
	ck_assert_int_ne(fk[0].hello_tag[0], fk[1].hello_tag[0]);
	ck_assert_int_eq(fstat(fk[0].hello_fd[0], &b), 0);
	ck_assert_uint_eq(a.st_ino, b.st_ino);
	/* An address no device has: ENODEV, nothing sent. */
	ck_assert_uint_eq(create_id(fd, 0x3333, RDMA_PS_TCP), 2);
	ck_assert_int_eq(bind_ip(fd, 2, "192.0.2.3"), ENODEV);
	ck_assert_int_eq(nlog(&fk[0]) + nlog(&fk[1]), 2 + 3);
	/* A loopback address no device has is the wildcard (cma_any_addr): the first device. */
	ck_assert_int_eq(bind_ip(fd, 2, "127.0.0.3"), 0);
	ck_assert_int_eq(nlog(&fk[0]), 2 + 2);
	ck_assert_int_eq(nlog(&fk[1]), 3);
	ck_assert_uint_eq(fk[0].log[3].cmd, RDMA_USER_CM_CMD_BIND_IP);
	ucma_chan_close(fd);
	close(fd);
}
END_TEST

START_TEST(translate_and_errors)
{
	int fd = ucma_chan_open(0), other = ucma_chan_open(0);
	uint8_t resp[300];
	struct rdma_ucm_query q = { .response = (uintptr_t)resp, .option = 0 };
	struct rdma_ucm_listen l = { .backlog = 5 };
	uint32_t id;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(other, 0);
	id = create_id(fd, 1, RDMA_PS_TCP);
	/* QUERY_ROUTE of a kept id: all zero, locally. */
	memset(resp, 0x55, sizeof(resp));
	q.id = id;
	ck_assert_int_ge(ucmd(fd, RDMA_USER_CM_CMD_QUERY_ROUTE, &q, sizeof(q), 200), 0);
	for (int i = 0; i < 200; i++)
		ck_assert_uint_eq(resp[i], 0);
	ck_assert_uint_eq(resp[200], 0x55);
	ck_assert_int_eq(bind_ip(fd, id, "127.0.0.1"), 0);
	/* Forwarded with the handle; out bytes copied, at most hdr.out. */
	memset(resp, 0x55, sizeof(resp));
	ck_assert_int_ge(ucmd(fd, RDMA_USER_CM_CMD_QUERY_ROUTE, &q, sizeof(q), 200), 0);
	ck_assert_uint_eq(fk[0].log[nlog(&fk[0]) - 1].cmd, RDMA_USER_CM_CMD_QUERY_ROUTE);
	ck_assert_uint_eq(fk[0].log[nlog(&fk[0]) - 1].out_len, 200);
	ck_assert_uint_eq(resp[0], 0xab);
	ck_assert_uint_eq(resp[199], 0xab);
	ck_assert_uint_eq(resp[200], 0x55);
	/* The daemon's errno is write()'s. */
	fk[0].status[RDMA_USER_CM_CMD_LISTEN] = EADDRINUSE;
	l.id = id;
	errno = 0;
	ck_assert_int_eq(ucmd(fd, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0), -1);
	ck_assert_int_eq(errno, EADDRINUSE);
	{
		struct rdma_ucm_listen sent;

		memcpy(&sent, fk[0].log[nlog(&fk[0]) - 1].in, sizeof(sent));
		ck_assert_uint_eq(sent.id, 100);
		ck_assert_uint_eq(sent.backlog, 5);
	}
	/* Another channel's id: EINVAL; an unknown one: ENOENT; neither is sent. */
	errno = 0;
	ck_assert_int_eq(ucmd(other, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	l.id = 999;
	errno = 0;
	ck_assert_int_eq(ucmd(fd, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0), -1);
	ck_assert_int_eq(errno, ENOENT);
	/* GET_OPTION has no handler; an unknown command; a write shorter than hdr.in. */
	errno = 0;
	ck_assert_int_eq(ucmd(fd, RDMA_USER_CM_CMD_GET_OPTION, &l, sizeof(l), 0), -1);
	ck_assert_int_eq(errno, ENOSYS);
	errno = 0;
	ck_assert_int_eq(ucmd(fd, 99, &l, sizeof(l), 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	{
		struct rdma_ucm_cmd_hdr h = { .cmd = RDMA_USER_CM_CMD_LISTEN, .in = 8 };
		struct ucma_chan *ch = ucma_chan_get(fd);

		errno = 0;
		ck_assert_int_eq(ucma_cmd_write(ch, &h, sizeof(h) + 4), -1);
		ck_assert_int_eq(errno, EINVAL);
		ucma_chan_put(ch);
	}
	/* CREATE_ID with a response too small: ENOSPC. */
	{
		struct rdma_ucm_create_id c = { .ps = RDMA_PS_TCP };

		errno = 0;
		ck_assert_int_eq(ucmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 2), -1);
		ck_assert_int_eq(errno, ENOSPC);
	}
	ck_assert_uint_eq(destroy_id(fd, id), 0);
	ck_assert_uint_eq(fk[0].log[nlog(&fk[0]) - 1].cmd, RDMA_USER_CM_CMD_DESTROY_ID);
	ucma_chan_close(fd);
	close(fd);
	ucma_chan_close(other);
	close(other);
}
END_TEST

START_TEST(events)
{
	int fd = ucma_chan_open(O_NONBLOCK);
	struct rdma_ucm_event_resp ev;
	uint32_t lid, cid;
	struct pollfd p;
	int n;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(get_event(fd, &ev), EAGAIN);
	lid = create_id(fd, 0xaaaa, RDMA_PS_TCP);
	ck_assert_int_eq(bind_ip(fd, lid, "127.0.0.1"), 0); /* handle 100 */
	cid = create_id(fd, 0xbbbb, RDMA_PS_TCP);
	ck_assert_int_eq(bind_ip(fd, cid, "127.0.0.1"), 0); /* handle 101 */
	/* An event of handle 101: the application's cid, and pollable. */
	daemon_event(&fk[0], 0, 101, RDMA_CM_EVENT_ADDR_RESOLVED, 0xbbbb, 0);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, 5000), 1);
	ck_assert_int_eq(get_event(fd, &ev), 0);
	ck_assert_uint_eq(ev.id, cid);
	ck_assert_uint_eq(ev.uid, 0xbbbb);
	ck_assert_uint_eq(ev.event, RDMA_CM_EVENT_ADDR_RESOLVED);
	ck_assert_uint_eq(ev.param.conn.private_data_len, 3);
	/* An event of a handle nobody has: dropped. */
	daemon_event(&fk[0], 0, 4242, RDMA_CM_EVENT_ADDR_RESOLVED, 0, 0);
	ck_assert_int_eq(get_event(fd, &ev), EAGAIN);
	/* A connect request for the listener: a new id; it counts for the listener. */
	daemon_event(&fk[0], 0, 555, RDMA_CM_EVENT_CONNECT_REQUEST, 0xaaaa, 0);
	ck_assert_int_eq(get_event(fd, &ev), 0);
	ck_assert_uint_eq(ev.event, RDMA_CM_EVENT_CONNECT_REQUEST);
	ck_assert_uint_eq(ev.uid, 0xaaaa);
	ck_assert_uint_ne(ev.id, lid);
	ck_assert_uint_ne(ev.id, cid);
	{
		uint32_t sid = ev.id;
		struct rdma_ucm_disconnect d = { .id = sid };

		/* The new id is on the same connection, with the daemon's handle 555. */
		ck_assert_int_ge(ucmd(fd, RDMA_USER_CM_CMD_DISCONNECT, &d, sizeof(d), 0), 0);
		memcpy(&d, fk[0].log[nlog(&fk[0]) - 1].in, sizeof(d));
		ck_assert_uint_eq(d.id, 555);
		ck_assert_uint_eq(destroy_id(fd, sid), 0);
	}
	/* events_reported: what was delivered (1 for cid, 1 for the listener), not the daemon's 77. */
	ck_assert_uint_eq(destroy_id(fd, cid), 1);
	ck_assert_uint_eq(destroy_id(fd, lid), 1);
	/* Destroyed: its events are dropped; a connect request for it is destroyed in the daemon. */
	n = nlog(&fk[0]);
	daemon_event(&fk[0], 0, 100, RDMA_CM_EVENT_DISCONNECTED, 0xaaaa, 0);
	daemon_event(&fk[0], 0, 556, RDMA_CM_EVENT_CONNECT_REQUEST, 0xaaaa, 0);
	ck_assert_int_eq(get_event(fd, &ev), EAGAIN);
	ck_assert_int_eq(nlog(&fk[0]), n + 1);
	{
		struct rdma_ucm_destroy_id d;

		ck_assert_uint_eq(fk[0].log[n].cmd, RDMA_USER_CM_CMD_DESTROY_ID);
		memcpy(&d, fk[0].log[n].in, sizeof(d));
		ck_assert_uint_eq(d.id, 556);
	}
	/* GET_EVENT with a response buffer too small: ENOSPC. */
	{
		struct rdma_ucm_get_event c = { .response = (uintptr_t)&ev };

		errno = 0;
		ck_assert_int_eq(ucmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &c, sizeof(c), 8), -1);
		ck_assert_int_eq(errno, ENOSPC);
	}
	/* Closing the channel closes its connection to the daemon. */
	ucma_chan_close(fd);
	close(fd);
	for (int i = 0; i < 500 && fk[0].closed < 1; i++)
		usleep(10000);
	ck_assert_int_eq(fk[0].closed, 1);
}
END_TEST

START_TEST(route_choice)
{
	struct ucma_dev devs[UCMA_MAX_DEVS];
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
	int n = ucma_dev_list(devs);

	/* lo's local route has src 127.0.0.1: the kernel picks it for 127.0.0.2 too. */
	inet_pton(AF_INET, "127.0.0.2", &dst.sin_addr);
	ck_assert_int_eq(ucma_dev_by_route(devs, n, (struct sockaddr *)&dst), 0);
	/* No device has the source the kernel picks for 10.255.255.1 (or no route): the first. */
	inet_pton(AF_INET, "10.255.255.1", &dst.sin_addr);
	ck_assert_int_eq(ucma_dev_by_route(devs, n, (struct sockaddr *)&dst), 0);
	inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
	ck_assert_int_eq(ucma_dev_by_route(devs, n, (struct sockaddr *)&dst), 0);
	/* ::ffff:127.0.0.2 is the same address as 127.0.0.2. */
	inet_pton(AF_INET6, "::ffff:127.0.0.2", &v6.sin6_addr);
	ck_assert_int_eq(ucma_dev_by_addr(devs, n, (struct sockaddr *)&v6), 1);
	ck_assert(ucma_addr_is_any((struct sockaddr *)&(struct sockaddr_in6){ .sin6_family = AF_INET6 }));
	ck_assert(!ucma_addr_is_any((struct sockaddr *)&dst));
}
END_TEST

/* A kept option the daemon refuses: the bind fails with its errno, the new
 * daemon id is destroyed, and the option is kept for the next try. */
START_TEST(replay_failure)
{
	int fd = ucma_chan_open(0);
	int one = 1;
	struct rdma_ucm_set_option so = { .optval = (uintptr_t)&one, .level = RDMA_OPTION_ID,
					  .optname = RDMA_OPTION_ID_REUSEADDR, .optlen = sizeof(one) };
	struct rdma_ucm_destroy_id d;
	uint32_t id;

	ck_assert_int_ge(fd, 0);
	id = create_id(fd, 7, RDMA_PS_TCP);
	so.id = id;
	ck_assert_int_ge(ucmd(fd, RDMA_USER_CM_CMD_SET_OPTION, &so, sizeof(so), 0), 0);
	fk[0].status[RDMA_USER_CM_CMD_SET_OPTION] = EINVAL;
	ck_assert_int_eq(bind_ip(fd, id, "127.0.0.1"), EINVAL);
	ck_assert_int_eq(nlog(&fk[0]), 3);
	ck_assert_uint_eq(fk[0].log[0].cmd, RDMA_USER_CM_CMD_CREATE_ID);
	ck_assert_uint_eq(fk[0].log[1].cmd, RDMA_USER_CM_CMD_SET_OPTION);
	ck_assert_uint_eq(fk[0].log[2].cmd, RDMA_USER_CM_CMD_DESTROY_ID);
	memcpy(&d, fk[0].log[2].in, sizeof(d));
	ck_assert_uint_eq(d.id, 100);
	fk[0].status[RDMA_USER_CM_CMD_SET_OPTION] = 0;
	ck_assert_int_eq(bind_ip(fd, id, "127.0.0.1"), 0);
	ck_assert_int_eq(nlog(&fk[0]), 6);
	ck_assert_uint_eq(fk[0].log[3].cmd, RDMA_USER_CM_CMD_CREATE_ID);
	ck_assert_uint_eq(fk[0].log[4].cmd, RDMA_USER_CM_CMD_SET_OPTION);
	ck_assert_uint_eq(fk[0].log[4].in_len, sizeof(so) + sizeof(one));
	memcpy(&so, fk[0].log[4].in, sizeof(so));
	ck_assert_uint_eq(so.id, 101);
	ck_assert_uint_eq(fk[0].log[5].cmd, RDMA_USER_CM_CMD_BIND_IP);
	ucma_chan_close(fd);
	close(fd);
}
END_TEST

/* MIGRATE_ID of a bound id: written on the target channel naming the source. */
START_TEST(migrate_bound)
{
	int a = ucma_chan_open(O_NONBLOCK), b = ucma_chan_open(O_NONBLOCK);
	struct rdma_ucm_migrate_resp r = { .events_reported = 0xdead };
	struct rdma_ucm_migrate_id m = { .response = (uintptr_t)&r };
	struct rdma_ucm_event_resp ev;
	uint32_t id;

	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(b, 0);
	id = create_id(a, 9, RDMA_PS_TCP);
	ck_assert_int_eq(bind_ip(a, id, "127.0.0.1"), 0); /* handle 100 on a's connection */
	daemon_event(&fk[0], 0, 100, RDMA_CM_EVENT_ADDR_RESOLVED, 9, 0);
	ck_assert_int_eq(get_event(a, &ev), 0);
	/* The daemon cannot: its errno, and the id stays on a. */
	fk[0].status[RDMA_USER_CM_CMD_MIGRATE_ID] = EOPNOTSUPP;
	m.id = id;
	m.fd = (uint32_t)a;
	errno = 0;
	ck_assert_int_eq(ucmd(b, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof(m), sizeof(r)), -1);
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(fk[0].nhello, 2); /* b's connection was opened for it */
	fk[0].status[RDMA_USER_CM_CMD_MIGRATE_ID] = 0;
	ck_assert_int_ge(ucmd(b, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof(m), sizeof(r)), 0);
	ck_assert_uint_eq(r.events_reported, 1);
	{
		struct logged *l = &fk[0].log[nlog(&fk[0]) - 1];
		struct rdma_ucm_migrate_id sent;

		ck_assert_uint_eq(l->cmd, RDMA_USER_CM_CMD_MIGRATE_ID);
		ck_assert_uint_eq(l->conn_tag, fk[0].hello_tag[0]); /* on the id's (a's) connection */
		memcpy(&sent, l->in, sizeof(sent));
		ck_assert_uint_eq(sent.id, 100);
		ck_assert_uint_eq(sent.fd, fk[0].hello_tag[1]); /* b's conn_tag */
	}
	/* The id is b's now: its events come through b's connection; a's are dropped. */
	daemon_event(&fk[0], 1, 100, RDMA_CM_EVENT_DISCONNECTED, 9, 0);
	ck_assert_int_eq(get_event(b, &ev), 0);
	ck_assert_uint_eq(ev.id, id);
	ck_assert_int_eq(get_event(a, &ev), EAGAIN);
	/* Not a channel as the source: EINVAL. */
	m.fd = 0;
	errno = 0;
	ck_assert_int_eq(ucmd(b, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof(m), sizeof(r)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(destroy_id(b, id), 2);
	ucma_chan_close(a);
	close(a);
	ucma_chan_close(b);
	close(b);
}
END_TEST

/* A daemon that goes away: DEVICE_REMOVAL for each of the channel's ids on its device. */
START_TEST(daemon_gone)
{
	int fd = ucma_chan_open(0);
	struct rdma_ucm_event_resp ev;
	uint32_t a, b, kept;

	ck_assert_int_ge(fd, 0);
	a = create_id(fd, 0xa, RDMA_PS_TCP);
	ck_assert_int_eq(bind_ip(fd, a, "127.0.0.1"), 0);
	b = create_id(fd, 0xb, RDMA_PS_TCP);
	ck_assert_int_eq(bind_ip(fd, b, "127.0.0.2"), 0);
	kept = create_id(fd, 0xc, RDMA_PS_TCP);
	ck_assert_int_eq(write(fk[0].stop[1], "k", 1), 1);
	/* Blocking: wakes up for the hang-up. */
	ck_assert_int_eq(get_event(fd, &ev), 0);
	ck_assert_uint_eq(ev.event, 11); /* RDMA_CM_EVENT_DEVICE_REMOVAL */
	ck_assert_uint_eq(ev.id, a);
	ck_assert_uint_eq(ev.uid, 0xa);
	/* Only uroce0's id: nothing more (uroce1's daemon and the kept id are fine). */
	ck_assert_int_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(get_event(fd, &ev), EAGAIN);
	/* Its destroy needs no daemon; the removal was delivered. */
	ck_assert_uint_eq(destroy_id(fd, a), 1);
	ck_assert_uint_eq(destroy_id(fd, b), 0);
	ck_assert_uint_eq(destroy_id(fd, kept), 0);
	ucma_chan_close(fd);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("provider_ucma_fwd");
	TCase *tc = tcase_create("fwd");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, deferred_create_and_replay);
	tcase_add_test(tc, translate_and_errors);
	tcase_add_test(tc, events);
	tcase_add_test(tc, route_choice);
	tcase_add_test(tc, replay_failure);
	tcase_add_test(tc, migrate_bound);
	tcase_add_test(tc, daemon_gone);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
