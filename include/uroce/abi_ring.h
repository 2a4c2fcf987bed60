/*
 * abi_ring.h - the SQ/RQ rings of a QP memfd and the WQE formats.
 * Part of the provider <-> daemon contract; included by uroce/abi.h (see there
 * for transport and versioning).
 */
#ifndef UROCE_ABI_RING_H
#define UROCE_ABI_RING_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

/* ------------------------------------------------------------ SQ/RQ rings */

/*
 * Implemented by the daemon (emu/nic/doorbell.c, emu/nic/wqe_reader.c) and proven
 * with a raw client (tests/daemon_datapath.c); the provider's post_send /
 * post_recv are what remain.
 *
 * Each QP owns one memfd (created by the provider, passed at CREATE_QP):
 *   offset 0                  struct uroce_qp_ring_hdr (128 bytes)
 *   offset UROCE_QP_RING_HDR_SIZE   SQ: sq_wqe_cnt slots of sq_stride bytes
 *   then                      RQ: rq_wqe_cnt slots of rq_stride bytes
 *   size rounded up to 4096.  uroce_qp_ring_layout() computes it.
 * Counts are powers of two; WQE number n lives in slot n & (cnt-1).
 *
 * Posting (provider): write the WQE(s) into free slots (pi - ci < cnt, else
 * ENOMEM with *bad_wr), release-store the new sq_pi / rq_pi (free-running u32),
 * then eventfd_write(doorbell, 1). The daemon reads pi (acquire), executes the
 * WQEs, and release-stores sq_ci / rq_ci once a WQE's slot may be reused (after
 * its completion is written, or — unsignalled — once retired by a later CQE).
 * The CQE's wqe_counter is the WQE number & 0xFFFF (mlx5 semantics: the
 * provider's wr_id array is indexed by wqe_counter & (cnt-1)).
 * Indices are never reset: on a transition to RESET the daemon discards what
 * was posted and sets sq_ci = sq_pi and rq_ci = rq_pi (as read then), so every
 * slot is free and posting continues from the same numbers.
 *
 * What the daemon checks in each WQE it reads (a failing WQE completes with
 * IBV_WC_LOC_QP_OP_ERR, the QP goes to ERR and IBV_EVENT_QP_FATAL follows):
 * wqe_index == WQE number & 0xFFFF; no unknown flag bits; num_sge <=
 * max_send_sge (max_recv_sge); byte_len == the sum of the SGE lengths, or
 * for INLINE the inline byte count (<= max_inline_data); UD: ah_handle is
 * one of the client's AHs in the QP's PD and remote_qpn < 2^24. The daemon
 * copies a WQE when it reads it, right after the doorbell, so a slot may be
 * rewritten as soon as sq_ci/rq_ci has passed it.
 *
 * Doorbell suppression (as virtio's VRING_USED_F_NO_NOTIFY): while
 * no_doorbell is non-zero the daemon has promised to read this QP's sq_pi
 * and rq_pi again before its event loop next sleeps, so the provider may
 * skip the eventfd write after a post to this QP's SQ or RQ. The ordering
 * that makes a lost wake-up impossible (a store-load pair on each side, a
 * full fence between them, so at least one side sees the other's store):
 *   provider: release-store sq_pi (rq_pi); full fence (seq_cst);
 *             load no_doorbell; if 0: eventfd_write(doorbell, 1)
 *   daemon, before it may sleep: store no_doorbell = 0; full fence;
 *             load sq_pi and rq_pi; WQEs beyond what it read: take them
 *             (and set no_doorbell again)
 * If the provider read a stale 1, its pi store precedes the daemon's
 * re-read, which therefore sees the WQE; if the daemon's re-read missed
 * the WQE, the provider's load follows the store of 0 and it rings.
 * uroce_qp_doorbell_needed() is the provider's half. The daemon keeps its
 * own copy of the promise and never reads no_doorbell (the client can
 * write the page: a wrong value only costs that client its doorbells or
 * delays its own WQEs). A daemon that never sets it (0: the memfd starts
 * zeroed) gets a doorbell per post, as before; the word is a former
 * reserved one, so the ABI version is unchanged. SRQ posts and CQ arms
 * always ring.
 *
 * Receive doorbell suppression: while rq_no_doorbell is non-zero the
 * daemon has promised to read rq_pi on its own whenever it needs a
 * receive WQE (a message finds the RQ it holds empty; a flush), so the
 * provider may skip the eventfd write after a post to the RQ. The daemon
 * sets it while the QP is in RTR, RTS, SQD or SQE (the states whose
 * responder takes receive WQEs) and has no SRQ; before the QP leaves
 * them (ERR, by ibv_modify_qp or the engine's own move on a fatal error
 * or retry exhaustion; RESET) it withdraws it the same way:
 *   daemon: store rq_no_doorbell = 0; full fence; load rq_pi; WQEs beyond
 *           what it read: take them (ERR: each completes at once with
 *           IBV_WC_WR_FLUSH_ERR; RESET: discarded as above)
 *   provider: release-store rq_pi; full fence; load no_doorbell and
 *           rq_no_doorbell; if both 0: eventfd_write(doorbell, 1)
 * uroce_qp_rq_doorbell_needed() is the provider's half; the daemon keeps
 * its own copy of this promise too and never reads the word. Another
 * former reserved word: an older daemon never sets it, an older provider
 * ignores it (and rings, as before).
 */
