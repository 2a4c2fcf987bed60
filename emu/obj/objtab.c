/*
 * objtab.c - per-client handle tables (see objtab.h). A leaf: calls nothing
 * of the daemon, so emu/nic may look handles up without a call cycle.
 */
#include "config.h"
#include "emu/obj/objtab.h"
#include "emu/obj/id_alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int objtab_add(struct obj_table *t, void *obj, uint32_t *handle)
{
	uint32_t i;

	for (i = t->hint; i < t->cap; i++)
		if (!t->slot[i])
			goto found;
	if (t->cap == UINT32_MAX / 2)
		return ENOMEM;
	{
		uint32_t ncap = t->cap ? t->cap * 2 : 8;
		void **n = realloc(t->slot, ncap * sizeof(*n));

		if (!n)
			return ENOMEM;
		memset(n + t->cap, 0, (ncap - t->cap) * sizeof(*n));
		i = t->cap;
		t->slot = n;
		t->cap = ncap;
	}
found:
	t->slot[i] = obj;
	t->count++;
	t->hint = i + 1;
	*handle = i + 1;
	return 0;
}

void *objtab_get(const struct obj_table *t, uint32_t handle)
{
	if (handle == 0 || handle > t->cap)
		return NULL;
	return t->slot[handle - 1];
}

void objtab_del(struct obj_table *t, uint32_t handle)
{
	if (!objtab_get(t, handle))
		return;
	t->slot[handle - 1] = NULL;
	t->count--;
	if (handle - 1 < t->hint)
		t->hint = handle - 1;
}

int objtab_add_numbered(struct obj_table *t, struct id_alloc *ids, void *obj, uint32_t *id,
			uint32_t *handle)
{
	int rc = id_alloc_get(ids, id);

	if (rc)
		return rc;
	rc = objtab_add(t, obj, handle);
	if (rc)
		id_alloc_put(ids, *id);
	return rc;
}

void objtab_fini(struct obj_table *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
