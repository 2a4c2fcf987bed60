/*
 * post_ex.c - the extended post-send API of struct ibv_qp_ex (ibv_wr_post(3)).
 *
 * ibv_wr_start takes the SQ lock; each builder (wr_send, wr_rdma_write, ...)
 * starts the next WQE directly in its SQ slot with the qp_ex's current
 * wr_id and wr_flags, and the setters (wr_set_sge*, wr_set_inline_data*,
 * wr_set_ud_addr) fill it in, in any order. Nothing is visible to the
 * daemon until ibv_wr_complete publishes the batch with one release store
 * of sq_pi and one doorbell, as mlx5 rings once per wr_complete.
 * ibv_wr_abort drops the batch: sq_head never moved, so the slots it wrote
 * are free again. The first error found while building is kept and
 * returned by wr_complete, which then posts nothing of the batch.
 * The SGE, inline and atomic rules are those of ibv_post_send
 * (uroce_send_wqe_check in post.c).
 */
#include "config.h"

#include <stdio.h>

#include "uroce.h"

/* What each QP type carries (ibv_create_qp_ex(3); the same sets as mlx5). */
#define UROCE_OPS_UD (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define UROCE_OPS_UC (UROCE_OPS_UD | IBV_QP_EX_WITH_SEND_WITH_INV | \
		      IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		      IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define UROCE_OPS_RC (UROCE_OPS_UC | IBV_QP_EX_WITH_RDMA_READ | \
		      IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

/* Bits rdma-core names after IBV_QP_EX_WITH_TSO, by value so that every
 * verbs.h gives the same answer: ATOMIC_WRITE (1 << 12, rdma-core 44),
 * FLUSH (1 << 11, rdma-core 45). */
#define UROCE_QP_EX_WITH_FLUSH (1ull << 11)
#define UROCE_QP_EX_WITH_ATOMIC_WRITE (1ull << 12)

/* IBTA 1.5 ATOMIC WRITE and FLUSH (RC only): offered when the verbs.h built
 * against has their builders (configure; rdma-core >= 44 and >= 45). */
#ifdef HAVE_STRUCT_IBV_QP_EX_WR_ATOMIC_WRITE
#define UROCE_OPS_RC_AW UROCE_QP_EX_WITH_ATOMIC_WRITE
#else
#define UROCE_OPS_RC_AW 0
#endif
#ifdef HAVE_STRUCT_IBV_QP_EX_WR_FLUSH
#define UROCE_OPS_RC_FLUSH UROCE_QP_EX_WITH_FLUSH
#else
#define UROCE_OPS_RC_FLUSH 0
#endif

int uroce_qp_ex_check_ops(enum ibv_qp_type type, uint64_t send_ops)
{
	uint64_t ok = type == IBV_QPT_RC ? UROCE_OPS_RC | UROCE_OPS_RC_AW | UROCE_OPS_RC_FLUSH :
		      type == IBV_QPT_XRC_SEND ? UROCE_OPS_RC :
		      type == IBV_QPT_UC ? UROCE_OPS_UC :
		      type == IBV_QPT_RAW_PACKET ? IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO : UROCE_OPS_UD;
	uint64_t bad = send_ops & ~ok;
	const char *what;

	if (!bad)
		return 0;
	if (bad & IBV_QP_EX_WITH_TSO)
		what = "TSO (IBV_QP_EX_WITH_TSO, raw packet QPs only)";
	else if (bad & (UROCE_QP_EX_WITH_ATOMIC_WRITE | UROCE_QP_EX_WITH_FLUSH))
		what = type == IBV_QPT_RC ? "ATOMIC_WRITE or FLUSH (this build's verbs.h lacks the builder)" :
					    "ATOMIC_WRITE or FLUSH (RC only)";
	else if (bad & UROCE_OPS_RC)
		what = "an operation this QP type cannot carry";
	else
		what = "an unknown send_ops_flags bit";
	fprintf(stderr, UROCE_LOG_PREFIX "create_qp_ex: send_ops_flags 0x%llx: %s is not supported\n",
		(unsigned long long)send_ops, what);
	return EOPNOTSUPP;
}

static inline struct uroce_qp *xqp(struct ibv_qp_ex *qpx)
{
	return uroce_container_of(qpx, struct uroce_qp, vqp.qp_ex);
}

/* Keeps the first error of the batch; later setters of this WQE do nothing. */
static void ex_fail(struct uroce_qp *qp, int err)
{
	if (!qp->ex_err)
		qp->ex_err = err;
	qp->ex_cur = NULL;
}

/* Closes the WQE being built: the checks that need all its setters (a UD
 * address; an atomic's one 8-byte SGE, which wr_set_sge* checked if it was
 * called at all). */
static void ex_finish(struct uroce_qp *qp)
{
	struct uroce_send_wqe *w = qp->ex_cur;

	if (w && (qp->ex_need_ah || ((w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
				      w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) && w->num_sge != 1)))
		ex_fail(qp, EINVAL);
	qp->ex_cur = NULL;
}

/* Starts WQE number sq_head + ex_nreq for OPCODE (an op of bit OP_BIT). */
static struct uroce_send_wqe *ex_begin(struct ibv_qp_ex *qpx, int opcode, uint64_t op_bit)
{
	struct uroce_qp *qp = xqp(qpx);
	struct uroce_send_wqe *w;
	uint32_t n = qp->sq_head + qp->ex_nreq;
	int ret;

	ex_finish(qp);
	if (qp->ex_err)
		return NULL;
	/* Stricter than mlx5, which posts any op of the QP type: only the
	 * ops asked for at creation, so that what runs here runs on every
	 * provider (rxe installs only those builders). */
	if (!(qp->send_ops & op_bit)) {
		ex_fail(qp, EINVAL);
		return NULL;
	}
	/* mlx5's UC set includes SEND_WITH_INV, which IBTA defines for RC
	 * only (IETH opcodes): the same answer as ibv_post_send's. */
	ret = uroce_send_opcode_check(qpx->qp_base.qp_type, (enum ibv_wr_opcode)opcode);
	if (ret) {
		ex_fail(qp, ret);
		return NULL;
	}
	w = uroce_sq_slot_get(qp, n);
	if (!w) {
		ex_fail(qp, ENOMEM);
		return NULL;
	}
	uroce_send_wqe_init(qp, w, opcode, qpx->wr_flags, n, qpx->wr_id);
	if ((qpx->wr_flags & IBV_SEND_IP_CSUM) && qpx->qp_base.qp_type == IBV_QPT_RAW_PACKET)
		w->flags |= UROCE_WQE_IP_CSUM;
	qp->ex_nreq++;
	qp->ex_cur = w;
	qp->ex_need_ah = qpx->qp_base.qp_type == IBV_QPT_UD;
	return w;
}

static void ex_send(struct ibv_qp_ex *qpx)
{
	ex_begin(qpx, IBV_WR_SEND, IBV_QP_EX_WITH_SEND);
}

static void ex_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct uroce_send_wqe *w = ex_begin(qpx, IBV_WR_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM);

	if (w)
		w->imm_data = imm_data;
}