#define UROCE_QP_RING_HDR_SIZE 128
struct uroce_qp_ring_hdr {
	uint32_t sq_pi;          /* provider writes: WQEs posted to the SQ (free-running) */
	uint32_t rq_pi;          /* provider writes: WQEs posted to the RQ */
	uint32_t reserved0[14];
	uint32_t sq_ci;          /* daemon writes: SQ WQEs whose slots are free again */
	uint32_t rq_ci;          /* daemon writes: RQ WQEs consumed */
	uint32_t no_doorbell;    /* daemon writes: non-zero = it reads the pis again unasked */
	uint32_t rq_no_doorbell; /* daemon writes: non-zero = it reads rq_pi when it needs a WQE */
	uint32_t reserved1[12];
};

/*
 * uroce_qp_doorbell_needed - the provider's half of doorbell suppression
 * (above): call after the release store of sq_pi or rq_pi. Returns whether
 * the eventfd must be written (the daemon has not promised to look).
 */
static inline int uroce_qp_doorbell_needed(const struct uroce_qp_ring_hdr *h)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&h->no_doorbell, __ATOMIC_RELAXED) == 0;
}

/*
 * uroce_qp_rq_doorbell_needed - the provider's half of receive doorbell
 * suppression (above): call after the release store of rq_pi. Returns
 * whether the eventfd must be written: neither promise stands. Why no
 * post is lost: the fence orders the rq_pi store before the loads. If
 * either load saw a stale non-zero, the daemon's store of 0 (and the
 * fence after it) follows those loads, so its later load of rq_pi sees
 * this post; if the daemon's load missed the post, its store of 0
 * preceded these loads, which see 0 and ring.
 */
static inline int uroce_qp_rq_doorbell_needed(const struct uroce_qp_ring_hdr *h)
{
	/* its fence precedes both loads */
	return uroce_qp_doorbell_needed(h) &&
	       __atomic_load_n(&h->rq_no_doorbell, __ATOMIC_RELAXED) == 0;
}

/* Scatter/gather entry (16 bytes), as struct ibv_sge. */
struct uroce_sge {
	uint64_t addr;   /* virtual address in the owning process */
	uint32_t length; /* bytes */
	uint32_t lkey;
};

