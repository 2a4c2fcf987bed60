/*
 * traffic_share.c - shared contexts through the public verbs API on uroce0
 * (Check, run inside `uroce run` by traffic_share.sh). Sources:
 * ibv_import_device(3), ibv_import_pd(3), ibv_import_mr(3),
 * ibv_import_dm(3), rdma-core providers/mlx5 (what each import returns);
 * docs/provider.md "Shared contexts".
 *   cross_process  process A owns a PD, a 64 KiB MR and a 4 KiB DM and
 *                  sends its cmd_fd to process B (SCM_RIGHTS); B imports the
 *                  context, PD (handle as A's), MR (A's keys, length, addr
 *                  NULL) and DM (A's bytes), and with two RC QPs of its own
 *                  on the imported PD runs 1000 rounds of: RDMA WRITE 64 KiB
 *                  of its own memory into A's MR by the imported rkey, then
 *                  RDMA WRITE from A's memory by the imported lkey back into
 *                  B's memory; every byte and every completion exact. While
 *                  B holds the imports A's dereg/dealloc/free fail with
 *                  EBUSY; after B unimported they succeed. A PD handle A
 *                  never had: EINVAL. A third process with a /dev/null of
 *                  its own cannot import (EINVAL).
 *   original_gone  when A closes its context, B's imported one gets
 *                  IBV_EVENT_DEVICE_FATAL.
 */
#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "traffic_verbs.h"

#define DEV "uroce0"
#define WAIT_MS 20000
#define MSG 65536u
#define ROUNDS 1000u
#define DM_LEN 4096u

/* What A tells B with its cmd_fd. */
struct share_info {
	uint32_t pd_handle, mr_handle, dm_handle, lkey, rkey;
	uint64_t addr, length;
};

static int failures;

/* B's checks (B is a plain child: it reports by its exit status). */
#define BCHECK(cond, ...)                                                  \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "B FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
			failures++;                                        \
		}                                                          \
	} while (0)

static void send_msg(int s, const void *buf, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *cm;

		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	if (sendmsg(s, &mh, 0) != (ssize_t)len)
		_exit(3);
}

/* One message of exactly LEN bytes; its descriptor in *fd (-1: none). */
static void recv_msg(int s, void *buf, size_t len, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	if (recvmsg(s, &mh, MSG_CMSG_CLOEXEC) != (ssize_t)len)
		_exit(3);
	if (fd) {
		*fd = -1;
		cm = CMSG_FIRSTHDR(&mh);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	}
}

/* One signalled RDMA WRITE of LEN bytes and its completion, exact. */
static int write_once(struct ibv_qp *qp, struct ibv_cq *cq, uint64_t laddr, uint32_t lkey,
		      uint64_t raddr, uint32_t rkey, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = raddr, .rkey = rkey } };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int rc = ibv_post_send(qp, &wr, &bad);

	if (rc)
		return rc;
	rc = tv_poll_one(cq, WAIT_MS, &wc);
	if (rc)
		return rc;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RDMA_WRITE || wc.wr_id != wr_id ||
	    wc.qp_num != qp->qp_num) {
		fprintf(stderr, "B: completion status %d opcode %d wr_id %llu qp 0x%x\n", wc.status,
			wc.opcode, (unsigned long long)wc.wr_id, wc.qp_num);
		return EIO;
	}
	return 0;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &a);
}

