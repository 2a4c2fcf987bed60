/*
 * qp.c - queue pairs: creation with their SQ/RQ rings, modify, query, destroy.
 *
 * The daemon owns the QP: it allocates the QPN and runs the IBTA state
 * machine with its attribute-mask validation (docs/daemon.md); the provider
 * forwards struct ibv_qp_attr + mask unchanged and returns the daemon's
 * errno. The provider owns the QP's ring memfd (abi.h "SQ/RQ rings") and,
 * like mlx5, one wr_id array per queue indexed by WQE number & (cnt - 1), so
 * polling finds wr_id from the CQE's wqe_counter (cq_poll.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uroce.h"

#define UROCE_SUP_QP_COMP_MASK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS | \
				IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_IND_TABLE | \
				IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_MAX_TSO_HEADER | \
				IBV_QP_INIT_ATTR_XRCD)
#define UROCE_KNOWN_QP_COMP_MASK ((IBV_QP_INIT_ATTR_SEND_OPS_FLAGS << 1) - 1)

/* Frees what the QP owns, not the struct itself. */
void uroce_qp_release(struct uroce_qp *qp)
{
	if (qp->ring)
		uroce_ring_unmap(qp->ring, qp->layout.size);
	if (qp->ring_fd >= 0)
		close(qp->ring_fd);
	free(qp->sq_wrid);
	free(qp->rq_wrid);
	free(qp->sq_wqe_head);
	qp->ring = NULL;
	qp->ring_fd = -1;
	qp->sq_wrid = qp->rq_wrid = NULL;
	qp->sq_wqe_head = NULL;
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
}

static void free_qp(struct uroce_qp *qp)
{
	uroce_qp_release(qp);
	free(qp);
}

/* Sizes, seals and maps the ring memfd and allocates the wr_id arrays. */
int uroce_qp_alloc_rings(struct uroce_qp *qp, struct ibv_pd *pd)
{
	uint32_t sq = qp->cap.max_send_wr, rq = qp->cap.max_recv_wr;

	uroce_qp_ring_layout_tso(&qp->cap, qp->max_tso_header, &qp->layout);
	qp->ring_fd = memfd_create("uroce-qp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (qp->ring_fd < 0)
		return errno;
	if (ftruncate(qp->ring_fd, (off_t)qp->layout.size) ||
	    fcntl(qp->ring_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return errno;
	qp->ring = uroce_ring_map(pd, qp->ring_fd, qp->layout.size, UROCE_RES_TYPE_QP);
	if (qp->ring == MAP_FAILED) {
		qp->ring = NULL;
		return errno;
	}
	qp->sq_wrid = calloc(sq, sizeof(*qp->sq_wrid));
	qp->sq_wqe_head = calloc(sq, sizeof(*qp->sq_wqe_head));
	qp->rq_wrid = calloc(rq ? rq : 1, sizeof(*qp->rq_wrid));
	if (!qp->sq_wrid || !qp->sq_wqe_head || !qp->rq_wrid)
		return ENOMEM;
	return 0;
}

/* QP's max_tso_header from ATTR: raw packet QPs only (as mlx5_create_qp),
 * and the SQ slot it makes within UROCE_SQ_DESC_MAX (as mlx5_calc_send_wqe
 * bounds the WQE); 0 or EINVAL. */
static int tso_header_set(struct uroce_qp *qp, const struct ibv_qp_init_attr_ex *attr)
{
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER) || !attr->max_tso_header)
		return 0;
	if (attr->qp_type != IBV_QPT_RAW_PACKET ||
	    uroce_sq_stride_tso(qp->cap.max_send_sge, qp->cap.max_inline_data, attr->max_tso_header) >
		    UROCE_SQ_DESC_MAX)
		return EINVAL;
	qp->max_tso_header = attr->max_tso_header;
	return 0;
}

/*
 * Enter QP, created at the daemon with its mutex and cond initialised, in
 * the context's QP table. Returns 0, or ENOMEM with the QP destroyed at the
 * daemon again and its mutex and cond destroyed (the application never saw it).
 */
int uroce_qp_publish(struct uroce_context *ctx, struct uroce_qp *qp)
{
	struct uroce_handle_req dreq = { .handle = qp->handle };
	struct uroce_destroy_qp_resp dresp;

	if (!uroce_qp_table_insert(ctx, qp))
		return 0;
	uroce_ctl_call(ctx, UROCE_OP_DESTROY_QP, &dreq, sizeof(dreq), NULL, 0, &dresp, sizeof(dresp),
		       NULL, NULL);
	pthread_mutex_destroy(&qp->vqp.qp.mutex);
	pthread_cond_destroy(&qp->vqp.qp.cond);
	return ENOMEM;
}

/* Whether ATTR asks for QP create flags (BLOCK_SELF_MCAST_LB, SCATTER_FCS,
 * CVLAN_STRIPPING, SOURCE_QPN, PCI_WRITE_END_PADDING): none is offered;
 * says so on stderr. */
static bool create_flags_refused(const struct ibv_qp_init_attr_ex *attr)
{
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) || !attr->create_flags)
		return false;
	fprintf(stderr, UROCE_LOG_PREFIX "QP create_flags 0x%x are not supported\n", attr->create_flags);
	return true;
}

