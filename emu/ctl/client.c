/*
 * client.c - per-connection state and cleanup when a client goes away (see
 * client.h).
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/ctl/server.h"
#include "emu/nic/device.h"
#include "emu/nic/doorbell.h"
#include "emu/nic/mem_wb.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/cm/cm.h"
#include "emu/eth/eth.h"
#include "emu/ctl/share.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

struct ctl_client *client_new(struct uroce_dev *d, int fd)
{
	struct ctl_client *c = calloc(1, sizeof(*c));
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[64];
	int cfd;

	if (!c) {
		close(fd);
		return NULL;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		ulog(ULOG_WARN, "SO_PEERCRED: %s; connection refused", strerror(errno));
		free(c);
		close(fd);
		return NULL;
	}
	c->dev = d;
	c->fd = fd;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->async_fd = -1;
	c->db_fd = -1;
	c->mem_fd = -1;
	c->maps_fd = -1;
	c->cmd_file = -1;
	c->id = d->next_client_id++;
	snprintf(c->comm, sizeof(c->comm), "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)cred.pid);
	cfd = open(path, O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		ssize_t n = read(cfd, c->comm, sizeof(c->comm) - 1);
		size_t i;

		c->comm[n > 0 ? n : 0] = 0;
		for (i = 0; c->comm[i]; i++)
			if (c->comm[i] == '\n' || c->comm[i] == ' ')
				c->comm[i] = c->comm[i] == '\n' ? 0 : '_';
		if (!c->comm[0])
			snprintf(c->comm, sizeof(c->comm), "?");
		close(cfd);
	}
	c->next = d->clients;
	if (d->clients)
		d->clients->prev = c;
	d->clients = c;
	return c;
}

/* Free every object of one table with FREE_FN (handles ascending). */
#define DRAIN(c, tab, type, free_fn)                                   \
	do {                                                           \
		uint32_t h_;                                           \
		for (h_ = 1; h_ <= (c)->tab.cap; h_++) {               \
			type *o_ = objtab_get(&(c)->tab, h_);          \
			if (o_)                                        \
				free_fn((c), o_);                      \
		}                                                      \
		objtab_fini(&(c)->tab);                                \
	} while (0)

void client_destroy(struct ctl_client *c)
{
	struct uroce_dev *d = c->dev;
	uint32_t nqp = c->qps.count, nah = c->ahs.count, nmr = c->mrs.count, ncq = c->cqs.count,
		 npd = c->pds.count;
	struct ctl_client *imp;

	/* writes into its memory land before its descriptors close */
	mem_wb_flush(d);
	cm_client_gone(c);
	/* its importers first (they hold its objects), then its own imports */
	while ((imp = share_end_importer(c)))
		client_destroy(imp);
	share_client_gone(c);
	/* QPs first (they hold CQs, SRQs and PDs), then SRQs, AHs, MWs (hold
	 * MRs and PDs) and MRs (hold PDs). */
	DRAIN(c, qps, struct ctl_qp, qp_free);
	/* its WQ indirection tables, now unused */
	eth_client_gone(c);
	DRAIN(c, srqs, struct ctl_srq, srq_free);
	DRAIN(c, xrcds, struct ctl_xrcd, xrcd_free);
	DRAIN(c, ahs, struct ctl_ah, ah_free);
	DRAIN(c, mws, struct ctl_mw, mw_free);
	DRAIN(c, mrs, struct ctl_mr, mr_free);
	DRAIN(c, dms, struct ctl_dm, dm_free);
	DRAIN(c, cqs, struct ctl_cq, cq_free);
	DRAIN(c, pds, struct ctl_pd, pd_free);
	if (c->hello) {
		d->n_clients--;
		ulog(ULOG_INFO, "client#%u pid %d (%s) gone; freed qp=%u ah=%u mr=%u cq=%u pd=%u", c->id,
		     (int)c->pid, c->comm, nqp, nah, nmr, ncq, npd);
		if (c->async_dropped)
			ulog(ULOG_WARN, "client#%u: %llu async events lost (its async socket was full), %llu delivered",
			     c->id, (unsigned long long)c->async_dropped, (unsigned long long)c->async_events);
	}
	ev_io_stop(d->loop, &c->io);
	close(c->fd);
	doorbell_close(c);
	if (c->async_fd >= 0)
		close(c->async_fd);
	if (c->mem_fd >= 0)
		close(c->mem_fd);
	if (c->maps_fd >= 0)
		close(c->maps_fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		d->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}
