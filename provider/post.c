/*
 * post.c - posting work requests: WQEs into the QP's shared rings.
 *
 * abi.h "SQ/RQ rings": WQE number n goes to slot
 * n & (cnt-1) as a uroce_send_wqe / uroce_recv_wqe header followed by its
 * SGE list (or, for IBV_SEND_INLINE, the payload itself); a slot is free
 * while the daemon is done with it (ci) and its completion was polled
 * (in_use() below). After the WQEs,
 * a release store of the new producer index and one doorbell write per
 * call, skipped while the daemon has said it will look at the ring anyway
 * (abi_ring.h "Doorbell suppression"). As in mlx5, the wr_id stays in the provider (sq_wrid / rq_wrid,
 * indexed like the ring) and comes back through the CQE's wqe_counter
 * (cq_poll.c). These ops are registered only when the daemon says it runs
 * the rings (UROCE_HELLO_CAP_WQE_RINGS, context.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>

#include "liveness.h"
#include "uroce.h"

/* Shortest frame a raw packet QP sends: mlx5 needs the 18 bytes of
 * MLX5_ETH_L2_INLINE_HEADER_SIZE in the WQE and fails the post with EINVAL
 * without them (providers/mlx5/qp.c, copy_eth_inline_headers). */
#define UROCE_RAW_MIN_FRAME 18

/* Message size limit of RoCE (IBTA: 2^31 bytes). */
#define UROCE_MAX_MSG_BYTES (1ull << 31)

static inline struct uroce_qp_ring_hdr *ring_hdr(struct uroce_qp *qp)
{
	return qp->ring;
}

/*
 * Slots of a queue still in use: a slot is free again only when the daemon
 * is done with its WQE (ci, from the ring header) AND the application polled
 * the completion that carries its wr_id (tail, advanced by cq_poll.c, as
 * mlx5's sq.tail); otherwise a new wr_id would overwrite one not yet
 * delivered. Unsignalled send WQEs retire with the next signalled CQE.
 */
static inline uint32_t in_use(uint32_t head, const uint32_t *ci, const uint32_t *tail)
{
	uint32_t a = head - __atomic_load_n(ci, __ATOMIC_ACQUIRE);
	uint32_t b = head - __atomic_load_n(tail, __ATOMIC_ACQUIRE);

	return a > b ? a : b;
}

