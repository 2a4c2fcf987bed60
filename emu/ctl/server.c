/*
 * server.c - the control socket and message dispatch (see ctl_server.h;
 * the message formats and every errno are specified in include/uroce/abi.h).
 */
#include "config.h"
#include "emu/mcast/mcast.h"
#include "emu/ctl/server.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/ctl/quota.h"
#include "emu/nic/mem_wb.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/eth/eth.h"
#include "uroce/fdmsg.h"
#include "emu/cm/cm.h"
#include "emu/ctl/share.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Descriptors we accept per datagram before calling it truncated; larger than
 * any opcode needs so that "too many" is seen and answered, not dropped. */
#define RX_MAX_FDS 16

enum {
	F_HELLO = 1,   /* needs a completed HELLO */
	F_ADMIN = 2,   /* needs the daemon's uid or root; no HELLO */
	F_HANDLE = 4,  /* body is struct uroce_handle_req: reserved must be 0 */
	F_FIRST = 8,   /* HELLO itself */
	F_CM = 16,     /* needs a completed CM_HELLO (emu/cm/) */
};

struct op_desc {
	ctl_handler fn;
	const char *name;
	unsigned char min_fds, max_fds;
	unsigned char flags;
};

static const struct op_desc ops[UROCE_OP_MAX] = {
	[UROCE_OP_HELLO] = { op_hello, "HELLO", 1, 3, F_FIRST },
	[UROCE_OP_QUERY_PORT] = { op_query_port, "QUERY_PORT", 0, 0, F_HELLO },
	[UROCE_OP_ALLOC_PD] = { op_alloc_pd, "ALLOC_PD", 0, 0, F_HELLO },
	[UROCE_OP_DEALLOC_PD] = { op_dealloc_pd, "DEALLOC_PD", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_REG_MR] = { op_reg_mr, "REG_MR", 0, 0, F_HELLO },
	[UROCE_OP_DEREG_MR] = { op_dereg_mr, "DEREG_MR", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_CREATE_CQ] = { op_create_cq, "CREATE_CQ", 1, 2, F_HELLO },
	[UROCE_OP_DESTROY_CQ] = { op_destroy_cq, "DESTROY_CQ", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_CREATE_QP] = { op_create_qp, "CREATE_QP", 0, 1, F_HELLO },
	[UROCE_OP_MODIFY_QP] = { op_modify_qp, "MODIFY_QP", 0, 0, F_HELLO },
	[UROCE_OP_QUERY_QP] = { op_query_qp, "QUERY_QP", 0, 0, F_HELLO },
	[UROCE_OP_DESTROY_QP] = { op_destroy_qp, "DESTROY_QP", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_CREATE_AH] = { op_create_ah, "CREATE_AH", 0, 0, F_HELLO },
	[UROCE_OP_DESTROY_AH] = { op_destroy_ah, "DESTROY_AH", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_CREATE_SRQ] = { op_create_srq, "CREATE_SRQ", 1, 1, F_HELLO },
	[UROCE_OP_MODIFY_SRQ] = { op_modify_srq, "MODIFY_SRQ", 0, 0, F_HELLO },
	[UROCE_OP_QUERY_SRQ] = { op_query_srq, "QUERY_SRQ", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_DESTROY_SRQ] = { op_destroy_srq, "DESTROY_SRQ", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_ALLOC_MW] = { op_alloc_mw, "ALLOC_MW", 0, 0, F_HELLO },
	[UROCE_OP_DEALLOC_MW] = { op_dealloc_mw, "DEALLOC_MW", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_REREG_MR] = { op_rereg_mr, "REREG_MR", 0, 0, F_HELLO },
	[UROCE_OP_RESIZE_CQ] = { op_resize_cq, "RESIZE_CQ", 1, 1, F_HELLO },
	[UROCE_OP_MODIFY_CQ] = { op_modify_cq, "MODIFY_CQ", 0, 0, F_HELLO },
	[UROCE_OP_ADVISE_MR] = { op_advise_mr, "ADVISE_MR", 0, 0, F_HELLO },
	[UROCE_OP_ATTACH_MCAST] = { op_attach_mcast, "ATTACH_MCAST", 0, 0, F_HELLO },
	[UROCE_OP_DETACH_MCAST] = { op_detach_mcast, "DETACH_MCAST", 0, 0, F_HELLO },
	[UROCE_OP_OPEN_XRCD] = { op_open_xrcd, "OPEN_XRCD", 0, 1, F_HELLO },
	[UROCE_OP_CLOSE_XRCD] = { op_close_xrcd, "CLOSE_XRCD", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_SHARE_CONTEXT] = { op_share_context, "SHARE_CONTEXT", 1, 1, F_HELLO },
	[UROCE_OP_IMPORT_CONTEXT] = { op_import_context, "IMPORT_CONTEXT", 1, 1, F_HELLO },
	[UROCE_OP_IMPORT_OBJ] = { op_import_obj, "IMPORT_OBJ", 0, 0, F_HELLO },
	[UROCE_OP_UNIMPORT_OBJ] = { op_unimport_obj, "UNIMPORT_OBJ", 0, 0, F_HELLO },
	[UROCE_OP_OPEN_QP] = { op_open_qp, "OPEN_QP", 0, 0, F_HELLO },
	[UROCE_OP_CREATE_XRC_SRQ] = { op_create_xrc_srq, "CREATE_XRC_SRQ", 1, 1, F_HELLO },
	[UROCE_OP_CREATE_XRC_QP] = { op_create_xrc_qp, "CREATE_XRC_QP", 0, 0, F_HELLO },
	[UROCE_OP_CREATE_TM_SRQ] = { op_create_tm_srq, "CREATE_TM_SRQ", 1, 1, F_HELLO },
	[UROCE_OP_TM_OP] = { op_tm_op, "TM_OP", 0, 0, F_HELLO },
	[UROCE_OP_CREATE_FLOW] = { op_create_flow, "CREATE_FLOW", 0, 0, F_HELLO },
	[UROCE_OP_DESTROY_FLOW] = { op_destroy_flow, "DESTROY_FLOW", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_CREATE_WQ] = { op_create_wq, "CREATE_WQ", 1, 1, F_HELLO },
	[UROCE_OP_MODIFY_WQ] = { op_modify_wq, "MODIFY_WQ", 0, 0, F_HELLO },
	[UROCE_OP_DESTROY_WQ] = { op_destroy_wq, "DESTROY_WQ", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_CREATE_RWQ_IND_TABLE] = { op_create_ind_table, "CREATE_RWQ_IND_TABLE", 0, 0, F_HELLO },
	[UROCE_OP_DESTROY_RWQ_IND_TABLE] = { op_destroy_ind_table, "DESTROY_RWQ_IND_TABLE", 0, 0,
					     F_HELLO | F_HANDLE },
	[UROCE_OP_CREATE_RSS_QP] = { op_create_rss_qp, "CREATE_RSS_QP", 0, 0, F_HELLO },
	[UROCE_OP_CREATE_COUNTERS] = { op_create_counters, "CREATE_COUNTERS", 0, 0, F_HELLO },
	[UROCE_OP_DESTROY_COUNTERS] = { op_destroy_counters, "DESTROY_COUNTERS", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_READ_COUNTERS] = { op_read_counters, "READ_COUNTERS", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_ADMIN_STATUS] = { op_admin_status, "ADMIN_STATUS", 0, 0, F_ADMIN },
	[UROCE_OP_ADMIN_LINK] = { op_admin_link, "ADMIN_LINK", 0, 0, F_ADMIN },
	[UROCE_OP_ADMIN_CAPTURE_START] = { op_admin_capture_start, "ADMIN_CAPTURE_START", 1, 1, F_ADMIN },
	[UROCE_OP_ADMIN_CAPTURE_STOP] = { op_admin_capture_stop, "ADMIN_CAPTURE_STOP", 0, 0, F_ADMIN },
	[UROCE_OP_ADMIN_SHUTDOWN] = { op_admin_shutdown, "ADMIN_SHUTDOWN", 0, 0, F_ADMIN },
	[UROCE_OP_ADMIN_FAULT] = { op_admin_fault, "ADMIN_FAULT", 0, 0, F_ADMIN },
	[UROCE_OP_ALLOC_DM] = { op_alloc_dm, "ALLOC_DM", 0, 0, F_HELLO },
	[UROCE_OP_FREE_DM] = { op_free_dm, "FREE_DM", 0, 0, F_HELLO | F_HANDLE },
	[UROCE_OP_REG_DM_MR] = { op_reg_dm_mr, "REG_DM_MR", 0, 0, F_HELLO },
	[UROCE_OP_CM_HELLO] = { op_cm_hello, "CM_HELLO", 1, 1, F_FIRST },
	[UROCE_OP_UCMA] = { op_ucma, "UCMA", 0, 0, F_CM },
};

