/*
 * keytab.c - memory-key allocation: index<<8 | variant (see keytab.h).
 */
#include "config.h"
#include "emu/obj/keytab.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

int keytab_init(struct keytab *t, uint32_t size)
{
	uint32_t i, chunk;
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
	for (i = 1; i <= size; i += chunk) {
		uint8_t rnd[2 * 256];
		uint32_t j;

		chunk = size - i + 1 < 256 ? size - i + 1 : 256;
		if (getrandom(rnd, 2 * chunk, 0) != (ssize_t)(2 * chunk)) {
			rc = errno ? errno : EIO;
			keytab_fini(t);
			return rc;
		}
		for (j = 0; j < chunk; j++) {
			t->slot[i + j].variant = rnd[2 * j];
			t->slot[i + j].stride = rnd[2 * j + 1] | 1;
		}
	}
	t->size = size;
	return 0;
}

void keytab_seed(struct keytab *t, uint64_t seed)
{
	uint64_t x = seed;
	uint32_t i;

	for (i = 1; i <= t->size; i++) {
		uint64_t z;

		/* splitmix64 */
		x += 0x9E3779B97F4A7C15ull;
		z = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		z ^= z >> 31;
		t->slot[i].variant = (uint8_t)z;
		t->slot[i].stride = (uint8_t)(z >> 8) | 1;
	}
}

void keytab_fini(struct keytab *t)
{
	id_alloc_fini(&t->ids);
	free(t->slot);
	t->slot = NULL;
	t->size = 0;
}

int keytab_alloc_kind(struct keytab *t, void *obj, enum keytab_kind kind, uint32_t *key)
{
	uint32_t idx;
	int rc = id_alloc_get(&t->ids, &idx);

	if (rc)
		return rc;
	t->slot[idx].obj = obj;
	t->slot[idx].kind = (uint8_t)kind;
	*key = idx << 8 | t->slot[idx].variant;
	return 0;
}

int keytab_alloc(struct keytab *t, void *obj, uint32_t *key)
{
	return keytab_alloc_kind(t, obj, KEYTAB_MR, key);
}

void *keytab_lookup_kind(const struct keytab *t, uint32_t key, enum keytab_kind *kind)
{
	uint32_t idx = key >> 8;

	if (idx == 0 || idx > t->size || !t->slot[idx].obj)
		return NULL;
	if (t->slot[idx].variant != (uint8_t)key)
		return NULL;
	*kind = (enum keytab_kind)t->slot[idx].kind;
	return t->slot[idx].obj;
}

void *keytab_lookup(const struct keytab *t, uint32_t key)
{
	enum keytab_kind kind;
	void *obj = keytab_lookup_kind(t, key, &kind);

	return obj && kind == KEYTAB_MR ? obj : NULL;
}

int keytab_set_variant(struct keytab *t, uint32_t key)
{
	uint32_t idx = key >> 8;

	if (idx == 0 || idx > t->size || !t->slot[idx].obj)
		return EINVAL;
	t->slot[idx].variant = (uint8_t)key;
	return 0;
}

int keytab_free(struct keytab *t, uint32_t key)
{
	uint32_t idx = key >> 8;
	enum keytab_kind kind;

	if (!keytab_lookup_kind(t, key, &kind))
		return EINVAL;
	t->slot[idx].obj = NULL;
	t->slot[idx].variant += t->slot[idx].stride;
	return id_alloc_put(&t->ids, idx);
}
