/*
 * table.c - a device's multicast groups and the QPs attached to each
 * (mcast.h). A group exists while a QP is attached to it.
 */
#include "config.h"
#include "emu/mcast/mcast.h"
#include "emu/nic/device.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool mcast_gid_is_multicast(const uint8_t gid[16])
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (gid[0] == 0xff)
		return true;
	return !memcmp(gid, v4mapped, 12) && (gid[12] & 0xf0) == 0xe0;
}

int mcast_dev_init(struct uroce_dev *d)
{
	if (d->mcast)
		return 0;
	d->mcast = calloc(1, sizeof(*d->mcast));
	if (!d->mcast)
		return ENOMEM;
	d->mcast->dev = d;
	return 0;
}

void mcast_dev_fini(struct uroce_dev *d)
{
	struct mcast_dev *m = d->mcast;

	if (!m)
		return;
	if (d->loop)
		ev_idle_stop(d->loop, &m->drain);
	for (unsigned int i = 0; i < MCAST_MAX_GROUPS; i++)
		free(m->groups[i]);
	for (unsigned int i = 0; m->q && i < m->q_n; i++)
		free(m->q[(m->q_head + i) % MCAST_QUEUE_SLOTS].pkt);
	free(m->q);
	free(m);
	d->mcast = NULL;
}

static int group_index(const struct mcast_dev *m, const uint8_t mgid[16])
{
	for (unsigned int i = 0; i < MCAST_MAX_GROUPS; i++)
		if (m->groups[i] && !memcmp(m->groups[i]->mgid, mgid, 16))
			return (int)i;
	return -1;
}

const struct mcast_group *mcast_group_find(const struct mcast_dev *m, const uint8_t mgid[16])
{
	int i = m ? group_index(m, mgid) : -1;

	return i < 0 ? NULL : m->groups[i];
}

int mcast_attach(struct mcast_dev *m, const uint8_t mgid[16], uint16_t mlid, uint32_t qpn)
{
	int i = group_index(m, mgid);
	struct mcast_group *g;

	if (i >= 0) {
		g = m->groups[i];
		for (uint32_t k = 0; k < g->n; k++)
			if (g->qpn[k] == qpn)
				return 0;
		if (g->n >= MCAST_MAX_QP_ATTACH || m->n_attach >= MCAST_MAX_TOTAL_ATTACH)
			return ENOMEM;
	} else {
		if (m->n_groups >= MCAST_MAX_GROUPS || m->n_attach >= MCAST_MAX_TOTAL_ATTACH)
			return ENOMEM;
		for (i = 0; m->groups[i]; i++)
			;
		g = calloc(1, sizeof(*g));
		if (!g)
			return ENOMEM;
		memcpy(g->mgid, mgid, 16);
		g->mlid = mlid;
		m->groups[i] = g;
		m->n_groups++;
	}
	g->qpn[g->n++] = qpn;
	m->n_attach++;
	return 0;
}

static void drop_at(struct mcast_dev *m, int gi, uint32_t k)
{
	struct mcast_group *g = m->groups[gi];

	g->qpn[k] = g->qpn[--g->n];
	m->n_attach--;
	if (!g->n) {
		free(g);
		m->groups[gi] = NULL;
		m->n_groups--;
	}
}

int mcast_detach(struct mcast_dev *m, const uint8_t mgid[16], uint32_t qpn)
{
	int i = m ? group_index(m, mgid) : -1;

	if (i < 0)
		return EINVAL;
	for (uint32_t k = 0; k < m->groups[i]->n; k++)
		if (m->groups[i]->qpn[k] == qpn) {
			drop_at(m, i, k);
			return 0;
		}
	return EINVAL;
}

unsigned int mcast_qp_groups(const struct mcast_dev *m, uint32_t qpn)
{
	unsigned int n = 0;

	if (!m || !m->n_attach)
		return 0;
	for (unsigned int i = 0; i < MCAST_MAX_GROUPS; i++)
		for (uint32_t k = 0; m->groups[i] && k < m->groups[i]->n; k++)
			n += m->groups[i]->qpn[k] == qpn;
	return n;
}

void mcast_qp_gone(struct mcast_dev *m, uint32_t qpn)
{
	if (!m || !m->n_attach)
		return;
	for (int i = 0; i < (int)MCAST_MAX_GROUPS; i++)
		for (uint32_t k = 0; m->groups[i] && k < m->groups[i]->n; k++)
			if (m->groups[i]->qpn[k] == qpn) {
				drop_at(m, i, k);
				break;
			}
}
