/*
 * env.c - numbers from the environment (env.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "uroce.h"

/* At most this much of a refused value is echoed, non-printable bytes as '?'. */
#define ENV_ECHO_MAX 40

long uroce_env_num(const char *name, long lo, long hi, long def, bool *warned)
{
	const char *s = getenv(name);
	char echo[ENV_ECHO_MAX + 1];
	char *end;
	size_t n;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (isdigit((unsigned char)s[0]) && !*end && !errno && v >= lo && v <= hi)
		return v;
	if (!__atomic_exchange_n(warned, true, __ATOMIC_RELAXED)) {
		n = strnlen(s, ENV_ECHO_MAX);
		for (size_t i = 0; i < n; i++)
			echo[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
		echo[n] = '\0';
		fprintf(stderr, UROCE_LOG_PREFIX "%s='%s%s' is not a number in %ld..%ld; using %ld\n", name,
			echo, s[n] ? "..." : "", lo, hi, def);
	}
	return def;
}