static bool is_atomic(int opcode)
{
	return opcode == IBV_WR_ATOMIC_CMP_AND_SWP || opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

int uroce_send_wqe_check(const struct uroce_qp *qp, int opcode, bool inl, uint64_t num_sge,
			 uint64_t total)
{
	if (num_sge > qp->cap.max_send_sge)
		return EINVAL;
	if (total > UROCE_MAX_MSG_BYTES)
		return EINVAL;
	/* the payload a TSO WQE cuts: tso_caps.max_tso, as mlx5_post_send
	 * checks its SGEs */
	if (opcode == IBV_WR_TSO && !inl && total > UROCE_MAX_TSO)
		return EINVAL;
	if (inl && total > qp->cap.max_inline_data)
		return EINVAL;
	/* One 8-byte local buffer; inline is for SEND and WRITE only. */
	if ((is_atomic(opcode) || opcode == IBV_WR_RDMA_READ) && inl)
		return EINVAL;
	/* An atomic's result needs exactly one 8-byte buffer: the kernel's
	 * rxe refuses any other total at post (validate_send_wr), mlx5 would
	 * write 8 bytes whatever the SGE says (docs/transport.md "Atomics"). */
	if (is_atomic(opcode) && (num_sge != 1 || total != 8))
		return EINVAL;
	return 0;
}

struct uroce_send_wqe *uroce_sq_slot_get(struct uroce_qp *qp, uint32_t n)
{
	uint32_t cnt = qp->cap.max_send_wr;

	if (in_use(n, &ring_hdr(qp)->sq_ci, &qp->sq_tail) >= cnt)
		return NULL;
	return (struct uroce_send_wqe *)((char *)qp->ring + qp->layout.sq_offset +
					 (size_t)(n & (cnt - 1)) * qp->layout.sq_stride);
}

void uroce_send_wqe_init(struct uroce_qp *qp, struct uroce_send_wqe *w, int opcode,
			 unsigned int send_flags, uint32_t n, uint64_t wr_id)
{
	uint32_t slot = n & (qp->cap.max_send_wr - 1);

	memset(w, 0, sizeof(*w));
	w->opcode = (uint8_t)opcode;
	w->wqe_index = (uint16_t)n;
	if ((send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		w->flags |= UROCE_WQE_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		w->flags |= UROCE_WQE_SOLICITED;
	if (send_flags & IBV_SEND_FENCE)
		w->flags |= UROCE_WQE_FENCE;
	qp->sq_wrid[slot] = wr_id;
	qp->sq_wqe_head[slot] = n;
}

void uroce_send_wqe_set_sges(struct uroce_send_wqe *w, const struct ibv_sge *sg, size_t n)
{
	struct uroce_sge *sge = (struct uroce_sge *)(w + 1);

	w->flags &= (uint8_t)~UROCE_WQE_INLINE;
	w->num_sge = (uint8_t)n;
	w->byte_len = 0;
	for (size_t i = 0; i < n; i++) {
		sge[i].addr = sg[i].addr;
		sge[i].length = sg[i].length;
		sge[i].lkey = sg[i].lkey;
		w->byte_len += sg[i].length;
	}
}

int uroce_tso_wqe_set(struct uroce_qp *qp, struct uroce_send_wqe *w, const void *hdr, uint16_t hdr_sz,
		      uint16_t mss)
{
	if (hdr_sz < UROCE_RAW_MIN_FRAME || hdr_sz > qp->max_tso_header || !hdr || mss == 0)
		return EINVAL;
	memcpy((uint8_t *)w + uroce_sq_tso_hdr_off(&qp->cap), hdr, hdr_sz);
	w->tso_hdr_sz = hdr_sz;
	w->mss = mss;
	return 0;
}

int uroce_post_send_state(struct ibv_qp *ibqp)
{
	if (ibqp->state == IBV_QPS_RESET || ibqp->state == IBV_QPS_INIT ||
	    ibqp->state == IBV_QPS_RTR)
		return EINVAL;
	if (uroce_ctx_known_gone(to_uctx(ibqp->context)))
		return EIO;
	return 0;
}

void uroce_sq_ring_doorbell(struct uroce_qp *qp, uint32_t nreq)
{
	qp->sq_head += nreq;
	__atomic_store_n(&ring_hdr(qp)->sq_pi, qp->sq_head, __ATOMIC_RELEASE);
	if (uroce_qp_doorbell_needed(ring_hdr(qp)))
		eventfd_write(to_uctx(qp->vqp.qp.context)->doorbell, 1);
}

/* The LOCAL_INV or BIND_MW fields of W from WR (abi_ring.h layout); SGEs
 * are ignored, as mlx5 ignores them. 0 or EINVAL (inline, no window). */
static int build_mw_wqe(const struct ibv_send_wr *wr, struct uroce_send_wqe *w)
{
	const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

	if (wr->send_flags & IBV_SEND_INLINE)
		return EINVAL;
	if (wr->opcode == IBV_WR_LOCAL_INV) {
		w->rkey = wr->invalidate_rkey;
		return 0;
	}
	if (!wr->bind_mw.mw)
		return EINVAL;
	w->ah_handle = wr->bind_mw.mw->handle;
	w->rkey = wr->bind_mw.rkey;
	w->remote_addr = b->addr;
	w->compare_add = b->length;
	w->remote_qkey = b->mr && b->length ? b->mr->lkey : 0;
	w->remote_qpn = b->mw_access_flags;
	return 0;
}

/* Fills one send WQE in its slot; returns 0 or the errno for *bad_wr. */
static int build_send(struct uroce_qp *qp, const struct ibv_send_wr *wr,
		      struct uroce_send_wqe *w, uint32_t n)
{
	bool inl = wr->send_flags & IBV_SEND_INLINE;
	uint64_t total = 0;
	int ret;

	/* ibv_send_wr has no field for ATOMIC_WRITE's 8 bytes or FLUSH's
	 * type and level: ibv_wr_atomic_write / ibv_wr_flush only (post_ex.c) */
	if ((int)wr->opcode == UROCE_IBV_WR_ATOMIC_WRITE || (int)wr->opcode == UROCE_IBV_WR_FLUSH)
		return EOPNOTSUPP;
	ret = uroce_send_opcode_check(qp->vqp.qp.qp_type, wr->opcode);
	if (ret)
		return ret;
	if (wr->opcode == IBV_WR_LOCAL_INV || wr->opcode == IBV_WR_BIND_MW) {
		uroce_send_wqe_init(qp, w, wr->opcode, wr->send_flags, n, wr->wr_id);
		return build_mw_wqe(wr, w);
	}
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	ret = uroce_send_wqe_check(qp, wr->opcode, inl, (uint64_t)wr->num_sge, total);
	if (ret)
		return ret;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND && wr->qp_type.xrc.remote_srqn > 0xFFFFFF)
		return EINVAL;
	if (qp->vqp.qp.qp_type == IBV_QPT_RAW_PACKET && total < UROCE_RAW_MIN_FRAME &&
	    wr->opcode != IBV_WR_TSO)
		return EINVAL;
	/* checksum offload: raw packet QPs; mlx5 refuses it on UD (no
	 * IPoIB underlay here) and ignores it on connected QPs */
	if ((wr->send_flags & IBV_SEND_IP_CSUM) && qp->vqp.qp.qp_type == IBV_QPT_UD)
		return EINVAL;

	uroce_send_wqe_init(qp, w, wr->opcode, wr->send_flags, n, wr->wr_id);
	if ((wr->send_flags & IBV_SEND_IP_CSUM) && qp->vqp.qp.qp_type == IBV_QPT_RAW_PACKET)
		w->flags |= UROCE_WQE_IP_CSUM;
	if (wr->opcode == IBV_WR_TSO) {
		ret = uroce_tso_wqe_set(qp, w, wr->tso.hdr, wr->tso.hdr_sz, wr->tso.mss);
		if (ret)
			return ret;
	}
	if (wr->opcode == IBV_WR_SEND_WITH_IMM || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		w->imm_data = wr->imm_data;
	if (wr->opcode == IBV_WR_SEND_WITH_INV)
		w->invalidate_rkey = wr->invalidate_rkey;
	if (wr->opcode == IBV_WR_RDMA_WRITE || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
	    wr->opcode == IBV_WR_RDMA_READ) {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	if (is_atomic(wr->opcode)) {
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		w->ah_handle = to_uah(wr->wr.ud.ah)->handle;
		w->remote_qpn = wr->wr.ud.remote_qpn & 0xFFFFFF;
		w->remote_qkey = wr->wr.ud.remote_qkey;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		w->remote_qpn = wr->qp_type.xrc.remote_srqn;

	if (inl) {
		/* The payload is copied now: the application may reuse its buffer at once. */
		uint8_t *dst = (uint8_t *)(w + 1);

		w->flags |= UROCE_WQE_INLINE;
		w->byte_len = (uint32_t)total;
		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(dst, (const void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
			dst += wr->sg_list[i].length;
		}
	} else {
		uroce_send_wqe_set_sges(w, wr->sg_list, (size_t)wr->num_sge);
	}
	return 0;
}

/*
 * ibv_post_send. Returns 0, or with *bad_wr at the first WR not posted:
 * EINVAL (QP in RESET/INIT/RTR, too many SGEs, inline data over
 * max_inline_data, an opcode the QP type cannot carry, UD without an AH,
 * message over 2^31 bytes, RDMA READ or an atomic with IBV_SEND_INLINE, an
 * atomic whose local data is not one SGE of exactly 8 bytes (num_sge 0 or
 * 2, length 4 or 16), SEND_WITH_INV off RC, BIND_MW / LOCAL_INV
 * on UD or with IBV_SEND_INLINE, BIND_MW without a window; on a raw packet
 * QP: an opcode other than SEND and TSO, a SEND frame under 18 bytes, a
 * TSO header under 18 bytes or over max_tso_header, mss 0, a TSO payload
 * in SGEs over tso_caps.max_tso; IBV_SEND_IP_CSUM on UD), EOPNOTSUPP
 * (ATOMIC_WRITE, FLUSH, TSO off a raw packet QP),
 * ENOMEM (send queue full), EIO (the daemon is gone, as mlx5 posts fail in
 * internal-error state). WRs before *bad_wr are posted.
 */
int uroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return uroce_post_send_flags(ibqp, wr, bad_wr, 0);
}

int uroce_post_send_flags(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr,
			  uint8_t wqe_flags)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	uint32_t posted = 0;
	int ret;

	ret = uroce_post_send_state(ibqp);
	if (ret) {
		*bad_wr = wr;
		return ret;
	}
	pthread_spin_lock(&qp->sq_lock);
	for (; wr; wr = wr->next) {
		struct uroce_send_wqe *w = uroce_sq_slot_get(qp, qp->sq_head + posted);

		if (!w) {
			ret = ENOMEM;
			break;
		}
		ret = build_send(qp, wr, w, qp->sq_head + posted);
		if (ret)
			break;
		w->flags |= wqe_flags;
		posted++;
	}
	if (posted)
		uroce_sq_ring_doorbell(qp, posted);
	pthread_spin_unlock(&qp->sq_lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/*
 * ibv_post_recv. Returns 0, or with *bad_wr at the first WR not posted:
 * EINVAL (QP in RESET, too many SGEs), ENOMEM (receive queue full, or a
 * QP created with max_recv_wr 0 or on an SRQ: it has no RQ, and mlx5's
 * overflow check answers ENOMEM for those), EIO (the daemon is gone).
 */
int uroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	struct uroce_qp_ring_hdr *h = ring_hdr(qp);
	uint32_t cnt = qp->cap.max_recv_wr, posted = 0;
	int ret = 0;

	if (ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	if (uroce_ctx_known_gone(to_uctx(ibqp->context))) {
		*bad_wr = wr;
		return EIO;
	}
	pthread_spin_lock(&qp->rq_lock);
	for (; wr; wr = wr->next) {
		struct uroce_recv_wqe *w;
		uint32_t slot;

		/* overflow first, as mlx5_post_recv checks */
		if (in_use(qp->rq_head, &h->rq_ci, &qp->rq_tail) >= cnt) {
			ret = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_recv_sge) {
			ret = EINVAL;
			break;
		}
		slot = qp->rq_head & (cnt - 1);
		w = (struct uroce_recv_wqe *)((char *)qp->ring + qp->layout.rq_offset +
					      (size_t)slot * qp->layout.rq_stride);
		uroce_recv_wqe_fill(w, (uint16_t)qp->rq_head, wr);
		qp->rq_wrid[slot] = wr->wr_id;
		qp->rq_head++;
		posted++;
	}
	if (posted) {
		__atomic_store_n(&h->rq_pi, qp->rq_head, __ATOMIC_RELEASE);
		if (uroce_qp_rq_doorbell_needed(h))
			eventfd_write(to_uctx(ibqp->context)->doorbell, 1);
	}
	pthread_spin_unlock(&qp->rq_lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}
