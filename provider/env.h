/*
 * env.h - the provider's settings from the environment (UROCE_CTL_TIMEOUT_MS,
 * UROCE_STALE_EVENT_WAIT_MS, UROCE_POLL_YIELD; docs/provider.md).
 */
#ifndef UROCE_PROVIDER_ENV_H
#define UROCE_PROVIDER_ENV_H

#include <stdbool.h>

/* The decimal value of environment variable NAME when it is digits only
 * and lies in LO..HI; DEF when NAME is unset or empty, and DEF otherwise
 * too, with one line on stderr the first time *WARNED is false (the
 * caller's own flag, so that a setting read at every request says it
 * once per process). */
long uroce_env_num(const char *name, long lo, long hi, long def, bool *warned);

#endif
