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
 * its connection). Exit 0 or 1.
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
	dp_close(&b);
	dp_close(&c);
	return failures ? 1 : 0;
}
