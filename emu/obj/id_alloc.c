/*
 * id_alloc.c - round-robin id allocator (see id_alloc.h).
 */
#include "config.h"
#include "emu/obj/id_alloc.h"

#include <errno.h>
#include <stdlib.h>

int id_alloc_init(struct id_alloc *a, uint32_t lo, uint32_t count)
{
	if (count == 0)
		return EINVAL;
	a->bits = calloc((count + 63) / 64, sizeof(uint64_t));
	if (!a->bits)
		return ENOMEM;
	a->lo = lo;
	a->count = count;
	a->next = 0;
	a->used = 0;
	return 0;
}

void id_alloc_fini(struct id_alloc *a)
{
	free(a->bits);
	a->bits = NULL;
	a->count = a->used = 0;
}

int id_alloc_get(struct id_alloc *a, uint32_t *id)
{
	uint32_t i, off;

	if (a->used >= a->count)
		return ENOMEM;
	for (i = 0; i < a->count; i++) {
		off = a->next + i;
		if (off >= a->count)
			off -= a->count;
		if (!(a->bits[off / 64] & (1ull << (off % 64)))) {
			a->bits[off / 64] |= 1ull << (off % 64);
			a->used++;
			a->next = off + 1 == a->count ? 0 : off + 1;
			*id = a->lo + off;
			return 0;
		}
	}
	return ENOMEM;
}

bool id_alloc_busy(const struct id_alloc *a, uint32_t id)
{
	uint32_t off = id - a->lo;

	if (id < a->lo || off >= a->count)
		return false;
	return a->bits[off / 64] & (1ull << (off % 64));
}

int id_alloc_put(struct id_alloc *a, uint32_t id)
{
	uint32_t off = id - a->lo;

	if (!id_alloc_busy(a, id))
		return EINVAL;
	a->bits[off / 64] &= ~(1ull << (off % 64));
	a->used--;
	return 0;
}
