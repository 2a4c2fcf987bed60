/*
 * obj_cq.c - completion queues: CREATE_CQ / DESTROY_CQ, and mapping the
 * ring memfds clients hand over (CQ and QP rings). Writing CQEs into the
 * ring and arming are emu/nic/cq_ring.c; ring layout and arming rules are
 * the CQ ring section of include/uroce/abi.h.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/cq_ring.h"
#include "emu/nic/device.h"
#include "emu/nic/doorbell.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/quota.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static struct uroce_cq_ring_hdr *ring_hdr(const struct ctl_cq *cq)
{
	return cq->ring;
}

/* Map a client-supplied ring memfd of at least SIZE bytes. The memfd must be
 * sealed against shrinking, or the client could truncate it under us and
 * turn our next CQE write into SIGBUS. Returns the mapping or NULL (*err). */
void *map_client_ring(int fd, uint64_t size, int *err)
{
	struct stat st;
	int seals;
	void *p;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*err = EBADF;
		return NULL;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		*err = EBADF;
		return NULL;
	}
	if ((uint64_t)st.st_size < size) {
		*err = EINVAL;
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		/* EACCES/EPERM: the client sealed it against writing. */
		*err = (errno == EACCES || errno == EPERM) ? EBADF : errno;
		return NULL;
	}
	return p;
}

int op_create_cq(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_cq_req *req = call->req;
	struct uroce_create_cq_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct ctl_cq *cq;
	struct stat st;
	int rc;

	if (req->cqe < 1 || req->cqe > (uint32_t)d->attr.max_cqe)
		return EINVAL;
	if (req->nent != uroce_roundup_pow2(req->cqe + 1))
		return EINVAL;
	if (req->flags & ~UROCE_CQ_IGNORE_OVERRUN)
		return EINVAL;
	if (call->nfds > 1 && (fstat(call->fds[1], &st) < 0 || !S_ISSOCK(st.st_mode)))
		return EBADF;
	if (d->counts.cq >= DEV_MAX_CQ || quota_check(c, QUOTA_CQ))
		return ENOMEM;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return ENOMEM;
	cq->ring_size = uroce_cq_ring_size(req->nent);
	cq->ring = map_client_ring(call->fds[0], cq->ring_size, &rc);
	if (!cq->ring)
		goto fail;
	rc = objtab_add_numbered(&c->cqs, &d->cqns, cq, &cq->cqn, &cq->handle);
	if (rc)
		goto fail_unmap;
	cq->user_handle = req->user_handle;
	cq->cqe = req->cqe;
	cq->nent = req->nent;
	cq->flags = req->flags;
	cq->comp_vector = req->comp_vector;
	cq->owner = c;
	cq_mod_init(cq);
	cq->chan_fd = -1;
	if (call->nfds > 1) {
		cq->chan_fd = call->fds[1];
		call->fds[1] = -1;
	}
	/* Whatever the word holds now is not an arm request of this CQ. */
	cq->last_arm_word = be32toh(__atomic_load_n(&ring_hdr(cq)->dbrec[1], __ATOMIC_ACQUIRE));
	d->counts.cq++;
	resp->handle = cq->handle;
	resp->cqn = cq->cqn;
	ulog(ULOG_DEBUG, "client#%u create_cq cqn %u nent %u channel %s", c->id, cq->cqn, cq->nent,
	     cq->chan_fd >= 0 ? "yes" : "no");
	return 0;
fail_unmap:
	munmap(cq->ring, cq->ring_size);
fail:
	free(cq);
	return rc;
}

void cq_free(struct ctl_client *c, struct ctl_cq *cq)
{
	objtab_del(&c->cqs, cq->handle);
	id_alloc_put(&c->dev->cqns, cq->cqn);
	cq_mod_fini(cq);
	munmap(cq->ring, cq->ring_size);
	if (cq->chan_fd >= 0)
		close(cq->chan_fd);
	c->dev->counts.cq--;
	free(cq);
}

int op_destroy_cq(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_destroy_cq_resp *resp = call->resp;
	struct ctl_cq *cq = objtab_get(&c->cqs, req_handle(call));

	if (!cq)
		return EINVAL;
	if (cq->users)
		return EBUSY;
	resp->comp_events_reported = cq->comp_events;
	resp->async_events_reported = cq->async_events;
	cq_free(c, cq);
	return 0;
}

int op_resize_cq(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_resize_cq_req *req = call->req;
	struct uroce_resize_cq_resp *resp = call->resp;
	struct ctl_cq *cq = objtab_get(&c->cqs, req->handle);
	uint64_t size, old_size;
	void *ring, *old;
	int rc;

	if (!cq || req->reserved)
		return EINVAL;
	if (req->cqe < 1 || req->cqe > (uint32_t)c->dev->attr.max_cqe ||
	    req->nent != uroce_roundup_pow2(req->cqe + 1))
		return EINVAL;
	size = uroce_cq_ring_size(req->nent);
	ring = map_client_ring(call->fds[0], size, &rc);
	if (!ring)
		return rc;
	/* Doorbells rung before this request are executed first, as a NIC
	 * runs the WQEs it was told about before a later command: their
	 * completions are in the ring the count below looks at. */
	if (c->db_fd >= 0 && doorbell_post_wqes(c))
		eventfd_write(c->db_fd, 1);
	old = cq->ring;
	old_size = cq->ring_size;
	rc = cq_ring_move(cq, ring, req->nent, req->cqe);
	if (rc) {
		munmap(ring, size);
		return rc;
	}
	cq->ring_size = size;
	munmap(old, old_size);
	resp->pi = cq->pi;
	ulog(ULOG_DEBUG, "client#%u resize_cq cqn %u nent %u pi %u", c->id, cq->cqn, cq->nent, cq->pi);
	return 0;
}

int op_modify_cq(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_modify_cq_req *req = call->req;
	struct ctl_cq *cq = objtab_get(&c->cqs, req->handle);

	if (!cq || req->reserved || req->attr_mask != IBV_CQ_ATTR_MODERATE)
		return EINVAL;
	/* cq_count's 16 bits are the whole range */
	if (req->cq_period > UROCE_CQ_MOD_MAX_PERIOD_US)
		return EINVAL;
	cq->mod_count = req->cq_count;
	cq->mod_period = req->cq_period;
	ulog(ULOG_DEBUG, "client#%u modify_cq cqn %u count %u period %u us", c->id, cq->cqn,
	     cq->mod_count, cq->mod_period);
	return 0;
}
