/*
 * limits.h - the per-uid limits a device is configured with (`uroced
 * --max-KIND-per-user`, docs/security.md "Quotas"): the kinds of object counted and
 * the numbers, held in the device (struct uroce_dev.quota). The checks
 * that apply them are emu/ctl/quota.c's.
 */
#ifndef UROCE_EMU_OBJ_LIMITS_H
#define UROCE_EMU_OBJ_LIMITS_H

#include <stdint.h>

enum quota_kind { QUOTA_CLIENTS, QUOTA_PD, QUOTA_CQ, QUOTA_QP, QUOTA_MR, QUOTA_AH, QUOTA_SRQ, QUOTA_NKINDS };

struct quota {
	uint32_t max[QUOTA_NKINDS];   /* per uid; 0 = the kind's default */
	int fd_limit;                 /* RLIMIT_NOFILE of the daemon (ctl_server_start) */
	uint32_t max_dm;              /* device memory bytes per uid; 0 = UROCE_DM_DEFAULT_PER_USER */
};

#endif
