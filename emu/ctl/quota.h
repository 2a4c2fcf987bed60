/*
 * quota.h - per-uid limits of a daemon that serves every local user
 * (docs/security.md "Quotas"): connections and each verbs object type, and
 * a descriptor budget that keeps the top of the daemon's descriptor table
 * for root and the daemon's own user (administration).
 *
 * Usage is counted from the live clients (no separate bookkeeping that could
 * drift): a uid's usage of a kind is the sum over its connections. Root and
 * the uid that started the daemon (its administrators) have no quotas; the
 * device-wide limits (device.h) apply to everyone.
 */
#ifndef UROCE_EMU_CTL_QUOTA_H
#define UROCE_EMU_CTL_QUOTA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "emu/obj/limits.h"

struct ctl_client;
struct uroce_dev;

/* Connections beyond a uid's limit that are kept just long enough to answer
 * their first message with EMFILE; more are closed at once. */
#define QUOTA_REFUSED_HELD 8u
/* Descriptors kept for root and the daemon's uid (admin, `uroce status`). */
#define QUOTA_FD_RESERVE 64

/* Name of KIND as in options and status ("clients", "pd", "cq", ...). */
const char *quota_name(enum quota_kind kind);

/* Default limit of KIND: clients 64, pd/cq/qp 1024, mr/ah 16384, srq 256
 * (a quarter of the device limits for objects, device.h). */
uint32_t quota_default(enum quota_kind kind);

/* The uid's live usage of KIND (connections: every connection of the uid,
 * HELLO'd or not). */
uint32_t quota_usage(const struct uroce_dev *d, uid_t uid, enum quota_kind kind);

/*
 * quota_check - may C create one more object of KIND? Errno as the kernel
 * gives for resources a device has no more of: ENOMEM (ibv_alloc_pd(3),
 * ibv_reg_mr(3), ibv_create_cq(3), ibv_create_qp(3), ibv_create_ah(3)).
 * Returns 0 or ENOMEM (one rate-limited log line names the uid and kind).
 */
int quota_check(const struct ctl_client *c, enum quota_kind kind);

/*
 * quota_check_dm - may C hold MORE bytes of device memory besides what it
 * and its uid hold (ibv_alloc_dm(3), uroce/abi_dm.h)? The device's
 * UROCE_DM_MAX_SIZE binds everyone; the uid's max_dm all but root and the
 * daemon's uid. Returns 0 or ENOMEM (as mlx5 when MEMIC is exhausted; one
 * rate-limited log line).
 */
int quota_check_dm(const struct ctl_client *c, uint64_t more);

/* Device memory bytes charged to UID (all uids: DM_ALL_UIDS). */
#define DM_ALL_UIDS ((uid_t)-1)
uint64_t quota_dm_usage(const struct uroce_dev *d, uid_t uid);

/*
 * quota_admit - a new connection C (already counted among the clients):
 * 0 = serve it; EMFILE = answer its first message with EMFILE, then close
 * (over the uid's connection limit); -1 = close it now (more than
 * QUOTA_REFUSED_HELD over, or its descriptor is in the reserve).
 */
int quota_admit(const struct ctl_client *c);

/* May C (its uid) hold descriptor number FD? Root and the daemon's uid:
 * always; other uids: only below fd_limit - QUOTA_FD_RESERVE (the kernel
 * hands out the lowest free number, so the reserve is the top of the table). */
bool quota_fd_ok(const struct ctl_client *c, int fd);

/* Status lines: "quota per_uid clients=N pd=N cq=N qp=N mr=N ah=N srq=N
 * fd_limit=N fd_reserve=N", then one "uid N clients=N pd=N ..." line per uid
 * with a connection, then "dm per_uid=N device=N used=N" (device memory
 * bytes: the uid quota, the device's size, charged to all uids). */
void quota_status(const struct uroce_dev *d, FILE *fp);

#endif
