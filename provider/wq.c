/*
 * wq.c - receive work queues (ibv_create_wq(3), IBV_WQT_RQ), receive WQ
 * indirection tables (ibv_create_rwq_ind_table(3)) and RSS QPs
 * (ibv_create_qp_ex(3) with rx_hash_conf), forwarded to the daemon
 * (uroce/abi_flow.h; docs/raw-packet.md "RSS").
 *
 * A WQ carries a uroce_qp of its own for its RQ ring and wr_id array,
 * numbered wq_num in the context's QP table: its CQEs name wq_num where a
 * QP's name its QPN, so the polls (cq_poll.c) retire them like a QP's
 * receives, as mlx5 finds a WQ by its resource number.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uroce.h"

struct uroce_wq {
	struct ibv_wq wq;
	struct uroce_qp qp; /* the RQ: ring, wr_ids, rq_lock; qp_num = wq_num */
};

static struct uroce_wq *to_uwq(struct ibv_wq *wq)
{
	return (struct uroce_wq *)wq;
}

/* ibv_post_wq_recv: the QP receive path on the WQ's RQ (post.c). On a
 * striding RQ every WR is one SGE covering the WQE's strides (EINVAL, with
 * *bad at the first that is not, nothing of it posted). */
static int uroce_post_wq_recv(struct ibv_wq *wq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct uroce_qp *q = &to_uwq(wq)->qp;

	if (q->log_num_strides) {
		uint64_t need = 1ull << (q->log_num_strides + q->log_stride_bytes);

		for (struct ibv_recv_wr *w = wr; w; w = w->next)
			if (w->num_sge != 1 || w->sg_list[0].length < need) {
				*bad = w;
				return EINVAL;
			}
	}
	return uroce_post_recv(&q->vqp.qp, wr, bad);
}

/*
 * ibv_create_wq, and urocedv_create_wq with a striding RQ (STRIDING not
 * NULL: log2 of the stride size and count, two_byte_shift; max_sge must be
 * 1). Errors: EINVAL (a type other than IBV_WQT_RQ, no PD or CQ or one of
 * another context, max_wr / max_sge 0 or over the device limits, unknown
 * create flags, striding values out of UROCE_STRIDING_*), EOPNOTSUPP
 * (IBV_WQ_FLAGS_PCI_WRITE_END_PADDING; unknown comp_mask bits), ENOMEM.
 * Create flags: IBV_WQ_FLAGS_CVLAN_STRIPPING, SCATTER_FCS, DELAY_DROP
 * (docs/raw-packet.md §5).
 */