/*
 * uroce_send_opcode_check - whether a QP of type TYPE may carry send WR opcode
 * OP (ibv_post_send(3)). Returns 0; EINVAL for an opcode the QP type cannot
 * carry (RDMA on UD, READ, atomics and SEND_WITH_INV on UC/UD, which RC and
 * XRC_SEND carry — IBTA Table 38 has SEND with Invalidate for RC and XRC
 * only —, ATOMIC_WRITE and FLUSH off RC — IBTA 1.5 has them for RC only —,
 * BIND_MW and LOCAL_INV on UD, as mlx5 builds them for RC/UC/XRC only) or an
 * unknown value; EOPNOTSUPP for what uroce does not implement (DRIVER1; TSO
 * off a raw packet QP).
 * ATOMIC_WRITE and FLUSH reach the ring only through the extended QP API
 * (ibv_wr_atomic_write, ibv_wr_flush): ibv_post_send has no field for their
 * payload or placement type, so the provider's ibv_post_send refuses them
 * with EOPNOTSUPP before this check.
 * A raw packet QP carries SEND and TSO only. The provider checks
 * at post time, the daemon again for each WQE. The switch is on the value,
 * so every rdma-core's verbs.h gives the same answers: ATOMIC_WRITE (15) is
 * named from rdma-core 44, FLUSH (14) from 45 (enum ibv_wr_opcode, verbs.h).
 */
#define UROCE_IBV_WR_FLUSH 14
#define UROCE_IBV_WR_ATOMIC_WRITE 15
static inline int uroce_send_opcode_check(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	/* a raw packet QP sends frames: one (SEND) or one cut into many (TSO) */
	if (type == IBV_QPT_RAW_PACKET)
		return op == IBV_WR_SEND || op == IBV_WR_TSO ? 0 : EINVAL;
	switch ((int)op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return 0;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return type == IBV_QPT_UD ? EINVAL : 0;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND ? 0 : EINVAL;
	case UROCE_IBV_WR_ATOMIC_WRITE:
	case UROCE_IBV_WR_FLUSH:
		return type == IBV_QPT_RC ? 0 : EINVAL;
	case IBV_WR_TSO:
	case IBV_WR_DRIVER1:
		return EOPNOTSUPP;
	}
	return EINVAL;
}

/* CQE opcode bytes of the requester's FLUSH and ATOMIC_WRITE completions
 * (IBV_WC_FLUSH, IBV_WC_ATOMIC_WRITE): values no mlx5 WQE opcode uses
 * (mlx5dv.h's MLX5_OPCODE_*), the IBTA opcodes' low 5 bits. */
#define UROCE_CQE_OPCODE_FLUSH 0x1c
#define UROCE_CQE_OPCODE_ATOMIC_WRITE 0x1d
/* ibv_wc_opcode values of rdma-core >= 45 (IB_UVERBS_WC_FLUSH,
 * IB_UVERBS_WC_ATOMIC_WRITE), by value for older headers. */
#define UROCE_IBV_WC_FLUSH 8
#define UROCE_IBV_WC_ATOMIC_WRITE 9

/* Send WQE flags */
#define UROCE_WQE_SIGNALED  0x01 /* IBV_SEND_SIGNALED (or sq_sig_all) */
#define UROCE_WQE_SOLICITED 0x02 /* IBV_SEND_SOLICITED */
#define UROCE_WQE_INLINE    0x04 /* payload follows the header instead of SGEs */
#define UROCE_WQE_FENCE     0x08 /* IBV_SEND_FENCE */
#define UROCE_WQE_BIND_TYPE1 0x10 /* BIND_MW posted by the bind_mw op (ibv_bind_mw(3)):
				    * the only way a type 1 window may be bound */
#define UROCE_WQE_IP_CSUM   0x20 /* IBV_SEND_IP_CSUM: raw packet QPs only; the daemon
				    * fills the IPv4 header and TCP/UDP checksums
				    * (docs/raw-packet.md) */