/*
 * ibv_create_qp_ex (and ibv_create_qp through it). Supported: RC, UC, UD,
 * XRC_SEND (a PD and a send CQ; no receive side: recv_cq and srq are
 * ignored, max_recv_wr / max_recv_sge come back 0, docs/xrc.md),
 * XRC_RECV (xrc.c) and
 * RAW_PACKET (Ethernet frames, docs/raw-packet.md; no SRQ: EINVAL) QPs on one PD with a send and a receive CQ, optionally on a basic SRQ
 * (then the QP has no RQ: cap.max_recv_wr and max_recv_sge are ignored and
 * come back 0, as on mlx5); attr->cap is rounded up as the rings hold it
 * and written back (as mlx5 does).
 * With IBV_QP_INIT_ATTR_SEND_OPS_FLAGS the QP gets the extended post API
 * (ibv_qp_to_qp_ex, ibv_wr_post(3); post_ex.c) for the send_ops_flags asked.
 * Errors (errno): EOPNOTSUPP for other QP types (DRIVER),
 * create flags, send_ops_flags the QP type cannot carry or
 * uroce lacks (TSO off a raw packet QP, ATOMIC_WRITE or FLUSH off RC or
 * without the builder in this build's verbs.h, unknown bits;
 * as mlx5); EINVAL for no PD, no CQ, a PD or CQ of another context, caps
 * over the device limits, unknown comp_mask bits, max_tso_header on a QP
 * other than RAW_PACKET or too large for the SQ slot (UROCE_SQ_DESC_MAX,
 * docs/raw-packet.md §3); ENOMEM.
 */
