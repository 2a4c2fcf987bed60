/*
 * abi_asserts.h - compile-time checks of the sizes uroce/abi.h and its
 * parts document (included at the end of uroce/abi.h, never on its own).
 */
#ifndef UROCE_ABI_ASSERTS_H
#define UROCE_ABI_ASSERTS_H

_Static_assert(sizeof(struct uroce_hdr) == 24, "uroce_hdr is 24 bytes");
_Static_assert(sizeof(struct uroce_cq_ring_hdr) == UROCE_CQ_RING_HDR_SIZE, "CQ ring header");
_Static_assert(sizeof(struct mlx5_cqe64) == 64, "mlx5_cqe64 is 64 bytes");
_Static_assert(sizeof(struct uroce_qp_ring_hdr) == UROCE_QP_RING_HDR_SIZE, "QP ring header");
_Static_assert(sizeof(struct uroce_send_wqe) == 64, "send WQE header is 64 bytes");
_Static_assert(sizeof(struct uroce_recv_wqe) == 16, "recv WQE header is 16 bytes");
_Static_assert(sizeof(struct uroce_sge) == 16, "SGE is 16 bytes");
_Static_assert(sizeof(struct uroce_srq_ring_hdr) == UROCE_SRQ_RING_HDR_SIZE, "SRQ ring header");
_Static_assert(sizeof(struct uroce_clock_page) <= UROCE_CLOCK_PAGE_SIZE, "clock page fits");
_Static_assert(sizeof(struct ib_uverbs_async_event_desc) == 16, "async event record");
_Static_assert(sizeof(struct ib_uverbs_comp_event_desc) == 8, "completion event record");
_Static_assert(sizeof(struct uroce_hello_resp) <= UROCE_MSG_MAX, "HELLO reply fits");
_Static_assert(sizeof(struct uroce_modify_qp_req) <= UROCE_MSG_MAX, "MODIFY_QP fits");
_Static_assert(sizeof(struct uroce_query_qp_resp) <= UROCE_MSG_MAX, "QUERY_QP reply fits");
_Static_assert(sizeof(struct uroce_advise_mr_req) <= UROCE_MSG_MAX, "ADVISE_MR fits");
_Static_assert(sizeof(struct uroce_ucma_req) <= UROCE_MSG_MAX, "UCMA request fits");
_Static_assert(sizeof(struct uroce_ucma_resp) <= UROCE_MSG_MAX, "UCMA reply fits");

#endif