/*
 * Send WQE header (64 bytes), followed by num_sge × struct uroce_sge, or (INLINE)
 * by inline_len bytes of payload.
 *   opcode      enum ibv_wr_opcode (IBV_WR_SEND, _WITH_IMM, _WITH_INV, RDMA_WRITE(_WITH_IMM),
 *               RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD, LOCAL_INV, BIND_MW)
 *   wqe_index   WQE number & 0xFFFF (returned in the CQE's wqe_counter)
 *   byte_len    total payload bytes (sum of SGE lengths or inline_len)
 *   imm_data    big-endian immediate, as ibv_send_wr.imm_data;
 *   invalidate_rkey  (same bytes) SEND_WITH_INV: the R_Key the responder
 *               invalidates, HOST order, as ibv_send_wr.invalidate_rkey
 *   remote_addr, rkey   RDMA WRITE/READ target; the atomic's 8-byte word
 *   compare_add, swap   atomics: ibv_send_wr.wr.atomic's operands, host order
 *   ah_handle, remote_qpn, remote_qkey   UD only
 *   remote_qpn   XRC_SEND: the remote XRC SRQ number (wr.qp_type.xrc.remote_srqn, 24 bits)
 * Memory-window WQEs (IBTA 10.6.7; num_sge 0, byte_len 0, no INLINE):
 *   LOCAL_INV   rkey = the key to invalidate (ibv_send_wr.invalidate_rkey)
 *   BIND_MW     ah_handle = the window's handle (ibv_mw.handle, the daemon's
 *               ALLOC_MW handle), rkey = the new rkey (same index as the
 *               window's, any variant), remote_addr = bind address,
 *               compare_add = bind length in bytes (0: unbind),
 *               remote_qkey = the MR's lkey (0 for unbind), remote_qpn =
 *               mw_access_flags (IBV_ACCESS_* bits); flag UROCE_WQE_BIND_TYPE1
 *               when posted by the bind_mw op (type 1 windows), never set
 *               by ibv_post_send's IBV_WR_BIND_MW (type 2).
 * ATOMIC_WRITE (IBTA 1.5 oA19; ibv_wr_atomic_write(3); num_sge 0, byte_len 0,
 *   no INLINE): remote_addr, rkey = the 8-byte target; compare_add = the 8
 *   bytes to write, as they were in the caller's buffer (copied, not
 *   converted), sent as they are.
 * FLUSH (IBTA 1.5; ibv_wr_flush(3); num_sge 0, byte_len 0, no INLINE):
 *   remote_addr, rkey, compare_add = the range's length in bytes (at most
 *   UINT32_MAX, the RETH's DMA length); swap = the FETH's last byte:
 *   selectivity level << 4 (IBV_FLUSH_RANGE 0, IBV_FLUSH_MR 1) | placement
 *   type (IBV_FLUSH_GLOBAL 1, IBV_FLUSH_PERSISTENT 2, or both).
 *   The requester's CQE opcode byte is UROCE_CQE_OPCODE_FLUSH or
 *   UROCE_CQE_OPCODE_ATOMIC_WRITE (mlx5 has none; docs/cqe-format.md).
 * TSO (raw packet QPs; docs/raw-packet.md §3): the payload as for SEND (SGEs
 *   or INLINE bytes, byte_len their sum); tso_hdr_sz bytes of header
 *   (ibv_send_wr.tso.hdr) at uroce_sq_tso_hdr_off() bytes from the slot's
 *   start, after the largest payload area, so the extended API's setters
 *   may come in any order; mss = ibv_send_wr.tso.mss. The daemon checks
 *   18 <= tso_hdr_sz <= the QP's max_tso_header, 1 <= mss, byte_len <=
 *   UROCE_MAX_TSO and that the header ends in the slot.
 * The requester's CQE opcode for a bind is IBV_WC_BIND_MW, for LOCAL_INV
 * IBV_WC_LOCAL_INV (the daemon writes MLX5_OPCODE_UMR and
 * MLX5_OPCODE_LOCAL_INVAL in the CQE's opcode byte; docs/cqe-format.md).
 */