struct ibv_qp *uroce_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct uroce_context *ctx = to_uctx(context);
	struct uroce_create_qp_req req;
	struct uroce_create_qp_resp resp;
	struct uroce_qp *qp;
	struct ibv_qp *ibqp;
	struct ibv_cq *rcq = attr->recv_cq;
	struct ibv_srq *srq = attr->srq;
	int ret;

	if (attr->comp_mask & ~(uint32_t)UROCE_KNOWN_QP_COMP_MASK)
		return uroce_fail_null(EINVAL);
	if (attr->comp_mask & ~(uint32_t)UROCE_SUP_QP_COMP_MASK)
		return uroce_fail_null(EOPNOTSUPP);
	if (create_flags_refused(attr))
		return uroce_fail_null(EOPNOTSUPP);
	if (attr->comp_mask & (IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH))
		return uroce_create_rss_qp(context, attr);
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return uroce_create_xrc_recv_qp(context, attr);
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD && attr->qp_type != IBV_QPT_RAW_PACKET &&
	    attr->qp_type != IBV_QPT_XRC_SEND)
		return uroce_fail_null(EOPNOTSUPP);
	uroce_xrc_send_attr(attr, &rcq, &srq);
	/* a raw packet QP has its own RQ (the daemon refuses an SRQ too) */
	if (attr->qp_type == IBV_QPT_RAW_PACKET && srq)
		return uroce_fail_null(EINVAL);
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    uroce_qp_ex_check_ops(attr->qp_type, attr->send_ops_flags))
		return uroce_fail_null(EOPNOTSUPP);
	if (srq && srq->context != context)
		return uroce_fail_null(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd || !attr->send_cq ||
	    !rcq)
		return uroce_fail_null(EINVAL);
	/* Handles are per context: another context's PD or CQ would name a
	 * different object of ours (or none) at the daemon. */
	if (attr->pd->context != context || attr->send_cq->context != context ||
	    rcq->context != context)
		return uroce_fail_null(EINVAL);
	if (attr->cap.max_send_wr > (uint32_t)ctx->hello.dev.max_qp_wr ||
	    attr->cap.max_recv_wr > (uint32_t)ctx->hello.dev.max_qp_wr ||
	    attr->cap.max_send_sge > (uint32_t)ctx->hello.dev.max_sge ||
	    attr->cap.max_recv_sge > (uint32_t)ctx->hello.dev.max_sge ||
	    attr->cap.max_inline_data > ctx->hello.max_inline_data)
		return uroce_fail_null(EINVAL);

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return uroce_fail_null(ENOMEM);
	qp->ring_fd = -1;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	qp->cap = attr->cap;
	uroce_qp_caps_round(&qp->cap);
	ret = tso_header_set(qp, attr);
	if (ret)
		goto err;
	if (srq)
		qp->cap.max_recv_wr = qp->cap.max_recv_sge = 0;
	ret = uroce_qp_alloc_rings(qp, attr->pd);
	if (ret)
		goto err;

	memset(&req, 0, sizeof(req));
	ibqp = &qp->vqp.qp;
	req.user_handle = (uint64_t)(uintptr_t)ibqp;
	req.qp_type = attr->qp_type;
	req.sq_sig_all = attr->sq_sig_all ? 1 : 0;
	req.pd_handle = to_upd(attr->pd)->handle;
	req.send_cq_handle = to_ucq(attr->send_cq)->handle;
	req.recv_cq_handle = to_ucq(rcq)->handle;
	req.srq_handle = srq ? to_usrq(srq)->handle : 0;
	req.cap = qp->cap;
	req.max_tso_header = qp->max_tso_header;
	ret = uroce_ctl_call(ctx, UROCE_OP_CREATE_QP, &req, sizeof(req), &qp->ring_fd, 1,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret)
		goto err;
	close(qp->ring_fd);
	qp->ring_fd = -1;
	qp->handle = resp.handle;
	qp->sq_sig_all = req.sq_sig_all;

	/* libibverbs initialises nothing in a QP: every field is ours to set. */
	ibqp->context = context;
	ibqp->qp_context = attr->qp_context;
	ibqp->pd = attr->pd;
	ibqp->send_cq = attr->send_cq;
	ibqp->recv_cq = attr->qp_type == IBV_QPT_XRC_SEND ? NULL : rcq;
	ibqp->srq = srq;
	ibqp->handle = resp.handle;
	ibqp->qp_num = resp.qpn;
	ibqp->state = IBV_QPS_RESET;
	ibqp->qp_type = attr->qp_type;
	ibqp->events_completed = 0;
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
	attr->cap = qp->cap;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		uroce_qp_ex_init(qp, attr->send_ops_flags);

	ret = uroce_qp_publish(ctx, qp);
	if (ret)
		goto err;
	return ibqp;
err:
	free_qp(qp);
	return uroce_fail_null(ret);
}

