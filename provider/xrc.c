/*
 * xrc.c - XRC domains and XRC receive QPs (ibv_open_xrcd(3),
 * ibv_close_xrcd(3), ibv_create_qp_ex(3) with IBV_QPT_XRC_RECV), as mlx5
 * offers them; the daemon keeps the domains (include/uroce/abi_xrc.h,
 * docs/xrc.md). XRC SRQs are srq.c's, XRC send QPs qp.c's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "uroce.h"

#define UROCE_XRCD_ATTRS (IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS)

/*
 * ibv_open_xrcd: attr->fd -1 opens a private domain; a file's descriptor
 * opens the domain of its inode, shared with every process that opens the
 * same file: created with O_CREAT in oflags, else EAGAIN when none exists;
 * EINVAL with O_EXCL when one does. Both IBV_XRCD_INIT_ATTR_FD and _OFLAGS
 * are required (EINVAL), other comp_mask bits EOPNOTSUPP (the kernel's
 * ib_uverbs_open_xrcd rules, which mlx5 inherits); ENOMEM at 1024 domains.
 */
struct ibv_xrcd *uroce_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	struct uroce_open_xrcd_req req;
	struct uroce_open_xrcd_resp resp;
	struct verbs_xrcd *x;
	int fd = attr->fd, ret;

	if (attr->comp_mask & ~(uint32_t)UROCE_XRCD_ATTRS)
		return uroce_fail_null(EOPNOTSUPP);
	if ((attr->comp_mask & UROCE_XRCD_ATTRS) != UROCE_XRCD_ATTRS)
		return uroce_fail_null(EINVAL);
	x = calloc(1, sizeof(*x));
	if (!x)
		return uroce_fail_null(ENOMEM);
	memset(&req, 0, sizeof(req));
	req.oflags = (uint32_t)attr->oflags;
	ret = uroce_ctl_call(to_uctx(context), UROCE_OP_OPEN_XRCD, &req, sizeof(req),
			     fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0, &resp, sizeof(resp), NULL, NULL);
	if (ret) {
		free(x);
		return uroce_fail_null(ret);
	}
	x->xrcd.context = context;
	x->comp_mask = 0;
	x->handle = resp.handle;
	return &x->xrcd;
}

/* ibv_close_xrcd: EBUSY while an XRC SRQ or XRC_RECV QP of this process
 * was created in it; the domain lives on while other processes hold it. */
int uroce_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct verbs_xrcd *x = uroce_container_of(xrcd, struct verbs_xrcd, xrcd);
	int ret = uroce_ctl_destroy(to_uctx(xrcd->context), UROCE_OP_CLOSE_XRCD, x->handle);

	if (ret)
		return ret;
	free(x);
	return 0;
}

/* An XRC send QP has no receive side (as mlx5): its receive CQ at the
 * daemon is its send CQ, no SRQ, no receive caps. Other QPs: unchanged. */
void uroce_xrc_send_attr(struct ibv_qp_init_attr_ex *attr, struct ibv_cq **rcq,
			 struct ibv_srq **srq)
{
	if (attr->qp_type != IBV_QPT_XRC_SEND)
		return;
	*rcq = attr->send_cq;
	*srq = NULL;
	attr->cap.max_recv_wr = attr->cap.max_recv_sge = 0;
}

/*
 * An IBV_QPT_XRC_RECV QP (ibv_create_qp_ex with IBV_QP_INIT_ATTR_XRCD): no
 * PD, CQs, SRQ or queues (their fields are ignored, caps come back 0, as
 * on mlx5); requests name the XRC SRQ that receives them. EINVAL without
 * an XRCD of this context; ENOMEM.
 */
struct ibv_qp *uroce_create_xrc_recv_qp(struct ibv_context *context,
					struct ibv_qp_init_attr_ex *attr)
{
	struct uroce_context *ctx = to_uctx(context);
	struct uroce_create_xrc_qp_req req;
	struct uroce_create_qp_resp resp;
	struct uroce_qp *qp;
	struct ibv_qp *ibqp;
	int ret;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
	    attr->xrcd->context != context)
		return uroce_fail_null(EINVAL);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return uroce_fail_null(ENOMEM);
	qp->ring_fd = -1;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	memset(&req, 0, sizeof(req));
	ibqp = &qp->vqp.qp;
	req.user_handle = (uint64_t)(uintptr_t)ibqp;
	req.xrcd_handle = uroce_container_of(attr->xrcd, struct verbs_xrcd, xrcd)->handle;
	ret = uroce_ctl_call(ctx, UROCE_OP_CREATE_XRC_QP, &req, sizeof(req), NULL, 0, &resp,
			     sizeof(resp), NULL, NULL);
	if (ret)
		goto err;
	qp->handle = resp.handle;
	ibqp->context = context;
	ibqp->qp_context = attr->qp_context;
	ibqp->handle = resp.handle;
	ibqp->qp_num = resp.qpn;
	ibqp->state = IBV_QPS_RESET;
	ibqp->qp_type = IBV_QPT_XRC_RECV;
	ibqp->events_completed = 0;
	qp->vqp.xrcd = uroce_container_of(attr->xrcd, struct verbs_xrcd, xrcd);
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
	memset(&attr->cap, 0, sizeof(attr->cap));
	ret = uroce_qp_publish(ctx, qp);
	if (ret)
		goto err;
	return ibqp;
err:
	uroce_qp_release(qp);
	free(qp);
	return uroce_fail_null(ret);
}
