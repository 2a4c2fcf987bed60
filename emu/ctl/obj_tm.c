/*
 * obj_tm.c - tag-matching SRQs: CREATE_TM_SRQ and TM_OP (uroce/abi_tm.h,
 * ibv_create_srq_ex(3) IBV_SRQT_TM, ibv_post_srq_ops(3)). The list and the
 * matching live in the engine (emu/xport/tm.c); here the objects, the
 * checks of the messages and the CQEs of the list operations.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/log.h"
#include "emu/nic/cq_ring.h"
#include "emu/nic/device.h"
#include "emu/nic/hca_clock.h"
#include "emu/xport/xport.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

int op_create_tm_srq(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_tm_srq_req *req = call->req;
	struct uroce_create_srq_resp *resp = call->resp;
	struct ctl_cq *cq = objtab_get(&c->cqs, req->cq_handle);
	struct ctl_pd *pd = objtab_get(&c->pds, req->pd_handle);
	struct ctl_srq *srq;
	int rc;

	if (!cq || !pd || !req->max_num_tags || req->max_num_tags > UROCE_TM_MAX_NUM_TAGS ||
	    !req->max_ops || req->max_ops > UROCE_TM_MAX_OPS)
		return EINVAL;
	rc = srq_new_on_cq(c, call, pd, cq, req->user_handle, req->max_wr, req->max_sge, &srq);
	if (rc)
		return rc;
	/* entries 0..max_num_tags, as mlx5's tm_list */
	rc = xport_srq_set_tm(srq->xsrq, req->max_num_tags + 1);
	if (rc) {
		srq_free(c, srq);
		return rc;
	}
	resp->handle = srq->handle;
	resp->srqn = srq->srqn;
	ulog_object("client#%u srqn 0x%x is a tag-matching SRQ of %u tags", c->id, srq->srqn,
		    req->max_num_tags);
	return 0;
}

/* The CQE of a signalled list operation (docs/cqe-format.md "Tag matching"). */
static void tm_op_cqe(struct ctl_client *c, struct ctl_srq *srq, uint8_t app_op, bool success,
		      uint16_t hw_cnt)
{
	struct mlx5_cqe64 cqe;
	int rc;

	memset(&cqe, 0, sizeof(cqe));
	cqe.tm_cqe.success = htobe32(success ? UROCE_TMC_SUCCESS : 0);
	cqe.tm_cqe.hw_phase_cnt = htobe16(hw_cnt);
	cqe.srqn_uidx = htobe32(srq->srqn & 0xFFFFFF);
	cqe.app = UROCE_CQE_APP_TAG_MATCHING;
	cqe.app_op = app_op;
	cqe.timestamp = htobe64(hca_clock_now(&c->dev->clock));
	cqe.op_own = MLX5_CQE_NO_PACKET << 4;
	rc = cq_push(srq->cq, &cqe);
	if (rc)
		ulog(ULOG_WARN, "client#%u srqn 0x%x: tag list completion lost: %s", c->id,
		     srq->srqn, strerror(rc));
}

int op_tm_op(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_tm_op_req *req = call->req;
	struct uroce_tm_op_resp *resp = call->resp;
	struct ctl_srq *srq = objtab_get(&c->srqs, req->handle);
	struct xport_tm_op op = {
		.opcode = req->opcode,
		.index = req->index,
		.sync = req->flags & IBV_OPS_TM_SYNC,
		.sw_cnt = (uint16_t)req->unexpected_cnt,
		.tag = req->tag,
		.mask = req->mask,
		.sge = { .addr = req->addr, .length = (uint32_t)req->length, .lkey = req->lkey },
	};
	static const uint8_t app_op[] = {
		[IBV_WR_TAG_ADD] = UROCE_TM_APP_OP_APPEND,
		[IBV_WR_TAG_DEL] = UROCE_TM_APP_OP_REMOVE,
		[IBV_WR_TAG_SYNC] = UROCE_TM_APP_OP_NOOP,
	};
	bool success;
	uint16_t hw_cnt;
	int rc;

	if (!srq || !srq->cq || req->reserved || req->reserved1 || req->length > UINT32_MAX ||
	    req->opcode > IBV_WR_TAG_SYNC ||
	    (req->flags & ~(uint32_t)(IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC)))
		return EINVAL;
	rc = xport_tm_op(srq->xsrq, &op, &success, &hw_cnt);
	if (rc) {
		ulog(ULOG_DEBUG, "client#%u srqn 0x%x: tag list op %u index %u refused: %s", c->id,
		     srq->srqn, req->opcode, req->index, strerror(rc));
		return rc;
	}
	if (req->flags & IBV_OPS_SIGNALED)
		tm_op_cqe(c, srq, app_op[req->opcode], success, hw_cnt);
	resp->hw_cnt = hw_cnt;
	return 0;
}
