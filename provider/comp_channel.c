/*
 * comp_channel.c - completion channels by interception of libibverbs' write/close/read.
 *
 * libibverbs 44 creates a completion channel with
 *   write(cmd_fd, {hdr{command=17, in_words=4, out_words=1}, u64 response}, 16)
 * and then trusts that the kernel stored a new fd in
 * ((struct ib_uverbs_create_comp_channel_resp *)response)->fd
 * (verbs.c:ibv_create_comp_channel via cmd_fallback.c:_execute_cmd_write).
 * Our cmd_fd is /dev/null, so nobody would fill it in.
 *
 * Mechanism (docs/provider-abi.md §3): libibverbs.so.1 calls write(), close()
 * and read() through its GOT; got_hook.c puts the hooks below in those slots.
 * Only libibverbs' own calls are affected; everything else in the process
 * still calls libc directly. The hooks chain to the previous functions.
 *
 *  write(fd, ...): fd is one of our cmd_fds and the command is 17 -> make a
 *      SOCK_SEQPACKET socketpair, put one end in the response, keep the other
 *      (the daemon gets a dup of it at CQ creation and writes 8-byte
 *      ib_uverbs_comp_event_desc records into it); any other command on a
 *      cmd_fd -> -1/EOPNOTSUPP; any other fd -> the original write.
 *  close(fd): fd is a channel we made (ibv_destroy_comp_channel) -> also
 *      close our end; then the original close.
 *  read(fd, ...): fd is a channel we made (ibv_get_cq_event) -> the event
 *      hold of event_hold.c, which delivers only live CQs' events and holds
 *      back events that announce nothing (a blocking read fails with EIO
 *      once the daemon is gone: chan_read); fd is a context's async_fd
 *      (ibv_get_async_event) -> async_fd.c, which turns the daemon's end of
 *      file into IBV_EVENT_DEVICE_FATAL.
 *
 * Destroying a CQ takes its unread records out of the channel, as the kernel
 * drops them (uroce_chan_drop_cq_events): otherwise a later
 * ibv_get_cq_event would return the freed CQ.
 *
 * Why a SEQPACKET socketpair: ibv_get_cq_event reads exactly 8 bytes per
 * event; record boundaries are kept, no SIGPIPE on the daemon side with
 * MSG_NOSIGNAL, and an eventfd would sum the values (docs/provider-abi.md §2).
 * Limit: a channel fd closed with the libc close() (not through libibverbs)
 * is not seen, and our end stays open until the process exits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

#include "comp_channel.h"
#include "event_hold.h"
#include "got_hook.h"
#include "liveness.h"

/* The functions libibverbs' slots held before the hooks. */
static struct uroce_got_fns orig;

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_result = -1;
static int install_errno = EOPNOTSUPP;
static char install_why[200];

/* Our cmd_fds and channels; small, so plain arrays under one mutex. */
struct channel_ent {
	int app_fd;  /* handed to libibverbs as channel->fd */
	int peer_fd; /* ours; dup'ed to the daemon per CQ */
	int live_fd; /* a dup of the context's control socket (-1: none) */
};
struct cmd_ent {
	int cmd_fd;
	int live_fd; /* the context's control socket: hangs up when the daemon is gone */
};
static pthread_mutex_t tbl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cmd_ent *cmd_fds;
static size_t n_cmd_fds, cap_cmd_fds;
static struct channel_ent *chans;
static size_t n_chans, cap_chans;

/* The registered cmd_fd fd, or NULL. Caller holds tbl_lock. */
static struct cmd_ent *find_cmd_locked(int fd)
{
	for (size_t i = 0; i < n_cmd_fds; i++)
		if (cmd_fds[i].cmd_fd == fd)
			return &cmd_fds[i];
	return NULL;
}

int uroce_chan_register_cmd_fd(int cmd_fd, int live_fd)
{
	int ret = 0;

	pthread_mutex_lock(&tbl_lock);
	if (n_cmd_fds == cap_cmd_fds) {
		size_t cap = cap_cmd_fds ? cap_cmd_fds * 2 : 8;
		struct cmd_ent *n = realloc(cmd_fds, cap * sizeof(*n));
		if (!n) {
			ret = -1;
			goto out;
		}
		cmd_fds = n;
		cap_cmd_fds = cap;
	}
	cmd_fds[n_cmd_fds++] = (struct cmd_ent){ .cmd_fd = cmd_fd, .live_fd = live_fd };
out:
	pthread_mutex_unlock(&tbl_lock);
	if (ret)
		errno = ENOMEM;
	return ret;
}