/* The rkey to invalidate goes in imm_data in host order (abi_ring.h). */
static void ex_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct uroce_send_wqe *w = ex_begin(qpx, IBV_WR_SEND_WITH_INV, IBV_QP_EX_WITH_SEND_WITH_INV);

	if (w)
		w->imm_data = invalidate_rkey;
}

static void ex_rdma(struct ibv_qp_ex *qpx, int opcode, uint64_t op_bit, uint32_t rkey,
		    uint64_t remote_addr, __be32 imm_data)
{
	struct uroce_send_wqe *w = ex_begin(qpx, opcode, op_bit);

	if (!w)
		return;
	w->rkey = rkey;
	w->remote_addr = remote_addr;
	w->imm_data = imm_data;
}

static void ex_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	ex_rdma(qpx, IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE, rkey, remote_addr, 0);
}

static void ex_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      __be32 imm_data)
{
	ex_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, rkey,
		remote_addr, imm_data);
}

static void ex_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	ex_rdma(qpx, IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ, rkey, remote_addr, 0);
}

static void ex_atomic(struct ibv_qp_ex *qpx, int opcode, uint64_t op_bit, uint32_t rkey,
		      uint64_t remote_addr, uint64_t compare_add, uint64_t swap)
{
	struct uroce_send_wqe *w = ex_begin(qpx, opcode, op_bit);

	if (!w)
		return;
	w->rkey = rkey;
	w->remote_addr = remote_addr;
	w->compare_add = compare_add;
	w->swap = swap;
}

