/*
 * abi_tm.h - tag matching (the mlx5 TM-SRQ; docs/tag-matching.md): the
 * control messages that create a tag-matching SRQ and carry its list
 * operations. Part of the provider <-> daemon contract (uroce/abi.h).
 *
 * CREATE_TM_SRQ (struct uroce_create_tm_srq_req, reply
 *   uroce_create_srq_resp; fds [SRQ ring memfd] as CREATE_SRQ): an SRQ of
 *   type IBV_SRQT_TM (ibv_create_srq_ex(3)) in pd_handle whose receive
 *   WQEs (the ring, as a basic SRQ's) take unexpected and no-tag messages,
 *   with a tag list of max_num_tags + 1 entries (indices 0..max_num_tags;
 *   mlx5 keeps one more entry than tags). Its completions, list operations
 *   and receives alike, go to cq_handle. max_num_tags 1..UROCE_TM_MAX_NUM_TAGS,
 *   max_ops 1..UROCE_TM_MAX_OPS, else EINVAL; max_wr / max_sge as CREATE_SRQ;
 *   EINVAL for a bad handle. Only RC QPs may use it (CREATE_QP: EINVAL
 *   otherwise). Destroyed with DESTROY_SRQ.
 *
 * TM_OP (struct uroce_tm_op_req, reply uroce_tm_op_resp): one list
 *   operation of ibv_post_srq_ops(3) on the SRQ of handle, executed before
 *   the reply:
 *   opcode IBV_WR_TAG_ADD: entry index (0..max_num_tags, not in the list,
 *     else EINVAL) takes tag, mask and the buffer (addr, length, lkey;
 *     length 0: an empty buffer) and joins the list behind every entry
 *     already there (matching is in posting order).
 *   IBV_WR_TAG_DEL: entry index leaves the list. One not in the list
 *     (consumed by a message meanwhile) is no error of the call: its CQE
 *     says so (tm_cqe.success 0, IBV_WC_TM_ERR).
 *   IBV_WR_TAG_SYNC: nothing but the count below.
 *   flags IBV_OPS_SIGNALED: a CQE (MLX5_CQE_NO_PACKET, app TAG_MATCHING,
 *     app_op APPEND / REMOVE / NOOP, tm_cqe.success, hw_phase_cnt the
 *     device's unexpected count) is written to the SRQ's CQ before the
 *     reply. IBV_OPS_TM_SYNC: unexpected_cnt is the number of unexpected
 *     messages software has handled; more than the device has counted is
 *     EINVAL (and nothing is done).
 *   Other opcodes or flag bits, reserved != 0, a length above 2^32 - 1, a
 *   handle naming no tag-matching SRQ: EINVAL. A CQE that finds the CQ full
 *   is handled as any CQE (overrun: IBV_EVENT_CQ_ERR).
 *   Reply: hw_cnt, the device's unexpected count after the operation.
 */
#ifndef UROCE_ABI_TM_H
#define UROCE_ABI_TM_H

#include <stddef.h>
#include <stdint.h>

/* Control-socket opcodes (enum uroce_op's numbering, uroce/abi.h). */
enum {
	UROCE_OP_CREATE_TM_SRQ = 34,  /* fds: [SRQ ring memfd] */
	UROCE_OP_TM_OP = 35,          /* a tag list operation */
};

/* tm_caps as a ConnectX-5 reports them (the kernel's mlx5_ib_query_device:
 * max_num_tags (1 << log_tag_matching_list_sz) - 1 with the CX-5's 7,
 * max_ops 1 << log_max_qp_sz, MLX5_TM_MAX_SGE 1, MLX5_TM_MAX_RNDV_MSG_SIZE
 * 64, IB_TM_CAP_RC). */
#define UROCE_TM_MAX_NUM_TAGS 127u
#define UROCE_TM_MAX_OPS 32768u
#define UROCE_TM_MAX_SGE 1u
#define UROCE_TM_MAX_RNDV_HDR 64u

/* CQE app / app_op values of tag matching (rdma-core providers/mlx5/cq.c
 * MLX5_CQE_APP_TAG_MATCHING, MLX5_CQE_APP_OP_TM_*) and the success bit of
 * struct mlx5_tm_cqe (MLX5_TMC_SUCCESS, mlx5dv.h). */
#define UROCE_CQE_APP_TAG_MATCHING 1
#define UROCE_TM_APP_OP_CONSUMED 0x1     /* RNDV matched: first completion */
#define UROCE_TM_APP_OP_EXPECTED 0x2     /* RNDV data in place: second completion */
#define UROCE_TM_APP_OP_UNEXPECTED 0x3   /* no tag matched: an SRQ WQE took it */
#define UROCE_TM_APP_OP_NO_TAG 0x4       /* TMH opcode NO_TAG: an SRQ WQE took it */
#define UROCE_TM_APP_OP_APPEND 0x5       /* TAG_ADD */
#define UROCE_TM_APP_OP_REMOVE 0x6       /* TAG_DEL */
#define UROCE_TM_APP_OP_NOOP 0x7         /* TAG_SYNC */
#define UROCE_TM_APP_OP_CONSUMED_MSG 0xA /* EAGER matched: the whole message */
#define UROCE_TMC_SUCCESS 0x80000000u

struct uroce_create_tm_srq_req {
	struct uroce_hdr hdr;
	uint64_t user_handle;
	uint32_t pd_handle;
	uint32_t cq_handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t max_num_tags;
	uint32_t max_ops;
};

struct uroce_tm_op_req {
	struct uroce_hdr hdr;
	uint32_t handle;        /* the SRQ */
	uint32_t opcode;        /* enum ibv_ops_wr_opcode */
	uint32_t flags;         /* enum ibv_ops_flags */
	uint32_t unexpected_cnt;
	uint32_t index;         /* ADD, DEL: the list entry */
	uint32_t lkey;          /* ADD: the buffer */
	uint64_t addr;
	uint64_t length;
	uint64_t tag;           /* ADD */
	uint64_t mask;
	uint32_t reserved;
	uint32_t reserved1;
};

struct uroce_tm_op_resp {
	struct uroce_hdr hdr;
	uint32_t hw_cnt;
	uint32_t reserved;
};

/* Request and reply sizes of the two opcodes, else uroce_flow_req_size's
 * and uroce_flow_resp_size's answers (a bare header for a reply it does not
 * know): uroce_req_size / uroce_resp_size of uroce/abi.h reach them
 * through uroce/abi_share.h. */
static inline size_t uroce_tm_req_size(unsigned int op)
{
	return op == UROCE_OP_CREATE_TM_SRQ ? sizeof(struct uroce_create_tm_srq_req) :
	       op == UROCE_OP_TM_OP	    ? sizeof(struct uroce_tm_op_req) :
					      uroce_flow_req_size(op);
}

static inline size_t uroce_tm_resp_size(unsigned int op)
{
	return op == UROCE_OP_CREATE_TM_SRQ ? sizeof(struct uroce_create_srq_resp) :
	       op == UROCE_OP_TM_OP	    ? sizeof(struct uroce_tm_op_resp) :
	       uroce_flow_resp_size(op)     ? uroce_flow_resp_size(op) :
					      sizeof(struct uroce_hdr);
}

#endif /* UROCE_ABI_TM_H */
