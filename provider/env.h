/*
 * env.h - the provider's settings from the environment (UROCE_CTL_TIMEOUT_MS,
 * UROCE_STALE_EVENT_WAIT_MS, UROCE_POLL_YIELD; docs/provider.md).
 */
#ifndef UROCE_PROVIDER_ENV_H
#define UROCE_PROVIDER_ENV_H

/* The decimal value of environment variable NAME when it lies in LO..HI;
 * DEF when NAME is unset or empty, and DEF with a message on stderr when
 * it is anything else. */
long uroce_env_num(const char *name, long lo, long hi, long def);

#endif
