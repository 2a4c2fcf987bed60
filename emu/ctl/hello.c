/*
 * hello.c - HELLO: a verbs client registers. In: its async_fd peer and the
 * descriptors of its own /proc/self/mem and /proc/self/maps; out: the clock
 * page and the doorbell eventfd. Message layout and errors:
 * include/uroce/abi.h; why memory is reached this way: docs/security.md.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/nic/doorbell.h"
#include "emu/nic/mem_access.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/quota.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

/*
 * Is FD the file /proc/PID/NAME of the client, opened with ACCMODE? The
 * kernel names a descriptor's file in /proc/self/fd (proc(5)); opening
 * /proc/self/NAME resolves "self", so the link reads "/proc/<pid>/NAME".
 * Returns 0, EBADF (not a procfs regular file, or wrong open mode) or EPERM
 * (a /proc file of another process, or another file).
 */
static int proc_file_check(const struct ctl_client *c, int fd, const char *name, int accmode)
{
	char link[64], want[64], got[128];
	struct statfs sfs;
	struct stat st;
	ssize_t n;
	int fl;

	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC || fstat(fd, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return EBADF;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) != accmode)
		return EBADF;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, got, sizeof(got) - 1);
	if (n < 0)
		return EBADF;
	got[n] = 0;
	snprintf(want, sizeof(want), "/proc/%d/%s", (int)c->pid, name);
	return strcmp(got, want) ? EPERM : 0;
}

/* Forget the memory descriptors of a HELLO that failed after taking them. */
static void mem_fds_close(struct ctl_client *c)
{
	if (c->mem_fd >= 0)
		close(c->mem_fd);
	if (c->maps_fd >= 0)
		close(c->maps_fd);
	c->mem_fd = c->maps_fd = -1;
}

/* Take the memory descriptors of HELLO (see abi.h): both must name the
 * connecting process, and its address space must still be the one they
 * were opened in (a maps descriptor of a process that has exec'd or exited
 * reads empty). Returns 0 or the errno of the reply. */
static int take_mem_fds(struct ctl_client *c, struct ctl_call *call)
{
	int rc = proc_file_check(c, call->fds[1], "mem", O_RDWR);

	if (!rc)
		rc = proc_file_check(c, call->fds[2], "maps", O_RDONLY);
	if (rc)
		return rc;
	c->mem_fd = call->fds[1];
	c->maps_fd = call->fds[2];
	call->fds[1] = call->fds[2] = -1;
	if (!mem_maps_live(c)) {
		mem_fds_close(c);
		return ESRCH;
	}
	return 0;
}

/* Fill the HELLO reply's description of the device. */
static void describe_device(const struct ctl_client *c, struct uroce_hello_resp *resp)
{
	const struct uroce_dev *d = c->dev;

	resp->dev = d->attr;
	dev_port_attr(d, &resp->port);
	resp->max_inline_data = DEV_MAX_INLINE;
	resp->daemon_pid = (uint32_t)d->pid;
	resp->hca_core_clock_khz = d->clock.page->freq_khz;
	resp->timestamp_mask = d->clock.page->mask;
	resp->client_id = c->id;
	/* the daemon executes the WQEs of the QP rings (emu/nic/doorbell.c) */
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
}

int hello_check_identity(const struct ctl_client *c, uint32_t abi_version, uint64_t reserved, uint32_t pid)
{
	if (abi_version != UROCE_ABI_VERSION)
		return EPROTONOSUPPORT;
	if (reserved)
		return EINVAL;
	if ((pid_t)pid != c->pid)
		return EPERM;
	return 0;
}

int op_hello(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_hello_req *req = call->req;
	struct uroce_dev *d = c->dev;
	struct stat st;
	int rc;

	if (c->hello)
		return EALREADY;
	rc = hello_check_identity(c, req->abi_version, req->reserved, req->pid);
	if (rc)
		return rc;
	if (fstat(call->fds[0], &st) < 0 || !S_ISSOCK(st.st_mode))
		return EBADF;
	if (call->nfds == 2)
		return EBADF;
	rc = call->nfds == 3 ? take_mem_fds(c, call) : 0;
	if (rc)
		return rc;
	rc = doorbell_open(c);
	if (!rc && !quota_fd_ok(c, c->db_fd)) {
		doorbell_close(c);
		rc = EMFILE;
	}
	if (rc) {
		if (rc == EMFILE)
			c->refuse = EMFILE; /* descriptor budget: close after this reply */
		mem_fds_close(c);
		return rc;
	}
	c->async_fd = call->fds[0];
	call->fds[0] = -1;
	c->hello = true;
	d->n_clients++;

	describe_device(c, call->resp);
	call->out_fds[0] = d->clock.fd;
	call->out_fds[1] = c->db_fd;
	call->n_out = 2;
	call->close_out = false;
	ulog(ULOG_INFO, "client#%u pid %d uid %d (%s) opened %s", c->id, (int)c->pid, (int)c->uid,
	     c->comm, d->name);
	return 0;
}