struct ibv_wq *uroce_create_wq_striding(struct ibv_context *context, struct ibv_wq_init_attr *attr,
					const struct uroce_wq_striding *striding)
{
	struct uroce_context *ctx = to_uctx(context);
	struct uroce_create_wq_req req;
	struct uroce_create_wq_resp resp;
	struct uroce_wq *w;
	struct ibv_qp *ibqp;
	uint32_t flags = 0;
	int ret;

	if (attr->comp_mask & ~(uint32_t)IBV_WQ_INIT_ATTR_FLAGS)
		return uroce_fail_null(EOPNOTSUPP);
	if (attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS)
		flags = attr->create_flags;
	if (flags & IBV_WQ_FLAGS_PCI_WRITE_END_PADDING) {
		fprintf(stderr, UROCE_LOG_PREFIX "ibv_create_wq: IBV_WQ_FLAGS_PCI_WRITE_END_PADDING is not supported\n");
		return uroce_fail_null(EOPNOTSUPP);
	}
	if (attr->wq_type != IBV_WQT_RQ || !attr->pd || !attr->cq || attr->pd->context != context ||
	    attr->cq->context != context || !attr->max_wr || !attr->max_sge ||
	    attr->max_wr > (uint32_t)ctx->hello.dev.max_qp_wr || attr->max_sge > (uint32_t)ctx->hello.dev.max_sge ||
	    (flags & ~(uint32_t)UROCE_WQ_FLAGS) || (striding && attr->max_sge != 1))
		return uroce_fail_null(EINVAL);
	w = calloc(1, sizeof(*w));
	if (!w)
		return uroce_fail_null(ENOMEM);
	w->qp.ring_fd = -1;
	pthread_spin_init(&w->qp.sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&w->qp.rq_lock, PTHREAD_PROCESS_PRIVATE);
	w->qp.cap = (struct ibv_qp_cap){ .max_send_wr = 1, .max_send_sge = 1, .max_recv_wr = attr->max_wr,
					 .max_recv_sge = attr->max_sge };
	uroce_qp_caps_round(&w->qp.cap);
	ret = uroce_qp_alloc_rings(&w->qp, attr->pd);
	if (ret)
		goto err;
	memset(&req, 0, sizeof(req));
	req.user_handle = (uint64_t)(uintptr_t)&w->wq;
	req.pd_handle = to_upd(attr->pd)->handle;
	req.cq_handle = to_ucq(attr->cq)->handle;
	req.max_wr = attr->max_wr;
	req.max_sge = attr->max_sge;
	req.create_flags = flags;
	if (striding) {
		req.log_num_strides = striding->log_num_strides;
		req.log_stride_bytes = striding->log_stride_bytes;
		req.two_byte_shift = striding->two_byte_shift;
		w->qp.log_num_strides = (uint8_t)striding->log_num_strides;
		w->qp.log_stride_bytes = (uint8_t)striding->log_stride_bytes;
	}
	ret = uroce_ctl_call(ctx, UROCE_OP_CREATE_WQ, &req, sizeof(req), &w->qp.ring_fd, 1, &resp,
			     sizeof(resp), NULL, NULL);
	if (ret)
		goto err;
	close(w->qp.ring_fd);
	w->qp.ring_fd = -1;
	w->qp.handle = resp.handle;
	ibqp = &w->qp.vqp.qp;
	ibqp->context = context;
	ibqp->pd = attr->pd;
	ibqp->recv_cq = attr->cq;
	ibqp->qp_num = resp.wq_num;
	ibqp->qp_type = IBV_QPT_RAW_PACKET;
	/* posting needs only "not RESET" here: a WQ posts in every state */
	ibqp->state = IBV_QPS_INIT;
	w->wq.context = context;
	w->wq.wq_context = attr->wq_context;
	w->wq.pd = attr->pd;
	w->wq.cq = attr->cq;
	w->wq.wq_num = resp.wq_num;
	w->wq.handle = resp.handle;
	w->wq.state = IBV_WQS_RESET;
	w->wq.wq_type = IBV_WQT_RQ;
	w->wq.post_recv = uroce_post_wq_recv;
	pthread_mutex_init(&w->wq.mutex, NULL);
	pthread_cond_init(&w->wq.cond, NULL);
	attr->max_wr = resp.max_wr;
	attr->max_sge = resp.max_sge;
	if (uroce_qp_table_insert(ctx, &w->qp)) {
		struct uroce_handle_req dreq = { .handle = resp.handle };
		struct uroce_handle_resp dresp;

		uroce_ctl_call(ctx, UROCE_OP_DESTROY_WQ, &dreq, sizeof(dreq), NULL, 0, &dresp, sizeof(dresp),
			       NULL, NULL);
		ret = ENOMEM;
		goto err;
	}
	return &w->wq;
err:
	uroce_qp_release(&w->qp);
	free(w);
	return uroce_fail_null(ret);
}

struct ibv_wq *uroce_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *attr)
{
	return uroce_create_wq_striding(context, attr, NULL);
}

/* ibv_modify_wq: STATE and CURR_STATE (RESET, RDY, ERR), FLAGS (the
 * flags_mask bits of CVLAN_STRIPPING, SCATTER_FCS, DELAY_DROP set from
 * flags, for the frames that follow). Errors: EINVAL (unknown mask or flag
 * bits, a wrong curr_wq_state), EOPNOTSUPP (PCI_WRITE_END_PADDING in
 * flags_mask). RESET drops the WQ's unpolled CQEs. */
