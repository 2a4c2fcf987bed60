/*
 * parent_domain.c - thread domains, parent domains and the rings placed in
 * a parent domain's memory (ibv_alloc_td(3), ibv_alloc_parent_domain(3)).
 *
 * A parent domain stands for its PD in every request (its handle is the
 * PD's). Where mlx5 takes a queue buffer from the parent domain's allocator
 * (QP, CQ and SRQ buffers), we take the memory for the ring from it and map
 * the ring's memfd over that memory (MAP_FIXED), so the ring the daemon
 * shares lies where the application's allocator put it. A thread domain is
 * accepted and kept; the provider's locks stay (they are correct for one
 * thread too).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uroce.h"

struct uroce_td {
	struct ibv_td ibv_td;
	unsigned int refs; /* parent domains on it */
};

/* ibv_alloc_td(3). init_attr->comp_mask must be 0 (EINVAL), as mlx5. */
struct ibv_td *uroce_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct uroce_td *td;

	if (!attr || attr->comp_mask)
		return uroce_fail_null(EINVAL);
	td = calloc(1, sizeof(*td));
	if (!td)
		return uroce_fail_null(ENOMEM);
	td->ibv_td.context = context;
	return &td->ibv_td;
}

/* ibv_dealloc_td(3). Returns 0, or EBUSY while a parent domain uses it. */
int uroce_dealloc_td(struct ibv_td *ibtd)
{
	struct uroce_td *td = uroce_container_of(ibtd, struct uroce_td, ibv_td);

	if (__atomic_load_n(&td->refs, __ATOMIC_ACQUIRE))
		return EBUSY;
	free(td);
	return 0;
}

#define PDOM_COMP_MASK (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)

/*
 * ibv_alloc_parent_domain(3). attr->pd: a PD (not a parent domain) of this
 * context; attr->td: NULL or a TD of this context; comp_mask
 * IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS (alloc and free, both required) and
 * _PD_CONTEXT. Errors (errno): EINVAL (other bits, missing or foreign PD/TD,
 * one allocator callback without the other), ENOMEM.
 */
struct ibv_pd *uroce_alloc_parent_domain(struct ibv_context *context,
					 struct ibv_parent_domain_init_attr *attr)
{
	struct uroce_pd *pdom, *base;

	if (!attr || (attr->comp_mask & ~(uint32_t)PDOM_COMP_MASK) || !attr->pd ||
	    attr->pd->context != context || (attr->td && attr->td->context != context))
		return uroce_fail_null(EINVAL);
	base = to_upd(attr->pd);
	if (base->base)
		return uroce_fail_null(EINVAL);
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) && (!attr->alloc || !attr->free))
		return uroce_fail_null(EINVAL);
	pdom = calloc(1, sizeof(*pdom));
	if (!pdom)
		return uroce_fail_null(ENOMEM);
	pdom->ibv_pd.context = context;
	pdom->ibv_pd.handle = base->handle;
	pdom->handle = base->handle;
	pdom->base = base;
	pdom->td = attr->td;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pdom->alloc = attr->alloc;
		pdom->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pdom->pd_context = attr->pd_context;
	__atomic_add_fetch(&base->refs, 1, __ATOMIC_ACQ_REL);
	if (attr->td)
		__atomic_add_fetch(&uroce_container_of(attr->td, struct uroce_td, ibv_td)->refs, 1,
				   __ATOMIC_ACQ_REL);
	return &pdom->ibv_pd;
}

/* ibv_dealloc_pd on a parent domain: EBUSY while rings mapped through it live. */
int uroce_dealloc_parent_domain(struct uroce_pd *pdom)
{
	if (__atomic_load_n(&pdom->refs, __ATOMIC_ACQUIRE))
		return EBUSY;
	__atomic_sub_fetch(&pdom->base->refs, 1, __ATOMIC_ACQ_REL);
	if (pdom->td)
		__atomic_sub_fetch(&uroce_container_of(pdom->td, struct uroce_td, ibv_td)->refs, 1,
				   __ATOMIC_ACQ_REL);
	free(pdom);
	return 0;
}