struct uroce_send_wqe {
	uint8_t opcode;
	uint8_t flags;
	uint8_t num_sge;
	uint8_t reserved0;
	uint16_t wqe_index;
	uint16_t mss;         /* TSO: payload bytes per segment */
	uint32_t byte_len;
	union {
		uint32_t imm_data;
		uint32_t invalidate_rkey;
	};
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t tso_hdr_sz;  /* TSO: header bytes after the payload area */
	uint32_t ah_handle;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t reserved3;
	uint64_t compare_add; /* atomics; BIND_MW: length */
	uint64_t swap;
};

/* Receive WQE header (16 bytes), followed by num_sge × struct uroce_sge. */
struct uroce_recv_wqe {
	uint16_t wqe_index;
	uint8_t num_sge;
	uint8_t reserved0;
	uint32_t reserved1;
	uint64_t reserved2;
};

static inline uint32_t uroce_roundup_pow2(uint32_t v)
{
	uint32_t r = 1;
	while (r < v && r < 0x80000000u)
		r <<= 1;
	return r;
}

/*
 * TSO limits (docs/raw-packet.md §3). UROCE_MAX_TSO: payload bytes of one
 * TSO WQE, ibv_query_device_ex's tso_caps.max_tso (a ConnectX reports
 * 1 << max_lso_cap = 262144; the kernel's mlx5_ib_query_device).
 * UROCE_SQ_DESC_MAX: the largest SQ slot, as mlx5's max_sq_desc_sz bounds
 * its WQE: a QP whose max_tso_header, SGEs and inline data do not fit
 * (uroce_sq_stride_tso) is refused with EINVAL, as mlx5_calc_send_wqe
 * does; so max_tso_header is at most UROCE_MAX_TSO_HEADER (one SGE, no
 * inline), 192 with 16 SGEs.
 */
#define UROCE_MAX_TSO (1u << 18)
#define UROCE_SQ_DESC_MAX 512u
#define UROCE_MAX_TSO_HEADER (UROCE_SQ_DESC_MAX - 64u - 16u)

/* SQ slot bytes for the given caps: header + max(SGE list, inline data)
 * + the TSO header (MAX_TSO_HEADER rounded up to 16), power of two. */
static inline uint32_t uroce_sq_stride_tso(uint32_t max_send_sge, uint32_t max_inline,
					   uint32_t max_tso_header)
{
	uint32_t body = max_send_sge * (uint32_t)sizeof(struct uroce_sge);
	uint32_t inl = (max_inline + 15) & ~15u;
	uint32_t tso = (max_tso_header + 15) & ~15u;
	return uroce_roundup_pow2((uint32_t)sizeof(struct uroce_send_wqe) + (inl > body ? inl : body) + tso);
}

/* Where a TSO WQE's header starts in its slot: after the WQE header and
 * the larger of the SGE list and the inline data area of the caps. */
static inline uint32_t uroce_sq_tso_hdr_off(const struct ibv_qp_cap *cap)
{
	uint32_t body = cap->max_send_sge * (uint32_t)sizeof(struct uroce_sge);
	uint32_t inl = (cap->max_inline_data + 15) & ~15u;
	return (uint32_t)sizeof(struct uroce_send_wqe) + (inl > body ? inl : body);
}

/* SQ slot bytes of a QP without a TSO header. */
static inline uint32_t uroce_sq_stride(uint32_t max_send_sge, uint32_t max_inline)
{
	return uroce_sq_stride_tso(max_send_sge, max_inline, 0);
}

/* RQ slot bytes: header + SGE list, power of two (at least 32). */
static inline uint32_t uroce_rq_stride(uint32_t max_recv_sge)
{
	uint32_t s = (uint32_t)sizeof(struct uroce_recv_wqe) + max_recv_sge * (uint32_t)sizeof(struct uroce_sge);
	return uroce_roundup_pow2(s < 32 ? 32 : s);
}

/* Round requested caps to what the rings hold (in place): WR counts to powers of
 * two (max_recv_wr 0 stays 0), SGE counts at least 1. */