/* ibv_create_qp: the legacy entry, same rules as uroce_create_qp_ex. */
struct ibv_qp *uroce_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	memset(&ex, 0, sizeof(ex));
	ex.qp_context = attr->qp_context;
	ex.send_cq = attr->send_cq;
	ex.recv_cq = attr->recv_cq;
	ex.srq = attr->srq;
	ex.cap = attr->cap;
	ex.qp_type = attr->qp_type;
	ex.sq_sig_all = attr->sq_sig_all;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = uroce_create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

/* The QP of this context with number qpn, or NULL (for polling; no lock taken). */
struct uroce_qp *uroce_find_qp(struct uroce_context *ctx, uint32_t qpn)
{
	struct uroce_qp **lvl;

	qpn &= 0xFFFFFF;
	lvl = __atomic_load_n(&ctx->qp_table[qpn >> UROCE_QPT_SHIFT], __ATOMIC_ACQUIRE);
	if (!lvl)
		return NULL;
	return __atomic_load_n(&lvl[qpn & (UROCE_QPT_SLOTS - 1)], __ATOMIC_ACQUIRE);
}

/* Makes qp findable by its qp_num. Returns 0 or ENOMEM. */
int uroce_qp_table_insert(struct uroce_context *ctx, struct uroce_qp *qp)
{
	uint32_t qpn = qp->vqp.qp.qp_num & 0xFFFFFF;
	struct uroce_qp **lvl;
	int ret = 0;

	pthread_mutex_lock(&ctx->qp_lock);
	lvl = ctx->qp_table[qpn >> UROCE_QPT_SHIFT];
	if (!lvl) {
		lvl = calloc(UROCE_QPT_SLOTS, sizeof(*lvl));
		if (!lvl) {
			ret = ENOMEM;
			goto out;
		}
		__atomic_store_n(&ctx->qp_table[qpn >> UROCE_QPT_SHIFT], lvl, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&lvl[qpn & (UROCE_QPT_SLOTS - 1)], qp, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&ctx->qp_lock);
	return ret;
}

void uroce_qp_table_remove(struct uroce_context *ctx, struct uroce_qp *qp)
{
	uint32_t qpn = qp->vqp.qp.qp_num & 0xFFFFFF;
	struct uroce_qp **lvl;

	pthread_mutex_lock(&ctx->qp_lock);
	lvl = ctx->qp_table[qpn >> UROCE_QPT_SHIFT];
	if (lvl && lvl[qpn & (UROCE_QPT_SLOTS - 1)] == qp)
		__atomic_store_n(&lvl[qpn & (UROCE_QPT_SLOTS - 1)], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ctx->qp_lock);
}

/* Frees the table's second levels (context teardown). */
void uroce_qp_table_free(struct uroce_context *ctx)
{
	for (uint32_t i = 0; i < UROCE_QPT_TOP; i++) {
		free(ctx->qp_table[i]);
		ctx->qp_table[i] = NULL;
	}
}

/*
 * ibv_modify_qp: forwarded as is. Returns 0 or the daemon's errno: EINVAL
 * (transition not allowed, attribute missing or not allowed, value out of
 * range, IBV_QP_CUR_STATE wrong), EOPNOTSUPP (ALT_PATH, RATE_LIMIT).
 */
/*
 * After the daemon moved the QP to RESET (it discarded the posted WQEs,
 * abi_ring.h): like mlx5, the QP's unpolled CQEs go from its CQs and every
 * WQE counts as retired, so the next post and the next CQE start clean.
 */
static void qp_reset_queues(struct uroce_qp *qp)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;

	if (ibqp->recv_cq)
		uroce_cq_clean(to_ucq(ibqp->recv_cq), ibqp->qp_num);
	if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
		uroce_cq_clean(to_ucq(ibqp->send_cq), ibqp->qp_num);
	pthread_spin_lock(&qp->sq_lock);
	__atomic_store_n(&qp->sq_tail, qp->sq_head, __ATOMIC_RELEASE);
	pthread_spin_unlock(&qp->sq_lock);
	pthread_spin_lock(&qp->rq_lock);
	__atomic_store_n(&qp->rq_tail, qp->rq_head, __ATOMIC_RELEASE);
	pthread_spin_unlock(&qp->rq_lock);
}

int uroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct uroce_modify_qp_req req;
	struct uroce_modify_qp_resp resp;
	int ret;

	memset(&req, 0, sizeof(req));
	req.handle = to_uqp(ibqp)->handle;
	req.attr_mask = (uint32_t)attr_mask;
	req.attr = *attr;
	ret = uroce_ctl_call(to_uctx(ibqp->context), UROCE_OP_MODIFY_QP, &req, sizeof(req),
			     NULL, 0, &resp, sizeof(resp), NULL, NULL);
	if (ret)
		return ret;
	ibqp->state = (enum ibv_qp_state)resp.qp_state;
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET)
		qp_reset_queues(to_uqp(ibqp));
	return 0;
}

/*
 * ibv_query_qp: the daemon fills every attribute whatever attr_mask asks;
 * init_attr gets what the QP was created with (caps as rounded).
 */
int uroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	struct uroce_query_qp_req req = { .handle = qp->handle, .attr_mask = (uint32_t)attr_mask };
	struct uroce_query_qp_resp resp;
	int ret;

	ret = uroce_ctl_call(to_uctx(ibqp->context), UROCE_OP_QUERY_QP, &req, sizeof(req),
			     NULL, 0, &resp, sizeof(resp), NULL, NULL);
	if (ret)
		return ret;
	*attr = resp.attr;
	ibqp->state = attr->qp_state;
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = ibqp->qp_context;
		init_attr->send_cq = ibqp->send_cq;
		init_attr->recv_cq = ibqp->recv_cq;
		init_attr->srq = ibqp->srq;
		init_attr->cap = qp->cap;
		init_attr->qp_type = ibqp->qp_type;
		init_attr->sq_sig_all = qp->sq_sig_all;
	}
	return 0;
}

/*
 * ibv_destroy_qp. Returns 0 or EINVAL. Waits until the application acked
 * (ibv_ack_async_event) every async event it read for the QP (events.c),
 * never for unread ones; a QP with unread async events stays allocated
 * (without its rings) until ibv_close_device, so that a late
 * ibv_ack_async_event of such an event touches valid memory.
 */
int uroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	struct uroce_context *ctx = to_uctx(ibqp->context);
	struct uroce_handle_req req = { .handle = qp->handle };
	struct uroce_destroy_qp_resp resp;
	bool unread;
	int ret;

	if (qp->opened)
		return uroce_close_opened_qp(qp);
	ret = uroce_ctl_call(ctx, UROCE_OP_DESTROY_QP, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (uroce_daemon_gone(ret))
		resp.async_events_reported = 0;
	else if (ret)
		return ret;
	pthread_mutex_lock(&ibqp->mutex);
	while (ibqp->events_completed < __atomic_load_n(&qp->async_events_read, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&ibqp->cond, &ibqp->mutex);
	pthread_mutex_unlock(&ibqp->mutex);
	unread = resp.async_events_reported >
		 __atomic_load_n(&qp->async_events_read, __ATOMIC_ACQUIRE);
	/* As mlx5_destroy_qp: the QP's unpolled CQEs leave its CQs (their wr_ids
	 * name work the application frees now); the daemon writes none after
	 * its answer. */
	if (ibqp->recv_cq)
		uroce_cq_clean(to_ucq(ibqp->recv_cq), ibqp->qp_num);
	if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
		uroce_cq_clean(to_ucq(ibqp->send_cq), ibqp->qp_num);
	uroce_qp_table_remove(ctx, qp);
	if (ibqp->recv_cq)
		uroce_cq_forget_qp(to_ucq(ibqp->recv_cq), qp);
	if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
		uroce_cq_forget_qp(to_ucq(ibqp->send_cq), qp);
	if (unread) {
		uroce_qp_release(qp);
		if (!uroce_event_keep(ctx, qp))
			free(qp);
		return 0;
	}
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	free_qp(qp);
	return 0;
}
