/*
 * daemon_share.c - shared contexts at uroced's control socket
 * (SHARE_CONTEXT, IMPORT_CONTEXT, IMPORT_OBJ, UNIMPORT_OBJ;
 * include/uroce/abi_share.h), run by tests/daemon_share.sh.
 *
 *   daemon_share SOCK
 *
 * Connection A names its command file (a /dev/null open); B imports it with
 * a dup of that descriptor; C tries with a /dev/null of its own. Each row
 * of the table is one request with its exact status; handles, keys and
 * lengths of the replies are checked after. Then A disconnects: the daemon
 * ends B too (IBV_EVENT_DEVICE_FATAL on its async socket, end of file on
 * its connection). Last, OPEN_QP: C opens an XRC_RECV QP of D through an
 * XRCD of the same file (its handle, MODIFY/QUERY through it, EBUSY for D's
 * DESTROY_QP, UNIMPORT_OBJ twice), refusals (a private XRCD, an unknown
 * QPN, reserved), and a stale handle once D is gone. Exit 0 or 1.
 */
#include "config.h"
#include "daemon_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

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

/* SHARE_CONTEXT or IMPORT_CONTEXT with FD; the reply's handle in *id. */
static int ctx_op(struct dp_session *ss, unsigned int op, int fd, uint32_t *id)
{
	struct uroce_hdr req;
	struct uroce_handle_resp resp;
	int rc;

	dp_hdr(&req, op, 7);
	memset(&resp, 0xAA, sizeof(resp));
	rc = dp_call(ss->s, &req, &fd, 1, &resp, sizeof(resp), NULL, NULL);
	*id = rc == 0 ? resp.handle : 0;
	return rc;
}

/* IMPORT_OBJ / UNIMPORT_OBJ; the reply in *out (IMPORT_OBJ), a DM's memfd
 * in *memfd (-1: none). */
static int obj_op(struct dp_session *ss, unsigned int op, uint32_t type, uint32_t handle,
		  struct uroce_import_obj_resp *out, int *memfd)
{
	struct uroce_import_obj_req req = { 0 };
	struct uroce_import_obj_resp resp;
	int fds[4], n = 0, rc;

	dp_hdr(&req, op, 8);
	req.type = type;
	req.handle = handle;
	memset(&resp, 0, sizeof(resp));
	rc = dp_call(ss->s, &req, NULL, 0, &resp, sizeof(resp), fds, &n);
	if (out)
		*out = resp;
	if (memfd)
		*memfd = n ? fds[0] : -1;
	else
		for (int i = 0; i < n; i++)
			close(fds[i]);
	return rc;
}

static int alloc_dm(struct dp_session *ss, uint64_t len, uint32_t *h)
{
	struct uroce_alloc_dm_req req = { 0 };
	struct uroce_alloc_dm_resp resp;
	int fds[4], n = 0, rc;

	dp_hdr(&req, UROCE_OP_ALLOC_DM, 9);
	req.length = len;
	rc = dp_call(ss->s, &req, NULL, 0, &resp, sizeof(resp), fds, &n);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	*h = rc == 0 ? resp.handle : 0;
	return rc;
}

static int rereg_access(struct dp_session *ss, uint32_t mr)
{
	struct uroce_rereg_mr_req req = { 0 };
	struct uroce_reg_mr_resp resp;

	dp_hdr(&req, UROCE_OP_REREG_MR, 10);
	req.handle = mr;
	req.flags = IBV_REREG_MR_CHANGE_ACCESS;
	req.access = IBV_ACCESS_LOCAL_WRITE;
	return dp_call(ss->s, &req, NULL, 0, &resp, sizeof(resp), NULL, NULL);
}

/* OPEN_XRCD of FD (-1: private) with O_CREAT; the handle. */
static uint32_t xrcd(struct dp_session *ss, int fd)
{
	struct uroce_open_xrcd_req req = { 0 };
	struct uroce_open_xrcd_resp resp;

	dp_hdr(&req, UROCE_OP_OPEN_XRCD, 11);
	req.oflags = O_CREAT;
	if (dp_call(ss->s, &req, fd >= 0 ? &fd : NULL, fd >= 0, &resp, sizeof(resp), NULL, NULL))
		return 0;
	return resp.handle;
}

