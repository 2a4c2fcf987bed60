/*
 * env.c - numbers from the environment (env.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "env.h"
#include "uroce.h"

long uroce_env_num(const char *name, long lo, long hi, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi) {
		fprintf(stderr, UROCE_LOG_PREFIX "%s=%s is not %ld..%ld; using %ld\n", name, s, lo, hi, def);
		return def;
	}
	return v;
}
