/*
 * keytab.c - memory-key allocation: index<<8 | variant (see keytab.h).
 */
#include "config.h"
#include "emu/ctl/keytab.h"

#include <errno.h>
#include <stdlib.h>

int keytab_init(struct keytab *t, uint32_t size)
{
	uint32_t i;
	int rc;

	if (size == 0 || size > 0xFFFFFF)
		return EINVAL;
	t->slot = calloc((size_t)size + 1, sizeof(*t->slot));
	if (!t->slot)
		return ENOMEM;
	rc = id_alloc_init(&t->ids, 1, size);
	if (rc) {
		free(t->slot);
		return rc;
	}
	/* Spread the first variants so keys of neighbouring slots differ in the
	 * low byte too (a key that is off by one in the index is also wrong). */
	for (i = 1; i <= size; i++)
		t->slot[i].variant = (uint8_t)(i * 0x9d + 0x5a);
	t->size = size;
	return 0;
}

void keytab_fini(struct keytab *t)
{
	id_alloc_fini(&t->ids);
	free(t->slot);
	t->slot = NULL;
	t->size = 0;
}

int keytab_alloc(struct keytab *t, void *obj, uint32_t *key)
{
	uint32_t idx;
	int rc = id_alloc_get(&t->ids, &idx);

	if (rc)
		return rc;
	t->slot[idx].obj = obj;
	*key = idx << 8 | t->slot[idx].variant;
	return 0;
}

void *keytab_lookup(const struct keytab *t, uint32_t key)
{
	uint32_t idx = key >> 8;

	if (idx == 0 || idx > t->size || !t->slot[idx].obj)
		return NULL;
	if (t->slot[idx].variant != (uint8_t)key)
		return NULL;
	return t->slot[idx].obj;
}

int keytab_free(struct keytab *t, uint32_t key)
{
	uint32_t idx = key >> 8;

	if (!keytab_lookup(t, key))
		return EINVAL;
	t->slot[idx].obj = NULL;
	t->slot[idx].variant++;
	return id_alloc_put(&t->ids, idx);
}
