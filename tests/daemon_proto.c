/*
 * daemon_proto.c - test client of uroced's control protocol (see daemon_proto.h).
 */
#include "config.h"
#include "daemon_proto.h"
#include "uroce/fdmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int dp_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(s);
		return -1;
	}
	return s;
}

int dp_send_raw(int s, const void *buf, size_t len, const int *fds, int nfds)
{
	return uroce_send_fds(s, buf, len, fds, nfds, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

ssize_t dp_recv(int s, void *buf, size_t cap, int *fds, int *nfds)
{
	union {
		char b[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr a;
	} ctrl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl.b,
			     .msg_controllen = sizeof(ctrl.b) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);

	if (nfds)
		*nfds = 0;
	if (n < 0)
		return -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int k, cnt = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (k = 0; k < cnt; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (fds && nfds && *nfds < 4)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

void dp_hdr(void *req, unsigned int op, uint32_t seq)
{
	struct uroce_hdr *h = req;

	memset(h, 0, sizeof(*h));
	h->magic = UROCE_MSG_MAGIC;
	h->version = UROCE_ABI_VERSION;
	h->opcode = (uint16_t)op;
	h->seq = seq;
	h->length = (uint32_t)uroce_req_size(op);
}

int dp_call(int s, void *req, const int *fds, int nfds, void *resp, size_t cap, int *out_fds,
	    int *n_out)
{
	int got[4], ngot = 0, i;
	ssize_t n;

	if (dp_send_raw(s, req, ((struct uroce_hdr *)req)->length, fds, nfds) < 0)
		return -1;
	n = dp_recv(s, resp, cap, got, &ngot);
	if (n < (ssize_t)sizeof(struct uroce_hdr))
		return -1;
	for (i = 0; i < ngot; i++) {
		if (out_fds)
			out_fds[i] = got[i];
		else
			close(got[i]);
	}
	if (n_out)
		*n_out = ngot;
	return ((struct uroce_hdr *)resp)->status;
}

void dp_self_mem_fds(int fds[2])
{
	fds[0] = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	fds[1] = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
}

int dp_open(struct dp_session *ss, const char *path)
{
	struct uroce_hello_req req;
	int sp[2], out[4], nout = 0, rc, fds[3];

	memset(ss, 0, sizeof(*ss));
	ss->s = dp_connect(path);
	if (ss->s < 0)
		return errno;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return errno;
	dp_hdr(&req, UROCE_OP_HELLO, 1);
	req.abi_version = UROCE_ABI_VERSION;
	req.pid = (uint32_t)getpid();
	req.reserved = 0;
	fds[0] = sp[1];
	dp_self_mem_fds(fds + 1);
	rc = dp_call(ss->s, &req, fds, 3, &ss->hello, sizeof(ss->hello), out, &nout);
	close(sp[1]);
	close(fds[1]);
	close(fds[2]);
	ss->async_fd = sp[0];
	ss->clock_fd = nout > 0 ? out[0] : -1;
	ss->db_fd = nout > 1 ? out[1] : -1;
	return rc < 0 ? EIO : rc;
}

void dp_close(struct dp_session *ss)
{
	if (ss->s >= 0)
		close(ss->s);
	if (ss->async_fd >= 0)
		close(ss->async_fd);
	if (ss->clock_fd >= 0)
		close(ss->clock_fd);
	if (ss->db_fd >= 0)
		close(ss->db_fd);
	ss->s = ss->async_fd = ss->clock_fd = ss->db_fd = -1;
}

int dp_alloc_pd(struct dp_session *ss, uint32_t *h)
{
	struct uroce_handle_req req = { 0 };
	struct uroce_handle_resp resp;
	int rc;

	dp_hdr(&req, UROCE_OP_ALLOC_PD, 2);
	rc = dp_call(ss->s, &req, NULL, 0, &resp, sizeof(resp), NULL, NULL);
	*h = resp.handle;
	return rc;
}

int dp_handle_op(struct dp_session *ss, unsigned int op, uint32_t h)
{
	struct uroce_handle_req req = { 0 };
	_Alignas(8) unsigned char resp[UROCE_MSG_MAX];

	dp_hdr(&req, op, 3);
	req.handle = h;
	return dp_call(ss->s, &req, NULL, 0, resp, sizeof(resp), NULL, NULL);
}

int dp_reg_mr(struct dp_session *ss, uint32_t pd, uint64_t addr, uint64_t len, uint32_t access,
	      struct uroce_reg_mr_resp *out)
{
	struct uroce_reg_mr_req req = { 0 };

	dp_hdr(&req, UROCE_OP_REG_MR, 4);
	req.pd_handle = pd;
	req.addr = addr;
	req.length = len;
	req.access = access;
	return dp_call(ss->s, &req, NULL, 0, out, sizeof(*out), NULL, NULL);
}

int dp_ring_memfd(uint64_t size, int seal)
{
	int fd = memfd_create("dp-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | (seal > 1 ? F_SEAL_WRITE : 0)) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

int dp_create_cq(struct dp_session *ss, uint32_t cqe, int chan_fd, uint32_t *h)
{
	struct uroce_create_cq_req req = { 0 };
	struct uroce_create_cq_resp resp;
	uint32_t nent = uroce_roundup_pow2(cqe + 1);
	int fds[2], rc;

	fds[0] = dp_ring_memfd(uroce_cq_ring_size(nent), 1);
	fds[1] = chan_fd;
	dp_hdr(&req, UROCE_OP_CREATE_CQ, 5);
	req.user_handle = 0x1000 + cqe;
	req.cqe = cqe;
	req.nent = nent;
	rc = dp_call(ss->s, &req, fds, chan_fd >= 0 ? 2 : 1, &resp, sizeof(resp), NULL, NULL);
	close(fds[0]);
	*h = resp.handle;
	return rc;
}

int dp_create_qp(struct dp_session *ss, enum ibv_qp_type t, uint32_t pd, uint32_t cq,
		 struct uroce_create_qp_resp *out)
{
	struct uroce_create_qp_req req = { 0 };
	struct uroce_qp_ring_layout lay;
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				  .max_recv_sge = 1, .max_inline_data = 64 };
	int fd, rc;

	dp_hdr(&req, UROCE_OP_CREATE_QP, 6);
	req.user_handle = 0xabc;
	req.qp_type = t;
	req.pd_handle = pd;
	req.send_cq_handle = cq;
	req.recv_cq_handle = cq;
	req.cap = cap;
	uroce_qp_caps_round(&cap);
	uroce_qp_ring_layout(&cap, &lay);
	fd = dp_ring_memfd(lay.size, 1);
	rc = dp_call(ss->s, &req, &fd, 1, out, sizeof(*out), NULL, NULL);
	close(fd);
	return rc;
}

int dp_modify_qp(struct dp_session *ss, uint32_t qp, const struct ibv_qp_attr *a, uint32_t mask)
{
	struct uroce_modify_qp_req req;
	struct uroce_modify_qp_resp resp;

	memset(&req, 0, sizeof(req));
	dp_hdr(&req, UROCE_OP_MODIFY_QP, 7);
	req.handle = qp;
	req.attr_mask = mask;
	req.attr = *a;
	return dp_call(ss->s, &req, NULL, 0, &resp, sizeof(resp), NULL, NULL);
}

int dp_status_text(const char *path, char *buf, size_t cap)
{
	struct uroce_hdr req;
	struct uroce_admin_status_resp resp;
	int s = dp_connect(path), fd = -1, n = 0, rc;
	ssize_t len;

	if (s < 0)
		return errno;
	dp_hdr(&req, UROCE_OP_ADMIN_STATUS, 9);
	rc = dp_call(s, &req, NULL, 0, &resp, sizeof(resp), &fd, &n);
	close(s);
	if (rc)
		return rc < 0 ? EIO : rc;
	if (n != 1)
		return EPROTO;
	len = pread(fd, buf, cap - 1, 0);
	close(fd);
	if (len < 0)
		return errno;
	buf[len] = 0;
	return 0;
}

int dp_status_totals(const char *path, struct dp_totals *t)
{
	char text[65536], *line;
	int rc = dp_status_text(path, text, sizeof(text));

	if (rc)
		return rc;
	line = strstr(text, "\ntotals ");
	if (!line || sscanf(line + 1, "totals clients=%u pd=%u mr=%u cq=%u qp=%u ah=%u", &t->clients,
			    &t->pd, &t->mr, &t->cq, &t->qp, &t->ah) != 6)
		return EPROTO;
	return 0;
}
