/*
 * tm.c - tag matching, the provider's half (ibv_create_srq_ex(3) with
 * IBV_SRQT_TM, ibv_post_srq_ops(3), the TM completions; docs/tag-matching.md).
 *
 * The daemon keeps the tag list and matches messages against it; the
 * provider keeps what the CQEs do not carry, as mlx5's provider does: per
 * list entry the receive's wr_id and how many CQEs will still name it
 * (the receive's, and a signalled ADD's or DEL's own), and the wr_ids of
 * signalled list operations in posting order (their CQEs come in that
 * order). An entry is free again once no CQE will name it. Each list
 * operation is one TM_OP call (uroce/abi_tm.h) that has written its CQE
 * before it returns.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce.h"

struct uroce_tm_tag {
	uint64_t wr_id;        /* the receive's (tm.add.recv_wr_id) */
	uint32_t expect_cqe;   /* CQEs still to name this entry */
	uint16_t phase_cnt;    /* software's unexpected count when added */
};

struct uroce_tm_op {
	uint64_t wr_id;
	int32_t index;         /* ADD / DEL: the entry; SYNC: -1 */
};

struct uroce_tm {
	uint32_t max_num_tags;
	struct uroce_tm_tag *tags;     /* max_num_tags + 1 entries */
	uint32_t *free_idx, nfree;     /* stack of free entries */
	struct uroce_tm_op *ops;       /* ring of max_ops signalled operations */
	uint32_t max_ops, op_head, op_tail;
	uint16_t unexp_in;             /* unexpected CQEs polled */
	uint16_t unexp_out;            /* the count software last reported */
};

/* mlx5's MLX5_TM_MAX_SYNC_DIFF: more unexpected messages than this not yet
 * reported and every completion asks for a SYNC. */
#define UROCE_TM_MAX_SYNC_DIFF 0x3fff

int uroce_tm_init(struct uroce_srq *srq, uint32_t max_num_tags, uint32_t max_ops)
{
	struct uroce_tm *tm = calloc(1, sizeof(*tm));

	if (!tm)
		return ENOMEM;
	srq->tm = tm;
	tm->max_num_tags = max_num_tags;
	tm->max_ops = max_ops;
	tm->tags = calloc(max_num_tags + 1, sizeof(*tm->tags));
	tm->free_idx = calloc(max_num_tags + 1, sizeof(*tm->free_idx));
	tm->ops = calloc(max_ops, sizeof(*tm->ops));
	if (!tm->tags || !tm->free_idx || !tm->ops)
		return ENOMEM;
	/* entries handed out lowest first */
	for (uint32_t i = 0; i <= max_num_tags; i++)
		tm->free_idx[tm->nfree++] = max_num_tags - i;
	return 0;
}

void uroce_tm_release(struct uroce_srq *srq)
{
	struct uroce_tm *tm = srq->tm;

	if (!tm)
		return;
	free(tm->tags);
	free(tm->free_idx);
	free(tm->ops);
	free(tm);
	srq->tm = NULL;
}

/* One CQE less will name entry I; the last frees it. */
static void tag_put(struct uroce_tm *tm, uint32_t i)
{
	if (i > tm->max_num_tags || !tm->tags[i].expect_cqe)
		return;
	if (!--tm->tags[i].expect_cqe)
		tm->free_idx[tm->nfree++] = i;
}

/* CREATE_TM_SRQ for create_basic (srq.c). */
int uroce_tm_srq_call(struct uroce_context *ctx, struct uroce_srq *srq, struct ibv_pd *pd,
		      struct ibv_cq *cq, struct uroce_create_srq_resp *resp)
{
	struct uroce_create_tm_srq_req req;

	memset(&req, 0, sizeof(req));
	req.user_handle = (uint64_t)(uintptr_t)&srq->vsrq.srq;
	req.pd_handle = to_upd(pd)->handle;
	req.cq_handle = to_ucq(cq)->handle;
	req.max_wr = srq->max_wr;
	req.max_sge = srq->max_sge;
	req.max_num_tags = srq->tm->max_num_tags;
	req.max_ops = srq->tm->max_ops;
	return uroce_ctl_call(ctx, UROCE_OP_CREATE_TM_SRQ, &req, sizeof(req), &srq->ring_fd, 1, resp,
			      sizeof(*resp), NULL, NULL);
}

