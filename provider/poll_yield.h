/*
 * poll_yield.h - a polling client gives the CPU back while its CQ stays
 * empty.
 *
 * On a ConnectX the NIC fills the CQ whatever the host's CPUs do; uroce's
 * NIC is the daemon, a process that needs a CPU for every packet and
 * completion. A client that spins on an empty CQ (perftest, UCX, MPI
 * progress loops) on a machine with as many spinning processes as cores
 * takes that CPU from the daemon and from its own peer: on 2 vCPUs an
 * ib_send_bw server starved this way lets its receive queue run dry (RNR)
 * and the daemons wait for a turn behind the pollers. So after
 * UROCE_POLL_YIELD consecutive empty polls of one CQ (ibv_poll_cq returning
 * 0, ibv_start_poll ENOENT, urocedv_poll_cq_wc 0) the provider calls
 * sched_yield(2) once and counts again; a poll that finds a completion
 * restarts the count. When nothing else is runnable on the CPU the call
 * returns at once, so a poller with a core of its own loses only the
 * system call. What the application sees of the CQ does not change.
 *
 * UROCE_POLL_YIELD (environment, read at ibv_open_device): the number of
 * empty polls before a yield, 1..1000000, or 0 for never; default
 * UROCE_POLL_YIELD_DEFAULT. docs/provider.md, "Polling an empty CQ".
 */
#ifndef UROCE_PROVIDER_POLL_YIELD_H
#define UROCE_PROVIDER_POLL_YIELD_H

#include <stdbool.h>
#include <stdint.h>

#include "env.h"

#define UROCE_POLL_YIELD_DEFAULT 64
#define UROCE_POLL_YIELD_MAX 1000000

/* The setting of UROCE_POLL_YIELD (an invalid value: the default, with a
 * message on stderr). */
static inline uint32_t uroce_poll_yield_setting(void)
{
	static bool warned;

	return (uint32_t)uroce_env_num("UROCE_POLL_YIELD", 0, UROCE_POLL_YIELD_MAX, UROCE_POLL_YIELD_DEFAULT,
				       &warned);
}

/* Counts one poll of a CQ whose setting is LIMIT (0: never) and whose
 * empty-poll count is *EMPTY, under the CQ's lock if it has one: FOUND
 * completions restart the count; returns whether the caller should yield
 * (after releasing the lock). */
static inline bool uroce_poll_count(uint32_t *empty, uint32_t limit, bool found)
{
	if (found || !limit) {
		*empty = 0;
		return false;
	}
	if (++*empty < limit)
		return false;
	*empty = 0;
	return true;
}

#endif
