/*
 * mw.c - memory windows (IBTA 10.6.7): ibv_alloc_mw(3), ibv_dealloc_mw(3),
 * ibv_bind_mw(3), and the BIND_MW / LOCAL_INV send WQEs of ibv_post_send(3)
 * in the layout of include/uroce/abi_ring.h. The window's state lives in the
 * daemon (ALLOC_MW / DEALLOC_MW); binds and invalidations run on the QP's
 * send queue in order and report through its CQ.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce.h"

/*
 * ibv_alloc_mw: a window of TYPE (IBV_MW_TYPE_1 or IBV_MW_TYPE_2) in PD.
 * mw->rkey is the daemon's key (type 2: not usable until a bind gives it a
 * variant), mw->handle the daemon's handle (BIND_MW WQEs name it). Errors
 * (errno): EINVAL (another type), ENOMEM (max_mw or the uid's quota).
 */
struct ibv_mw *uroce_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct uroce_alloc_mw_req req = {
		.pd_handle = to_upd(ibpd)->handle,
		.type = (uint32_t)type,
	};
	struct uroce_alloc_mw_resp resp;
	struct ibv_mw *mw;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
		return uroce_fail_null(EINVAL);
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return uroce_fail_null(ENOMEM);
	ret = uroce_ctl_call(to_uctx(ibpd->context), UROCE_OP_ALLOC_MW, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret) {
		free(mw);
		return uroce_fail_null(ret);
	}
	mw->context = ibpd->context;
	mw->pd = ibpd;
	mw->rkey = resp.rkey;
	mw->handle = resp.handle;
	mw->type = type;
	return mw;
}

/* ibv_dealloc_mw: unbinds a bound window, then frees it. 0 or EINVAL. */
int uroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret = uroce_ctl_destroy(to_uctx(mw->context), UROCE_OP_DEALLOC_MW, mw->handle);

	if (ret)
		return ret;
	free(mw);
	return 0;
}

/*
 * ibv_bind_mw (type 1; libibverbs has checked the type and the MR's PD):
 * posts a BIND_MW WQE with the new rkey ibv_inc_rkey(mw->rkey), as mlx5
 * does, and sets mw->rkey to it once posted. Errors of the post
 * (ibv_post_send(3)); EINVAL for ZERO_BASED access. A bind the daemon
 * refuses completes with IBV_WC_MW_BIND_ERR and the QP enters ERR.
 */
int uroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr, *bad = NULL;
	int ret;

	if (mw_bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return errno = EINVAL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = uroce_post_send_flags(qp, &wr, &bad, UROCE_WQE_BIND_TYPE1);
	if (ret)
		return errno = ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
