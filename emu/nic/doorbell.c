/*
 * doorbell.c - watching each client's doorbell eventfd (see doorbell.h).
 */
#include "config.h"
#include "emu/nic/doorbell.h"
#include "emu/ctl/client.h"
#include "emu/ctl/objects.h"
#include "emu/ctl/quota.h"
#include "emu/nic/datapath.h"
#include "emu/nic/device.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void doorbell_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *c = w->data;
	uint64_t v;
	uint32_t h;

	/* Drain the counter first: a ring after this read re-arms the watcher. */
	if (read(c->db_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	/* new WQEs first: their completions may be what an arm waits for */
	datapath_doorbell(c);
	for (h = 1; h <= c->cqs.cap; h++) {
		struct cq *cq = objtab_get(&c->cqs, h);

		if (cq)
			cq_check_arm(cq);
	}
}

int doorbell_open(struct client *c)
{
	int db = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	if (db < 0)
		return errno;
	if (!quota_fd_ok(c, db)) {
		close(db);
		return EMFILE;
	}
	c->db_fd = db;
	ev_io_init(&c->db_io, doorbell_cb, db, EV_READ);
	c->db_io.data = c;
	ev_io_start(c->dev->loop, &c->db_io);
	return 0;
}

void doorbell_close(struct client *c)
{
	if (c->db_fd < 0)
		return;
	ev_io_stop(c->dev->loop, &c->db_io);
	close(c->db_fd);
	c->db_fd = -1;
}
