/*
 * check_main.h - the one main() of uroce's Check test programs.
 *
 * Include this instead of <check.h>. It counts the tests a program registers
 * (every tcase_add_*test macro of check.h goes through _tcase_add_test, which
 * is redirected here, as are tcase_create, suite_create and suite_add_tcase),
 * so that check_main_run() can tell "all tests ran" from "fewer ran than
 * registered" (a CK_RUN_CASE naming no case used to give "Checks: 0" and a
 * pass). Unit: one test = one call of a test function (a loop test from s to
 * e counts e - s).
 */
#ifndef UROCE_TESTS_CHECK_MAIN_H
#define UROCE_TESTS_CHECK_MAIN_H

#include <check.h>

Suite *check_main_suite_create(const char *name);
TCase *check_main_tcase_create(const char *name);
void check_main_suite_add_tcase(Suite *s, TCase *tc);
void check_main_add_test(TCase *tc, const TTest *ttest, int signal, int allowed_exit_value,
			 int start, int end);

/*
 * check_main_run - run every test case of s (one suite per program) with
 * Check's print mode `mode` (CK_NORMAL, or CK_ENV to follow CK_VERBOSITY),
 * then free the runner.
 * The CK_RUN_SUITE and CK_RUN_CASE variables of check(3) select as in Check;
 * the number of tests expected is then the number registered in the selected
 * cases. CK_INCLUDE_TAGS / CK_EXCLUDE_TAGS are refused (no test here has tags).
 * Returns the process exit status: EXIT_SUCCESS only if at least one test
 * was selected, exactly the expected number ran and none failed; otherwise
 * EXIT_FAILURE with the reason on stderr.
 */
int check_main_run(Suite *s, enum print_output mode);

#ifndef CHECK_MAIN_IMPL
#define suite_create check_main_suite_create
#define tcase_create check_main_tcase_create
#define suite_add_tcase check_main_suite_add_tcase
#define _tcase_add_test check_main_add_test
#endif

#endif
