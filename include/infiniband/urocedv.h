/*
 * urocedv.h - uroce direct verbs: the custom work-completion poll.
 *
 * Installed as <infiniband/urocedv.h>; the functions live in the uroce
 * provider, liburoce-rdmav<PABI>.so in libibverbs' provider directory
 * (link with -L<that directory> -luroce-rdmav<PABI>, or dlopen() it and
 * dlsym() the names; symbol version UROCEDV_1.0). See urocedv(3).
 *
 * The application declares at CQ creation which fields it wants (the
 * IBV_WC_EX_WITH_* flags of ibv_create_cq_ex(3) in attr->wc_flags) and
 * polls an array of completions laid out for exactly those fields:
 *
 *   struct urocedv_wc (16 bytes: wr_id, vendor_err, wc_flags, status, opcode)
 *   then the requested fields, 64-bit first, then 32, 16, 8 bits, each
 *   class in the order of its IBV_WC_EX_WITH_* bit:
 *     64: completion_ts (COMPLETION_TIMESTAMP),
 *         completion_wallclock_ns (COMPLETION_TIMESTAMP_WALLCLOCK)
 *     32: byte_len (BYTE_LEN), imm_data (IMM), qp_num (QP_NUM), src_qp (SRC_QP)
 *     16: slid (SLID)
 *      8: sl (SL), dlid_path_bits (DLID_PATH_BITS)
 *   padded to a multiple of 8 bytes (the stride), so every field is
 *   naturally aligned in every element of the array.
 *
 * Each field holds what the matching ibv_wc_read_*() accessor returns for
 * the same completion (ibv_create_cq_ex(3)): imm_data is network order, or
 * the invalidated rkey in host order when wc_flags has IBV_WC_WITH_INV;
 * opcode and the fields other than wr_id, status, vendor_err and qp_num are
 * undefined when status is not IBV_WC_SUCCESS (ibv_poll_cq(3)).
 */
#ifndef INFINIBAND_UROCEDV_H
#define INFINIBAND_UROCEDV_H

#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The IBV_WC_EX_WITH_* flags a custom WC can hold. */
#define UROCEDV_WC_FIELDS                                                                  \
	((uint64_t)(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |          \
		    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK))

/* Head of every custom WC (the fields every completion has). */
struct urocedv_wc {
	uint64_t wr_id;
	uint32_t vendor_err; /* 0 unless status != IBV_WC_SUCCESS */
	uint16_t wc_flags;   /* enum ibv_wc_flags */
	uint8_t status;      /* enum ibv_wc_status */
	uint8_t opcode;      /* enum ibv_wc_opcode */
};

/* Index of each optional field in urocedv_wc_layout.offset. */
enum urocedv_wc_field {
	UROCEDV_WC_COMPLETION_TS,
	UROCEDV_WC_COMPLETION_WALLCLOCK_NS,
	UROCEDV_WC_BYTE_LEN,
	UROCEDV_WC_IMM_DATA,
	UROCEDV_WC_QP_NUM,
	UROCEDV_WC_SRC_QP,
	UROCEDV_WC_SLID,
	UROCEDV_WC_SL,
	UROCEDV_WC_DLID_PATH_BITS,
	UROCEDV_WC_NUM_FIELDS
};

/*
 * Where the fields of one CQ's custom WCs are.
 *   fields  the IBV_WC_EX_WITH_* flags the WCs hold
 *   stride  bytes from one WC to the next (a multiple of 8, at least 16)
 *   offset  byte offset of each field from the start of its WC; 0 when the
 *           field is not in the layout
 */
struct urocedv_wc_layout {
	uint64_t fields;
	uint32_t stride;
	uint16_t offset[UROCEDV_WC_NUM_FIELDS];
};

/* Whether device is a uroce device (1) or not (0). */
int urocedv_is_supported(struct ibv_device *device);

/*
 * Creates an extended CQ as ibv_create_cq_ex(3) does (same attributes,
 * errors and result: ibv_poll_cq, the ibv_start_poll iterator and
 * ibv_destroy_cq work on it) that urocedv_poll_cq_wc can also poll, with WCs
 * holding exactly the fields of attr->wc_flags; the layout of those WCs is
 * stored in *layout. Returns the CQ, or NULL with errno: EOPNOTSUPP when
 * context is not a uroce device's or attr->wc_flags has a flag outside
 * UROCEDV_WC_FIELDS, EINVAL when layout is NULL, else ibv_create_cq_ex's.
 */
struct ibv_cq_ex *urocedv_create_cq_wc(struct ibv_context *context,
				       struct ibv_cq_init_attr_ex *attr,
				       struct urocedv_wc_layout *layout);

/*
 * Polls up to num_entries completions of cq (from urocedv_create_cq_wc)
 * into wc, an array of num_entries WCs of the CQ's layout (stride bytes
 * each, 8-byte aligned). Consumes them like ibv_poll_cq(3): returns how
 * many were written (0 when the CQ is empty), or a negative value when
 * num_entries < 0 or cq was not created by urocedv_create_cq_wc.
 * Must not run while an ibv_start_poll ... ibv_end_poll on the CQ is open.
 */
int urocedv_poll_cq_wc(struct ibv_cq_ex *cq, int num_entries, void *wc);