static int open_qp(struct dp_session *ss, uint32_t x, uint32_t qpn, uint64_t reserved, uint32_t *h)
{
	struct uroce_open_qp_req req = { 0 };
	struct uroce_handle_resp resp;
	int rc;

	dp_hdr(&req, UROCE_OP_OPEN_QP, 12);
	req.xrcd_handle = x;
	req.qpn = qpn;
	req.reserved = reserved;
	rc = dp_call(ss->s, &req, NULL, 0, &resp, sizeof(resp), NULL, NULL);
	*h = rc == 0 ? resp.handle : 0;
	return rc;
}

/* OPEN_QP between C and a new connection D (see the top). */
static void open_qp_rows(struct dp_session *c, const char *sock)
{
	char path[] = "/tmp/uroce-share-XXXXXX";
	struct uroce_create_xrc_qp_req req = { 0 };
	struct uroce_create_qp_resp qp;
	struct uroce_query_qp_req qreq = { 0 };
	struct uroce_query_qp_resp qresp;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct dp_session d;
	uint32_t xd, xc, xp, h, dummy;
	int fd = mkstemp(path), rc;

	if (fd < 0 || dp_open(&d, sock)) {
		CHECK(0, "OPEN_QP setup");
		return;
	}
	xd = xrcd(&d, fd);
	xc = xrcd(c, fd);
	xp = xrcd(c, -1);
	CHECK(xd && xc && xp, "XRCDs %u %u %u", xd, xc, xp);
	dp_hdr(&req, UROCE_OP_CREATE_XRC_QP, 13);
	req.xrcd_handle = xd;
	rc = dp_call(d.s, &req, NULL, 0, &qp, sizeof(qp), NULL, NULL);
	CHECK(rc == 0, "CREATE_XRC_QP %d", rc);
	CHECK(open_qp(c, xp, qp.qpn, 0, &h) == EINVAL, "OPEN_QP through a private XRCD");
	CHECK(open_qp(c, xc, qp.qpn + 1, 0, &h) == EINVAL, "OPEN_QP of an unknown QPN");
	CHECK(open_qp(c, xc, qp.qpn, 1, &h) == EINVAL, "OPEN_QP reserved 1");
	CHECK(open_qp(c, 77, qp.qpn, 0, &h) == EINVAL, "OPEN_QP XRCD 77");
	rc = open_qp(c, xc, qp.qpn, 0, &h);
	CHECK(rc == 0 && h != 0, "OPEN_QP: rc %d handle %u", rc, h);
	CHECK(dp_modify_qp(c, h, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				      IBV_QP_ACCESS_FLAGS) == 0, "MODIFY_QP through the opened handle");
	dp_hdr(&qreq, UROCE_OP_QUERY_QP, 14);
	qreq.handle = qp.handle;
	qreq.attr_mask = IBV_QP_STATE;
	rc = dp_call(d.s, &qreq, NULL, 0, &qresp, sizeof(qresp), NULL, NULL);
	CHECK(rc == 0 && qresp.attr.qp_state == IBV_QPS_INIT, "D sees INIT: rc %d state %d", rc,
	      qresp.attr.qp_state);
	CHECK(dp_handle_op(&d, UROCE_OP_DESTROY_QP, qp.handle) == EBUSY, "D destroys an opened QP");
	CHECK(dp_handle_op(c, UROCE_OP_DESTROY_QP, h) == EBUSY, "C destroys its opened handle");
	CHECK(obj_op(c, UROCE_OP_UNIMPORT_OBJ, UROCE_IMPORT_QP, h, NULL, NULL) == 0, "close opened");
	CHECK(obj_op(c, UROCE_OP_UNIMPORT_OBJ, UROCE_IMPORT_QP, h, NULL, NULL) == EINVAL,
	      "close opened twice");
	/* opened again, then D goes: the handle is stale */
	CHECK(open_qp(c, xc, qp.qpn, 0, &h) == 0, "OPEN_QP again");
	dp_close(&d);
	rc = EAGAIN;
	for (int i = 0; i < 100 && rc != EINVAL; i++) {
		usleep(20000);
		rc = dp_modify_qp(c, h, &a, IBV_QP_STATE);
	}
	CHECK(rc == EINVAL, "MODIFY_QP through a stale handle: %d", rc);
	CHECK(obj_op(c, UROCE_OP_UNIMPORT_OBJ, UROCE_IMPORT_QP, h, NULL, NULL) == EINVAL,
	      "close a stale handle");
	CHECK(dp_alloc_pd(c, &dummy) == 0, "C carries on");
	close(fd);
	unlink(path);
}

