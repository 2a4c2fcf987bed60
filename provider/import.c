/*
 * import.c - shared contexts: ibv_import_device(3), ibv_import_pd(3),
 * ibv_import_mr(3) and their unimport calls (ibv_import_dm(3) is in dm.c).
 *
 * libibverbs' ibv_import_device(cmd_fd) fstat()s the fd, picks the device
 * whose sysfs `dev` equals its st_rdev (uroce's cmd_fd is /dev/null, 1:3,
 * docs/discovery.md), calls the provider's import_context and then asks the
 * kernel for an async event fd with the ioctl UVERBS_METHOD_ASYNC_EVENT_ALLOC
 * on cmd_fd (libibverbs/device.c, cmd_device.c ibv_cmd_alloc_async_fd).
 * Here import_context opens a connection of its own to the daemon (HELLO:
 * this process's memory, doorbell, clock) and links it with IMPORT_CONTEXT
 * to the connection that named the same open file (uroce/abi_share.h);
 * libibverbs' ioctl is hooked in its GOT (got_hook.h) to hand over the
 * async fd of that HELLO. Imported PDs and MRs are handles of the importer
 * (IMPORT_OBJ); ibv_pd.handle and ibv_mr.handle stay the original ones, as
 * with mlx5 (providers/mlx5/verbs.c mlx5_import_pd, libibverbs cmd_mr.c
 * ibv_cmd_query_mr: addr NULL, lkey, rkey, length).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "got_hook.h"
#include "uroce.h"

typedef int (*ioctl_fn)(int fd, unsigned long request, void *arg);
static ioctl_fn orig_ioctl;
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;
static int hook_err;
static char hook_why[200];

/* cmd_fd -> the async fd the next ASYNC_EVENT_ALLOC on it returns. */
#define MAX_ARMED 16
static struct {
	int cmd_fd;
	int async_fd;
} armed[MAX_ARMED];
static int n_armed;
static pthread_mutex_t armed_lock = PTHREAD_MUTEX_INITIALIZER;

/* The armed async fd of cmd_fd, taken out of the table; -1 if none. */
static int take_armed(int cmd_fd)
{
	int fd = -1;

	pthread_mutex_lock(&armed_lock);
	for (int i = 0; i < n_armed; i++) {
		if (armed[i].cmd_fd == cmd_fd) {
			fd = armed[i].async_fd;
			armed[i] = armed[--n_armed];
			break;
		}
	}
	pthread_mutex_unlock(&armed_lock);
	return fd;
}

static int arm(int cmd_fd, int async_fd)
{
	int ret = 0;

	take_armed(cmd_fd);
	pthread_mutex_lock(&armed_lock);
	if (n_armed < MAX_ARMED)
		armed[n_armed++] = (typeof(armed[0])){ cmd_fd, async_fd };
	else
		ret = EAGAIN;
	pthread_mutex_unlock(&armed_lock);
	return ret;
}

/* libibverbs' ioctl: answers ASYNC_EVENT_ALLOC on an importing cmd_fd with
 * the async fd of its HELLO; everything else goes to libc. */