static inline void uroce_qp_caps_round(struct ibv_qp_cap *cap)
{
	cap->max_send_wr = uroce_roundup_pow2(cap->max_send_wr ? cap->max_send_wr : 1);
	cap->max_recv_wr = cap->max_recv_wr ? uroce_roundup_pow2(cap->max_recv_wr) : 0;
	if (!cap->max_send_sge)
		cap->max_send_sge = 1;
	if (!cap->max_recv_sge)
		cap->max_recv_sge = 1;
}

/* Byte offsets of the rings inside the QP memfd for ROUNDED caps. */
struct uroce_qp_ring_layout {
	uint64_t sq_offset, rq_offset, size;
	uint32_t sq_stride, rq_stride;
};
static inline void uroce_qp_ring_layout_tso(const struct ibv_qp_cap *cap, uint32_t max_tso_header,
					    struct uroce_qp_ring_layout *l)
{
	l->sq_stride = uroce_sq_stride_tso(cap->max_send_sge, cap->max_inline_data, max_tso_header);
	l->rq_stride = uroce_rq_stride(cap->max_recv_sge);
	l->sq_offset = UROCE_QP_RING_HDR_SIZE;
	l->rq_offset = l->sq_offset + (uint64_t)cap->max_send_wr * l->sq_stride;
	l->size = (l->rq_offset + (uint64_t)cap->max_recv_wr * l->rq_stride + 4095) & ~(uint64_t)4095;
}

/* The layout of a QP without a TSO header (max_tso_header 0). */
static inline void uroce_qp_ring_layout(const struct ibv_qp_cap *cap, struct uroce_qp_ring_layout *l)
{
	uroce_qp_ring_layout_tso(cap, 0, l);
}

/* ------------------------------------------------------------- SRQ ring */

/*
 * An SRQ's memfd (created by the provider, passed at CREATE_SRQ):
 *   offset 0                        struct uroce_srq_ring_hdr (64 bytes)
 *   offset UROCE_SRQ_RING_HDR_SIZE  max_wr slots of uroce_rq_stride(max_sge)
 *   size rounded up to 4096 (uroce_srq_ring_layout()).
 * WQE number n (free-running pi) lives in slot n & (max_wr-1), a struct
 * uroce_recv_wqe + SGE list like an RQ WQE, except that wqe_index is the
 * WQE's tag: the index 0..max_wr-1 of the provider's wr_id entry, which
 * the daemon returns as the CQE's wqe_counter. Tags, not ring slots, bound
 * what is outstanding: WQEs on an SRQ complete in the order QPs take them
 * (mlx5 keeps a free list of WQE indices for the same reason), so the
 * provider takes a free tag per posted WQE (ENOMEM when none is free) and
 * frees it when the application polls its CQE.
 * Posting: the WQE into slot pi & (max_wr-1), release-store pi + 1, then
 * eventfd_write(doorbell, 1). The daemon copies every WQE up to pi at the
 * doorbell and release-stores ci (WQEs copied); since each WQE in the
 * ring holds a distinct tag, a free tag means a free slot.
 * What the daemon checks: wqe_index < max_wr, num_sge <= max_sge; a WQE
 * failing them puts the SRQ in error: IBV_EVENT_SRQ_ERR, no further WQE
 * of it is read.
 */
#define UROCE_SRQ_RING_HDR_SIZE 64
struct uroce_srq_ring_hdr {
	uint32_t pi;             /* provider writes: WQEs posted (free-running) */
	uint32_t reserved0[7];
	uint32_t ci;             /* daemon writes: WQEs copied */
	uint32_t reserved1[7];
};

/* Slot bytes and memfd size of an SRQ ring for max_wr WQEs (a power of
 * two) of max_sge SGEs. */
static inline void uroce_srq_ring_layout(uint32_t max_wr, uint32_t max_sge, uint32_t *stride,
					 uint64_t *size)
{
	*stride = uroce_rq_stride(max_sge);
	*size = (UROCE_SRQ_RING_HDR_SIZE + (uint64_t)max_wr * *stride + 4095) & ~(uint64_t)4095;
}

#endif /* UROCE_ABI_RING_H */
