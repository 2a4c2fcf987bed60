/*
 * objtab.h - handle table of one object type of one client: handles 1, 2, ...
 * (never 0), reused lowest first after a free.
 */
#ifndef UROCE_EMU_OBJTAB_H
#define UROCE_EMU_OBJTAB_H

#include <stdint.h>

struct id_alloc;

/* Handle table of one object type: slot[h-1] holds the object of handle h. */
struct obj_table {
	void **slot;
	uint32_t cap;    /* slots allocated */
	uint32_t count;  /* live objects */
	uint32_t hint;   /* lowest possibly free slot */
};

/* Store OBJ, giving its handle in *handle. Returns 0 or ENOMEM. */
int objtab_add(struct obj_table *t, void *obj, uint32_t *handle);
/* Object of HANDLE, or NULL (0, out of range, free). */
void *objtab_get(const struct obj_table *t, uint32_t handle);
/* Forget HANDLE (must be live). */
void objtab_del(struct obj_table *t, uint32_t handle);
/* Give OBJ a number from IDS in *id and a handle in T in *handle; on failure
 * neither is kept. Returns 0, or the errno of id_alloc_get (no free number)
 * or objtab_add (ENOMEM). */
int objtab_add_numbered(struct obj_table *t, struct id_alloc *ids, void *obj, uint32_t *id,
			uint32_t *handle);
/* Free the table's memory (objects must be gone). */
void objtab_fini(struct obj_table *t);

#endif
