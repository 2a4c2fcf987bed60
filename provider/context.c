/*
 * context.c - opening and closing a uroce device context; the ops table.
 *
 * alloc_context (libibverbs' verbs_open_device, after it opened the
 * /dev/infiniband/uverbs_NAME alias as cmd_fd): connect to the daemon socket
 * named in sysfs, HELLO with the peer end of our async_fd socketpair and
 * descriptors of our own /proc/self/mem and /proc/self/maps (the daemon's only
 * way to our registered memory, docs/security.md), map the HCA clock page,
 * and make sure
 * completion channels can be created (comp_channel.c). The context then answers queries from the HELLO
 * reply without round trips.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "comp_channel.h"
#include "liveness.h"
#include "poll_yield.h"
#include "uroce.h"

/* Reads the first line of dir/name into buf (trailing whitespace removed). */
static int read_sysfs_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	size_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		errno = ENODATA;
		return -1;
	}
	fclose(f);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	return 0;
}

/* Number of GID entries libibverbs can read: the files ports/1/gids/0..N-1. */
static uint32_t count_sysfs_gids(const char *ibdev_path)
{
	char path[PATH_MAX];
	struct dirent *de;
	uint32_t n = 0;
	DIR *d;

	if ((size_t)snprintf(path, sizeof(path), "%s/ports/1/gids", ibdev_path) >= sizeof(path))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
			n++;
	closedir(d);
	return n;
}

/* Sends HELLO; on success maps the clock page and keeps the doorbell. */
static int hello(struct uroce_context *ctx, int async_peer)
{
	struct uroce_hello_req req = { .abi_version = UROCE_ABI_VERSION,
				       .pid = (uint32_t)getpid() };
	int rfds[2], nrfds = 2, ret, nfds = 3;
	int fds[3] = { async_peer, -1, -1 };
	void *page;

	/* The daemon reaches our registered memory through these only: what
	 * we may read and write ourselves, in this image (abi.h HELLO).
	 * Without /proc (a sandbox) the context still opens; REG_MR then
	 * fails with EFAULT. */
	fds[1] = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	fds[2] = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fds[1] < 0 || fds[2] < 0) {
		fprintf(stderr, UROCE_LOG_PREFIX "cannot open /proc/self/%s (%s): memory registration will fail with EFAULT\n",
			fds[1] < 0 ? "mem" : "maps", strerror(errno));
		nfds = 1;
	}
	ret = uroce_ctl_call(ctx, UROCE_OP_HELLO, &req, sizeof(req), fds, nfds, &ctx->hello,
			     sizeof(ctx->hello), rfds, &nrfds);
	for (int i = 1; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (ret)
		return ret;
	if (nrfds != 2) {
		for (int i = 0; i < nrfds; i++)
			close(rfds[i]);
		fprintf(stderr, UROCE_LOG_PREFIX "HELLO reply carried %d descriptors, expected 2\n", nrfds);
		return EPROTO;
	}
	ctx->hello.dev_name[sizeof(ctx->hello.dev_name) - 1] = '\0';
	ctx->doorbell = rfds[1];
	page = mmap(NULL, UROCE_CLOCK_PAGE_SIZE, PROT_READ, MAP_SHARED, rfds[0], 0);
	ret = errno;
	close(rfds[0]);
	if (page == MAP_FAILED) {
		fprintf(stderr, UROCE_LOG_PREFIX "cannot map the HCA clock page: %s\n", strerror(ret));
		return ret;
	}
	ctx->clock = page;
	if (ctx->clock->magic != UROCE_CLOCK_MAGIC || ctx->clock->version != UROCE_ABI_VERSION) {
		fprintf(stderr, UROCE_LOG_PREFIX "the HCA clock page has a wrong magic/version\n");
		return EPROTO;
	}
	return 0;
}

/*
 * Without the write() hook, libibverbs' ibv_create_comp_channel would write
 * its command to /dev/null, "succeed" and return the uninitialised fd of its
 * response (which ibv_destroy_comp_channel then closes, whatever it is).
 * Replace cmd_fd by a read-only /dev/null: that write fails with EBADF, so
 * ibv_create_comp_channel returns NULL. Says why once per process.
 */
static void disarm_cmd_fd(int cmd_fd)
{
	static bool said;
	int ro = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (ro >= 0) {
		dup3(ro, cmd_fd, O_CLOEXEC);
		close(ro);
	}
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		fprintf(stderr, UROCE_LOG_PREFIX "completion channels are unavailable "
			"(ibv_create_comp_channel fails with EBADF): %s\n", uroce_chan_error());
}

static void release(struct uroce_context *ctx)
{
	if (ctx->clock)
		munmap((void *)ctx->clock, UROCE_CLOCK_PAGE_SIZE);
	if (ctx->doorbell >= 0)
		close(ctx->doorbell);
	if (ctx->sock >= 0)
		close(ctx->sock);
	uroce_ctl_shared_free(ctx);
	pthread_mutex_destroy(&ctx->qp_lock);
	uroce_qp_table_free(ctx);
	uroce_event_free_kept(ctx);
	pthread_mutex_destroy(&ctx->kept_lock);
}

