/*
 * open_qp.c - ibv_open_qp(3): a handle of this context to an XRC target
 * (XRC_RECV) QP another context created in the same XRC domain, by number
 * (uroce/abi_share.h OPEN_QP). Kernel uverbs and mlx5 offer the same
 * (ib_uverbs_open_qp; libibverbs cmd_qp.c ibv_cmd_open_qp).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "uroce.h"

/*
 * ibv_open_qp(3): the XRC_RECV QP numbered attr->qp_num, created by any
 * process in the domain of attr->xrcd (the same file). comp_mask must hold
 * IBV_QP_OPEN_ATTR_NUM, _XRCD and _TYPE, qp_type IBV_QPT_XRC_RECV (EINVAL
 * otherwise, as libibverbs' ibv_cmd_open_qp asks; other types EOPNOTSUPP,
 * as mlx5). The QP can be modified and queried through it; ibv_destroy_qp
 * gives the handle back. Errors (errno): EINVAL (no such QP in the domain),
 * ENOMEM.
 */
struct ibv_qp *uroce_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	struct uroce_open_qp_req req = { .qpn = attr->qp_num };
	struct uroce_handle_resp resp;
	struct uroce_qp *qp;
	struct ibv_qp *ibqp;
	int ret;

	if ((attr->comp_mask & need) != need || !attr->xrcd || attr->xrcd->context != context ||
	    (attr->comp_mask & ~(need | IBV_QP_OPEN_ATTR_CONTEXT)))
		return uroce_fail_null(EINVAL);
	if (attr->qp_type != IBV_QPT_XRC_RECV)
		return uroce_fail_null(EOPNOTSUPP);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return uroce_fail_null(ENOMEM);
	req.xrcd_handle = uroce_container_of(attr->xrcd, struct verbs_xrcd, xrcd)->handle;
	ret = uroce_ctl_call(to_uctx(context), UROCE_OP_OPEN_QP, &req, sizeof(req), NULL, 0, &resp,
			     sizeof(resp), NULL, NULL);
	if (ret) {
		free(qp);
		return uroce_fail_null(ret);
	}
	qp->ring_fd = -1;
	qp->opened = true;
	qp->handle = resp.handle;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	ibqp = &qp->vqp.qp;
	ibqp->context = context;
	ibqp->qp_context = attr->qp_context;
	ibqp->handle = resp.handle;
	ibqp->qp_num = attr->qp_num;
	ibqp->qp_type = IBV_QPT_XRC_RECV;
	ibqp->state = IBV_QPS_UNKNOWN;
	qp->vqp.xrcd = uroce_container_of(attr->xrcd, struct verbs_xrcd, xrcd);
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
	return ibqp;
}

int uroce_close_opened_qp(struct uroce_qp *qp)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;
	struct uroce_import_obj_req req = { .type = UROCE_IMPORT_QP, .handle = qp->handle };
	struct uroce_handle_resp resp;
	int ret = uroce_ctl_call(to_uctx(ibqp->context), UROCE_OP_UNIMPORT_OBJ, &req, sizeof(req),
				 NULL, 0, &resp, sizeof(resp), NULL, NULL);

	/* EIO: the daemon is gone; EINVAL: the QP went with its creator's
	 * connection. Either way the handle is gone: free it here. */
	if (ret && ret != EINVAL && !uroce_daemon_gone(ret))
		return ret;
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	uroce_qp_release(qp);
	free(qp);
	return 0;
}