/* The i-th WC of an array of layout l. */
static inline struct urocedv_wc *urocedv_wc_at(const struct urocedv_wc_layout *l, void *wc,
					       int i)
{
	return (struct urocedv_wc *)((char *)wc + (size_t)l->stride * (size_t)i);
}

/* Reads field f of wc (uint64_t for the 64-bit fields, etc.): for code that
 * does not know its layout at compile time. */
static inline uint64_t urocedv_wc_read_u64(const struct urocedv_wc_layout *l,
					   const struct urocedv_wc *wc, enum urocedv_wc_field f)
{
	uint64_t v;

	memcpy(&v, (const char *)wc + l->offset[f], sizeof(v));
	return v;
}

static inline uint32_t urocedv_wc_read_u32(const struct urocedv_wc_layout *l,
					   const struct urocedv_wc *wc, enum urocedv_wc_field f)
{
	uint32_t v;

	memcpy(&v, (const char *)wc + l->offset[f], sizeof(v));
	return v;
}

static inline uint16_t urocedv_wc_read_u16(const struct urocedv_wc_layout *l,
					   const struct urocedv_wc *wc, enum urocedv_wc_field f)
{
	uint16_t v;

	memcpy(&v, (const char *)wc + l->offset[f], sizeof(v));
	return v;
}

static inline uint8_t urocedv_wc_read_u8(const struct urocedv_wc_layout *l,
					 const struct urocedv_wc *wc, enum urocedv_wc_field f)
{
	return *((const uint8_t *)wc + l->offset[f]);
}

/*
 * Striding (multi-packet) receive WQs, shaped like mlx5dv_create_wq(3) with
 * MLX5DV_WQ_INIT_ATTR_MASK_STRIDING_RQ (symbol version UROCEDV_1.1).
 *
 * A striding WQ's WQE is one SGE of 2^single_wqe_log_num_of_strides strides
 * of 2^single_stride_log_num_of_bytes bytes each. Each frame the WQ receives
 * starts at the next free stride (after two zero bytes when
 * two_byte_shift_en) and takes as many strides as it needs; one completion
 * per frame, all with the wr_id of the WQE, which goes back to the
 * application with its last stride. A frame that does not fit the strides
 * left completes a "filler" (byte_len 0) that uses them up, and goes into
 * the next WQE. urocedv_wc_read_stride tells where a frame is.
 */
enum urocedv_wq_init_attr_mask {
	UROCEDV_WQ_INIT_ATTR_MASK_STRIDING_RQ = 1 << 0,
};

struct urocedv_striding_rq_init_attr {
	uint32_t single_stride_log_num_of_bytes;
	uint32_t single_wqe_log_num_of_strides;
	uint8_t two_byte_shift_en;
};

struct urocedv_wq_init_attr {
	uint64_t comp_mask; /* enum urocedv_wq_init_attr_mask */
	struct urocedv_striding_rq_init_attr striding_rq_attrs;
};

/* The limits of the striding RQ (log2), as mlx5dv_query_device reports
 * striding_rq_caps. */
struct urocedv_striding_rq_caps {
	uint32_t min_single_stride_log_num_of_bytes;
	uint32_t max_single_stride_log_num_of_bytes;
	uint32_t min_single_wqe_log_num_of_strides;
	uint32_t max_single_wqe_log_num_of_strides;
	uint32_t supported_qpts; /* 1 << IBV_QPT_RAW_PACKET */
};

/* Fills *caps for a uroce context: 0, or EOPNOTSUPP (not uroce), EINVAL. */
int urocedv_query_striding_rq_caps(struct ibv_context *context, struct urocedv_striding_rq_caps *caps);

/*
 * ibv_create_wq(3), and with UROCEDV_WQ_INIT_ATTR_MASK_STRIDING_RQ in
 * dv_attr->comp_mask (dv_attr may be NULL) a striding RQ: max_sge must be 1
 * and the striding values within urocedv_query_striding_rq_caps (a WQE of
 * at most 16 MiB). Returns the WQ, or NULL with errno: EOPNOTSUPP (not a
 * uroce context, unknown comp_mask bits), EINVAL, else ibv_create_wq's.
 * Post to it with ibv_post_wq_recv: one SGE of at least the WQE's size
 * (EINVAL otherwise).
 */
struct ibv_wq *urocedv_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *attr,
				 struct urocedv_wq_init_attr *dv_attr);

/* Where the current completion of a striding WQ put its frame. */
struct urocedv_stride_info {
	uint32_t byte_len;     /* the frame's bytes (0 for a filler) */
	uint16_t stride_index; /* its first stride in the WQE */
	uint16_t strides;      /* strides it used */
	uint8_t filler;        /* 1: no frame, the WQE's last strides used up */
	uint8_t wqe_done;      /* 1: the WQE (its wr_id) goes back to the application */
};

/*
 * The stride fields of the completion an ibv_start_poll / ibv_next_poll
 * iterator on cq stands on (mlx5 CQE: byte_cnt bits 15:0, 29:16 and 31,
 * wqe_counter). Returns 0, or EINVAL when that completion is not a
 * successful receive of a striding WQ. The frame starts at
 * stride_index * 2^single_stride_log_num_of_bytes (+ 2 with
 * two_byte_shift_en) from the start of the WQE's buffer.
 */
int urocedv_wc_read_stride(struct ibv_cq_ex *cq, struct urocedv_stride_info *info);

#ifdef __cplusplus
}
#endif

#endif
