/*
 * sysfs_stats.c - port counters and their files in the device tree (see
 * sysfs_stats.h). File names and formats are the kernel's
 * (drivers/infiniband/core/sysfs.c: decimal counters, "4: ACTIVE",
 * "5: LinkUp"); the hw_counters names are mlx5's.
 */
#include "config.h"
#include "emu/nic/sysfs_stats.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/obj/objtab.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/xport/xport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sysfs_stats {
	int port_fd, cnt_fd, hw_fd;     /* ports/1, its counters/ and hw_counters/ */
	ev_timer timer;
	struct dev_port_counters last;
	int last_state;                 /* port state last written, -1 = none */
	int err_logged;
};

void dev_port_counters(const struct uroce_dev *d, struct dev_port_counters *pc)
{
	const struct ctl_client *c;

	memset(pc, 0, sizeof(*pc));
	pc->xmit_packets = d->udp.tx_packets;
	pc->rcv_packets = d->udp.rx_packets;
	pc->xmit_data = d->udp.tx_bytes / 4;
	pc->rcv_data = d->udp.rx_bytes / 4;
	pc->xmit_discards = d->udp.tx_dropped + d->udp.tx_errors;
	pc->link_downed = d->link_downed;
	if (d->xdev)
		pc->rcv_errors = xport_dev_stats(d->xdev)->rx_bad;
	pc->duplicate_request = d->retired.dup_requests;
	pc->packet_seq_err = d->retired.seq_naks_rx;
	pc->local_ack_timeout_err = d->retired.timeouts;
	pc->rnr_nak_retry_err = d->retired.rnr_naks_rx;
	for (c = d->clients; c; c = c->next) {
		uint32_t h;

		for (h = 1; h <= c->qps.cap; h++) {
			const struct ctl_qp *qp = objtab_get(&c->qps, h);
			const struct xport_qp_stats *st;

			if (!qp || !qp->xqp)
				continue;
			st = xport_qp_stats(qp->xqp);
			pc->duplicate_request += st->dup_requests;
			pc->packet_seq_err += st->seq_naks_rx;
			pc->local_ack_timeout_err += st->timeouts;
			pc->rnr_nak_retry_err += st->rnr_naks_rx;
		}
	}
}

