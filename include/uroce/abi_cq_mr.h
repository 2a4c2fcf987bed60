/*
 * abi_cq_mr.h - the control messages that change a live MR or CQ, or
 * advise on an MR: REREG_MR, RESIZE_CQ, MODIFY_CQ, ADVISE_MR. Part of the
 * provider <-> daemon contract; included by uroce/abi.h after struct
 * uroce_hdr (see there for transport, versioning, the CQ ring and the
 * errors common to every opcode).
 */
#ifndef UROCE_ABI_CQ_MR_H
#define UROCE_ABI_CQ_MR_H

#include <stdint.h>
#include <infiniband/verbs.h>

/*
 * REREG_MR (ibv_rereg_mr(3)): change an MR in place, as one step.
 *   handle     the MR (EINVAL if not this client's)
 *   flags      enum ibv_rereg_mr_flags: a non-empty subset of
 *              CHANGE_TRANSLATION | CHANGE_PD | CHANGE_ACCESS (EINVAL
 *              otherwise, as the kernel's uverbs answers)
 *   pd_handle  CHANGE_PD: the new PD of this client (EINVAL); else 0
 *   access     CHANGE_ACCESS: the new enum ibv_access_flags, checked as
 *              REG_MR checks them (EINVAL / EOPNOTSUPP); else 0
 *   addr, length  CHANGE_TRANSLATION: the new range, checked as REG_MR
 *              checks it (EINVAL, EFAULT); else 0
 * Fields a flag does not name must be 0 (EINVAL). The range is checked
 * against the MR's resulting access (a new read-only range of an MR that
 * keeps LOCAL_WRITE: EFAULT). Keys are kept, as mlx5 keeps them: remote
 * access is judged by the new range, PD and rights from the next packet on.
 * On any error the MR is unchanged and keeps working (stronger than the
 * man page's "MR shouldn't be used").
 * Reply: struct uroce_reg_mr_resp (handle, lkey, rkey: the same keys).
 */
struct uroce_rereg_mr_req {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t flags;
	uint32_t pd_handle;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
};

/*
 * RESIZE_CQ (ibv_resize_cq(3)); the protocol is "Resizing" in the CQ ring
 * section of uroce/abi.h.
 *   handle  the CQ
 *   cqe     entries asked for, 1..dev.max_cqe (EINVAL)
 *   nent    the new ring: the smallest power of two >= cqe + 1 (EINVAL)
 *   fds     [0] the new ring memfd, sealed F_SEAL_SHRINK, at least
 *           uroce_cq_ring_size(nent) bytes (EBADF / EINVAL as CREATE_CQ)
 * EINVAL also when the CQ holds more unpolled CQEs than cqe (as rxe; the
 * old ring stays in use), or when the CQ is in error after an overrun.
 * Reply: pi, the free-running index of the next CQE (ci + the CQEs moved).
 */
struct uroce_resize_cq_req {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t cqe;
	uint32_t nent;
	uint32_t reserved;
};
struct uroce_resize_cq_resp {
	struct uroce_hdr hdr;
	uint32_t pi;
	uint32_t reserved;
};

/*
 * Completion event moderation limits (ibv_query_device_ex cq_mod_caps):
 * the widths of the ConnectX CQ context fields cq_max_count (16 bits) and
 * cq_period (12 bits, µs), as mlx5 reports them.
 */
#define UROCE_CQ_MOD_MAX_COUNT 0xFFFFu
#define UROCE_CQ_MOD_MAX_PERIOD_US 0xFFFu

/*
 * MODIFY_CQ (ibv_modify_cq(3)).
 *   handle     the CQ
 *   attr_mask  enum ibv_cq_attr_mask: IBV_CQ_ATTR_MODERATE (0 or other
 *              bits: EINVAL)
 *   cq_count   fire after this many CQEs since the arm (0 = no count limit)
 *   cq_period  or this many µs after the first of them (0 = no timer),
 *              at most UROCE_CQ_MOD_MAX_PERIOD_US (EINVAL)
 * Moderation rules: "Moderation" in the CQ ring section of uroce/abi.h.
 * Reply: uroce_hdr only.
 */
struct uroce_modify_cq_req {
	struct uroce_hdr hdr;
	uint32_t handle;
	uint32_t attr_mask;
	uint16_t cq_count;
	uint16_t cq_period;
	uint32_t reserved;
};

/*
 * ADVISE_MR (ibv_advise_mr(3)): prefetch advice for ranges of ODP MRs.
 *   pd_handle  PD of this client, the PD of every MR named
 *   advice     enum ibv_advise_mr_advice: PREFETCH, PREFETCH_WRITE,
 *              PREFETCH_NO_FAULT; others → EOPNOTSUPP
 *   flags      0 (asynchronous: keys checked, ranges not) or
 *              IBV_ADVISE_MR_FLAG_FLUSH (synchronous); other bits → EINVAL
 *   num_sge    1 .. UROCE_ADVISE_MR_MAX_SGE (EINVAL otherwise); the provider
 *              splits longer lists
 *   sge        addr/length/lkey, as struct ibv_sge
 * Errors as mlx5: ENOENT when an lkey is not an ODP MR of this client and PD,
 * or PREFETCH_WRITE names an MR without LOCAL_WRITE; EFAULT (FLUSH only) when
 * a range leaves its MR or, for PREFETCH / PREFETCH_WRITE, is not mapped
 * (readable; writable for PREFETCH_WRITE) now. Nothing is pinned: the data
 * path reaches the memory at access time anyway. Reply: uroce_hdr only.
 */
#define UROCE_ADVISE_MR_MAX_SGE 32
struct uroce_advise_sge {
	uint64_t addr;   /* virtual address in the client process */
	uint32_t length; /* bytes */
	uint32_t lkey;
};
struct uroce_advise_mr_req {
	struct uroce_hdr hdr;
	uint32_t pd_handle;
	uint32_t advice;
	uint32_t flags;
	uint32_t num_sge;
	struct uroce_advise_sge sge[UROCE_ADVISE_MR_MAX_SGE];
};

#endif /* UROCE_ABI_CQ_MR_H */
