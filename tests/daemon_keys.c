/*
 * daemon_keys.c - unit tests of memory-key allocation (emu/obj/keytab.c: keys are
 * index<<8 | variant, key+1 never live, stale keys dead), the round-robin id
 * allocator (emu/obj/id_alloc.c: QPNs, CQNs) and the per-client handle tables
 * (emu/obj/objtab.c).
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/obj/id_alloc.h"
#include "emu/obj/keytab.h"

#include "check_main.h"
#include <errno.h>
#include <stdint.h>

static int objs[64];

START_TEST(keys_shape_and_lookup)
{
	struct keytab t;
	uint32_t k[8];
	int i;

	ck_assert_int_eq(keytab_init(&t, 100), 0);
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(keytab_alloc(&t, &objs[i], &k[i]), 0);
		ck_assert_uint_eq(k[i] >> 8, (uint32_t)i + 1);     /* index 1, 2, ... */
		ck_assert_ptr_eq(keytab_lookup(&t, k[i]), &objs[i]);
		/* key+1 and key-1 differ in the variant: never a live MR */
		ck_assert_ptr_null(keytab_lookup(&t, k[i] + 1));
		ck_assert_ptr_null(keytab_lookup(&t, k[i] - 1));
		/* same variant, neighbouring index: not this MR either */
		ck_assert_ptr_ne(keytab_lookup(&t, k[i] + 256), &objs[i]);
	}
	ck_assert_ptr_null(keytab_lookup(&t, 0));
	ck_assert_ptr_null(keytab_lookup(&t, 0xFF));        /* index 0 */
	ck_assert_ptr_null(keytab_lookup(&t, 101u << 8));   /* index beyond the table */
	ck_assert_ptr_null(keytab_lookup(&t, 0xFFFFFFFF));
	keytab_fini(&t);
}
END_TEST

/* Variants come from getrandom: two tables (two daemons) give other keys
 * for the same slots; 16 equal slots by chance: probability 2^-128. */
START_TEST(keys_unpredictable)
{
	struct keytab t1, t2;
	uint32_t k1, k2;
	int i, same = 0;

	ck_assert_int_eq(keytab_init(&t1, 16), 0);
	ck_assert_int_eq(keytab_init(&t2, 16), 0);
	for (i = 0; i < 16; i++) {
		ck_assert_int_eq(keytab_alloc(&t1, &objs[i], &k1), 0);
		ck_assert_int_eq(keytab_alloc(&t2, &objs[i], &k2), 0);
		ck_assert_uint_eq(k1 >> 8, k2 >> 8);
		same += k1 == k2;
	}
	ck_assert_int_lt(same, 16);
	keytab_fini(&t1);
	keytab_fini(&t2);
}
END_TEST

START_TEST(keys_free_and_reuse)
{
	struct keytab t;
	uint32_t a, b, c, i, k;

	ck_assert_int_eq(keytab_init(&t, 2), 0);
	ck_assert_int_eq(keytab_alloc(&t, &objs[0], &a), 0);
	ck_assert_int_eq(keytab_alloc(&t, &objs[1], &b), 0);
	ck_assert_int_eq(keytab_alloc(&t, &objs[2], &c), ENOMEM);   /* full */
	ck_assert_int_eq(keytab_free(&t, a), 0);
	ck_assert_ptr_null(keytab_lookup(&t, a));                   /* stale key is dead */
	ck_assert_int_eq(keytab_free(&t, a), EINVAL);              /* double free */
	ck_assert_int_eq(keytab_free(&t, b + 1), EINVAL);          /* wrong variant */
	ck_assert_int_eq(keytab_alloc(&t, &objs[2], &c), 0);
	ck_assert_uint_eq(c >> 8, a >> 8);                          /* slot reused ... */
	ck_assert_uint_ne(c & 0xFF, a & 0xFF);                      /* ... with another variant */
	ck_assert_ptr_null(keytab_lookup(&t, a));
	ck_assert_ptr_eq(keytab_lookup(&t, c), &objs[2]);
	/* 256 reuses of one slot never repeat a variant before wrapping */
	ck_assert_int_eq(keytab_free(&t, b), 0);
	k = c;
	for (i = 0; i < 255; i++) {
		uint32_t n;

		ck_assert_int_eq(keytab_free(&t, k), 0);
		ck_assert_int_eq(keytab_alloc(&t, &objs[3], &n), 0);
		if ((n >> 8) == (c >> 8))
			ck_assert_uint_ne(n, c);
		k = n;
	}
	keytab_fini(&t);
	ck_assert_int_eq(keytab_init(&t, 0), EINVAL);
	ck_assert_int_eq(keytab_init(&t, 1u << 24), EINVAL);
}
END_TEST

/* Window keys share the table: an MR lookup never returns a window, a
 * window's variant follows its binds and only the current key names it. */
