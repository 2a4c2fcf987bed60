/*
 * srq.c - shared receive queues (ibv_create_srq(3), ibv_create_srq_ex(3),
 * ibv_modify_srq(3), ibv_query_srq(3), ibv_destroy_srq(3),
 * ibv_post_srq_recv(3), ibv_get_srq_num(3)), basic and XRC SRQs (an XRC
 * SRQ names its domain and CQ at creation, docs/xrc.md), with mlx5's
 * semantics.
 *
 * The SRQ's WQEs go through a ring in a sealed memfd shared with the daemon
 * (abi_ring.h "SRQ ring"). QPs complete SRQ WQEs in the order their
 * messages arrive, not in posting order, so each posted WQE takes a free
 * tag (the index of its wr_id entry, a free list as mlx5 keeps one) and the
 * CQE's wqe_counter brings the tag back; polling the CQE frees the tag
 * (uroce_srq_complete). A post with no free tag fails with ENOMEM.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uroce.h"

/* Frees what the SRQ owns, not the struct itself. */
static void release_srq(struct uroce_srq *srq)
{
	if (srq->ring)
		uroce_ring_unmap(srq->ring, srq->ring_size);
	if (srq->ring_fd >= 0)
		close(srq->ring_fd);
	free(srq->wrid);
	free(srq->free_tags);
	uroce_tm_release(srq);
	srq->ring = NULL;
	srq->ring_fd = -1;
	srq->wrid = NULL;
	srq->free_tags = NULL;
	pthread_spin_destroy(&srq->lock);
}