static void ex_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      uint64_t compare, uint64_t swap)
{
	ex_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, rkey,
		  remote_addr, compare, swap);
}

static void ex_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
				uint64_t add)
{
	ex_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, rkey,
		  remote_addr, add, 0);
}

#ifdef HAVE_STRUCT_IBV_QP_EX_WR_ATOMIC_WRITE
/* ATOMIC_WRITE: the 8 bytes at ATOMIC_WR are copied now, as they are, into
 * compare_add (abi_ring.h); no SGE, no inline setter. */
static void ex_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			    const void *atomic_wr)
{
	struct uroce_send_wqe *w = ex_begin(qpx, UROCE_IBV_WR_ATOMIC_WRITE,
					    UROCE_QP_EX_WITH_ATOMIC_WRITE);

	if (!w)
		return;
	if (!atomic_wr) {
		ex_fail(xqp(qpx), EINVAL);
		return;
	}
	w->rkey = rkey;
	w->remote_addr = remote_addr;
	memcpy(&w->compare_add, atomic_wr, 8);
}
#endif

#ifdef HAVE_STRUCT_IBV_QP_EX_WR_FLUSH
/* FLUSH: compare_add = LEN, swap = LEVEL << 4 | TYPE (abi_ring.h). EINVAL
 * for a length over UINT32_MAX (the RETH's DMA length), a TYPE other than
 * IBV_FLUSH_GLOBAL, IBV_FLUSH_PERSISTENT or both, a LEVEL other than
 * IBV_FLUSH_RANGE or IBV_FLUSH_MR (ibv_wr_flush(3)). */
static void ex_flush(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, size_t len,
		     uint8_t type, uint8_t level)
{
	struct uroce_send_wqe *w = ex_begin(qpx, UROCE_IBV_WR_FLUSH, UROCE_QP_EX_WITH_FLUSH);

	if (!w)
		return;
	if ((uint64_t)len > UINT32_MAX || !type || (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	    (level != IBV_FLUSH_RANGE && level != IBV_FLUSH_MR)) {
		ex_fail(xqp(qpx), EINVAL);
		return;
	}
	w->rkey = rkey;
	w->remote_addr = remote_addr;
	w->compare_add = len;
	w->swap = (uint64_t)level << 4 | type;
}
#endif

/* LOCAL_INV: rkey = the key to invalidate, no data (abi_ring.h). */
static void ex_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct uroce_send_wqe *w = ex_begin(qpx, IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV);

	if (w)
		w->rkey = invalidate_rkey;
}

/*
 * BIND_MW (abi_ring.h): ah_handle = the MW's handle, rkey = its new rkey,
 * remote_addr/compare_add = the bound range, remote_qkey = the MR's lkey
 * (0 for an unbind, length 0), remote_qpn = mw_access_flags. EINVAL for a
 * range without an MR; EOPNOTSUPP for a range over 2 GiB, as mlx5.
 */
static void ex_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *bind_info)
{
	struct uroce_send_wqe *w = ex_begin(qpx, IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW);
	struct uroce_qp *qp = xqp(qpx);

	if (!w)
		return;
	if (!mw || !bind_info || (bind_info->length && !bind_info->mr)) {
		ex_fail(qp, EINVAL);
		return;
	}
	if (bind_info->length > (1ull << 31)) {
		ex_fail(qp, EOPNOTSUPP);
		return;
	}
	w->ah_handle = mw->handle;
	w->rkey = rkey;
	w->remote_addr = bind_info->addr;
	w->compare_add = bind_info->length;
	w->remote_qkey = bind_info->length ? bind_info->mr->lkey : 0;
	w->remote_qpn = bind_info->mw_access_flags;
}

