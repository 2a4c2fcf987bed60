/*
 * dv_wq.c - urocedv's striding (multi-packet) receive WQs: creation shaped
 * like mlx5dv_create_wq with MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ, its
 * limits, and where a completion's frame sits in the WQE (urocedv.h,
 * urocedv(3); the CQE fields in docs/cqe-format.md §7).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "cqe_decode.h"
#include "uroce.h"

/* urocedv.h */
UROCE_DV_EXPORT int urocedv_query_striding_rq_caps(struct ibv_context *context,
						   struct urocedv_striding_rq_caps *caps)
{
	if (!context || !caps)
		return EINVAL;
	if (!uroce_is_device(context->device))
		return EOPNOTSUPP;
	*caps = (struct urocedv_striding_rq_caps){
		.min_single_stride_log_num_of_bytes = UROCE_STRIDING_LOG_STRIDE_MIN,
		.max_single_stride_log_num_of_bytes = UROCE_STRIDING_LOG_STRIDE_MAX,
		.min_single_wqe_log_num_of_strides = UROCE_STRIDING_LOG_NUM_MIN,
		.max_single_wqe_log_num_of_strides = UROCE_STRIDING_LOG_NUM_MAX,
		.supported_qpts = 1u << IBV_QPT_RAW_PACKET,
	};
	return 0;
}

/* urocedv.h */
UROCE_DV_EXPORT struct ibv_wq *urocedv_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *attr,
						 struct urocedv_wq_init_attr *dv)
{
	struct uroce_wq_striding st;

	if (!context || !attr)
		return uroce_fail_null(EINVAL);
	if (!uroce_is_device(context->device)) {
		fprintf(stderr, UROCE_LOG_PREFIX "urocedv_create_wq: %s is not a uroce device\n",
			ibv_get_device_name(context->device));
		return uroce_fail_null(EOPNOTSUPP);
	}
	if (!dv || !(dv->comp_mask & UROCEDV_WQ_INIT_ATTR_MASK_STRIDING_RQ))
		return dv && dv->comp_mask ? uroce_fail_null(EOPNOTSUPP) : uroce_create_wq(context, attr);
	if (dv->comp_mask & ~(uint64_t)UROCEDV_WQ_INIT_ATTR_MASK_STRIDING_RQ) {
		fprintf(stderr, UROCE_LOG_PREFIX "urocedv_create_wq: comp_mask 0x%llx has unknown bits\n",
			(unsigned long long)dv->comp_mask);
		return uroce_fail_null(EOPNOTSUPP);
	}
	st.log_num_strides = dv->striding_rq_attrs.single_wqe_log_num_of_strides;
	st.log_stride_bytes = dv->striding_rq_attrs.single_stride_log_num_of_bytes;
	st.two_byte_shift = dv->striding_rq_attrs.two_byte_shift_en;
	if (st.log_num_strides < UROCE_STRIDING_LOG_NUM_MIN || st.log_num_strides > UROCE_STRIDING_LOG_NUM_MAX ||
	    st.log_stride_bytes < UROCE_STRIDING_LOG_STRIDE_MIN ||
	    st.log_stride_bytes > UROCE_STRIDING_LOG_STRIDE_MAX ||
	    st.log_num_strides + st.log_stride_bytes > UROCE_STRIDING_LOG_WQE_BYTES_MAX || st.two_byte_shift > 1)
		return uroce_fail_null(EINVAL);
	return uroce_create_wq_striding(context, attr, &st);
}

/* urocedv.h */
UROCE_DV_EXPORT int urocedv_wc_read_stride(struct ibv_cq_ex *ibcq, struct urocedv_stride_info *info)
{
	struct uroce_cq *cq;
	const struct mlx5_cqe64 *cqe;
	uint32_t bc;

	if (!ibcq || !info)
		return EINVAL;
	cq = to_ucq_ex(ibcq);
	cqe = cq->cur;
	if (!cqe || cq->cur_op == MLX5_CQE_RESP_ERR || uroce_cqe_is_req(cq->cur_op) || !cq->qpc.qp ||
	    !cq->qpc.qp->log_num_strides || (cq->cur_sop & 0xFFFFFF) != cq->qpc.rq_qpn)
		return EINVAL;
	bc = be32toh(cqe->byte_cnt);
	info->byte_len = bc & UROCE_MPRQ_LEN_MASK;
	info->stride_index = be16toh(cqe->wqe_counter);
	info->strides = (uint16_t)UROCE_MPRQ_STRIDES(bc);
	info->filler = !!(bc & UROCE_MPRQ_FILLER);
	info->wqe_done = uroce_cqe_rq_retires(cq->qpc.qp, cqe, cq->cur_op);
	return 0;
}