/* The ring memfd, sealed and mapped, and the tag arrays. */
static int alloc_srq_ring(struct uroce_srq *srq, struct ibv_pd *pd)
{
	uroce_srq_ring_layout(srq->max_wr, srq->max_sge, &srq->stride, &srq->ring_size);
	srq->ring_fd = memfd_create("uroce-srq", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (srq->ring_fd < 0)
		return errno;
	if (ftruncate(srq->ring_fd, (off_t)srq->ring_size) ||
	    fcntl(srq->ring_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return errno;
	srq->ring = uroce_ring_map(pd, srq->ring_fd, srq->ring_size, UROCE_RES_TYPE_SRQ);
	if (srq->ring == MAP_FAILED) {
		srq->ring = NULL;
		return errno;
	}
	srq->wrid = calloc(srq->max_wr, sizeof(*srq->wrid));
	srq->free_tags = calloc(srq->max_wr, sizeof(*srq->free_tags));
	if (!srq->wrid || !srq->free_tags)
		return ENOMEM;
	/* tags handed out lowest first */
	for (uint32_t i = 0; i < srq->max_wr; i++)
		srq->free_tags[i] = srq->max_wr - 1 - i;
	srq->nfree = srq->max_wr;
	return 0;
}

/* CREATE_SRQ, or CREATE_XRC_SRQ with XRCD and CQ; *resp the reply. */
static int srq_call(struct uroce_context *ctx, struct uroce_srq *srq, struct ibv_pd *pd,
		    struct ibv_xrcd *xrcd, struct ibv_cq *cq, struct uroce_create_srq_resp *resp)
{
	struct uroce_create_srq_req req;
	struct uroce_create_xrc_srq_req xreq;

	if (srq->tm)
		return uroce_tm_srq_call(ctx, srq, pd, cq, resp);
	if (xrcd) {
		memset(&xreq, 0, sizeof(xreq));
		xreq.user_handle = (uint64_t)(uintptr_t)&srq->vsrq.srq;
		xreq.xrcd_handle = uroce_container_of(xrcd, struct verbs_xrcd, xrcd)->handle;
		xreq.cq_handle = to_ucq(cq)->handle;
		xreq.pd_handle = to_upd(pd)->handle;
		xreq.max_wr = srq->max_wr;
		xreq.max_sge = srq->max_sge;
		return uroce_ctl_call(ctx, UROCE_OP_CREATE_XRC_SRQ, &xreq, sizeof(xreq),
				      &srq->ring_fd, 1, resp, sizeof(*resp), NULL, NULL);
	}
	memset(&req, 0, sizeof(req));
	req.user_handle = (uint64_t)(uintptr_t)&srq->vsrq.srq;
	req.pd_handle = to_upd(pd)->handle;
	req.max_wr = srq->max_wr;
	req.max_sge = srq->max_sge;
	return uroce_ctl_call(ctx, UROCE_OP_CREATE_SRQ, &req, sizeof(req), &srq->ring_fd, 1, resp,
			      sizeof(*resp), NULL, NULL);
}

/* A basic SRQ on PD (an XRC SRQ when XRCD is given, with CQ; a
 * tag-matching SRQ when TM is given, with CQ) with ATTR's max_wr / max_sge
 * (rounded up and written back); every ibv_srq field set here, as
 * libibverbs does not for _ex. */
static struct ibv_srq *create_basic(struct ibv_pd *pd, struct ibv_srq_attr *attr, void *srq_context,
				    struct ibv_xrcd *xrcd, struct ibv_cq *cq,
				    const struct ibv_tm_cap *tm)
{
	struct uroce_context *ctx = to_uctx(pd->context);
	struct uroce_create_srq_resp resp;
	struct uroce_srq *srq;
	struct ibv_srq *ibsrq;
	int ret;

	if (attr->max_wr > (uint32_t)ctx->hello.dev.max_srq_wr ||
	    attr->max_sge > (uint32_t)ctx->hello.dev.max_srq_sge || !ctx->hello.dev.max_srq)
		return uroce_fail_null(EINVAL);
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return uroce_fail_null(ENOMEM);
	srq->ring_fd = -1;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->max_wr = uroce_roundup_pow2(attr->max_wr ? attr->max_wr : 1);
	srq->max_sge = attr->max_sge ? attr->max_sge : 1;
	ret = alloc_srq_ring(srq, pd);
	if (!ret && tm)
		ret = uroce_tm_init(srq, tm->max_num_tags, tm->max_ops);
	if (ret)
		goto err;
	ibsrq = &srq->vsrq.srq;
	ret = srq_call(ctx, srq, pd, xrcd, cq, &resp);
	if (ret)
		goto err;
	close(srq->ring_fd);
	srq->ring_fd = -1;
	srq->handle = resp.handle;
	if (resp.srqn == 0 || resp.srqn >= UROCE_SRQT_SIZE ||
	    __atomic_load_n(&ctx->srq_table[resp.srqn], __ATOMIC_ACQUIRE)) {
		struct uroce_handle_req dreq = { .handle = resp.handle };
		struct uroce_destroy_srq_resp dresp;

		uroce_ctl_call(ctx, UROCE_OP_DESTROY_SRQ, &dreq, sizeof(dreq), NULL, 0, &dresp,
			       sizeof(dresp), NULL, NULL);
		ret = EPROTO;
		goto err;
	}
	srq->vsrq.srq_type = xrcd ? IBV_SRQT_XRC : tm ? IBV_SRQT_TM : IBV_SRQT_BASIC;
	srq->vsrq.srq_num = resp.srqn;
	srq->vsrq.xrcd = xrcd ? uroce_container_of(xrcd, struct verbs_xrcd, xrcd) : NULL;
	srq->vsrq.cq = cq;
	ibsrq->context = pd->context;
	ibsrq->srq_context = srq_context;
	ibsrq->pd = pd;
	ibsrq->handle = resp.handle;
	ibsrq->events_completed = 0;
	pthread_mutex_init(&ibsrq->mutex, NULL);
	pthread_cond_init(&ibsrq->cond, NULL);
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	__atomic_store_n(&ctx->srq_table[resp.srqn], srq, __ATOMIC_RELEASE);
	return ibsrq;
err:
	release_srq(srq);
	free(srq);
	return uroce_fail_null(ret);
}

/*
 * ibv_create_srq: max_wr 0..max_srq_wr (rounded up to a power of two, at
 * least 1), max_sge 0..max_srq_sge (at least 1); both written back.
 * srq_limit is ignored (the man page: irrelevant for create). Errors: EINVAL
 * (over the limits), ENOMEM (max_srq or the uid's quota reached).
 */
struct ibv_srq *uroce_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	return create_basic(pd, &attr->attr, attr->srq_context, NULL, NULL, NULL);
}

#define UROCE_KNOWN_SRQ_COMP_MASK ((IBV_SRQ_INIT_ATTR_TM << 1) - 1)

/*
 * ibv_create_srq_ex: libibverbs calls this for what ibv_create_srq cannot
 * express. Basic SRQs with a PD work as above; XRC SRQs (IBV_SRQT_XRC)
 * need a PD, IBV_SRQ_INIT_ATTR_XRCD and IBV_SRQ_INIT_ATTR_CQ of this
 * context (else EINVAL, as mlx5); tag-matching SRQs (IBV_SRQT_TM,
 * docs/tag-matching.md) need a PD, IBV_SRQ_INIT_ATTR_CQ and
 * IBV_SRQ_INIT_ATTR_TM with max_num_tags 1..tm_caps.max_num_tags and
 * max_ops 1..tm_caps.max_ops (else EINVAL); unknown comp_mask bits or no
 * PD EINVAL.
 */
struct ibv_srq *uroce_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr)
{
	bool xrc = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type == IBV_SRQT_XRC;
	bool tm = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type == IBV_SRQT_TM;

	if (attr->comp_mask & ~(uint32_t)UROCE_KNOWN_SRQ_COMP_MASK)
		return uroce_fail_null(EINVAL);
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC && !xrc &&
	    !tm) {
		fprintf(stderr, UROCE_LOG_PREFIX "SRQ type %d is not supported (basic, XRC and "
			"tag-matching SRQs only)\n", (int)attr->srq_type);
		return uroce_fail_null(EOPNOTSUPP);
	}
	if (tm != !!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TM) ||
	    (tm && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq ||
		    attr->cq->context != context || !attr->tm_cap.max_num_tags ||
		    attr->tm_cap.max_num_tags > UROCE_TM_MAX_NUM_TAGS || !attr->tm_cap.max_ops ||
		    attr->tm_cap.max_ops > UROCE_TM_MAX_OPS)))
		return uroce_fail_null(EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd || attr->pd->context != context)
		return uroce_fail_null(EINVAL);
	if (xrc && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
		    attr->xrcd->context != context || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
		    !attr->cq || attr->cq->context != context))
		return uroce_fail_null(EINVAL);
	return create_basic(attr->pd, &attr->attr, attr->srq_context, xrc ? attr->xrcd : NULL,
			    xrc || tm ? attr->cq : NULL, tm ? &attr->tm_cap : NULL);
}

