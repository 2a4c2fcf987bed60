/*
 * hello.c - HELLO and QUERY_PORT: a verbs client registers (its async_fd peer
 * in, the clock page and doorbell eventfd out) and reads the port state.
 * Message layouts and errors: include/uroce/abi.h.
 */
#include "config.h"
#include "emu/ctl/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/ctl/objects.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

static void doorbell_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	client_doorbell(w->data);
}

int op_hello(struct client *c, struct ctl_call *call)
{
	const struct uroce_hello_req *req = call->req;
	struct uroce_hello_resp *resp = call->resp;
	struct uroce_dev *d = c->dev;
	struct stat st;
	int db, rc;

	if (c->hello)
		return EALREADY;
	if (req->abi_version != UROCE_ABI_VERSION)
		return EPROTONOSUPPORT;
	if (req->reserved)
		return EINVAL;
	if ((pid_t)req->pid != c->pid)
		return EPERM;
	if (fstat(call->fds[0], &st) < 0 || !S_ISSOCK(st.st_mode))
		return EBADF;
	/* The memory of the process that says HELLO, not of whatever it may
	 * execve later (a setuid program): see client.h mem_fd. Without a
	 * ptrace right yet (a non-root daemon under Yama, before the
	 * provider's PR_SET_PTRACER) the first REG_MR opens it. */
	rc = client_open_mem(c);
	if (rc && rc != EACCES && rc != EPERM)
		return rc;
	db = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (db < 0)
		return errno;

	c->async_fd = call->fds[0];
	call->fds[0] = -1;
	c->db_fd = db;
	ev_io_init(&c->db_io, doorbell_cb, db, EV_READ);
	c->db_io.data = c;
	ev_io_start(d->loop, &c->db_io);
	c->hello = true;
	d->n_clients++;

	resp->dev = d->attr;
	dev_port_attr(d, &resp->port);
	resp->max_inline_data = DEV_MAX_INLINE;
	resp->daemon_pid = (uint32_t)d->pid;
	resp->hca_core_clock_khz = d->clock.page->freq_khz;
	resp->timestamp_mask = d->clock.page->mask;
	resp->client_id = c->id;
	/* the daemon executes the WQEs of the QP rings (emu/nic/datapath.c) */
	resp->caps = UROCE_HELLO_CAP_WQE_RINGS;
	resp->gid_tbl_len = d->gid_tbl_len;
	resp->udp_port = d->port;
	resp->addr_family = d->addr.ss_family;
	if (d->addr.ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&d->addr;

		resp->addr[10] = resp->addr[11] = 0xff;
		memcpy(resp->addr + 12, &s4->sin_addr, 4);
	} else {
		memcpy(resp->addr, &((const struct sockaddr_in6 *)&d->addr)->sin6_addr, 16);
	}
	snprintf(resp->dev_name, sizeof(resp->dev_name), "%s", d->name);
	call->out_fds[0] = d->clock.fd;
	call->out_fds[1] = db;
	call->n_out = 2;
	call->close_out = false;
	ulog(ULOG_INFO, "client#%u pid %d uid %d (%s) opened %s", c->id, (int)c->pid, (int)c->uid,
	     c->comm, d->name);
	return 0;
}

int op_query_port(struct client *c, struct ctl_call *call)
{
	const struct uroce_query_port_req *req = call->req;
	struct uroce_query_port_resp *resp = call->resp;

	if (req->port_num != 1 || req->reserved)
		return EINVAL;
	dev_port_attr(c->dev, &resp->port);
	return 0;
}
