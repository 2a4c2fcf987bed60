/*
 * dv_wc.c - urocedv's custom work-completion poll (<infiniband/urocedv.h>,
 * urocedv(3)): the CQ's completions written into an array of WCs laid out
 * at CQ creation for exactly the requested fields, 64-bit fields first, then
 * 32, 16 and 8 (the layout rule of urocedv.h).
 *
 * The poll is picked per CQ at creation (a function pointer in the CQ):
 * the common field sets get a loop compiled for that set, whose offsets
 * are constants and whose absent fields cost nothing; any other set gets
 * the generic loop, which tests each field's flag per completion. Every
 * field holds what the matching ibv_wc_read_* accessor of cq_poll.c
 * returns for the same CQE (tests/provider_dv_wc.c checks all 512 sets).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "cqe_decode.h"

static inline void put64(char *p, uint64_t v) { memcpy(p, &v, sizeof(v)); }
static inline void put32(char *p, uint32_t v) { memcpy(p, &v, sizeof(v)); }
static inline void put16(char *p, uint16_t v) { memcpy(p, &v, sizeof(v)); }

/* Offset of field idx for the field set f (the layout rule of urocedv.h):
 * the enum lists the fields in layout order, so it is the head plus the
 * sizes of the fields of f before idx. Folds to a constant when f is one. */
#define HAS(f, flag, size) (((f) & (flag)) ? (size) : 0u)
static inline __attribute__((always_inline)) unsigned int const_off(uint64_t f,
								    enum urocedv_wc_field idx)
{
	unsigned int o = sizeof(struct urocedv_wc);

	o += idx > UROCEDV_WC_COMPLETION_TS ? HAS(f, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, 8) : 0;
	o += idx > UROCEDV_WC_COMPLETION_WALLCLOCK_NS ?
		     HAS(f, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, 8) : 0;
	o += idx > UROCEDV_WC_BYTE_LEN ? HAS(f, IBV_WC_EX_WITH_BYTE_LEN, 4) : 0;
	o += idx > UROCEDV_WC_IMM_DATA ? HAS(f, IBV_WC_EX_WITH_IMM, 4) : 0;
	o += idx > UROCEDV_WC_QP_NUM ? HAS(f, IBV_WC_EX_WITH_QP_NUM, 4) : 0;
	o += idx > UROCEDV_WC_SRC_QP ? HAS(f, IBV_WC_EX_WITH_SRC_QP, 4) : 0;
	o += idx > UROCEDV_WC_SLID ? HAS(f, IBV_WC_EX_WITH_SLID, 2) : 0;
	o += idx > UROCEDV_WC_SL ? HAS(f, IBV_WC_EX_WITH_SL, 1) : 0;
	o += idx > UROCEDV_WC_DLID_PATH_BITS ? HAS(f, IBV_WC_EX_WITH_DLID_PATH_BITS, 1) : 0;
	return o;
}

/* Where field idx goes: from the CQ's layout (generic loop) or constant. */
#define OFF(idx) (l ? l->offset[idx] : const_off(f, idx))
#define STRIDE() (l ? l->stride : ((const_off(f, UROCEDV_WC_NUM_FIELDS) + 7) & ~7u))