/*
 * ibv_modify_srq: IBV_SRQ_LIMIT arms the limit (srq_limit 0..max_wr).
 * IBV_SRQ_MAX_WR is EINVAL: like mlx5, an SRQ cannot be resized. Returns 0
 * or the daemon's errno.
 */
int uroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int attr_mask)
{
	struct uroce_modify_srq_req req;
	struct uroce_hdr resp;

	memset(&req, 0, sizeof(req));
	req.handle = to_usrq(ibsrq)->handle;
	req.attr_mask = (uint32_t)attr_mask;
	req.max_wr = attr->max_wr;
	req.srq_limit = attr->srq_limit;
	return uroce_ctl_call(to_uctx(ibsrq->context), UROCE_OP_MODIFY_SRQ, &req, sizeof(req), NULL,
			      0, &resp, sizeof(resp), NULL, NULL);
}

/* ibv_query_srq: max_wr, max_sge as created; srq_limit the armed limit (0
 * once the limit event fired). */
int uroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct uroce_handle_req req = { .handle = to_usrq(ibsrq)->handle };
	struct uroce_query_srq_resp resp;
	int ret;

	ret = uroce_ctl_call(to_uctx(ibsrq->context), UROCE_OP_QUERY_SRQ, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret)
		return ret;
	attr->max_wr = resp.max_wr;
	attr->max_sge = resp.max_sge;
	attr->srq_limit = resp.srq_limit;
	return 0;
}