void uroce_chan_unregister_cmd_fd(int cmd_fd)
{
	pthread_mutex_lock(&tbl_lock);
	for (size_t i = 0; i < n_cmd_fds; i++) {
		if (cmd_fds[i].cmd_fd == cmd_fd) {
			cmd_fds[i] = cmd_fds[--n_cmd_fds];
			break;
		}
	}
	pthread_mutex_unlock(&tbl_lock);
}

/* Our channel whose application fd is fd, or NULL. Caller holds tbl_lock. */
static struct channel_ent *find_chan_locked(int fd)
{
	for (size_t i = 0; i < n_chans; i++)
		if (chans[i].app_fd == fd)
			return &chans[i];
	return NULL;
}

int uroce_chan_peer_fd(int channel_fd)
{
	struct channel_ent *e;
	int peer = -1;

	if (install_result != 0) {
		errno = EOPNOTSUPP;
		return -1;
	}
	pthread_mutex_lock(&tbl_lock);
	e = find_chan_locked(channel_fd);
	if (e)
		peer = e->peer_fd;
	pthread_mutex_unlock(&tbl_lock);
	if (peer < 0)
		errno = EBADF;
	return peer;
}

int uroce_chan_drop_cq_events(int channel_fd, uint64_t cq_handle)
{
	struct ib_uverbs_comp_event_desc rec, *keep = NULL, *grown;
	size_t nkeep = 0, cap = 0;
	int peer, dropped = 0;
	ssize_t n;

	peer = uroce_chan_peer_fd(channel_fd);
	if (peer < 0)
		return 0;
	for (;;) {
		n = recv(channel_fd, &rec, sizeof(rec), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break; /* EAGAIN: the channel is empty */
		if (n != (ssize_t)sizeof(rec))
			continue; /* not a record the daemon writes */
		if (rec.cq_handle == cq_handle) {
			dropped++;
			continue;
		}
		if (nkeep == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(keep, cap * sizeof(*keep));
			if (!grown)
				break;
			keep = grown;
		}
		keep[nkeep++] = rec;
	}
	/* Put the other CQs' records back (after any the daemon wrote meanwhile). */
	for (size_t i = 0; i < nkeep; i++) {
		n = send(peer, &keep[i], sizeof(keep[i]), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n != (ssize_t)sizeof(keep[i]))
			fprintf(stderr, "uroce: a completion event of CQ 0x%" PRIx64 " was lost while "
				"destroying CQ 0x%" PRIx64 ": %s\n", (uint64_t)keep[i].cq_handle,
				cq_handle, n < 0 ? strerror(errno) : "short write");
	}
	free(keep);
	return dropped;
}

const char *uroce_chan_error(void)
{
	return install_result == 0 ? "" : install_why;
}

/* Emulates the kernel's answer to a write() on one of our cmd_fds (live_fd: its context's). */
static ssize_t emulate_cmd(const void *buf, size_t count, int live_fd)
{
	struct ib_uverbs_create_comp_channel_resp *resp;
	struct ib_uverbs_create_comp_channel cmd;
	struct ib_uverbs_cmd_hdr hdr;
	int sv[2];

	if (count < sizeof(hdr)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if ((hdr.command & IB_USER_VERBS_CMD_FLAG_EXTENDED) ||
	    (hdr.command & IB_USER_VERBS_CMD_COMMAND_MASK) !=
		    IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL) {
		errno = EOPNOTSUPP; /* uroce never forwards kernel commands */
		return -1;
	}
	if (count < sizeof(hdr) + sizeof(cmd) ||
	    hdr.out_words * 4u < sizeof(*resp)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&cmd, (const char *)buf + sizeof(hdr), sizeof(cmd));
	resp = (struct ib_uverbs_create_comp_channel_resp *)(uintptr_t)cmd.response;
	if (!resp) {
		errno = EFAULT;
		return -1;
	}

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -1;
	live_fd = live_fd >= 0 ? fcntl(live_fd, F_DUPFD_CLOEXEC, 0) : -1;
	pthread_mutex_lock(&tbl_lock);
	if (n_chans == cap_chans) {
		size_t cap = cap_chans ? cap_chans * 2 : 8;
		struct channel_ent *n = realloc(chans, cap * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&tbl_lock);
			orig.close(sv[0]);
			orig.close(sv[1]);
			if (live_fd >= 0)
				orig.close(live_fd);
			errno = ENOMEM;
			return -1;
		}
		chans = n;
		cap_chans = cap;
	}
	chans[n_chans++] = (struct channel_ent){ .app_fd = sv[0], .peer_fd = sv[1], .live_fd = live_fd };
	pthread_mutex_unlock(&tbl_lock);
	resp->fd = (uint32_t)sv[0];
	return (ssize_t)count;
}

static ssize_t hook_write(int fd, const void *buf, size_t count)
{
	struct cmd_ent *e;
	bool ours;
	int live = -1;

	pthread_mutex_lock(&tbl_lock);
	e = find_cmd_locked(fd);
	ours = e != NULL;
	if (e)
		live = e->live_fd;
	pthread_mutex_unlock(&tbl_lock);
	if (ours)
		return emulate_cmd(buf, count, live);
	return orig.write(fd, buf, count);
}

static bool is_channel(int fd)
{
	bool ours;

	pthread_mutex_lock(&tbl_lock);
	ours = find_chan_locked(fd) != NULL;
	pthread_mutex_unlock(&tbl_lock);
	return ours;
}

/*
 * The read under the event hold: a blocking read of a channel first waits
 * for the channel or for the daemon's end of the control socket to hang up;
 * the latter (no event) fails with EIO, as uverbs' completion event file
 * does after disassociation, instead of blocking forever.
 */
static ssize_t chan_read(int fd, void *buf, size_t count)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = -1, .events = POLLRDHUP } };
	struct channel_ent *e;
	int fl = fcntl(fd, F_GETFL);

	pthread_mutex_lock(&tbl_lock);
	e = find_chan_locked(fd);
	if (e)
		p[1].fd = e->live_fd;
	pthread_mutex_unlock(&tbl_lock);
	if (p[1].fd >= 0 && fl >= 0 && !(fl & O_NONBLOCK)) {
		while (poll(p, 2, -1) < 0 && errno == EINTR)
			;
		if (!(p[0].revents & POLLIN) && (p[1].revents & (POLLHUP | POLLRDHUP | POLLERR))) {
			errno = EIO;
			return -1;
		}
	}
	return orig.read(fd, buf, count);
}