/* Writes the optional fields f of one CQE at p; l is NULL when f is a constant. */
static inline __attribute__((always_inline)) void fill_fields(struct uroce_cq *cq,
							      const struct mlx5_cqe64 *cqe,
							      uint8_t op, uint32_t sop, char *p,
							      uint64_t f,
							      const struct urocedv_wc_layout *l)
{
	if (f & (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)) {
		uint64_t ts = be64toh(cqe->timestamp);

		if (f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
			put64(p + OFF(UROCEDV_WC_COMPLETION_TS), ts);
		if (f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
			put64(p + OFF(UROCEDV_WC_COMPLETION_WALLCLOCK_NS), uroce_cqe_wallclock_ns(cq, ts));
	}
	if (f & IBV_WC_EX_WITH_BYTE_LEN)
		put32(p + OFF(UROCEDV_WC_BYTE_LEN), uroce_cqe_byte_len(&cq->qpc, cqe, op, sop));
	if (f & IBV_WC_EX_WITH_IMM)
		put32(p + OFF(UROCEDV_WC_IMM_DATA), uroce_cqe_imm(cqe, op));
	if (f & IBV_WC_EX_WITH_QP_NUM)
		put32(p + OFF(UROCEDV_WC_QP_NUM), sop & 0xFFFFFF);
	if (f & IBV_WC_EX_WITH_SRC_QP)
		put32(p + OFF(UROCEDV_WC_SRC_QP), be32toh(cqe->flags_rqpn) & 0xFFFFFF);
	if (f & IBV_WC_EX_WITH_SLID)
		put16(p + OFF(UROCEDV_WC_SLID), be16toh(cqe->slid));
	if (f & IBV_WC_EX_WITH_SL)
		p[OFF(UROCEDV_WC_SL)] = (char)((be32toh(cqe->flags_rqpn) >> 24) & 0xF);
	if (f & IBV_WC_EX_WITH_DLID_PATH_BITS)
		p[OFF(UROCEDV_WC_DLID_PATH_BITS)] = (char)(cqe->ml_path & 0x7F);
}

/* The poll loop for field set f with layout l (NULL: f is a constant); inlined into each variant. */
static inline __attribute__((always_inline)) int poll_wc(struct uroce_cq *cq, int num_entries,
							 char *p, uint64_t f,
							 const struct urocedv_wc_layout *l)
{
	int n = 0;

	if (num_entries < 0)
		return -EINVAL;
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
	for (; n < num_entries; n++, p += STRIDE()) {
		struct urocedv_wc *h = (struct urocedv_wc *)p;
		enum ibv_wc_status status;
		struct mlx5_cqe64 *cqe;
		uint8_t op;
		uint32_t sop;

		if (UROCE_UNLIKELY(!uroce_ok_cqe(cq, &cqe, &op))) {
			cqe = uroce_next_cqe(cq); /* error CQEs, the empty ring */
			if (!cqe)
				break;
			op = cqe->op_own >> 4;
		}
		sop = uroce_cqe_sop(cqe);
		h->wr_id = uroce_cqe_retire(cq, cqe, op, sop, &cq->qpc, &status);
		h->vendor_err = uroce_cqe_vendor_err(cqe, op);
		h->wc_flags = (uint16_t)uroce_cqe_wc_flags(cqe, op, sop);
		h->status = (uint8_t)status;
		h->opcode = (uint8_t)uroce_cqe_opcode(op, sop);
		fill_fields(cq, cqe, op, sop, p, f, l);
		uroce_consume(cq);
	}
	return uroce_poll_done(cq, n);
}

/* Any field set: the layout copied to locals (the stores into wc cannot alias them). */
static int poll_generic(struct uroce_cq *cq, int num_entries, void *wc)
{
	struct urocedv_wc_layout l = cq->wc_layout;

	return poll_wc(cq, num_entries, wc, l.fields, &l);
}

/* One loop compiled for the constant field set F. */
#define POLL_FOR(name, F)                                                    \
	static int name(struct uroce_cq *cq, int num_entries, void *wc)        \
	{                                                                    \
		return poll_wc(cq, num_entries, wc, (F), NULL);              \
	}
#define F_LEN_QPN (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM)
#define F_TS IBV_WC_EX_WITH_COMPLETION_TIMESTAMP
POLL_FOR(poll_none, 0)
POLL_FOR(poll_len_qpn, F_LEN_QPN)
POLL_FOR(poll_len_qpn_ts, F_LEN_QPN | F_TS)
POLL_FOR(poll_standard, IBV_WC_STANDARD_FLAGS)
POLL_FOR(poll_standard_ts, IBV_WC_STANDARD_FLAGS | F_TS)

static int (*pick(uint64_t f))(struct uroce_cq *, int, void *)
{
	switch (f) {
	case 0: return poll_none;
	case F_LEN_QPN: return poll_len_qpn;
	case F_LEN_QPN | F_TS: return poll_len_qpn_ts;
	case IBV_WC_STANDARD_FLAGS: return poll_standard;
	case IBV_WC_STANDARD_FLAGS | F_TS: return poll_standard_ts;
	default: return poll_generic;
	}
}

/* The flag of each field, in the order of enum urocedv_wc_field. */
static const uint64_t field_flag[UROCEDV_WC_NUM_FIELDS] = {
	[UROCEDV_WC_COMPLETION_TS] = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	[UROCEDV_WC_COMPLETION_WALLCLOCK_NS] = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	[UROCEDV_WC_BYTE_LEN] = IBV_WC_EX_WITH_BYTE_LEN,
	[UROCEDV_WC_IMM_DATA] = IBV_WC_EX_WITH_IMM,
	[UROCEDV_WC_QP_NUM] = IBV_WC_EX_WITH_QP_NUM,
	[UROCEDV_WC_SRC_QP] = IBV_WC_EX_WITH_SRC_QP,
	[UROCEDV_WC_SLID] = IBV_WC_EX_WITH_SLID,
	[UROCEDV_WC_SL] = IBV_WC_EX_WITH_SL,
	[UROCEDV_WC_DLID_PATH_BITS] = IBV_WC_EX_WITH_DLID_PATH_BITS,
};

void uroce_dv_wc_setup(struct uroce_cq *cq)
{
	struct urocedv_wc_layout *l = &cq->wc_layout;
	uint64_t f = cq->wc_flags;

	memset(l, 0, sizeof(*l));
	l->fields = f;
	for (int i = 0; i < UROCEDV_WC_NUM_FIELDS; i++)
		if (f & field_flag[i])
			l->offset[i] = (uint16_t)const_off(f, (enum urocedv_wc_field)i);
	l->stride = (const_off(f, UROCEDV_WC_NUM_FIELDS) + 7) & ~7u;
	cq->wc_poll = pick(f);
}

/* urocedv.h: up to num_entries custom WCs; a negative value for a CQ
 * urocedv_create_cq_wc did not make or num_entries < 0. */
UROCE_DV_EXPORT int urocedv_poll_cq_wc(struct ibv_cq_ex *ibcq, int num_entries, void *wc)
{
	struct uroce_cq *cq = to_ucq_ex(ibcq);

	if (UROCE_UNLIKELY(!cq->wc_poll))
		return -EINVAL;
	return cq->wc_poll(cq, num_entries, wc);
}
