/*
 * obj_srq.c - shared receive queues: CREATE_SRQ / MODIFY_SRQ / QUERY_SRQ /
 * DESTROY_SRQ (include/uroce/abi.h; ibv_create_srq(3), ibv_modify_srq(3),
 * ibv_query_srq(3), ibv_destroy_srq(3)). The WQEs themselves live in the
 * engine's SRQ (emu/xport/srq.c), fed from the ring at each doorbell
 * (emu/nic/doorbell.c).
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/nic/engine_glue.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/quota.h"
#include "emu/xport/xport.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

int op_create_srq(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_srq_req *req = call->req;
	struct uroce_create_srq_resp *resp = call->resp;
	struct ctl_pd *pd = objtab_get(&c->pds, req->pd_handle);
	struct ctl_srq *srq;
	int rc;

	if (!pd || req->reserved)
		return EINVAL;
	rc = srq_new(c, call, pd, req, &srq);
	if (rc)
		return rc;
	resp->handle = srq->handle;
	resp->srqn = srq->srqn;
	return 0;
}

int srq_new(struct ctl_client *c, struct ctl_call *call, struct ctl_pd *pd,
	    const struct uroce_create_srq_req *req, struct ctl_srq **out)
{
	struct uroce_dev *d = c->dev;
	struct ctl_srq *srq;
	uint32_t stride;
	uint64_t size;
	int rc;

	if (!req->max_wr || req->max_wr > DEV_MAX_SRQ_WR || (req->max_wr & (req->max_wr - 1)) ||
	    !req->max_sge || req->max_sge > DEV_MAX_SRQ_SGE)
		return EINVAL;
	if (d->counts.srq >= DEV_MAX_SRQ || quota_check(c, QUOTA_SRQ))
		return ENOMEM;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return ENOMEM;
	uroce_srq_ring_layout(req->max_wr, req->max_sge, &stride, &size);
	srq->ring = map_client_ring(call->fds[0], size, &rc);
	if (!srq->ring)
		goto fail;
	srq->ring_size = size;
	rc = objtab_add_numbered(&c->srqs, &d->srqns, srq, &srq->srqn, &srq->handle);
	if (rc)
		goto fail_unmap;
	srq->user_handle = req->user_handle;
	srq->pd = pd;
	srq->max_wr = req->max_wr;
	srq->max_sge = req->max_sge;
	srq->owner = c;
	rc = engine_srq_create(srq);
	if (rc) {
		objtab_del(&c->srqs, srq->handle);
		id_alloc_put(&d->srqns, srq->srqn);
		goto fail_unmap;
	}
	pd->users++;
	d->counts.srq++;
	*out = srq;
	ulog_object("client#%u created srqn 0x%x (%u x %u sge)", c->id, srq->srqn, srq->max_wr,
		    srq->max_sge);
	return 0;
fail_unmap:
	munmap(srq->ring, srq->ring_size);
fail:
	free(srq);
	return rc;
}

int srq_new_on_cq(struct ctl_client *c, struct ctl_call *call, struct ctl_pd *pd, struct ctl_cq *cq,
		  uint64_t user_handle, uint32_t max_wr, uint32_t max_sge, struct ctl_srq **out)
{
	struct uroce_create_srq_req base = {
		.user_handle = user_handle,
		.max_wr = max_wr,
		.max_sge = max_sge,
	};
	int rc = srq_new(c, call, pd, &base, out);

	if (rc)
		return rc;
	(*out)->cq = cq;
	cq->users++;
	return 0;
}

void srq_free(struct ctl_client *c, struct ctl_srq *srq)
{
	struct uroce_dev *d = c->dev;

	engine_srq_destroy(srq);
	id_alloc_put(&d->srqns, srq->srqn);
	objtab_del(&c->srqs, srq->handle);
	srq->pd->users--;
	if (srq->cq)
		srq->cq->users--;
	if (srq->xrcd)
		srq->xrcd->users--;
	munmap(srq->ring, srq->ring_size);
	d->counts.srq--;
	free(srq);
}

int op_modify_srq(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_modify_srq_req *req = call->req;
	struct ctl_srq *srq = objtab_get(&c->srqs, req->handle);

	if (!srq)
		return EINVAL;
	/* mlx5 cannot resize an SRQ: IBV_SRQ_MAX_WR is refused like an
	 * unknown bit */
	if (req->attr_mask & ~(uint32_t)IBV_SRQ_LIMIT) {
		ulog(ULOG_DEBUG, "client#%u srqn 0x%x modify mask 0x%x refused: only IBV_SRQ_LIMIT",
		     c->id, srq->srqn, req->attr_mask);
		return EINVAL;
	}
	if (!(req->attr_mask & IBV_SRQ_LIMIT))
		return 0;
	return xport_srq_arm(srq->xsrq, req->srq_limit);
}

int op_query_srq(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_query_srq_resp *resp = call->resp;
	struct ctl_srq *srq = objtab_get(&c->srqs, req_handle(call));

	if (!srq)
		return EINVAL;
	resp->max_wr = srq->max_wr;
	resp->max_sge = srq->max_sge;
	resp->srq_limit = xport_srq_limit(srq->xsrq);
	return 0;
}

int op_destroy_srq(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_destroy_srq_resp *resp = call->resp;
	struct ctl_srq *srq = objtab_get(&c->srqs, req_handle(call));

	if (!srq)
		return EINVAL;
	if (srq->users)
		return EBUSY;
	resp->async_events_reported = srq->async_events;
	ulog_object("client#%u destroyed srqn 0x%x", c->id, srq->srqn);
	srq_free(c, srq);
	return 0;
}
