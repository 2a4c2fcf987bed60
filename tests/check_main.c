/*
 * check_main.c - counted runs of Check suites (check_main.h).
 */
#define CHECK_MAIN_IMPL
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

/* What the program registered; a test program has a handful of cases. */
#define MAX_CASES 64
static struct {
	TCase *tc;
	const char *name;
	int tests;  /* registered test calls */
	bool added; /* to the suite */
} cases[MAX_CASES];
static int n_cases;
static const char *suite_name;

Suite *check_main_suite_create(const char *name)
{
	suite_name = name;
	return suite_create(name);
}

TCase *check_main_tcase_create(const char *name)
{
	TCase *tc = tcase_create(name);

	if (n_cases == MAX_CASES) {
		fprintf(stderr, "check_main: more than %d test cases\n", MAX_CASES);
		exit(EXIT_FAILURE);
	}
	cases[n_cases].tc = tc;
	cases[n_cases].name = name;
	n_cases++;
	return tc;
}

static int case_index(TCase *tc)
{
	for (int i = 0; i < n_cases; i++)
		if (cases[i].tc == tc)
			return i;
	fprintf(stderr, "check_main: a test case not made by tcase_create\n");
	exit(EXIT_FAILURE);
}

void check_main_suite_add_tcase(Suite *s, TCase *tc)
{
	cases[case_index(tc)].added = true;
	suite_add_tcase(s, tc);
}

void check_main_add_test(TCase *tc, const TTest *ttest, int signal, int allowed_exit_value,
			 int start, int end)
{
	if (end > start)
		cases[case_index(tc)].tests += end - start;
	_tcase_add_test(tc, ttest, signal, allowed_exit_value, start, end);
}

/* Tests registered in the cases CK_RUN_SUITE / CK_RUN_CASE select. */
static int expected_tests(void)
{
	const char *run_suite = getenv("CK_RUN_SUITE");
	const char *run_case = getenv("CK_RUN_CASE");
	int n = 0;

	if (run_suite && *run_suite && (!suite_name || strcmp(run_suite, suite_name)))
		return 0;
	for (int i = 0; i < n_cases; i++)
		if (cases[i].added && (!run_case || !*run_case || !strcmp(run_case, cases[i].name)))
			n += cases[i].tests;
	return n;
}

int check_main_run(Suite *s, enum print_output mode)
{
	const char *tags[] = { "CK_INCLUDE_TAGS", "CK_EXCLUDE_TAGS" };
	int expected, ran, failed;
	SRunner *sr;

	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		const char *v = getenv(tags[i]);

		if (v && *v) {
			fprintf(stderr, "check_main: %s=%s: uroce's tests have no tags\n", tags[i], v);
			return EXIT_FAILURE;
		}
	}
	expected = expected_tests();
	sr = srunner_create(s);
	srunner_run_all(sr, mode);
	ran = srunner_ntests_run(sr);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (expected == 0) {
		fprintf(stderr, "check_main: no test selected (CK_RUN_SUITE=%s CK_RUN_CASE=%s)\n",
			getenv("CK_RUN_SUITE") ?: "", getenv("CK_RUN_CASE") ?: "");
		return EXIT_FAILURE;
	}
	if (ran != expected) {
		fprintf(stderr, "check_main: %d test(s) ran, %d expected\n", ran, expected);
		return EXIT_FAILURE;
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
