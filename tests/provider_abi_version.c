/*
 * provider_abi_version.c - the load-time libibverbs version check (provider/abi_version.c).
 *
 * Table-driven: file names of real rdma-core releases (docs/provider-abi.md §4.3)
 * and malformed names, with the exact parse result and whether the provider
 * accepts the layout. Then the real check on this process's libibverbs,
 * which on Debian 12 is libibverbs.so.1.14.44.0.
 */
#include "config.h"

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/abi_version.h"

struct name_case {
	const char *name;
	int ret;              /* 0 or -1 */
	unsigned int abi, release, minor;
	bool known;
};

static const struct name_case cases[] = {
	{ "libibverbs.so.1.14.44.0", 0, 14, 44, 0, true },  /* Debian 12 */
	{ "libibverbs.so.1.14.44.3", 0, 14, 44, 3, true },  /* a 44 stable point release */
	{ "libibverbs.so.1.14.43.0", 0, 14, 43, 0, false }, /* verbs_qp.comp_mask @344 */
	{ "libibverbs.so.1.14.45.0", 0, 14, 45, 0, false }, /* verbs_qp is 376 bytes */
	{ "libibverbs.so.1.14.39.0", 0, 14, 39, 0, false }, /* Ubuntu 22.04 */
	{ "libibverbs.so.1.17.64.0", 0, 17, 64, 0, false }, /* PABI 64 */
	{ "libibverbs.so.1.13.44.0", 0, 13, 44, 0, false }, /* impossible pair: refuse */
	{ "libibverbs.so.1", -1, 0, 0, 0, false },
	{ "libibverbs.so.1.14.44", -1, 0, 0, 0, false },
	{ "libibverbs.so.1.14.44.0.1", -1, 0, 0, 0, false },
	{ "libibverbs.so.1.14.44.x", -1, 0, 0, 0, false },
	{ "libibverbs.so.1.14..0", -1, 0, 0, 0, false },
	{ "libibverbs.so.1.14.44444.0", -1, 0, 0, 0, false },
	{ "libmlx5.so.1.24.44.0", -1, 0, 0, 0, false },
	{ "", -1, 0, 0, 0, false },
};

START_TEST(test_parse_name)
{
	const struct name_case *c = &cases[_i];
	struct uroce_ibverbs_version v = { 0, 0, 0 };
	int ret;

	errno = 0;
	ret = uroce_parse_ibverbs_name(c->name, &v);
	ck_assert_msg(ret == c->ret, "%s: ret %d, expected %d", c->name, ret, c->ret);
	if (ret == 0) {
		ck_assert_msg(v.abi == c->abi && v.release == c->release && v.minor == c->minor,
			      "%s: got %u.%u.%u, expected %u.%u.%u", c->name, v.abi,
			      v.release, v.minor, c->abi, c->release, c->minor);
		ck_assert_msg(uroce_ibverbs_layout_known(&v) == c->known,
			      "%s: known %d, expected %d", c->name,
			      uroce_ibverbs_layout_known(&v), c->known);
	} else {
		ck_assert_int_eq(errno, EINVAL);
	}
}
END_TEST

START_TEST(test_parse_null)
{
	struct uroce_ibverbs_version v;

	ck_assert_int_eq(uroce_parse_ibverbs_name(NULL, &v), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* This process links the system libibverbs; on Debian 12 it is 44.0. */
START_TEST(test_loaded_library)
{
	char why[256] = "";
	int ret = uroce_check_loaded_ibverbs(why, sizeof(why));

	ck_assert_msg(ret == 0, "system libibverbs refused: %s", why);
	ck_assert_str_eq(why, "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("provider_abi_version");
	TCase *tc = tcase_create("names");

	tcase_add_loop_test(tc, test_parse_name, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_parse_null);
	tcase_add_test(tc, test_loaded_library);
	suite_add_tcase(s, tc);
	return check_main_run(s, CK_ENV);
}