/* The WQE a setter fills: EINVAL for a setter with no builder before it. */
static struct uroce_send_wqe *ex_cur_wqe(struct uroce_qp *qp)
{
	if (!qp->ex_cur)
		ex_fail(qp, EINVAL); /* keeps an earlier error */
	return qp->ex_cur;
}

/* The WQE a data setter fills: BIND_MW and LOCAL_INV carry no data. */
static struct uroce_send_wqe *ex_data_wqe(struct uroce_qp *qp)
{
	struct uroce_send_wqe *w = ex_cur_wqe(qp);

	if (w && (w->opcode == IBV_WR_BIND_MW || w->opcode == IBV_WR_LOCAL_INV ||
		  w->opcode == UROCE_IBV_WR_ATOMIC_WRITE || w->opcode == UROCE_IBV_WR_FLUSH)) {
		ex_fail(qp, EINVAL);
		return NULL;
	}
	return w;
}

static void ex_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg_list)
{
	struct uroce_qp *qp = xqp(qpx);
	struct uroce_send_wqe *w = ex_data_wqe(qp);
	uint64_t total = 0;
	int ret;

	if (!w)
		return;
	if (num_sge > qp->cap.max_send_sge) {
		ex_fail(qp, EINVAL);
		return;
	}
	for (size_t i = 0; i < num_sge; i++)
		total += sg_list[i].length;
	ret = uroce_send_wqe_check(qp, w->opcode, false, num_sge, total);
	if (ret) {
		ex_fail(qp, ret);
		return;
	}
	uroce_send_wqe_set_sges(w, sg_list, num_sge);
}

static void ex_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	ex_set_sge_list(qpx, 1, &sge);
}

/* The payload is copied now: the application may reuse its buffers at once. */
static void ex_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct uroce_qp *qp = xqp(qpx);
	struct uroce_send_wqe *w = ex_data_wqe(qp);
	uint64_t total = 0;
	uint8_t *dst;
	int ret;

	if (!w)
		return;
	for (size_t i = 0; i < num_buf; i++)
		total += buf_list[i].length;
	ret = uroce_send_wqe_check(qp, w->opcode, true, 0, total);
	if (ret) {
		ex_fail(qp, ret);
		return;
	}
	dst = (uint8_t *)(w + 1);
	for (size_t i = 0; i < num_buf; i++) {
		memcpy(dst, buf_list[i].addr, buf_list[i].length);
		dst += buf_list[i].length;
	}
	w->flags |= UROCE_WQE_INLINE;
	w->num_sge = 0;
	w->byte_len = (uint32_t)total;
}

static void ex_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	ex_set_inline_data_list(qpx, 1, &buf);
}

static void ex_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct uroce_qp *qp = xqp(qpx);
	struct uroce_send_wqe *w;

	/* not for RC/UC: mlx5 installs no wr_set_ud_addr there */
	if (qpx->qp_base.qp_type != IBV_QPT_UD || !ah || ah->context != qpx->qp_base.context) {
		ex_fail(qp, EINVAL);
		return;
	}
	w = ex_cur_wqe(qp);
	if (!w)
		return;
	w->ah_handle = to_uah(ah)->handle;
	w->remote_qpn = remote_qpn & 0xFFFFFF;
	w->remote_qkey = remote_qkey;
	qp->ex_need_ah = false;
}

/* XRC_SEND QPs: the remote XRC SRQ of the WQE being built (abi_ring.h:
 * remote_qpn); EINVAL on another QP type or for a number over 24 bits. */
static void ex_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct uroce_qp *qp = xqp(qpx);
	struct uroce_send_wqe *w;

	if (qpx->qp_base.qp_type != IBV_QPT_XRC_SEND || remote_srqn > 0xFFFFFF) {
		ex_fail(qp, EINVAL);
		return;
	}
	w = ex_cur_wqe(qp);
	if (w)
		w->remote_qpn = remote_srqn;
}

/* TSO (raw packet QPs): the header is copied now, into its place in the
 * slot (abi_ring.h); the payload comes from wr_set_sge* / inline setters. */