/* Checks WR against the SRQ's state before anything is changed: 0 or errno. */
static int check_op(const struct uroce_tm *tm, const struct ibv_ops_wr *wr)
{
	if (wr->flags & ~(uint32_t)(IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC))
		return EINVAL;
	if ((wr->flags & IBV_OPS_SIGNALED) && tm->op_tail - tm->op_head >= tm->max_ops)
		return ENOMEM;
	switch (wr->opcode) {
	case IBV_WR_TAG_ADD:
		if ((uint32_t)wr->tm.add.num_sge > UROCE_TM_MAX_SGE || (wr->tm.add.num_sge && !wr->tm.add.sg_list))
			return EINVAL;
		/* one entry more than max_num_tags, as mlx5's list */
		return tm->nfree <= 1 ? ENOMEM : 0;
	case IBV_WR_TAG_DEL:
		return wr->tm.handle > tm->max_num_tags || !tm->tags[wr->tm.handle].expect_cqe ?
		       EINVAL : 0;
	case IBV_WR_TAG_SYNC:
		return 0;
	}
	return EINVAL;
}

/* One list operation: the provider's state, then TM_OP; undone if the
 * daemon refuses it. */
static int post_one(struct uroce_srq *srq, struct ibv_ops_wr *wr)
{
	struct uroce_context *ctx = to_uctx(srq->vsrq.srq.context);
	struct uroce_tm *tm = srq->tm;
	struct uroce_tm_op_req req;
	struct uroce_tm_op_resp resp;
	bool signaled = wr->flags & IBV_OPS_SIGNALED;
	uint16_t old_out = tm->unexp_out;
	int32_t index = -1;
	int ret;

	ret = check_op(tm, wr);
	if (ret)
		return ret;
	memset(&req, 0, sizeof(req));
	req.handle = srq->handle;
	req.opcode = wr->opcode;
	req.flags = wr->flags;
	req.unexpected_cnt = wr->tm.unexpected_cnt;
	if (wr->flags & IBV_OPS_TM_SYNC)
		tm->unexp_out = (uint16_t)wr->tm.unexpected_cnt;
	if (wr->opcode == IBV_WR_TAG_ADD) {
		index = (int32_t)tm->free_idx[--tm->nfree];
		tm->tags[index].wr_id = wr->tm.add.recv_wr_id;
		tm->tags[index].phase_cnt = tm->unexp_out;
		tm->tags[index].expect_cqe = signaled ? 2 : 1;
		req.tag = wr->tm.add.tag;
		req.mask = wr->tm.add.mask;
		if (wr->tm.add.num_sge) {
			req.addr = wr->tm.add.sg_list[0].addr;
			req.length = wr->tm.add.sg_list[0].length;
			req.lkey = wr->tm.add.sg_list[0].lkey;
		}
	} else if (wr->opcode == IBV_WR_TAG_DEL) {
		index = (int32_t)wr->tm.handle;
		if (signaled)
			tm->tags[index].expect_cqe++;
	}
	req.index = index < 0 ? 0 : (uint32_t)index;
	if (signaled)
		tm->ops[tm->op_tail++ % tm->max_ops] = (struct uroce_tm_op){ wr->wr_id, index };
	ret = uroce_ctl_call(ctx, UROCE_OP_TM_OP, &req, sizeof(req), NULL, 0, &resp, sizeof(resp),
			     NULL, NULL);
	if (ret) {
		if (signaled)
			tm->op_tail--;
		tm->unexp_out = old_out;
		if (wr->opcode == IBV_WR_TAG_ADD) {
			tm->tags[index].expect_cqe = 0;
			tm->free_idx[tm->nfree++] = (uint32_t)index;
		} else if (wr->opcode == IBV_WR_TAG_DEL && signaled) {
			tm->tags[index].expect_cqe--;
		}
		return ret;
	}
	if (wr->opcode == IBV_WR_TAG_ADD)
		wr->tm.handle = (uint32_t)index;
	/* an unsignalled DEL: no CQE for it, and none for the receive (as mlx5) */
	if (wr->opcode == IBV_WR_TAG_DEL && !signaled)
		tag_put(tm, (uint32_t)index);
	return 0;
}

