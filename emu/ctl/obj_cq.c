/*
 * obj_cq.c - completion queues: CREATE_CQ / DESTROY_CQ, the shared CQE ring
 * (writing mlx5 CQEs with the owner bit, overrun detection) and arming /
 * completion-event delivery. Ring layout, arming rules and the arm/CQE race
 * are specified in the CQ ring section of include/uroce/abi.h.
 */
#include "config.h"
#include "emu/ctl/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/ctl/objects.h"
#include "emu/ctl/quota.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

#define CQE_OPCODE(op_own) ((op_own) >> 4)
#define CQE_REQ_ERR 13
#define CQE_RESP_ERR 14
#define CQE_SE 0x2

static struct uroce_cq_ring_hdr *ring_hdr(const struct cq *cq)
{
	return cq->ring;
}

static struct mlx5_cqe64 *ring_cqe(const struct cq *cq, uint32_t n)
{
	return (struct mlx5_cqe64 *)((char *)cq->ring + UROCE_CQ_RING_HDR_SIZE) + (n & (cq->nent - 1));
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

int op_create_cq(struct client *c, struct ctl_call *call)
{
	const struct uroce_create_cq_req *req = call->req;
	struct uroce_create_cq_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct cq *cq;
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
	rc = id_alloc_get(&d->cqns, &cq->cqn);
	if (rc)
		goto fail_unmap;
	rc = objtab_add(&c->cqs, cq, &cq->handle);
	if (rc) {
		id_alloc_put(&d->cqns, cq->cqn);
		goto fail_unmap;
	}
	cq->user_handle = req->user_handle;
	cq->cqe = req->cqe;
	cq->nent = req->nent;
	cq->flags = req->flags;
	cq->comp_vector = req->comp_vector;
	cq->owner = c;
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

void cq_free(struct client *c, struct cq *cq)
{
	objtab_del(&c->cqs, cq->handle);
	id_alloc_put(&c->dev->cqns, cq->cqn);
	munmap(cq->ring, cq->ring_size);
	if (cq->chan_fd >= 0)
		close(cq->chan_fd);
	c->dev->counts.cq--;
	free(cq);
}

int op_destroy_cq(struct client *c, struct ctl_call *call)
{
	struct uroce_destroy_cq_resp *resp = call->resp;
	struct cq *cq = objtab_get(&c->cqs, req_handle(call));

	if (!cq)
		return EINVAL;
	if (cq->users)
		return EBUSY;
	resp->comp_events_reported = cq->comp_events;
	resp->async_events_reported = cq->async_events;
	cq_free(c, cq);
	return 0;
}

/* Deliver the completion event of an armed CQ and disarm it. */
static void cq_fire(struct cq *cq)
{
	struct ib_uverbs_comp_event_desc ev = { .cq_handle = cq->user_handle };

	cq->armed = false;
	if (cq->chan_fd < 0)
		return;
	if (send(cq->chan_fd, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(ev))
		cq->comp_events++;
	else
		ulog_limited(ULOG_LIMIT_CQ_LOST, ULOG_WARN, "client#%u cqn %u: completion event lost: %s",
			     cq->owner->id, cq->cqn, strerror(errno));
}

/* Whether CQE op_own satisfies a solicited-only arm (SE set, or an error). */
static int cqe_wakes_solicited(uint8_t op_own)
{
	return (op_own & CQE_SE) || CQE_OPCODE(op_own) == CQE_REQ_ERR ||
	       CQE_OPCODE(op_own) == CQE_RESP_ERR;
}

void cq_check_arm(struct cq *cq)
{
	uint32_t word = be32toh(__atomic_load_n(&ring_hdr(cq)->dbrec[1], __ATOMIC_ACQUIRE));

	if (word == cq->last_arm_word || !(word & UROCE_CQ_ARM_CMD))
		return;
	/* Armed for the next CQE only: CQEs already in the ring do not fire
	 * (the consumer polls after arming to find them, see abi.h). */
	cq->last_arm_word = word;
	cq->armed = true;
	cq->arm_solicited = word & UROCE_CQ_ARM_SOLICITED;
	cq->arm_ci = word & UROCE_CQ_CI_MASK;
}

int cq_push(struct cq *cq, const struct mlx5_cqe64 *cqe)
{
	struct mlx5_cqe64 *slot;
	uint32_t ci, used;
	uint8_t op_own;

	if (cq->overrun)
		return EIO;
	ci = be32toh(__atomic_load_n(&ring_hdr(cq)->dbrec[0], __ATOMIC_ACQUIRE)) & UROCE_CQ_CI_MASK;
	used = ((cq->pi & UROCE_CQ_CI_MASK) - ci) & UROCE_CQ_CI_MASK;
	if (used >= cq->nent && !(cq->flags & UROCE_CQ_IGNORE_OVERRUN)) {
		cq->overrun = true;
		ulog(ULOG_WARN, "client#%u cqn %u: overrun (pi %u ci %u nent %u): CQ in error",
		     cq->owner->id, cq->cqn, cq->pi, ci, cq->nent);
		/* counted only if delivered, as the QP paths do: DESTROY_CQ's
		 * async_events_reported tells the provider an unread one may
		 * still come (abi.h) */
		if (client_async_event(cq->owner, cq->user_handle, IBV_EVENT_CQ_ERR) == 0)
			cq->async_events++;
		return EOVERFLOW;
	}
	slot = ring_cqe(cq, cq->pi);
	op_own = (uint8_t)((cqe->op_own & 0xFE) | !!(cq->pi & cq->nent));
	memcpy(slot, cqe, offsetof(struct mlx5_cqe64, op_own));
	/* The owner bit hands the CQE over: everything else must be visible first. */
	__atomic_store_n(&slot->op_own, op_own, __ATOMIC_RELEASE);
	cq->pi++;
	/* Publish, full fence, then read the arm word (the provider: store the
	 * arm word, doorbell syscall, then poll). Either we see the arm and
	 * fire, or its poll after arming sees this CQE: no lost wake-up. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	cq_check_arm(cq);
	if (cq->armed && (!cq->arm_solicited || cqe_wakes_solicited(op_own)))
		cq_fire(cq);
	return 0;
}
