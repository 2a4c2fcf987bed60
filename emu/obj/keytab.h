/*
 * keytab.h - the device's memory-key table: MR lkey/rkey and memory-window
 * rkey allocation and lookup.
 *
 * A key is index<<8 | variant (IBTA §10.6: the low 8 bits are the "key" part a
 * consumer may vary; mlx5 builds its mkeys the same way). The index (1..2^24-1,
 * round-robin) selects the table slot; the variant advances by the slot's
 * stride every time the slot is reused. Each slot's first variant and its odd
 * stride come from getrandom(2), so the key of another user's MR cannot be
 * computed from the keys one sees oneself (docs/security.md), while a slot
 * still goes through all 256 variants before one repeats. key+1 never names
 * a live MR (its variant differs), and a stale key of a freed MR does not
 * match the slot's next owner (pyverbs test_atomic_invalid_lkey/rkey;
 * docs/clients.md §0 item 5). Key 0 is never valid.
 */
#ifndef UROCE_EMU_KEYTAB_H
#define UROCE_EMU_KEYTAB_H

#include <stdint.h>
#include "emu/obj/id_alloc.h"

/* What a key names. */
enum keytab_kind { KEYTAB_MR, KEYTAB_MW };

struct keytab_slot {
	void *obj;        /* owner (struct ctl_mr * or ctl_mw *), NULL = free */
	uint8_t kind;     /* enum keytab_kind */
	uint8_t variant;  /* variant of the current (or next) key of this slot */
	uint8_t stride;   /* odd: added to variant at each reuse */
};

struct keytab {
	struct id_alloc ids;      /* indices 1 .. size */
	struct keytab_slot *slot; /* size+1 entries, [0] unused */
	uint32_t size;
};

/* Deterministic mode: replace every slot's variant and stride with values
 * derived from SEED (same seed, same keys for the same sequence of
 * registrations). Call before any key is handed out. */
void keytab_seed(struct keytab *t, uint64_t seed);

/* Table for SIZE keys (1 .. 2^24-1), variants and strides from getrandom(2).
 * Returns 0, EINVAL, ENOMEM or the errno of getrandom. */
int keytab_init(struct keytab *t, uint32_t size);
void keytab_fini(struct keytab *t);

/* New MR key for OBJ into *key. Returns 0, or ENOMEM when the table is full. */
int keytab_alloc(struct keytab *t, void *obj, uint32_t *key);
/* New key of KIND for OBJ into *key. Returns 0 or ENOMEM. */
int keytab_alloc_kind(struct keytab *t, void *obj, enum keytab_kind kind, uint32_t *key);

/* The MR of KEY, or NULL if KEY is not a live MR key (wrong index or
 * variant, free, or a window's key). */
void *keytab_lookup(const struct keytab *t, uint32_t key);
/* The object of KEY of any kind (its kind in *kind), or NULL. */
void *keytab_lookup_kind(const struct keytab *t, uint32_t key, enum keytab_kind *kind);
/* Give the live slot of KEY's index the variant KEY & 0xFF (a memory
 * window's bind picks its key's low byte, IBTA 10.6.7.2.2). Returns 0, or
 * EINVAL if the index is not live. */
int keytab_set_variant(struct keytab *t, uint32_t key);

/* Release KEY (must be live). Returns 0 or EINVAL. */
int keytab_free(struct keytab *t, uint32_t key);

#endif