/*
 * ibv_post_srq_ops: TAG_ADD (num_sge 0..1; wr->tm.handle set), TAG_DEL
 * (tm.handle of an ADD not yet completed by its receive), TAG_SYNC;
 * flags IBV_OPS_SIGNALED (a CQE: IBV_WC_TM_ADD / DEL / SYNC) and
 * IBV_OPS_TM_SYNC (tm.unexpected_cnt reported). Returns 0, or with *bad_wr
 * at the first WR not posted: EINVAL (not a tag-matching SRQ, an unknown
 * opcode or flag, num_sge > 1, a DEL of a handle not in the list, an
 * unexpected_cnt above the device's count), ENOMEM (max_num_tags tags
 * listed, or max_ops signalled operations not yet polled).
 */
int uroce_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr, struct ibv_ops_wr **bad_wr)
{
	struct uroce_srq *srq = to_usrq(ibsrq);
	int ret = 0;

	if (!srq->tm) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&srq->lock);
	for (; wr; wr = wr->next) {
		ret = post_one(srq, wr);
		if (ret)
			break;
	}
	pthread_spin_unlock(&srq->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/*
 * The wr_id of a tag-matching CQE of SRQ (cqe->app TAG_MATCHING), its
 * status into *status (kept when already an error) and whether software
 * must SYNC into *sync_req; frees what the CQE completes. The rules are
 * mlx5's (rdma-core providers/mlx5/cq.c): the list operations' CQEs in
 * posting order, a DEL that found its tag consumed IBV_WC_TM_ERR, an
 * ADD/DEL whose entry was added at another unexpected count than the
 * device's asks for a SYNC; a matched receive names its entry in app_info;
 * unexpected and no-tag receives an SRQ WQE in wqe_counter.
 */
uint64_t uroce_tm_retire(struct uroce_srq *srq, const struct mlx5_cqe64 *cqe,
			 enum ibv_wc_status *status, bool *sync_req)
{
	struct uroce_tm *tm = srq->tm;
	uint16_t info = be16toh(cqe->app_info);
	uint64_t wr_id = 0;

	*sync_req = false;
	if (!tm)
		return 0;
	pthread_spin_lock(&srq->lock);
	switch (cqe->app_op) {
	case UROCE_TM_APP_OP_CONSUMED:
	case UROCE_TM_APP_OP_EXPECTED:
	case UROCE_TM_APP_OP_CONSUMED_MSG:
		if (info > tm->max_num_tags || !tm->tags[info].expect_cqe) {
			*status = IBV_WC_GENERAL_ERR;
			break;
		}
		wr_id = tm->tags[info].wr_id;
		if (cqe->app_op != UROCE_TM_APP_OP_CONSUMED)
			tag_put(tm, info);
		break;
	case UROCE_TM_APP_OP_APPEND:
	case UROCE_TM_APP_OP_REMOVE:
	case UROCE_TM_APP_OP_NOOP: {
		struct uroce_tm_op *op;
		bool ok = be32toh(cqe->tm_cqe.success) & UROCE_TMC_SUCCESS;

		if (tm->op_head == tm->op_tail) {
			*status = IBV_WC_GENERAL_ERR;
			break;
		}
		op = &tm->ops[tm->op_head++ % tm->max_ops];
		wr_id = op->wr_id;
		if (cqe->app_op == UROCE_TM_APP_OP_REMOVE && !ok && *status == IBV_WC_SUCCESS)
			*status = IBV_WC_TM_ERR;
		if (op->index < 0)
			break;
		if (be16toh(cqe->tm_cqe.hw_phase_cnt) != tm->tags[op->index].phase_cnt)
			*sync_req = true;
		tag_put(tm, (uint32_t)op->index);
		/* removed: no receive CQE will name it */
		if (cqe->app_op == UROCE_TM_APP_OP_REMOVE && ok)
			tag_put(tm, (uint32_t)op->index);
		break;
	}
	case UROCE_TM_APP_OP_UNEXPECTED:
		tm->unexp_in++;
		if ((uint16_t)(tm->unexp_in - tm->unexp_out) > UROCE_TM_MAX_SYNC_DIFF)
			*sync_req = true;
		/* fall through */
	case UROCE_TM_APP_OP_NO_TAG:
		pthread_spin_unlock(&srq->lock);
		return uroce_srq_complete(srq, be16toh(cqe->wqe_counter));
	default:
		*status = IBV_WC_GENERAL_ERR;
	}
	pthread_spin_unlock(&srq->lock);
	return wr_id;
}