static void ex_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	struct uroce_send_wqe *w = ex_begin(qpx, IBV_WR_TSO, IBV_QP_EX_WITH_TSO);
	int ret;

	if (!w)
		return;
	ret = uroce_tso_wqe_set(xqp(qpx), w, hdr, hdr_sz, mss);
	if (ret)
		ex_fail(xqp(qpx), ret);
}

static void ex_start(struct ibv_qp_ex *qpx)
{
	struct uroce_qp *qp = xqp(qpx);

	pthread_spin_lock(&qp->sq_lock);
	qp->ex_nreq = 0;
	qp->ex_err = 0;
	qp->ex_cur = NULL;
	qp->ex_need_ah = false;
}

/*
 * ibv_wr_complete: 0, or nothing of the batch is posted and: the first
 * building error (EINVAL: op not in send_ops_flags, bad SGE count, inline
 * too long, UD WQE without wr_set_ud_addr, an atomic without exactly one
 * 8-byte SGE (wr_set_sge of 4 bytes, none, two), a setter the op does not take;
 * ENOMEM: SQ full), EINVAL (QP in RESET, INIT, RTR), EIO (daemon gone).
 */
static int ex_complete(struct ibv_qp_ex *qpx)
{
	struct uroce_qp *qp = xqp(qpx);
	int ret;

	ex_finish(qp);
	ret = qp->ex_err;
	if (!ret)
		ret = uroce_post_send_state(&qpx->qp_base);
	if (!ret && qp->ex_nreq)
		uroce_sq_ring_doorbell(qp, qp->ex_nreq);
	qp->ex_nreq = 0;
	pthread_spin_unlock(&qp->sq_lock);
	return ret;
}

static void ex_abort(struct ibv_qp_ex *qpx)
{
	struct uroce_qp *qp = xqp(qpx);

	qp->ex_nreq = 0;
	qp->ex_cur = NULL;
	pthread_spin_unlock(&qp->sq_lock);
}

/*
 * Every builder and setter is installed whatever send_ops asks (as mlx5
 * does); those of ops not asked for, or not of this QP type, fail the
 * batch at wr_complete instead of leaving a NULL pointer to call.
 * wr_atomic_write and wr_flush are installed when this build's verbs.h
 * has them (mlx5 has neither; rxe has both); without them their flags are
 * refused at creation.
 */
void uroce_qp_ex_init(struct uroce_qp *qp, uint64_t send_ops)
{
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;

	qp->send_ops = send_ops;
	qp->vqp.comp_mask |= VERBS_QP_EX;
	x->comp_mask = 0;
	x->wr_start = ex_start;
	x->wr_complete = ex_complete;
	x->wr_abort = ex_abort;
	x->wr_send = ex_send;
	x->wr_send_imm = ex_send_imm;
	x->wr_send_inv = ex_send_inv;
	x->wr_send_tso = ex_send_tso;
	x->wr_rdma_write = ex_rdma_write;
	x->wr_rdma_write_imm = ex_rdma_write_imm;
	x->wr_rdma_read = ex_rdma_read;
	x->wr_atomic_cmp_swp = ex_atomic_cmp_swp;
	x->wr_atomic_fetch_add = ex_atomic_fetch_add;
	x->wr_bind_mw = ex_bind_mw;
	x->wr_local_inv = ex_local_inv;
	x->wr_set_sge = ex_set_sge;
	x->wr_set_sge_list = ex_set_sge_list;
	x->wr_set_inline_data = ex_set_inline_data;
	x->wr_set_inline_data_list = ex_set_inline_data_list;
	x->wr_set_ud_addr = ex_set_ud_addr;
	x->wr_set_xrc_srqn = ex_set_xrc_srqn;
#ifdef HAVE_STRUCT_IBV_QP_EX_WR_ATOMIC_WRITE
	x->wr_atomic_write = ex_atomic_write;
#endif
#ifdef HAVE_STRUCT_IBV_QP_EX_WR_FLUSH
	x->wr_flush = ex_flush;
#endif
}