static ssize_t hook_read(int fd, void *buf, size_t count)
{
	ssize_t n;

	if (uroce_async_fd_read(fd, buf, count, orig.read, &n))
		return n;
	if (!is_channel(fd))
		return orig.read(fd, buf, count);
	return uroce_event_hold_read(fd, buf, count, chan_read);
}

static int hook_close(int fd)
{
	struct channel_ent *e;
	int peer = -1, live = -1;

	pthread_mutex_lock(&tbl_lock);
	e = find_chan_locked(fd);
	if (e) {
		peer = e->peer_fd;
		live = e->live_fd;
		*e = chans[--n_chans];
	}
	for (size_t i = 0; i < n_cmd_fds; i++) {
		if (cmd_fds[i].cmd_fd == fd) {
			cmd_fds[i] = cmd_fds[--n_cmd_fds];
			break;
		}
	}
	pthread_mutex_unlock(&tbl_lock);
	uroce_async_fd_forget(fd);
	if (peer >= 0)
		orig.close(peer);
	if (live >= 0)
		orig.close(live);
	return orig.close(fd);
}

static void do_install(void)
{
	static const struct uroce_got_fns hooks = {
		.write = hook_write, .close = hook_close, .read = hook_read,
	};
	int ret = uroce_got_hook_install(&hooks, &orig, install_why, sizeof(install_why));

	if (ret)
		install_errno = ret;
	else
		install_result = 0;
}

int uroce_chan_install(void)
{
	pthread_once(&install_once, do_install);
	if (install_result != 0)
		errno = install_errno;
	return install_result;
}