/* Replace DIRFD/NAME with TEXT: write a hidden temporary, rename it over. */
static int put_file(int dirfd, const char *name, const char *text)
{
	char tmp[96];
	size_t len = strlen(text);
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return errno;
	if (write(fd, text, len) != (ssize_t)len)
		rc = errno ? errno : EIO;
	if (close(fd) < 0 && !rc)
		rc = errno;
	if (!rc && renameat(dirfd, tmp, dirfd, name) < 0)
		rc = errno;
	if (rc)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

/* Keep the first error of a series of writes in *RC. */
static void first_err(int *rc, int err)
{
	if (err && !*rc)
		*rc = err;
}

static int put_u64(int dirfd, const char *name, uint64_t v, uint64_t old, int force)
{
	char text[32];

	if (!force && v == old)
		return 0;
	snprintf(text, sizeof(text), "%llu\n", (unsigned long long)v);
	return put_file(dirfd, name, text);
}

/* Counters with no source in a device without a physical layer, switch,
 * VL15 or multicast: always 0, written once so tools find every file. */
static const char *const zero_counters[] = {
	"symbol_error", "link_error_recovery", "port_rcv_remote_physical_errors",
	"port_rcv_switch_relay_errors", "port_xmit_constraint_errors", "port_rcv_constraint_errors",
	"local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped",
	"port_xmit_wait", "multicast_xmit_packets", "multicast_rcv_packets",
};

static int write_all(struct uroce_dev *d, int force)
{
	struct sysfs_stats *s = d->sysfs;
	const struct dev_port_counters *o = &s->last;
	struct dev_port_counters n;
	int rc = 0;
	size_t i;

	dev_port_counters(d, &n);
	if (force || s->last_state != (int)d->port_state) {
		int up = d->port_state == IBV_PORT_ACTIVE;

		first_err(&rc, put_file(s->port_fd, "state", up ? "4: ACTIVE\n" : "1: DOWN\n"));
		first_err(&rc, put_file(s->port_fd, "phys_state", up ? "5: LinkUp\n" : "3: Disabled\n"));
		s->last_state = (int)d->port_state;
	}
	for (i = 0; force && i < sizeof(zero_counters) / sizeof(zero_counters[0]); i++)
		first_err(&rc, put_file(s->cnt_fd, zero_counters[i], "0\n"));
	first_err(&rc, put_u64(s->cnt_fd, "port_xmit_data", n.xmit_data, o->xmit_data, force));
	first_err(&rc, put_u64(s->cnt_fd, "port_rcv_data", n.rcv_data, o->rcv_data, force));
	first_err(&rc, put_u64(s->cnt_fd, "port_xmit_packets", n.xmit_packets, o->xmit_packets, force));
	first_err(&rc, put_u64(s->cnt_fd, "port_rcv_packets", n.rcv_packets, o->rcv_packets, force));
	/* every packet is unicast: no multicast groups */
	first_err(&rc, put_u64(s->cnt_fd, "unicast_xmit_packets", n.xmit_packets, o->xmit_packets, force));
	first_err(&rc, put_u64(s->cnt_fd, "unicast_rcv_packets", n.rcv_packets, o->rcv_packets, force));
	first_err(&rc, put_u64(s->cnt_fd, "port_rcv_errors", n.rcv_errors, o->rcv_errors, force));
	first_err(&rc, put_u64(s->cnt_fd, "port_xmit_discards", n.xmit_discards, o->xmit_discards, force));
	first_err(&rc, put_u64(s->cnt_fd, "link_downed", n.link_downed, o->link_downed, force));
	first_err(&rc, put_u64(s->hw_fd, "duplicate_request", n.duplicate_request, o->duplicate_request, force));
	first_err(&rc, put_u64(s->hw_fd, "packet_seq_err", n.packet_seq_err, o->packet_seq_err, force));
	first_err(&rc, put_u64(s->hw_fd, "local_ack_timeout_err", n.local_ack_timeout_err,
		      o->local_ack_timeout_err, force));
	first_err(&rc, put_u64(s->hw_fd, "rnr_nak_retry_err", n.rnr_nak_retry_err, o->rnr_nak_retry_err, force));
	if (force)
		first_err(&rc, put_u64(s->hw_fd, "lifespan", (uint64_t)(SYSFS_STATS_PERIOD * 1000), 0, 1));
	if (rc)
		s->last_state = -1; /* retry the state files with the next write */
	else
		s->last = n; /* a failed counter is rewritten next time */
	return rc;
}

void sysfs_stats_update(struct uroce_dev *d)
{
	int rc;

	if (!d->sysfs)
		return;
	rc = write_all(d, 0);
	if (rc && !d->sysfs->err_logged) {
		ulog(ULOG_WARN, "cannot update the counter files of %s: %s", d->name, strerror(rc));
		d->sysfs->err_logged = 1;
	}
}

static void stats_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	sysfs_stats_update(w->data);
}

int sysfs_stats_open(struct uroce_dev *d, const char *dir)
{
	struct sysfs_stats *s = calloc(1, sizeof(*s));
	char path[4096];
	int rc;

	if (!s)
		return ENOMEM;
	s->last_state = -1;
	snprintf(path, sizeof(path), "%s/ports/1", dir);
	s->port_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	s->cnt_fd = s->port_fd < 0 ? -1 : openat(s->port_fd, "counters", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	s->hw_fd = s->port_fd < 0 ? -1 : openat(s->port_fd, "hw_counters", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d->sysfs = s;
	if (s->port_fd < 0 || s->cnt_fd < 0 || s->hw_fd < 0) {
		rc = errno;
		sysfs_stats_close(d);
		return rc;
	}
	rc = write_all(d, 1);
	if (rc) {
		sysfs_stats_close(d);
		return rc;
	}
	ev_timer_init(&s->timer, stats_tick, SYSFS_STATS_PERIOD, SYSFS_STATS_PERIOD);
	s->timer.data = d;
	ev_timer_start(d->loop, &s->timer);
	return 0;
}

void sysfs_stats_close(struct uroce_dev *d)
{
	struct sysfs_stats *s = d->sysfs;

	if (!s)
		return;
	if (ev_is_active(&s->timer))
		ev_timer_stop(d->loop, &s->timer);
	if (s->port_fd >= 0)
		close(s->port_fd);
	if (s->cnt_fd >= 0)
		close(s->cnt_fd);
	if (s->hw_fd >= 0)
		close(s->hw_fd);
	free(s);
	d->sysfs = NULL;
}