static int hook_ioctl(int fd, unsigned long request, void *arg)
{
	struct ib_uverbs_ioctl_hdr *hdr = arg;
	int afd;

	if (request != RDMA_VERBS_IOCTL || !hdr || hdr->object_id != UVERBS_OBJECT_ASYNC_EVENT ||
	    hdr->method_id != UVERBS_METHOD_ASYNC_EVENT_ALLOC)
		return orig_ioctl(fd, request, arg);
	afd = take_armed(fd);
	if (afd < 0)
		return orig_ioctl(fd, request, arg);
	for (unsigned int i = 0; i < hdr->num_attrs; i++) {
		if (hdr->attrs[i].attr_id == UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE) {
			hdr->attrs[i].data_s64 = afd;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

static void install_hook(void)
{
	const struct uroce_got_patch p[] = {
		{ "ioctl", (void *)hook_ioctl, (void **)&orig_ioctl },
	};

	hook_err = uroce_got_patch_lib((const void *)uroce_verbs_register_driver, p, 1, hook_why,
				       sizeof(hook_why));
}

int uroce_import_attach(struct uroce_context *ctx, int cmd_fd, int async_fd)
{
	struct uroce_hdr req;
	struct uroce_handle_resp resp;
	int ret;

	pthread_once(&hook_once, install_hook);
	if (hook_err) {
		fprintf(stderr, UROCE_LOG_PREFIX "ibv_import_device is unavailable: libibverbs' "
			"ioctl cannot be intercepted: %s\n", hook_why);
		return EOPNOTSUPP;
	}
	ret = uroce_ctl_call(ctx, UROCE_OP_IMPORT_CONTEXT, &req, sizeof(req), &cmd_fd, 1, &resp,
			     sizeof(resp), NULL, NULL);
	if (ret == EOPNOTSUPP)
		fprintf(stderr, UROCE_LOG_PREFIX "ibv_import_device: the daemon cannot compare "
			"files (kcmp(2)), see its log\n");
	if (ret)
		return ret;
	return arm(cmd_fd, async_fd);
}

struct verbs_context *uroce_import_context(struct ibv_device *ibdev, int cmd_fd)
{
	return uroce_open_context(ibdev, cmd_fd, true);
}

/* IMPORT_OBJ of TYPE/HANDLE: 0 or an errno; rfd/nrfd as uroce_ctl_call. */
int uroce_import_obj(struct ibv_context *context, uint32_t type, uint32_t handle,
		     struct uroce_import_obj_resp *resp, int *rfd, int *nrfd)
{
	struct uroce_import_obj_req req = { .type = type, .handle = handle };

	return uroce_ctl_call(to_uctx(context), UROCE_OP_IMPORT_OBJ, &req, sizeof(req), NULL, 0,
			      resp, sizeof(*resp), rfd, nrfd);
}

void uroce_unimport_obj(struct ibv_context *context, uint32_t type, uint32_t handle)
{
	struct uroce_import_obj_req req = { .type = type, .handle = handle };
	struct uroce_handle_resp resp;
	int ret = uroce_ctl_call(to_uctx(context), UROCE_OP_UNIMPORT_OBJ, &req, sizeof(req), NULL,
				 0, &resp, sizeof(resp), NULL, NULL);

	if (ret && !uroce_daemon_gone(ret))
		fprintf(stderr, UROCE_LOG_PREFIX "unimport of handle %u refused: %s\n", handle,
			strerror(ret));
}

/* ibv_import_pd(3). Errors (errno): EINVAL (context not imported, no such
 * PD in the imported context), ENOMEM. */
struct ibv_pd *uroce_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	struct uroce_import_obj_resp resp;
	struct uroce_pd *pd = calloc(1, sizeof(*pd));
	int ret;

	if (!pd)
		return uroce_fail_null(ENOMEM);
	ret = uroce_import_obj(context, UROCE_IMPORT_PD, pd_handle, &resp, NULL, NULL);
	if (ret) {
		free(pd);
		return uroce_fail_null(ret);
	}
	pd->handle = resp.handle;
	pd->ibv_pd.context = context;
	pd->ibv_pd.handle = pd_handle;
	return &pd->ibv_pd;
}

/* ibv_unimport_pd(3): forgets the import, the PD stays. */
void uroce_unimport_pd(struct ibv_pd *ibpd)
{
	uroce_unimport_obj(ibpd->context, UROCE_IMPORT_PD, to_upd(ibpd)->handle);
	free(to_upd(ibpd));
}

/* ibv_import_mr(3): addr NULL, lkey/rkey/length of the MR. Errors as
 * uroce_import_pd. */
struct ibv_mr *uroce_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct uroce_import_obj_resp resp;
	struct uroce_mr *mr = calloc(1, sizeof(*mr));
	int ret;

	if (!mr)
		return uroce_fail_null(ENOMEM);
	ret = uroce_import_obj(pd->context, UROCE_IMPORT_MR, mr_handle, &resp, NULL, NULL);
	if (ret) {
		free(mr);
		return uroce_fail_null(ret);
	}
	mr->handle = resp.handle;
	mr->vmr.mr_type = IBV_MR_TYPE_IMPORTED_MR;
	mr->vmr.ibv_mr.context = pd->context;
	mr->vmr.ibv_mr.pd = pd;
	mr->vmr.ibv_mr.addr = NULL;
	mr->vmr.ibv_mr.length = resp.length;
	mr->vmr.ibv_mr.handle = mr_handle;
	mr->vmr.ibv_mr.lkey = resp.lkey;
	mr->vmr.ibv_mr.rkey = resp.rkey;
	return &mr->vmr.ibv_mr;
}

void uroce_unimport_mr(struct ibv_mr *ibmr)
{
	struct uroce_mr *mr = uroce_container_of(ibmr, struct uroce_mr, vmr.ibv_mr);

	uroce_unimport_obj(ibmr->context, UROCE_IMPORT_MR, mr->handle);
	free(mr);
}