/* Names cmd_fd's open file to the daemon, so that ibv_import_device of a
 * descriptor of it finds this context (uroce/abi_share.h SHARE_CONTEXT). */
static void share_context(struct uroce_context *ctx, int cmd_fd)
{
	static bool said;
	struct uroce_hdr req;
	struct uroce_handle_resp resp;
	int ret = uroce_ctl_call(ctx, UROCE_OP_SHARE_CONTEXT, &req, sizeof(req), &cmd_fd, 1,
				 &resp, sizeof(resp), NULL, NULL);

	if (ret && !__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		fprintf(stderr, UROCE_LOG_PREFIX "the daemon refused SHARE_CONTEXT (%s): "
			"ibv_import_device of this context will fail\n", strerror(ret));
}

struct verbs_context *uroce_alloc_context(struct ibv_device *ibdev, int cmd_fd,
					  void *private_data)
{
	return uroce_open_context(ibdev, cmd_fd, false);
}

struct verbs_context *uroce_open_context(struct ibv_device *ibdev, int cmd_fd, bool import)
{
	struct uroce_device *dev = uroce_container_of(ibdev, struct uroce_device, vdev.device);
	struct uroce_context *ctx;
	char sock_path[PATH_MAX];
	int sv[2] = { -1, -1 };
	long ncpu;
	int ret;

	ctx = uroce_init_and_alloc_context(ibdev, cmd_fd, struct uroce_context, vctx);
	if (!ctx)
		return NULL;
	ctx->sock = -1;
	ctx->doorbell = -1;
	ctx->pid = getpid();
	ctx->poll_yield = uroce_poll_yield_setting();
	pthread_mutex_init(&ctx->qp_lock, NULL);
	pthread_mutex_init(&ctx->kept_lock, NULL);
	ret = uroce_ctl_shared_init(ctx);
	if (ret)
		goto err;

	if (read_sysfs_line(dev->ibdev_path, UROCE_SYSFS_SOCKET_FILE, sock_path,
			    sizeof(sock_path))) {
		ret = errno;
		fprintf(stderr, UROCE_LOG_PREFIX "%s: cannot read %s/%s: %s\n", ibdev->name,
			dev->ibdev_path, UROCE_SYSFS_SOCKET_FILE, strerror(ret));
		goto err;
	}
	ctx->sock = uroce_ctl_connect(sock_path);
	if (ctx->sock < 0) {
		ret = errno;
		fprintf(stderr, UROCE_LOG_PREFIX "%s: cannot connect to the daemon at %s: %s (is `uroce up` running?)\n",
			ibdev->name, sock_path, strerror(ret));
		goto err;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ret = errno;
		goto err;
	}
	ret = hello(ctx, sv[1]);
	close(sv[1]);
	if (ret) {
		close(sv[0]);
		/* uroced refuses a HELLO whose pid (or /proc/self files) is not
		 * the socket peer's as it sees it (abi.h HELLO). */
		fprintf(stderr, UROCE_LOG_PREFIX "%s: HELLO to the daemon at %s failed: %s%s\n",
			ibdev->name, sock_path, strerror(ret),
			ret == EPERM ? " (the daemon sees this process under another pid: a PID "
				       "namespace other than uroced's is not supported)" :
			ret == EMFILE ? " (this user has as many device contexts open as the "
					"daemon allows, see `uroce status`)" : "");
		goto err;
	}
	/* libibverbs would otherwise ask the (absent) kernel for an async fd. */
	ctx->vctx.context.async_fd = sv[0];
	if (import) {
		ret = uroce_import_attach(ctx, cmd_fd, sv[0]);
		if (ret)
			goto err;
	}

	ctx->gid_tbl_len = count_sysfs_gids(dev->ibdev_path);
	if (!ctx->gid_tbl_len)
		ctx->gid_tbl_len = ctx->hello.gid_tbl_len;
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	/* UCX passes comp_vector = its CPU: expose one vector per CPU (docs/clients.md §0 item 8). */
	ctx->num_comp_vectors = ncpu > 0 ? (int)ncpu : 1;
	ctx->vctx.context.num_comp_vectors = ctx->num_comp_vectors;

	if (uroce_chan_install() == 0) {
		if (uroce_chan_register_cmd_fd(cmd_fd, ctx->sock)) {
			ret = errno;
			goto err;
		}
		/* end of file on async_fd becomes DEVICE_FATAL (async_fd.c) */
		ret = uroce_async_fd_register(sv[0]);
		if (ret) {
			uroce_chan_unregister_cmd_fd(cmd_fd);
			goto err;
		}
	} else {
		disarm_cmd_fd(cmd_fd);
	}
	if (!import)
		share_context(ctx, cmd_fd);

	verbs_set_ops(&ctx->vctx, &uroce_ctx_ops);
	/* Posting only where the daemon runs the rings; otherwise EOPNOTSUPP stays. */
	if (ctx->hello.caps & UROCE_HELLO_CAP_WQE_RINGS)
		verbs_set_ops(&ctx->vctx, &uroce_post_ops);
	return &ctx->vctx;

err:
	release(ctx);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static void uroce_free_context(struct ibv_context *ibctx)
{
	struct uroce_context *ctx = to_uctx(ibctx);

	uroce_chan_unregister_cmd_fd(ibctx->cmd_fd);
	release(ctx);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/*
 * Called by ibv_get_async_event after it read a record from async_fd. A
 * DEVICE_FATAL (the daemon shut down, or died: async_fd.c) makes every later
 * daemon request fail with EIO instead of waiting on a dead socket, CQ polls
 * flush outstanding work (flush.c) and destroy calls free the objects
 * locally, as after a kernel device disassociation. Events of a CQ or QP
 * are counted: its destroy waits for that many acks (events.c).
 */
static void uroce_async_event(struct ibv_context *ibctx, struct ibv_async_event *event)
{
	if (event->event_type == IBV_EVENT_DEVICE_FATAL) {
		to_uctx(ibctx)->dead = true;
		uroce_ctx_set_gone(to_uctx(ibctx), NULL);
	}
	uroce_event_async_read(event);
}

/* Slots left NULL keep libibverbs' dummies, which fail with EOPNOTSUPP. */
const struct verbs_context_ops uroce_ctx_ops = {
	.advise_mr = uroce_advise_mr,
	.alloc_dm = uroce_alloc_dm,
	.alloc_mw = uroce_alloc_mw,
	.alloc_parent_domain = uroce_alloc_parent_domain,
	.alloc_pd = uroce_alloc_pd,
	.alloc_td = uroce_alloc_td,
	.attach_counters_point_flow = uroce_attach_counters_point_flow,
	.attach_mcast = uroce_attach_mcast,
	.bind_mw = uroce_bind_mw,
	.close_xrcd = uroce_close_xrcd,
	.async_event = uroce_async_event,
	.cq_event = uroce_cq_event,
	.create_ah = uroce_create_ah,
	.create_counters = uroce_create_counters,
	.create_cq = uroce_create_cq,
	.create_cq_ex = uroce_create_cq_ex,
	.import_dm = uroce_import_dm,
	.open_qp = uroce_open_qp,
	.import_mr = uroce_import_mr,
	.import_pd = uroce_import_pd,
	.unimport_dm = uroce_unimport_dm,
	.unimport_mr = uroce_unimport_mr,
	.unimport_pd = uroce_unimport_pd,
	.create_flow = uroce_create_flow,
	.create_qp = uroce_create_qp,
	.create_qp_ex = uroce_create_qp_ex,
	.create_rwq_ind_table = uroce_create_rwq_ind_table,
	.create_srq = uroce_create_srq,
	.create_srq_ex = uroce_create_srq_ex,
	.create_wq = uroce_create_wq,
	.dealloc_mw = uroce_dealloc_mw,
	.dealloc_pd = uroce_dealloc_pd,
	.dealloc_td = uroce_dealloc_td,
	.dereg_mr = uroce_dereg_mr,
	.destroy_counters = uroce_destroy_counters,
	.destroy_ah = uroce_destroy_ah,
	.destroy_cq = uroce_destroy_cq,
	.destroy_flow = uroce_destroy_flow,
	.destroy_qp = uroce_destroy_qp,
	.destroy_rwq_ind_table = uroce_destroy_rwq_ind_table,
	.destroy_srq = uroce_destroy_srq,
	.destroy_wq = uroce_destroy_wq,
	.detach_mcast = uroce_detach_mcast,
	.free_context = uroce_free_context,
	.free_dm = uroce_free_dm,
	.get_srq_num = uroce_get_srq_num,
	.modify_cq = uroce_modify_cq,
	.modify_qp = uroce_modify_qp,
	.modify_srq = uroce_modify_srq,
	.modify_wq = uroce_modify_wq,
	.open_xrcd = uroce_open_xrcd,
	.poll_cq = uroce_poll_cq,
	.query_device_ex = uroce_query_device_ex,
	.query_port = uroce_query_port,
	.query_qp = uroce_query_qp,
	.query_srq = uroce_query_srq,
	.query_rt_values = uroce_query_rt_values,
	.read_counters = uroce_read_counters,
	.reg_dm_mr = uroce_reg_dm_mr,
	.reg_mr = uroce_reg_mr,
	.req_notify_cq = uroce_req_notify_cq,
	.rereg_mr = uroce_rereg_mr,
	.resize_cq = uroce_resize_cq,
};

/* Added when the HELLO reply has UROCE_HELLO_CAP_WQE_RINGS (post.c). */
const struct verbs_context_ops uroce_post_ops = {
	.post_recv = uroce_post_recv,
	.post_send = uroce_post_send,
	.post_srq_ops = uroce_post_srq_ops,
	.post_srq_recv = uroce_post_srq_recv,
};
