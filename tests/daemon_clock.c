/*
 * daemon_clock.c - unit tests of the HCA clock page (emu/nic/hca_clock.c and the
 * reader formulas in include/uroce/abi.h): fixed-point factors and re-base
 * period per frequency/width, wrap-around of the counter, cycles->wallclock
 * for timestamps after and before the base (also across a wrap), refused
 * options, and continuity of the counter across a re-base.
 */
#include "config.h"
#include "emu/nic/hca_clock.h"

#include "check_main.h"
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

static const struct {
	uint64_t khz;
	uint32_t bits;
	uint64_t mask, mult, ns_mult, period;
} params[] = {
	{ 1000000, 63, 0x7FFFFFFFFFFFFFFFull, 1ull << 32, 1ull << 32, 1000000000ull },
	{ 250000, 40, (1ull << 40) - 1, 1ull << 30, 1ull << 34, 1000000000ull },
	{ 1000000, 32, 0xFFFFFFFFull, 1ull << 32, 1ull << 32, 1000000000ull },
	/* 2^24 cycles at 1 GHz wrap in 16777216 ns: re-base every quarter */
	{ 1000000, 24, 0xFFFFFFull, 1ull << 32, 1ull << 32, 4194304ull },
	{ 2000000, 64, ~0ull, 1ull << 33, 1ull << 31, 1000000000ull },
};

START_TEST(page_parameters)
{
	int i;

	for (i = 0; i < (int)(sizeof(params) / sizeof(params[0])); i++) {
		struct hca_clock c;
		const struct uroce_clock_page *p;

		ck_assert_int_eq(hca_clock_init(&c, params[i].khz, params[i].bits), 0);
		p = c.page;
		ck_assert_uint_eq(p->magic, UROCE_CLOCK_MAGIC);
		ck_assert_uint_eq(p->version, UROCE_ABI_VERSION);
		ck_assert_uint_eq(p->seq & 1, 0);
		ck_assert_uint_eq(p->freq_khz, params[i].khz);
		ck_assert_uint_eq(p->bits, params[i].bits);
		ck_assert_uint_eq(p->mask, params[i].mask);
		ck_assert_uint_eq(p->shift, 32);
		ck_assert_uint_eq(p->mult, params[i].mult);
		ck_assert_uint_eq(p->ns_mult, params[i].ns_mult);
		ck_assert_uint_eq(p->update_period_ns, params[i].period);
		hca_clock_fini(&c);
	}
}
END_TEST

START_TEST(bad_options)
{
	struct hca_clock c;

	ck_assert_int_eq(hca_clock_init(&c, 999, 63), EINVAL);
	ck_assert_int_eq(hca_clock_init(&c, 10000001, 63), EINVAL);
	ck_assert_int_eq(hca_clock_init(&c, 1000000, 23), EINVAL);
	ck_assert_int_eq(hca_clock_init(&c, 1000000, 65), EINVAL);
}
END_TEST

START_TEST(cycles_wrap)
{
	struct uroce_clock_snap s = { .mask = 0xFFFFFF, .base_raw_ns = 1000, .base_cycles = 0xFFFFFF - 9,
				      .mult = 1ull << 32, .shift = 32 };

	ck_assert_uint_eq(uroce_clock_cycles_at(&s, 1000), 0xFFFFFF - 9);
	ck_assert_uint_eq(uroce_clock_cycles_at(&s, 1009), 0xFFFFFF);
	ck_assert_uint_eq(uroce_clock_cycles_at(&s, 1010), 0);
	ck_assert_uint_eq(uroce_clock_cycles_at(&s, 1020), 10);
	/* 250 MHz: a quarter cycle per ns */
	s.mult = 1ull << 30;
	s.base_cycles = 0;
	ck_assert_uint_eq(uroce_clock_cycles_at(&s, 1000 + 4000), 1000);
	/* a day later (8.64e13 ns): no overflow in the 128-bit product */
	s.mask = ~0ull;
	ck_assert_uint_eq(uroce_clock_cycles_at(&s, 1000 + 86400000000000ull), 21600000000000ull);
}
END_TEST

START_TEST(to_wallclock)
{
	struct uroce_clock_snap s = { .mask = 0xFFFFFF, .base_cycles = 1000, .base_real_ns = 5000000000ull,
				      .ns_mult = 1ull << 32, .ns_shift = 32 };

	ck_assert_uint_eq(uroce_clock_to_wall_ns(&s, 1500), 5000000500ull);
	ck_assert_uint_eq(uroce_clock_to_wall_ns(&s, 500), 4999999500ull);   /* before the base */
	s.base_cycles = 0xFFFFFF - 99;
	ck_assert_uint_eq(uroce_clock_to_wall_ns(&s, 50), 5000000150ull);    /* after, across the wrap */
	s.base_cycles = 50;
	ck_assert_uint_eq(uroce_clock_to_wall_ns(&s, 0xFFFFFF - 99), 4999999850ull); /* before, across */
	/* 250 MHz: 4 ns per cycle */
	s.ns_mult = 1ull << 34;
	s.base_cycles = 0;
	ck_assert_uint_eq(uroce_clock_to_wall_ns(&s, 250), 5000001000ull);
}
END_TEST

START_TEST(continuous_across_rebase)
{
	struct hca_clock c;
	uint64_t c0, c1, c2;
	int i;

	ck_assert_int_eq(hca_clock_init(&c, 1000000, 63), 0);
	for (i = 0; i < 1000; i++) {
		c0 = hca_clock_now(&c);
		hca_clock_update(&c);
		c1 = c.page->base_cycles;
		c2 = hca_clock_now(&c);
		ck_assert_uint_le(c0, c1);
		ck_assert_uint_le(c1, c2);
		ck_assert_uint_eq(c.page->seq & 1, 0);
	}
	hca_clock_fini(&c);
}
END_TEST

START_TEST(page_not_writable_by_clients)
{
	struct hca_clock c;
	void *w;

	ck_assert_int_eq(hca_clock_init(&c, 1000000, 63), 0);
	w = mmap(NULL, UROCE_CLOCK_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd, 0);
	ck_assert_ptr_eq(w, MAP_FAILED);
	ck_assert_int_eq(ftruncate(c.fd, 0), -1);
	w = mmap(NULL, UROCE_CLOCK_PAGE_SIZE, PROT_READ, MAP_SHARED, c.fd, 0);
	ck_assert_ptr_ne(w, MAP_FAILED);
	munmap(w, UROCE_CLOCK_PAGE_SIZE);
	hca_clock_fini(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hca_clock");
	TCase *tc = tcase_create("clock");

	tcase_add_test(tc, page_parameters);
	tcase_add_test(tc, bad_options);
	tcase_add_test(tc, cycles_wrap);
	tcase_add_test(tc, to_wallclock);
	tcase_add_test(tc, continuous_across_rebase);
	tcase_add_test(tc, page_not_writable_by_clients);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_NORMAL);
}
