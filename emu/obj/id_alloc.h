/*
 * id_alloc.h - round-robin allocator of small integer ids in [lo, lo+count).
 *
 * Used for QPNs, CQNs and MR key indices. Allocation continues after the last
 * id handed out rather than reusing the lowest free one, so a just-freed QPN or
 * key is not immediately given to a new object (stale packets and stale keys
 * then miss instead of hitting the wrong object), as hardware and rxe do.
 */
#ifndef UROCE_EMU_ID_ALLOC_H
#define UROCE_EMU_ID_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

struct id_alloc {
	uint64_t *bits;   /* one bit per id, 1 = in use */
	uint32_t lo;      /* first id */
	uint32_t count;   /* number of ids */
	uint32_t next;    /* offset where the next search starts */
	uint32_t used;    /* ids in use */
};

/* Set up A for ids lo .. lo+count-1 (count >= 1). Returns 0 or ENOMEM. */
int id_alloc_init(struct id_alloc *a, uint32_t lo, uint32_t count);

/* Free A's memory. */
void id_alloc_fini(struct id_alloc *a);

/* Allocate an id into *id. Returns 0, or ENOMEM when all are in use. */
int id_alloc_get(struct id_alloc *a, uint32_t *id);

/* Release ID. Returns 0, or EINVAL if ID is out of range or not in use. */
int id_alloc_put(struct id_alloc *a, uint32_t id);

/* Whether ID is currently allocated. */
bool id_alloc_busy(const struct id_alloc *a, uint32_t id);

#endif