/*
 * ibv_destroy_srq: EBUSY while a QP uses it. Waits for the acks of the
 * async events the application read for it; with unread ones the struct is
 * kept until ibv_close_device (as QPs, events.c).
 */
int uroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct uroce_srq *srq = to_usrq(ibsrq);
	struct uroce_context *ctx = to_uctx(ibsrq->context);
	struct uroce_handle_req req = { .handle = srq->handle };
	struct uroce_destroy_srq_resp resp;
	bool unread;
	int ret;

	ret = uroce_ctl_call(ctx, UROCE_OP_DESTROY_SRQ, &req, sizeof(req), NULL, 0, &resp,
			     sizeof(resp), NULL, NULL);
	if (uroce_daemon_gone(ret))
		resp.async_events_reported = 0;
	else if (ret)
		return ret;
	__atomic_store_n(&ctx->srq_table[srq->vsrq.srq_num], NULL, __ATOMIC_RELEASE);
	pthread_mutex_lock(&ibsrq->mutex);
	while (ibsrq->events_completed < __atomic_load_n(&srq->async_events_read, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&ibsrq->cond, &ibsrq->mutex);
	pthread_mutex_unlock(&ibsrq->mutex);
	unread = resp.async_events_reported > __atomic_load_n(&srq->async_events_read, __ATOMIC_ACQUIRE);
	release_srq(srq);
	if (unread && uroce_event_keep(ctx, srq))
		return 0;
	pthread_mutex_destroy(&ibsrq->mutex);
	pthread_cond_destroy(&ibsrq->cond);
	free(srq);
	return 0;
}

/*
 * ibv_post_srq_recv. Returns 0, or with *bad_wr at the first WR not
 * posted: EINVAL (num_sge above max_sge, or negative), ENOMEM (max_wr WQEs
 * outstanding: posted and not yet polled). WRs before *bad_wr are posted.
 */
int uroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct uroce_srq *srq = to_usrq(ibsrq);
	struct uroce_srq_ring_hdr *h = srq->ring;
	uint32_t posted = 0;
	int ret = 0;

	pthread_spin_lock(&srq->lock);
	for (; wr; wr = wr->next) {
		struct uroce_recv_wqe *w;
		uint32_t tag;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge) {
			ret = EINVAL;
			break;
		}
		if (!srq->nfree) {
			ret = ENOMEM;
			break;
		}
		tag = srq->free_tags[--srq->nfree];
		w = (struct uroce_recv_wqe *)((char *)srq->ring + UROCE_SRQ_RING_HDR_SIZE +
					      (size_t)(srq->head & (srq->max_wr - 1)) * srq->stride);
		uroce_recv_wqe_fill(w, (uint16_t)tag, wr);
		srq->wrid[tag] = wr->wr_id;
		srq->head++;
		posted++;
	}
	if (posted) {
		__atomic_store_n(&h->pi, srq->head, __ATOMIC_RELEASE);
		eventfd_write(to_uctx(ibsrq->context)->doorbell, 1);
	}
	pthread_spin_unlock(&srq->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/* ibv_get_srq_num: the number XRC senders name in wr.qp_type.xrc.remote_srqn. */
int uroce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	*srq_num = to_usrq(ibsrq)->vsrq.srq_num;
	return 0;
}

uint64_t uroce_srq_complete(struct uroce_srq *srq, uint16_t tag)
{
	uint64_t wr_id;

	if (tag >= srq->max_wr)
		return 0;
	pthread_spin_lock(&srq->lock);
	wr_id = srq->wrid[tag];
	if (srq->nfree < srq->max_wr)
		srq->free_tags[srq->nfree++] = tag;
	pthread_spin_unlock(&srq->lock);
	return wr_id;
}

struct uroce_srq *uroce_find_srq(struct uroce_context *ctx, uint32_t srqn)
{
	if (srqn >= UROCE_SRQT_SIZE)
		return NULL;
	return __atomic_load_n(&ctx->srq_table[srqn], __ATOMIC_ACQUIRE);
}