/* Process B of cross_process. */
static int proc_b(int s)
{
	struct share_info in;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *amr, *src_mr, *dst_mr;
	struct ibv_dm *dm;
	struct ibv_cq *cq;
	struct ibv_qp *q0, *q1;
	union ibv_gid gid;
	unsigned char *src, *dst, dmbuf[DM_LEN];
	int fd;
	char x = 'b';

	recv_msg(s, &in, sizeof(in), &fd);
	BCHECK(fd >= 0, "no cmd_fd");
	ctx = ibv_import_device(fd);
	if (!ctx) {
		perror("B: ibv_import_device");
		return 1;
	}
	errno = 0;
	BCHECK(!ibv_import_pd(ctx, 999) && errno == EINVAL, "import PD 999: errno %d", errno);
	pd = ibv_import_pd(ctx, in.pd_handle);
	if (!pd) {
		perror("B: ibv_import_pd");
		return 1;
	}
	BCHECK(pd->handle == in.pd_handle && pd->context == ctx, "PD handle %u", pd->handle);
	amr = ibv_import_mr(pd, in.mr_handle);
	if (!amr) {
		perror("B: ibv_import_mr");
		return 1;
	}
	BCHECK(amr->lkey == in.lkey && amr->rkey == in.rkey && amr->length == in.length &&
	       amr->addr == NULL && amr->handle == in.mr_handle && amr->pd == pd,
	       "MR lkey 0x%x rkey 0x%x length %zu", amr->lkey, amr->rkey, amr->length);
	dm = ibv_import_dm(ctx, in.dm_handle);
	if (!dm) {
		perror("B: ibv_import_dm");
		return 1;
	}
	BCHECK(dm->handle == in.dm_handle, "DM handle %u", dm->handle);
	BCHECK(ibv_memcpy_from_dm(dmbuf, dm, 0, DM_LEN) == 0, "memcpy_from_dm");
	for (unsigned int i = 0; i < DM_LEN; i++)
		if (dmbuf[i] != (unsigned char)(i * 7 + 1)) {
			BCHECK(0, "DM byte %u: 0x%02x", i, dmbuf[i]);
			break;
		}
	/* destroying through the import is refused while it is imported */
	BCHECK(ibv_dealloc_pd(pd) == EBUSY, "dealloc imported PD");
	send_msg(s, &x, 1, -1);
	recv_msg(s, &x, 1, NULL);

	src = aligned_alloc(4096, MSG);
	dst = aligned_alloc(4096, MSG);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	BCHECK(src && dst && cq, "buffers, CQ");
	src_mr = ibv_reg_mr(pd, src, MSG, IBV_ACCESS_LOCAL_WRITE);
	dst_mr = ibv_reg_mr(pd, dst, MSG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	q0 = rc_qp(pd, cq);
	q1 = rc_qp(pd, cq);
	if (!src_mr || !dst_mr || !q0 || !q1 || ibv_query_gid(ctx, 1, 0, &gid) ||
	    tv_rc_connect(q0, q1->qp_num, &gid, IBV_MTU_1024, 14) ||
	    tv_rc_connect(q1, q0->qp_num, &gid, IBV_MTU_1024, 14)) {
		fprintf(stderr, "B: MRs/QPs on the imported PD failed\n");
		return 1;
	}
	for (unsigned int r = 0; r < ROUNDS && !failures; r++) {
		for (unsigned int i = 0; i < MSG; i++)
			src[i] = (unsigned char)(i * 31 + r);
		memset(dst, 0, MSG);
		BCHECK(write_once(q0, cq, (uintptr_t)src, src_mr->lkey, in.addr, amr->rkey, MSG,
				  2 * r) == 0, "round %u: write into A", r);
		/* A's memory, reached by the imported lkey, back into ours */
		BCHECK(write_once(q1, cq, in.addr, amr->lkey, (uintptr_t)dst, dst_mr->rkey, MSG,
				  2 * r + 1) == 0, "round %u: write from A", r);
		BCHECK(!memcmp(src, dst, MSG), "round %u: bytes differ", r);
	}
	BCHECK(ibv_destroy_qp(q0) == 0 && ibv_destroy_qp(q1) == 0, "destroy QPs");
	BCHECK(ibv_dereg_mr(src_mr) == 0 && ibv_dereg_mr(dst_mr) == 0, "dereg own MRs");
	BCHECK(ibv_destroy_cq(cq) == 0, "destroy CQ");
	ibv_unimport_mr(amr);
	ibv_unimport_dm(dm);
	ibv_unimport_pd(pd);
	send_msg(s, &x, 1, -1);
	recv_msg(s, &x, 1, NULL);
	BCHECK(ibv_close_device(ctx) == 0, "close");
	free(src);
	free(dst);
	return failures ? 1 : 0;
}

static int wait_child(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

START_TEST(cross_process)
{
	struct ibv_context *ctx = tv_open(DEV);
	struct ibv_alloc_dm_attr dma = { .length = DM_LEN };
	unsigned char *buf = aligned_alloc(4096, MSG), dmbuf[DM_LEN];
	struct share_info info;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_dm *dm;
	int sv[2];
	pid_t pid;
	char x = 'a';

	ck_assert_ptr_nonnull(ctx);
	ck_assert_ptr_nonnull(buf);
	memset(buf, 0, MSG);
	pd = ibv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
	mr = ibv_reg_mr(pd, buf, MSG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(mr);
	dm = ibv_alloc_dm(ctx, &dma);
	ck_assert_ptr_nonnull(dm);
	for (unsigned int i = 0; i < DM_LEN; i++)
		dmbuf[i] = (unsigned char)(i * 7 + 1);
	ck_assert_int_eq(ibv_memcpy_to_dm(dm, 0, dmbuf, DM_LEN), 0);
	info = (struct share_info){ pd->handle, mr->handle, dm->handle, mr->lkey, mr->rkey,
				    (uintptr_t)buf, MSG };
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		_exit(proc_b(sv[1]));
	}
	close(sv[1]);
	send_msg(sv[0], &info, sizeof(info), ctx->cmd_fd);
	recv_msg(sv[0], &x, 1, NULL);
	/* B holds the imports: nothing of them can go */
	ck_assert_int_eq(ibv_dereg_mr(mr), EBUSY);
	ck_assert_int_eq(ibv_free_dm(dm), EBUSY);
	ck_assert_int_eq(ibv_dealloc_pd(pd), EBUSY);
	send_msg(sv[0], &x, 1, -1);
	recv_msg(sv[0], &x, 1, NULL);
	/* B unimported: A's objects are A's alone again */
	for (unsigned int i = 0; i < MSG; i++)
		if (buf[i] != (unsigned char)(i * 31 + ROUNDS - 1))
			ck_abort_msg("A's byte %u is 0x%02x, want 0x%02x", i, buf[i],
				     (unsigned char)(i * 31 + ROUNDS - 1));
	send_msg(sv[0], &x, 1, -1);
	ck_assert_int_eq(wait_child(pid), 0);
	close(sv[0]);

	/* a third process, with a /dev/null open of its own */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		struct ibv_context *c;

		errno = 0;
		c = ibv_import_device(fd);
		_exit(c == NULL && errno == EINVAL ? 0 : 1);
	}
	ck_assert_int_eq(wait_child(pid), 0);

	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_free_dm(dm), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
	free(buf);
}
END_TEST

START_TEST(original_gone)
{
	struct ibv_context *ctx;
	int sv[2];
	pid_t pid;
	char x = 'a';

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	/* B forks before A opens the device: it must not inherit A's daemon
	 * connection, or A's close would not end that connection */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct ibv_async_event ev;
		struct ibv_context *c;
		struct ibv_pd *pd;
		int fd, rc;

		close(sv[0]);
		recv_msg(sv[1], &x, 1, &fd);
		c = ibv_import_device(fd);
		pd = c ? ibv_alloc_pd(c) : NULL;
		send_msg(sv[1], &x, 1, -1);
		if (!pd)
			_exit(1);
		rc = tv_next_async(c, WAIT_MS, &ev);
		if (rc || ev.event_type != IBV_EVENT_DEVICE_FATAL) {
			fprintf(stderr, "B: async rc %d event %d\n", rc, rc ? -1 : ev.event_type);
			_exit(1);
		}
		ibv_ack_async_event(&ev);
		_exit(0);
	}
	close(sv[1]);
	ctx = tv_open(DEV);
	ck_assert_ptr_nonnull(ctx);
	send_msg(sv[0], &x, 1, ctx->cmd_fd);
	recv_msg(sv[0], &x, 1, NULL);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
	ck_assert_int_eq(wait_child(pid), 0);
	close(sv[0]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("traffic_share");
	TCase *tc = tcase_create("share");

	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, cross_process);
	tcase_add_test(tc, original_gone);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
