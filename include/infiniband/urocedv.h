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

#ifdef __cplusplus
}
#endif

#endif
