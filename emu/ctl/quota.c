/*
 * quota.c - per-uid limits and the descriptor budget (see quota.h).
 */
#include "config.h"
#include "emu/ctl/quota.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/obj/objects.h"

#include <errno.h>

static const struct {
	const char *name;
	uint32_t def;
} kinds[QUOTA_NKINDS] = {
	[QUOTA_CLIENTS] = { "clients", 64 }, [QUOTA_PD] = { "pd", DEV_MAX_PD / 4 },
	[QUOTA_CQ] = { "cq", DEV_MAX_CQ / 4 }, [QUOTA_QP] = { "qp", 1024 },
	[QUOTA_MR] = { "mr", (DEV_MAX_MR + 1) / 4 }, [QUOTA_AH] = { "ah", (DEV_MAX_AH + 1) / 4 },
	[QUOTA_SRQ] = { "srq", DEV_MAX_SRQ / 4 },
};

const char *quota_name(enum quota_kind kind)
{
	return kind < QUOTA_NKINDS ? kinds[kind].name : "?";
}

uint32_t quota_default(enum quota_kind kind)
{
	return kind < QUOTA_NKINDS ? kinds[kind].def : 0;
}

static uint32_t limit_of(const struct uroce_dev *d, enum quota_kind kind)
{
	return d->quota.max[kind] ? d->quota.max[kind] : kinds[kind].def;
}

static uint32_t client_usage(const struct ctl_client *c, enum quota_kind kind)
{
	switch (kind) {
	case QUOTA_CLIENTS: return 1;
	case QUOTA_PD: return c->pds.count;
	case QUOTA_CQ: return c->cqs.count;
	case QUOTA_QP: return c->qps.count;
	case QUOTA_MR: return c->mrs.count + c->mws.count; /* keys of one table */
	case QUOTA_AH: return c->ahs.count;
	case QUOTA_SRQ: return c->srqs.count;
	default: return 0;
	}
}

uint32_t quota_usage(const struct uroce_dev *d, uid_t uid, enum quota_kind kind)
{
	const struct ctl_client *c;
	uint32_t n = 0;

	for (c = d->clients; c; c = c->next)
		if (c->uid == uid)
			n += client_usage(c, kind);
	return n;
}

/* Root and the user who started the daemon administer it: no quotas. */
static bool privileged(const struct ctl_client *c)
{
	return c->uid == 0 || c->uid == c->dev->uid;
}

int quota_check(const struct ctl_client *c, enum quota_kind kind)
{
	uint32_t max = limit_of(c->dev, kind);

	if (privileged(c) || quota_usage(c->dev, c->uid, kind) < max)
		return 0;
	ulog_limited(ULOG_LIMIT_QUOTA, ULOG_WARN, "uid %d reached its %s quota (%u): ENOMEM", (int)c->uid,
		     quota_name(kind), max);
	return ENOMEM;
}

uint64_t quota_dm_usage(const struct uroce_dev *d, uid_t uid)
{
	const struct ctl_client *c;
	uint64_t n = 0;
	uint32_t h;

	for (c = d->clients; c; c = c->next) {
		if (uid != DM_ALL_UIDS && c->uid != uid)
			continue;
		for (h = 1; h <= c->dms.cap; h++) {
			const struct ctl_dm *dm = objtab_get(&c->dms, h);

			if (dm)
				n += dm->charged;
		}
	}
	return n;
}

static uint64_t dm_limit(const struct uroce_dev *d)
{
	return d->quota.max_dm ? d->quota.max_dm : UROCE_DM_DEFAULT_PER_USER;
}

int quota_check_dm(const struct ctl_client *c, uint64_t more)
{
	uint64_t max = dm_limit(c->dev);

	if (more > UROCE_DM_MAX_SIZE || quota_dm_usage(c->dev, DM_ALL_UIDS) > UROCE_DM_MAX_SIZE - more) {
		ulog_limited(ULOG_LIMIT_QUOTA, ULOG_WARN, "device memory of %s exhausted (%u bytes): ENOMEM",
			     c->dev->name, UROCE_DM_MAX_SIZE);
		return ENOMEM;
	}
	if (privileged(c) || (more <= max && quota_dm_usage(c->dev, c->uid) <= max - more))
		return 0;
	ulog_limited(ULOG_LIMIT_QUOTA, ULOG_WARN, "uid %d reached its dm quota (%llu bytes): ENOMEM", (int)c->uid,
		     (unsigned long long)max);
	return ENOMEM;
}

bool quota_fd_ok(const struct ctl_client *c, int fd)
{
	return privileged(c) || fd < c->dev->quota.fd_limit - QUOTA_FD_RESERVE;
}

int quota_admit(const struct ctl_client *c)
{
	uint32_t max = limit_of(c->dev, QUOTA_CLIENTS);
	uint32_t n = quota_usage(c->dev, c->uid, QUOTA_CLIENTS);

	if (!quota_fd_ok(c, c->fd)) {
		ulog_limited(ULOG_LIMIT_QUOTA, ULOG_WARN, "uid %d: descriptor budget of unprivileged users used up (fd %d of %d); connection closed",
			     (int)c->uid, c->fd, c->dev->quota.fd_limit);
		return -1;
	}
	if (privileged(c) || n <= max)
		return 0;
	ulog_limited(ULOG_LIMIT_QUOTA, ULOG_WARN, "uid %d reached its clients quota (%u): EMFILE", (int)c->uid, max);
	return n > max + QUOTA_REFUSED_HELD ? -1 : EMFILE;
}

void quota_status(const struct uroce_dev *d, FILE *fp)
{
	const struct ctl_client *c, *o;
	int k;

	fprintf(fp, "quota per_uid");
	for (k = 0; k < QUOTA_NKINDS; k++)
		fprintf(fp, " %s=%u", kinds[k].name, limit_of(d, k));
	fprintf(fp, " fd_limit=%d fd_reserve=%d\n", d->quota.fd_limit, QUOTA_FD_RESERVE);
	for (c = d->clients; c; c = c->next) {
		for (o = d->clients; o != c && o->uid != c->uid; o = o->next)
			;
		if (o != c)
			continue; /* uid already printed */
		fprintf(fp, "uid %d", (int)c->uid);
		for (k = 0; k < QUOTA_NKINDS; k++)
			fprintf(fp, " %s=%u", kinds[k].name, quota_usage(d, c->uid, k));
		fputc('\n', fp);
	}
	fprintf(fp, "dm per_uid=%llu device=%u used=%llu\n", (unsigned long long)dm_limit(d), UROCE_DM_MAX_SIZE,
		(unsigned long long)quota_dm_usage(d, DM_ALL_UIDS));
}