/* Send the reply in BUF (LEN bytes) with descriptors FDS. Returns 0 or errno. */
static int send_reply(struct ctl_client *c, const void *buf, size_t len, const int *fds, int nfds)
{
	if (uroce_send_fds(c->fd, buf, len, fds, nfds, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		return errno ? errno : EIO;
	return 0;
}

/* Validate and run one request; fill RESP (header included). */
static int dispatch(struct ctl_client *c, const unsigned char *buf, ssize_t n, int msg_flags, int *fds,
		    int nfds, unsigned char *resp, size_t *resp_len, struct ctl_call *call,
		    const struct op_desc **descp)
{
	const struct uroce_hdr *h = (const void *)buf;
	struct uroce_hdr *rh = (void *)resp;
	const struct op_desc *desc;
	int i, rc;

	*descp = NULL;
	*resp_len = sizeof(struct uroce_hdr);
	rh->magic = UROCE_MSG_MAGIC;
	rh->version = UROCE_ABI_VERSION;
	rh->opcode = UROCE_OP_INVALID;
	if ((size_t)n < sizeof(*h))
		return (msg_flags & MSG_TRUNC) ? EMSGSIZE : EBADMSG;
	rh->seq = h->seq;
	if (h->magic != UROCE_MSG_MAGIC)
		return EPROTO;
	if (h->version != UROCE_ABI_VERSION)
		return EPROTONOSUPPORT;
	rh->opcode = h->opcode;
	desc = h->opcode < UROCE_OP_MAX ? &ops[h->opcode] : NULL;
	if (!desc || !desc->fn)
		return EOPNOTSUPP;
	*descp = desc;
	*resp_len = uroce_resp_size(h->opcode);
	if ((msg_flags & MSG_TRUNC) || h->length != (uint32_t)n || (size_t)n != uroce_req_size(h->opcode))
		return EMSGSIZE;
	if (msg_flags & MSG_CTRUNC)
		return EINVAL;
	if (h->status || h->reserved)
		return EINVAL;
	if (c->refuse)
		return c->refuse;
	for (i = 0; i < nfds; i++) {
		if (!quota_fd_ok(c, fds[i])) {
			if (!c->hello)
				c->refuse = EMFILE; /* close it after this reply */
			return EMFILE;
		}
	}
	if (desc->flags & F_ADMIN) {
		if (c->uid != 0 && c->uid != c->dev->uid)
			return EPERM;
	} else if (desc->flags & F_CM) {
		if (!c->cm)
			return EPROTO;
	} else if (c->cm) {
		/* a CM connection carries UCMA requests only (abi_cm.h) */
		return h->opcode == UROCE_OP_CM_HELLO ? EALREADY : EPROTO;
	} else if (!(desc->flags & F_FIRST) && !c->hello) {
		return EPROTO;
	}
	if (nfds < desc->min_fds)
		return EBADF;
	if (nfds > desc->max_fds)
		return EINVAL;
	if ((desc->flags & F_HANDLE) && ((const struct uroce_handle_req *)buf)->reserved)
		return EINVAL;
	call->req = buf;
	call->fds = fds;
	call->nfds = nfds;
	call->resp = resp;
	call->n_out = 0;
	call->close_out = true;
	/* a request may observe memory (query, status) or end the objects a
	 * pending write goes through (dereg, destroy, shutdown) */
	mem_wb_flush(c->dev);
	rc = desc->fn(c, call);
	if (rc)
		call->n_out = 0;
	return rc;
}

/* Read and answer one datagram. Returns false when the client is gone. */
static bool client_read_one(struct ctl_client *c)
{
	struct uroce_dev *d = c->dev;
	_Alignas(8) unsigned char buf[UROCE_MSG_MAX];
	_Alignas(8) unsigned char resp[UROCE_MSG_MAX];
	union {
		char buf[CMSG_SPACE(sizeof(int) * RX_MAX_FDS)];
		struct cmsghdr align;
	} ctrl;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl.buf,
			     .msg_controllen = sizeof(ctrl.buf) };
	int fds[RX_MAX_FDS], nfds = 0, i, rc, src;
	const struct op_desc *desc;
	struct ctl_call call = { 0 };
	struct cmsghdr *cm;
	size_t resp_len;
	ssize_t n;

	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	/* Collect every descriptor first so none leaks, whatever follows. */
	for (cm = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int k, cnt;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (k = 0; k < cnt; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (nfds < RX_MAX_FDS)
				fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	if (n <= 0) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		client_destroy(c);
		return false;
	}
	memset(resp, 0, sizeof(resp));
	rc = dispatch(c, buf, n, mh.msg_flags, fds, nfds, resp, &resp_len, &call, &desc);
	for (i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (rc) {
		struct uroce_hdr saved = *(struct uroce_hdr *)resp;

		memset(resp, 0, resp_len);
		*(struct uroce_hdr *)resp = saved;
		((struct uroce_hdr *)resp)->status = rc;
		if (rc == EBUSY)
			ulog(ULOG_DEBUG, "client#%u pid %d: %s refused: %s", c->id, (int)c->pid,
			     desc ? desc->name : "message", strerror(rc));
		else
			ulog_limited(ULOG_LIMIT_REFUSED, ULOG_INFO, "client#%u pid %d: %s refused: %s",
				     c->id, (int)c->pid, desc ? desc->name : "message", strerror(rc));
	}
	((struct uroce_hdr *)resp)->length = (uint32_t)resp_len;
	src = send_reply(c, resp, resp_len, call.out_fds, call.n_out);
	if (call.close_out)
		for (i = 0; i < call.n_out; i++)
			close(call.out_fds[i]);
	if (src || c->refuse) {
		if (src)
			ulog_limited(ULOG_LIMIT_REFUSED, ULOG_WARN,
				     "client#%u pid %d: cannot send reply (%s); dropping the client", c->id,
				     (int)c->pid, strerror(src));
		client_destroy(c);
		return false;
	}
	if (d->stopping)
		ev_break(d->loop, EVBREAK_ALL);
	return true;
}

static void client_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ctl_client *c = w->data;
	int i;

	/* A few datagrams per wake-up, then let other clients run. */
	for (i = 0; i < 8; i++) {
		int pending = 0;

		if (!client_read_one(c))
			return;
		if (recv(c->fd, &pending, sizeof(pending), MSG_PEEK | MSG_DONTWAIT) < 0)
			return;
	}
}

static void listen_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct uroce_dev *d = w->data;
	struct ctl_client *c;
	int fd;

	while ((fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		c = client_new(d, fd);
		if (!c)
			continue;
		c->refuse = quota_admit(c);
		if (c->refuse < 0) {
			client_destroy(c);
			continue;
		}
		ev_io_init(&c->io, client_cb, fd, EV_READ);
		c->io.data = c;
		ev_io_start(loop, &c->io);
		ulog(ULOG_DEBUG, "connection client#%u pid %d uid %d (%s)", c->id, (int)c->pid,
		     (int)c->uid, c->comm);
	}
	if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
		/* Out of descriptors: the pending connection keeps the socket
		 * readable, so pause accepting briefly instead of spinning. */
		ulog_limited(ULOG_LIMIT_ACCEPT, ULOG_WARN, "accept: %s; not accepting for 100 ms",
			     strerror(errno));
		ev_io_stop(loop, &d->listen_io);
		ev_timer_start(loop, &d->listen_pause);
	} else if (errno != EAGAIN && errno != EINTR) {
		ulog_limited(ULOG_LIMIT_ACCEPT, ULOG_WARN, "accept: %s", strerror(errno));
	}
}

static void listen_resume(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct uroce_dev *d = w->data;

	if (d->listen_fd >= 0)
		ev_io_start(loop, &d->listen_io);
}

int ctl_server_start(struct uroce_dev *d, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path))
		return ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			return EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0666) < 0 ||
	    listen(fd, 128) < 0) {
		e = errno;
		close(fd);
		return e;
	}
	d->listen_fd = fd;
	{
		struct rlimit rl;

		d->quota.fd_limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < INT_MAX
					    ? (int)rl.rlim_cur : INT_MAX;
	}
	snprintf(d->sock_path, sizeof(d->sock_path), "%s", path);
	ev_io_init(&d->listen_io, listen_cb, fd, EV_READ);
	d->listen_io.data = d;
	ev_io_start(d->loop, &d->listen_io);
	ev_timer_init(&d->listen_pause, listen_resume, 0.1, 0.);
	d->listen_pause.data = d;
	return 0;
}

void ctl_server_stop(struct uroce_dev *d, int fatal)
{
	if (d->listen_fd >= 0) {
		ev_io_stop(d->loop, &d->listen_io);
		ev_timer_stop(d->loop, &d->listen_pause);
		close(d->listen_fd);
		d->listen_fd = -1;
		unlink(d->sock_path);
	}
	while (d->clients) {
		if (fatal && d->clients->hello)
			client_async_event(d->clients, 1, IBV_EVENT_DEVICE_FATAL);
		client_destroy(d->clients);
	}
}