int uroce_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr)
{
	struct uroce_wq *w = to_uwq(wq);
	struct uroce_modify_wq_req req = { .handle = w->qp.handle, .attr_mask = attr->attr_mask,
					   .wq_state = attr->wq_state, .curr_wq_state = attr->curr_wq_state };
	struct uroce_modify_wq_resp resp;
	int ret;

	if (attr->attr_mask & IBV_WQ_ATTR_FLAGS) {
		req.flags = attr->flags;
		req.flags_mask = attr->flags_mask;
		if (attr->flags_mask & IBV_WQ_FLAGS_PCI_WRITE_END_PADDING)
			fprintf(stderr, UROCE_LOG_PREFIX "ibv_modify_wq: IBV_WQ_FLAGS_PCI_WRITE_END_PADDING is not supported\n");
	}

	ret = uroce_ctl_call(to_uctx(wq->context), UROCE_OP_MODIFY_WQ, &req, sizeof(req), NULL, 0, &resp,
			     sizeof(resp), NULL, NULL);
	if (ret)
		return ret;
	wq->state = (enum ibv_wq_state)resp.wq_state;
	if ((attr->attr_mask & IBV_WQ_ATTR_STATE) && attr->wq_state == IBV_WQS_RESET) {
		uroce_cq_clean(to_ucq(wq->cq), wq->wq_num);
		pthread_spin_lock(&w->qp.rq_lock);
		__atomic_store_n(&w->qp.rq_tail, w->qp.rq_head, __ATOMIC_RELEASE);
		pthread_spin_unlock(&w->qp.rq_lock);
	}
	return 0;
}

/* ibv_destroy_wq: 0, EBUSY (an indirection table holds it), EINVAL. */
int uroce_destroy_wq(struct ibv_wq *wq)
{
	struct uroce_wq *w = to_uwq(wq);
	struct uroce_context *ctx = to_uctx(wq->context);
	int ret = uroce_ctl_destroy(ctx, UROCE_OP_DESTROY_WQ, w->qp.handle);

	if (ret)
		return ret;
	uroce_qp_table_remove(ctx, &w->qp);
	uroce_cq_forget_qp(to_ucq(wq->cq), &w->qp);
	uroce_qp_release(&w->qp);
	pthread_mutex_destroy(&wq->mutex);
	pthread_cond_destroy(&wq->cond);
	free(w);
	return 0;
}

/* ibv_create_rwq_ind_table: 2^log_ind_tbl_size WQs of this context
 * (log size <= UROCE_IND_TABLE_LOG_MAX). Errors: EINVAL, EOPNOTSUPP
 * (comp_mask), ENOMEM. */
struct ibv_rwq_ind_table *uroce_create_rwq_ind_table(struct ibv_context *context,
						     struct ibv_rwq_ind_table_init_attr *attr)
{
	struct uroce_create_ind_table_req req;
	struct uroce_create_ind_table_resp resp;
	struct ibv_rwq_ind_table *t;
	int ret;