START_TEST(keys_windows)
{
	struct keytab t;
	int mr_obj, mw_obj;
	uint32_t kmr, kmw, knew;
	enum keytab_kind kind = KEYTAB_MR;

	ck_assert_int_eq(keytab_init(&t, 4), 0);
	ck_assert_int_eq(keytab_alloc(&t, &mr_obj, &kmr), 0);
	ck_assert_int_eq(keytab_alloc_kind(&t, &mw_obj, KEYTAB_MW, &kmw), 0);
	ck_assert_uint_ne(kmr >> 8, kmw >> 8);
	ck_assert_ptr_eq(keytab_lookup(&t, kmr), &mr_obj);
	ck_assert_ptr_null(keytab_lookup(&t, kmw));
	ck_assert_ptr_eq(keytab_lookup_kind(&t, kmw, &kind), &mw_obj);
	ck_assert_int_eq(kind, KEYTAB_MW);
	ck_assert_ptr_eq(keytab_lookup_kind(&t, kmr, &kind), &mr_obj);
	ck_assert_int_eq(kind, KEYTAB_MR);
	knew = (kmw & ~0xFFu) | ((kmw + 1) & 0xFFu);	/* ibv_inc_rkey */
	ck_assert_int_eq(keytab_set_variant(&t, knew), 0);
	ck_assert_ptr_null(keytab_lookup_kind(&t, kmw, &kind));
	ck_assert_ptr_eq(keytab_lookup_kind(&t, knew, &kind), &mw_obj);
	ck_assert_int_eq(keytab_set_variant(&t, 3u << 8), EINVAL);	/* index not live */
	ck_assert_int_eq(keytab_set_variant(&t, 0), EINVAL);
	ck_assert_int_eq(keytab_free(&t, kmw), EINVAL);			/* stale key */
	ck_assert_int_eq(keytab_free(&t, knew), 0);
	ck_assert_ptr_null(keytab_lookup_kind(&t, knew, &kind));
	ck_assert_int_eq(keytab_free(&t, kmr), 0);
	keytab_fini(&t);
}
END_TEST

START_TEST(ids_round_robin)
{
	struct id_alloc a;
	uint32_t id[5], x, i;

	ck_assert_int_eq(id_alloc_init(&a, 0x11, 4), 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(id_alloc_get(&a, &id[i]), 0);
		ck_assert_uint_eq(id[i], 0x11 + i);
	}
	ck_assert_int_eq(id_alloc_get(&a, &x), ENOMEM);
	ck_assert_int_eq(id_alloc_put(&a, 0x12), 0);
	ck_assert_int_eq(id_alloc_put(&a, 0x12), EINVAL);
	ck_assert_int_eq(id_alloc_put(&a, 0x10), EINVAL);  /* below the range */
	ck_assert_int_eq(id_alloc_put(&a, 0x15), EINVAL);  /* above the range */
	ck_assert_int_eq(id_alloc_get(&a, &x), 0);
	ck_assert_uint_eq(x, 0x12);
	/* free two; the next one after the last handed out comes first */
	ck_assert_int_eq(id_alloc_put(&a, 0x11), 0);
	ck_assert_int_eq(id_alloc_put(&a, 0x14), 0);
	ck_assert_int_eq(id_alloc_get(&a, &x), 0);
	ck_assert_uint_eq(x, 0x14);
	ck_assert_int_eq(id_alloc_get(&a, &x), 0);
	ck_assert_uint_eq(x, 0x11);
	ck_assert(id_alloc_busy(&a, 0x13));
	ck_assert(!id_alloc_busy(&a, 0x20));
	id_alloc_fini(&a);
	ck_assert_int_eq(id_alloc_init(&a, 1, 0), EINVAL);
}
END_TEST

START_TEST(handle_tables)
{
	struct obj_table t = { 0 };
	uint32_t h, hs[20];
	int i;

	ck_assert_ptr_null(objtab_get(&t, 0));
	ck_assert_ptr_null(objtab_get(&t, 1));
	for (i = 0; i < 20; i++) {
		ck_assert_int_eq(objtab_add(&t, &objs[i], &hs[i]), 0);
		ck_assert_uint_eq(hs[i], (uint32_t)i + 1);
	}
	ck_assert_uint_eq(t.count, 20);
	ck_assert_ptr_eq(objtab_get(&t, 20), &objs[19]);
	ck_assert_ptr_null(objtab_get(&t, 0));
	ck_assert_ptr_null(objtab_get(&t, 0xFFFFFFFF));
	objtab_del(&t, 5);
	objtab_del(&t, 5); /* idempotent */
	ck_assert_uint_eq(t.count, 19);
	ck_assert_ptr_null(objtab_get(&t, 5));
	ck_assert_int_eq(objtab_add(&t, &objs[30], &h), 0);
	ck_assert_uint_eq(h, 5); /* lowest free handle */
	objtab_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("keys");
	TCase *tc = tcase_create("alloc");

	tcase_add_test(tc, keys_shape_and_lookup);
	tcase_add_test(tc, keys_free_and_reuse);
	tcase_add_test(tc, keys_unpredictable);
	tcase_add_test(tc, keys_windows);
	tcase_add_test(tc, ids_round_robin);
	tcase_add_test(tc, handle_tables);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