/* Rings mapped through a parent domain, found again at unmap by address. */
struct pdom_ring {
	struct pdom_ring *next;
	void *ring;
	struct uroce_pd *pdom;
	uint64_t res_type;
	bool from_alloc;
};
static struct pdom_ring *pdom_rings;
static pthread_mutex_t pdom_rings_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t page_round(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (size + page - 1) / page * page;
}

/* Memory for a ring from PDOM's allocator: NULL for our own mapping, or
 * MAP_FAILED with errno. */
static void *pdom_alloc(struct uroce_pd *pdom, size_t size, uint64_t res_type)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *buf;

	if (!pdom->alloc)
		return NULL;
	buf = pdom->alloc(&pdom->ibv_pd, pdom->pd_context, size, page, res_type);
	if (buf == IBV_ALLOCATOR_USE_DEFAULT)
		return NULL;
	if (!buf) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	if ((uintptr_t)buf % page) {
		fprintf(stderr, UROCE_LOG_PREFIX "parent domain allocator returned %p, not aligned to %zu bytes as asked\n",
			buf, page);
		pdom->free(&pdom->ibv_pd, pdom->pd_context, buf, res_type);
		errno = EINVAL;
		return MAP_FAILED;
	}
	return buf;
}

static void pdom_say_once(void *buf, int err)
{
	static bool said;

	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		fprintf(stderr, UROCE_LOG_PREFIX "cannot place a ring at %p from the parent domain allocator (%s): "
			"using memory of our own for it\n", buf, strerror(err));
}

void *uroce_ring_map(struct ibv_pd *pd, int fd, size_t size, uint64_t res_type)
{
	struct uroce_pd *pdom = pd && to_upd(pd)->base ? to_upd(pd) : NULL;
	struct pdom_ring *r;
	void *buf, *ring;
	int err;

	if (!pdom)
		return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	size = page_round(size);
	r = calloc(1, sizeof(*r));
	if (!r)
		return errno = ENOMEM, MAP_FAILED;
	buf = pdom_alloc(pdom, size, res_type);
	if (buf == MAP_FAILED) {
		free(r);
		return MAP_FAILED;
	}
	ring = buf ? mmap(buf, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) : MAP_FAILED;
	if (buf && ring == MAP_FAILED) {
		/* Inside a huge-page mapping (hugetlbfs) 4 KiB pages of a memfd
		 * cannot replace part of it: the ring goes where the kernel puts it. */
		pdom_say_once(buf, errno);
		pdom->free(&pdom->ibv_pd, pdom->pd_context, buf, res_type);
		buf = NULL;
	}
	if (!buf)
		ring = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		err = errno;
		free(r);
		errno = err;
		return MAP_FAILED;
	}
	r->ring = ring;
	r->pdom = pdom;
	r->res_type = res_type;
	r->from_alloc = buf != NULL;
	__atomic_add_fetch(&pdom->refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&pdom_rings_lock);
	r->next = pdom_rings;
	pdom_rings = r;
	pthread_mutex_unlock(&pdom_rings_lock);
	return ring;
}

void uroce_ring_unmap(void *ring, size_t size)
{
	struct pdom_ring **pp, *r = NULL;

	pthread_mutex_lock(&pdom_rings_lock);
	for (pp = &pdom_rings; *pp; pp = &(*pp)->next) {
		if ((*pp)->ring == ring) {
			r = *pp;
			*pp = r->next;
			break;
		}
	}
	pthread_mutex_unlock(&pdom_rings_lock);
	if (!r) {
		munmap(ring, size);
		return;
	}
	size = page_round(size);
	if (r->from_alloc) {
		/* the allocator gets back private memory where it gave it, not our memfd */
		if (mmap(ring, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0) == MAP_FAILED)
			fprintf(stderr, UROCE_LOG_PREFIX "cannot give %p back to the parent domain allocator: %s\n",
				ring, strerror(errno));
		else
			r->pdom->free(&r->pdom->ibv_pd, r->pdom->pd_context, ring, r->res_type);
	} else {
		munmap(ring, size);
	}
	__atomic_sub_fetch(&r->pdom->refs, 1, __ATOMIC_ACQ_REL);
	free(r);
}
