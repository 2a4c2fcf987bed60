/*
 * soft_check.h - CHECK(cond, fmt, ...) for test programs that report every
 * broken value of a run instead of stopping at the first: a false COND
 * prints "FAIL function:line: " and the message on stderr and counts it in
 * `failures`; the program ends with a non-zero status when failures > 0.
 */
#ifndef UROCE_TESTS_SOFT_CHECK_H
#define UROCE_TESTS_SOFT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__);  \
			fprintf(stderr, __VA_ARGS__);                          \
			fprintf(stderr, "\n");                                 \
			failures++;                                            \
		}                                                              \
	} while (0)

#endif