	if (attr->comp_mask)
		return uroce_fail_null(EOPNOTSUPP);
	if (attr->log_ind_tbl_size > UROCE_IND_TABLE_LOG_MAX || !attr->ind_tbl)
		return uroce_fail_null(EINVAL);
	memset(&req, 0, sizeof(req));
	req.log_size = attr->log_ind_tbl_size;
	for (uint32_t i = 0; i < 1u << attr->log_ind_tbl_size; i++) {
		if (!attr->ind_tbl[i] || attr->ind_tbl[i]->context != context)
			return uroce_fail_null(EINVAL);
		req.wq_handles[i] = to_uwq(attr->ind_tbl[i])->qp.handle;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return uroce_fail_null(ENOMEM);
	ret = uroce_ctl_call(to_uctx(context), UROCE_OP_CREATE_RWQ_IND_TABLE, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret) {
		free(t);
		return uroce_fail_null(ret);
	}
	t->context = context;
	t->ind_tbl_handle = (int)resp.handle;
	t->ind_tbl_num = (int)resp.ind_tbl_num;
	return t;
}

/* ibv_destroy_rwq_ind_table: 0, EBUSY (an RSS QP uses it), EINVAL. */
int uroce_destroy_rwq_ind_table(struct ibv_rwq_ind_table *t)
{
	int ret = uroce_ctl_destroy(to_uctx(t->context), UROCE_OP_DESTROY_RWQ_IND_TABLE,
				    (uint32_t)t->ind_tbl_handle);

	if (ret)
		return ret;
	free(t);
	return 0;
}

/*
 * An RSS QP (ibv_create_qp_ex with IBV_QP_INIT_ATTR_IND_TABLE and RX_HASH):
 * RAW_PACKET, a PD, no CQs and no queues of its own; it receives through
 * steering rules into the WQs of its table. Errors: EINVAL (another QP type,
 * one of the two masks alone, a table of another context, a key of 0 or
 * more than UROCE_RSS_KEY_MAX bytes, a hash function other than Toeplitz,
 * unknown hash fields), EOPNOTSUPP (IPSEC_SPI), ENOMEM.
 */
struct ibv_qp *uroce_create_rss_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct uroce_context *ctx = to_uctx(context);
	const uint32_t both = IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH;
	struct uroce_create_rss_qp_req req;
	struct uroce_create_qp_resp resp;
	struct uroce_qp *qp;
	struct ibv_qp *ibqp;
	int ret;

	if ((attr->comp_mask & both) != both || attr->qp_type != IBV_QPT_RAW_PACKET ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd || attr->pd->context != context ||
	    !attr->rwq_ind_tbl || attr->rwq_ind_tbl->context != context ||
	    !attr->rx_hash_conf.rx_hash_key_len || attr->rx_hash_conf.rx_hash_key_len > UROCE_RSS_KEY_MAX ||
	    !attr->rx_hash_conf.rx_hash_key)
		return uroce_fail_null(EINVAL);
	memset(&req, 0, sizeof(req));
	req.user_handle = 0;
	req.pd_handle = to_upd(attr->pd)->handle;
	req.ind_table_handle = (uint32_t)attr->rwq_ind_tbl->ind_tbl_handle;
	req.fields_mask = attr->rx_hash_conf.rx_hash_fields_mask;
	req.hash_function = attr->rx_hash_conf.rx_hash_function;
	req.key_len = attr->rx_hash_conf.rx_hash_key_len;
	memcpy(req.key, attr->rx_hash_conf.rx_hash_key, req.key_len);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return uroce_fail_null(ENOMEM);
	qp->ring_fd = -1;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	ibqp = &qp->vqp.qp;
	req.user_handle = (uint64_t)(uintptr_t)ibqp;
	ret = uroce_ctl_call(ctx, UROCE_OP_CREATE_RSS_QP, &req, sizeof(req), NULL, 0, &resp, sizeof(resp),
			     NULL, NULL);
	if (ret) {
		uroce_qp_release(qp);
		free(qp);
		return uroce_fail_null(ret);
	}
	qp->handle = resp.handle;
	ibqp->context = context;
	ibqp->qp_context = attr->qp_context;
	ibqp->pd = attr->pd;
	ibqp->handle = resp.handle;
	ibqp->qp_num = resp.qpn;
	ibqp->state = IBV_QPS_RESET;
	ibqp->qp_type = IBV_QPT_RAW_PACKET;
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
	memset(&attr->cap, 0, sizeof(attr->cap));
	if (uroce_qp_table_insert(ctx, qp)) {
		struct uroce_handle_req dreq = { .handle = qp->handle };
		struct uroce_destroy_qp_resp dresp;

		uroce_ctl_call(ctx, UROCE_OP_DESTROY_QP, &dreq, sizeof(dreq), NULL, 0, &dresp, sizeof(dresp),
			       NULL, NULL);
		pthread_mutex_destroy(&ibqp->mutex);
		pthread_cond_destroy(&ibqp->cond);
		uroce_qp_release(qp);
		free(qp);
		return uroce_fail_null(ENOMEM);
	}
	return ibqp;
}