int main(int argc, char **argv)
{
	static char buf[65536];
	struct dp_session a, b, c;
	struct uroce_reg_mr_resp mr;
	struct uroce_import_obj_resp r;
	uint32_t id_a, id, pd, pd2, bpd, dm, dummy;
	int devnull, other, pipefd[2], dup_fd, memfd, rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SOCK\n", argv[0]);
		return 2;
	}
	if (dp_open(&a, argv[1]) || dp_open(&b, argv[1]) || dp_open(&c, argv[1])) {
		fprintf(stderr, "HELLO failed\n");
		return 1;
	}
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	other = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || other < 0 || pipe(pipefd))
		return 1;
	dup_fd = dup(devnull);

	/* A names its file; a pipe is no command file; only once */
	CHECK(ctx_op(&a, UROCE_OP_SHARE_CONTEXT, pipefd[0], &id) == EINVAL, "share a pipe");
	rc = ctx_op(&a, UROCE_OP_SHARE_CONTEXT, devnull, &id_a);
	CHECK(rc == 0 && id_a != 0, "share: rc %d id %u", rc, id_a);
	CHECK(ctx_op(&a, UROCE_OP_SHARE_CONTEXT, devnull, &id) == EEXIST, "share twice");

	/* objects of A: PD 1, PD 2, an MR of 64 KiB on PD 1, a DM of 4 KiB */
	CHECK(dp_alloc_pd(&a, &pd) == 0 && pd == 1, "A pd %u", pd);
	CHECK(dp_alloc_pd(&a, &pd2) == 0 && pd2 == 2, "A pd2 %u", pd2);
	CHECK(dp_reg_mr(&a, pd, (uintptr_t)buf, sizeof(buf),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &mr) == 0, "A reg_mr");
	CHECK(alloc_dm(&a, 4096, &dm) == 0 && dm == 1, "A dm %u", dm);

	/* C: a /dev/null of its own names no context; not an importer */
	CHECK(ctx_op(&c, UROCE_OP_IMPORT_CONTEXT, other, &id) == EINVAL, "C imports its own file");
	CHECK(ctx_op(&c, UROCE_OP_IMPORT_CONTEXT, pipefd[1], &id) == EINVAL, "C imports a pipe");
	CHECK(obj_op(&c, UROCE_OP_IMPORT_OBJ, UROCE_IMPORT_PD, pd, NULL, NULL) == EINVAL,
	      "C imports A's PD without the file");
	/* A itself imports nothing (it named its file, it is no importer) */
	CHECK(ctx_op(&a, UROCE_OP_IMPORT_CONTEXT, dup_fd, &id) == EEXIST, "A imports itself");
	CHECK(obj_op(&a, UROCE_OP_IMPORT_OBJ, UROCE_IMPORT_PD, pd, NULL, NULL) == EINVAL,
	      "A imports its own PD");

	/* B with a dup of A's descriptor: the same open file */
	CHECK(dp_alloc_pd(&b, &bpd) == 0 && bpd == 1, "B pd %u", bpd);
	rc = ctx_op(&b, UROCE_OP_IMPORT_CONTEXT, dup_fd, &id);
	CHECK(rc == 0 && id == id_a, "B import: rc %d id %u (want 0, %u)", rc, id, id_a);
	CHECK(ctx_op(&b, UROCE_OP_IMPORT_CONTEXT, dup_fd, &id) == EEXIST, "B imports twice");

	/* PD: the import is a new handle of B; unknown type, stale handle */
	CHECK(obj_op(&b, UROCE_OP_IMPORT_OBJ, 9, pd, NULL, NULL) == EINVAL, "type 9");
	CHECK(obj_op(&b, UROCE_OP_IMPORT_OBJ, UROCE_IMPORT_PD, 77, NULL, NULL) == EINVAL, "PD 77");
	rc = obj_op(&b, UROCE_OP_IMPORT_OBJ, UROCE_IMPORT_PD, pd, &r, NULL);
	CHECK(rc == 0 && r.handle == 2, "import PD: rc %d handle %u (want 0, 2)", rc, r.handle);
	CHECK(dp_handle_op(&b, UROCE_OP_DEALLOC_PD, r.handle) == EBUSY, "B deallocs the import");
	CHECK(dp_handle_op(&a, UROCE_OP_DEALLOC_PD, pd) == EBUSY, "A deallocs an imported PD");
	/* B's own PD 1 is not an import; UNIMPORT of it, of a wrong type */
	CHECK(obj_op(&b, UROCE_OP_UNIMPORT_OBJ, UROCE_IMPORT_PD, bpd, NULL, NULL) == EINVAL,
	      "unimport B's own PD");
	CHECK(obj_op(&b, UROCE_OP_UNIMPORT_OBJ, UROCE_IMPORT_MR, r.handle, NULL, NULL) == EINVAL,
	      "unimport PD as MR");
	CHECK(obj_op(&b, UROCE_OP_UNIMPORT_OBJ, UROCE_IMPORT_PD, r.handle, NULL, NULL) == 0,
	      "unimport PD");
	CHECK(obj_op(&b, UROCE_OP_UNIMPORT_OBJ, UROCE_IMPORT_PD, r.handle, NULL, NULL) == EINVAL,
	      "unimport PD twice");
	CHECK(dp_handle_op(&b, UROCE_OP_DEALLOC_PD, r.handle) == EINVAL, "B's unimported handle");
	CHECK(dp_handle_op(&a, UROCE_OP_DEALLOC_PD, pd2) == 0, "A deallocs PD 2");
	CHECK(obj_op(&b, UROCE_OP_IMPORT_OBJ, UROCE_IMPORT_PD, pd2, NULL, NULL) == EINVAL,
	      "import a freed PD");

	/* MR: keys and length as A's; A cannot deregister or rereg it meanwhile */
	rc = obj_op(&b, UROCE_OP_IMPORT_OBJ, UROCE_IMPORT_MR, mr.handle, &r, NULL);
	CHECK(rc == 0 && r.lkey == mr.lkey && r.rkey == mr.rkey && r.length == sizeof(buf),
	      "import MR: rc %d lkey 0x%x rkey 0x%x length %llu", rc, r.lkey, r.rkey,
	      (unsigned long long)r.length);
	CHECK(dp_handle_op(&a, UROCE_OP_DEREG_MR, mr.handle) == EBUSY, "A deregs an imported MR");
	CHECK(rereg_access(&a, mr.handle) == EBUSY, "A reregs an imported MR");
	CHECK(dp_handle_op(&b, UROCE_OP_DEREG_MR, r.handle) == EBUSY, "B deregs the import");

	/* DM: its memfd, the same pages */
	rc = obj_op(&b, UROCE_OP_IMPORT_OBJ, UROCE_IMPORT_DM, dm, &r, &memfd);
	CHECK(rc == 0 && memfd >= 0 && r.length == 4096 && r.map_size >= 4096,
	      "import DM: rc %d fd %d length %llu", rc, memfd, (unsigned long long)r.length);
	if (memfd >= 0)
		close(memfd);
	CHECK(dp_handle_op(&a, UROCE_OP_FREE_DM, dm) == EBUSY, "A frees an imported DM");
	CHECK(obj_op(&b, UROCE_OP_UNIMPORT_OBJ, UROCE_IMPORT_DM, r.handle, NULL, NULL) == 0,
	      "unimport DM");
	CHECK(dp_handle_op(&a, UROCE_OP_FREE_DM, dm) == 0, "A frees the DM after unimport");
	CHECK(alloc_dm(&b, 64, &dummy) == 0, "B's own DM");

	/* A goes: B is ended with it */
	dp_close(&a);
	{
		struct ib_uverbs_async_event_desc ev = { 0 };
		struct pollfd p = { .fd = b.async_fd, .events = POLLIN };
		char x;

		CHECK(poll(&p, 1, 10000) == 1 && read(b.async_fd, &ev, sizeof(ev)) == sizeof(ev) &&
		      ev.event_type == IBV_EVENT_DEVICE_FATAL, "B: DEVICE_FATAL (type %u)", ev.event_type);
		p.fd = b.s;
		CHECK(poll(&p, 1, 10000) == 1 && read(b.s, &x, 1) == 0, "B: end of file");
	}
	/* C is untouched */
	CHECK(dp_alloc_pd(&c, &dummy) == 0 && dummy == 1, "C still works: pd %u", dummy);
	open_qp_rows(&c, argv[1]);
	dp_close(&b);
	dp_close(&c);
	return failures ? 1 : 0;
}
