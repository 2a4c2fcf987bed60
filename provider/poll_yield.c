/*
 * poll_yield.c - the UROCE_POLL_YIELD setting (poll_yield.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "poll_yield.h"
#include "uroce.h"

uint32_t uroce_poll_yield_setting(void)
{
	const char *s = getenv("UROCE_POLL_YIELD");
	char *end;
	long v;

	if (!s || !*s)
		return UROCE_POLL_YIELD_DEFAULT;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > UROCE_POLL_YIELD_MAX) {
		fprintf(stderr, UROCE_LOG_PREFIX "UROCE_POLL_YIELD=%s is not 0..%d; using %d\n", s,
			UROCE_POLL_YIELD_MAX, UROCE_POLL_YIELD_DEFAULT);
		return UROCE_POLL_YIELD_DEFAULT;
	}
	return (uint32_t)v;
}
