/*
 * provider_abi_version.c - the load-time libibverbs version check (provider/abi_version.c).
 *
 * Table-driven: file names of real rdma-core releases (docs/provider-abi.md §4.4)
 * and malformed names, with the exact parse result and the layout family each
 * release belongs to (the first release of its row in provider/abi/releases.tsv,
 * 0 for none); the provider must accept exactly the names of the family it
 * was configured for (config.h UROCE_RDMA_CORE_FIRST). The library ABI
 * numbers of 39, 50, 56 (14) and 64 (17) are those of the real files; for
 * 57-63 they are illustrative, as the check ignores them. Then the real check on
 * this process's libibverbs: the system one, or a release's own under
 * scripts/test-rdma-core.
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
	unsigned int family;  /* first release of its layout family; 0: none */
};

static const struct name_case cases[] = {
	{ "libibverbs.so.1.14.44.0", 0, 14, 44, 0, 44 },  /* Debian 12 */
	{ "libibverbs.so.1.14.44.3", 0, 14, 44, 3, 44 },  /* a 44 stable point release */
	{ "libibverbs.so.1.14.43.0", 0, 14, 43, 0, 36 },  /* verbs_qp.comp_mask @344 */
	{ "libibverbs.so.1.14.36.0", 0, 14, 36, 0, 36 },  /* 76 op slots from here */
	{ "libibverbs.so.1.14.39.0", 0, 14, 39, 0, 36 },  /* Ubuntu 22.04 */
	{ "libibverbs.so.1.14.45.0", 0, 14, 45, 0, 45 },  /* verbs_qp is 376 bytes */
	{ "libibverbs.so.1.14.50.0", 0, 14, 50, 0, 45 },  /* Ubuntu 24.04 */
	{ "libibverbs.so.1.14.56.1", 0, 14, 56, 1, 45 },  /* Debian 13 */
	{ "libibverbs.so.1.15.57.0", 0, 15, 57, 0, 57 },  /* PABI 57, layout of 45 */
	{ "libibverbs.so.1.15.58.0", 0, 15, 58, 0, 57 },
	{ "libibverbs.so.1.16.59.0", 0, 16, 59, 0, 59 },  /* PABI 59, 79 op slots */
	{ "libibverbs.so.1.16.61.0", 0, 16, 61, 0, 59 },
	{ "libibverbs.so.1.16.62.0", 0, 16, 62, 0, 62 },  /* still PABI 59, 81 slots */
	{ "libibverbs.so.1.16.63.0", 0, 16, 63, 0, 62 },
	{ "libibverbs.so.1.17.64.0", 0, 17, 64, 0, 64 },  /* PABI 64, 83 slots */
	{ "libibverbs.so.1.14.35.0", 0, 14, 35, 0, 0 },   /* 75 op slots: no table */
	{ "libibverbs.so.1.17.65.0", 0, 17, 65, 0, 0 },   /* newer than any table */
	{ "libibverbs.so.1", -1, 0, 0, 0, 0 },
	{ "libibverbs.so.1.14.44", -1, 0, 0, 0, 0 },
	{ "libibverbs.so.1.14.44.0.1", -1, 0, 0, 0, 0 },
	{ "libibverbs.so.1.14.44.x", -1, 0, 0, 0, 0 },
	{ "libibverbs.so.1.14..0", -1, 0, 0, 0, 0 },
	{ "libibverbs.so.1.14.44444.0", -1, 0, 0, 0, 0 },
	{ "libmlx5.so.1.24.44.0", -1, 0, 0, 0, 0 },
	{ "", -1, 0, 0, 0, 0 },
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
		bool want = c->family == UROCE_RDMA_CORE_FIRST;

		ck_assert_msg(uroce_ibverbs_layout_known(&v) == want,
			      "%s: known %d, expected %d (built for rdma-core %d-%d)", c->name,
			      uroce_ibverbs_layout_known(&v), want,
			      UROCE_RDMA_CORE_FIRST, UROCE_RDMA_CORE_LAST);
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

/* This process's libibverbs is of the configured family (Debian 12: 44.0). */
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
