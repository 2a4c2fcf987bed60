/*
 * ucma_chan.c - event channels, their CM connections, and the id table
 * (ucma.h; uroce/abi_cm.h; docs/rdma-cm.md, "Provider").
 *
 * A channel is one open() of /dev/infiniband/rdma_cm: a SOCK_SEQPACKET
 * socketpair whose first end is the application's fd and whose second end is
 * given to the daemon of every device the channel uses, in CM_HELLO; the
 * daemons write struct uroce_cm_event records into it. Closing the channel
 * closes its CM connections, and the daemons destroy the ids they created.
 *
 * GET_EVENT reads a private dup of the application's fd (rd_fd), so a thread
 * blocked in it never reads another file that took a closed number: close
 * shuts the socket down (the reader wakes) and the reader then waits until
 * the process ends, as a kernel ucma reader would (ucma_event.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "uroce.h"
#include "ucma.h"
#include "uroce/fdmsg.h"

pthread_mutex_t ucma_lock = PTHREAD_MUTEX_INITIALIZER;

static struct ucma_chan **chans;
static size_t n_chans, cap_chans;
static uint32_t next_conn_tag = 1;

static struct ucma_id **ids; /* by application id; NULL: free */
static size_t cap_ids;

/* ------------------------------------------------------------ channels */

struct ucma_chan *ucma_chan_get(int app_fd)
{
	struct ucma_chan *ch = NULL;

	pthread_mutex_lock(&ucma_lock);
	for (size_t i = 0; i < n_chans; i++) {
		if (chans[i]->app_fd == app_fd) {
			ch = chans[i];
			ch->refs++;
			break;
		}
	}
	pthread_mutex_unlock(&ucma_lock);
	return ch;
}

static void chan_free(struct ucma_chan *ch)
{
	for (int i = 0; i < UCMA_MAX_DEVS; i++) {
		if (!ch->conn[i])
			continue;
		close(ch->conn[i]->sock);
		pthread_mutex_destroy(&ch->conn[i]->lock);
		free(ch->conn[i]);
	}
	close(ch->peer_fd);
	close(ch->rd_fd);
	pthread_mutex_destroy(&ch->conn_lock);
	free(ch);
}

void ucma_chan_put(struct ucma_chan *ch)
{
	bool last;

	pthread_mutex_lock(&ucma_lock);
	last = --ch->refs == 0;
	pthread_mutex_unlock(&ucma_lock);
	if (last)
		chan_free(ch);
}

int ucma_chan_open(int flags)
{
	struct ucma_chan *ch = calloc(1, sizeof(*ch));
	int sv[2] = { -1, -1 }, err;

	if (!ch) {
		errno = ENOMEM;
		return -1;
	}
	ch->ndevs = ucma_dev_list(ch->devs);
	if (!ch->ndevs) {
		free(ch);
		errno = ENODEV; /* the open hook then tries libc (a kernel rdma_cm) */
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		goto fail;
	if ((flags & O_NONBLOCK) && fcntl(sv[0], F_SETFL, O_NONBLOCK))
		goto fail;
	ch->rd_fd = fcntl(sv[0], F_DUPFD_CLOEXEC, 0);
	if (ch->rd_fd < 0)
		goto fail;
	ch->app_fd = sv[0];
	ch->peer_fd = sv[1];
	ch->pid = getpid();
	ch->refs = 1;
	pthread_mutex_init(&ch->conn_lock, NULL);
	pthread_mutex_lock(&ucma_lock);
	if (n_chans == cap_chans) {
		size_t cap = cap_chans ? cap_chans * 2 : 8;
		struct ucma_chan **n = realloc(chans, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&ucma_lock);
			pthread_mutex_destroy(&ch->conn_lock);
			close(ch->rd_fd);
			errno = ENOMEM;
			goto fail;
		}
		chans = n;
		cap_chans = cap;
	}
	chans[n_chans++] = ch;
	pthread_mutex_unlock(&ucma_lock);
	return ch->app_fd;
fail:
	err = errno;
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	free(ch);
	errno = err;
	return -1;
}

int ucma_chan_close(int fd)
{
	struct ucma_chan *ch = NULL;

	pthread_mutex_lock(&ucma_lock);
	for (size_t i = 0; i < n_chans; i++) {
		if (chans[i]->app_fd == fd) {
			ch = chans[i];
			chans[i] = chans[--n_chans];
			break;
		}
	}
	if (ch) {
		ch->closed = true;
		ucma_id_free_chan_locked(ch);
		ucma_mc_forget_chan_locked(ch);
	}
	pthread_mutex_unlock(&ucma_lock);
	if (!ch) {
		errno = EBADF;
		return -1;
	}
	/* Wake a GET_EVENT blocked on rd_fd; the connections close with the last reference. */
	shutdown(ch->rd_fd, SHUT_RDWR);
	if (ch->pid != getpid()) {
		/* A fork child: its copies of the connections close; the parent's stay. */
		ch->refs = 1;
	}
	ucma_chan_put(ch);
	return 0;
}

/* ------------------------------------------------------------ CM connections */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int timeout_ms(void)
{
	static bool warned;

	return (int)uroce_env_num("UROCE_CTL_TIMEOUT_MS", 1, 3600000, UROCE_CTL_TIMEOUT_DEFAULT_MS, &warned);
}

/*
 * One request/reply on c (caller holds c->lock): req/resp are whole messages
 * of uroce_req_size / uroce_resp_size(op) bytes. Replies to earlier requests
 * that timed out are recognised by their seq and skipped.
 * Returns 0 (resp filled, its status not looked at) or an errno value.
 */
static int exchange(struct ucma_conn *c, uint16_t op, void *req, size_t req_len, void *resp,
		    size_t resp_len, const int *fds, int nfds)
{
	struct uroce_hdr *h = req, *rh = resp;
	int64_t deadline = now_ms() + timeout_ms();
	ssize_t n;

	*h = (struct uroce_hdr){ .magic = UROCE_MSG_MAGIC, .version = UROCE_ABI_VERSION,
				 .opcode = op, .seq = ++c->seq, .length = (uint32_t)req_len };
	do
		n = uroce_send_fds(c->sock, req, req_len, fds, nfds, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)req_len)
		return EIO;
	for (;;) {
		struct pollfd p = { .fd = c->sock, .events = POLLIN };
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0)
			return ETIMEDOUT;
		r = poll(&p, 1, (int)(left > 60000 ? 60000 : left));
		if (r < 0 && errno != EINTR)
			return EIO;
		if (r <= 0)
			continue;
		n = recv(c->sock, resp, resp_len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return EIO; /* the daemon is gone */
		if (n < (ssize_t)sizeof(*rh) || rh->seq != c->seq)
			continue; /* a late reply to a timed-out request */
		if (rh->status == 0 && n != (ssize_t)resp_len)
			return EPROTO;
		return 0;
	}
}

int ucma_chan_conn(struct ucma_chan *ch, int dev, struct ucma_conn **out)
{
	struct uroce_cm_hello_req req;
	struct uroce_cm_hello_resp resp;
	struct ucma_conn *c;
	int err;

	if (dev < 0 || dev >= ch->ndevs)
		return ENODEV;
	pthread_mutex_lock(&ch->conn_lock);
	if (ch->conn[dev]) {
		*out = ch->conn[dev];
		pthread_mutex_unlock(&ch->conn_lock);
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pthread_mutex_unlock(&ch->conn_lock);
		return ENOMEM;
	}
	c->sock = uroce_ctl_connect(ch->devs[dev].sock_path);
	if (c->sock < 0) {
		err = errno == ENOENT || errno == ECONNREFUSED ? ENODEV : errno;
		free(c);
		pthread_mutex_unlock(&ch->conn_lock);
		return err;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_lock(&ucma_lock);
	c->conn_tag = next_conn_tag++;
	pthread_mutex_unlock(&ucma_lock);
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.abi_version = UROCE_ABI_VERSION;
	req.pid = (uint32_t)getpid();
	req.conn_tag = c->conn_tag;
	err = exchange(c, UROCE_OP_CM_HELLO, &req, sizeof(req), &resp, sizeof(resp),
		       &ch->peer_fd, 1);
	if (!err && resp.hdr.status)
		err = resp.hdr.status;
	if (err) {
		close(c->sock);
		pthread_mutex_destroy(&c->lock);
		free(c);
		pthread_mutex_unlock(&ch->conn_lock);
		return err;
	}
	ch->conn[dev] = c;
	*out = c;
	pthread_mutex_unlock(&ch->conn_lock);
	return 0;
}

int ucma_call(struct ucma_conn *c, uint32_t cmd, const void *in, size_t in_len,
	      void *out, size_t out_len, size_t *got)
{
	struct uroce_ucma_req req;
	struct uroce_ucma_resp resp;
	int err;

	*got = 0;
	if (in_len > UROCE_UCMA_IN_MAX || out_len > UROCE_UCMA_OUT_MAX)
		return EINVAL;
	memset(&req, 0, sizeof(req));
	req.cmd = cmd;
	req.in_len = (uint16_t)in_len;
	req.out_len = (uint16_t)out_len;
	memcpy(req.in, in, in_len);
	pthread_mutex_lock(&c->lock);
	err = exchange(c, UROCE_OP_UCMA, &req, sizeof(req), &resp, sizeof(resp), NULL, 0);
	pthread_mutex_unlock(&c->lock);
	if (err)
		return err;
	if (resp.hdr.status)
		return resp.hdr.status;
	if (resp.out_len > out_len)
		return EPROTO;
	if (resp.out_len)
		memcpy(out, resp.out, resp.out_len);
	*got = resp.out_len;
	return 0;
}

int ucma_replay_options(struct ucma_conn *c, uint32_t handle, uint8_t *opts, size_t opts_len)
{
	size_t off = 0, got;
	int err = 0;

	while (!err && off < opts_len) {
		struct rdma_ucm_set_option so;
		size_t len;

		memcpy(&so, opts + off, sizeof(so));
		len = sizeof(so) + so.optlen;
		so.id = handle;
		memcpy(opts + off, &so, sizeof(so));
		err = ucma_call(c, RDMA_USER_CM_CMD_SET_OPTION, opts + off, len, NULL, 0, &got);
		off += len;
	}
	return err;
}

/* ------------------------------------------------------------ ids */

int ucma_id_alloc_locked(struct ucma_chan *ch)
{
	struct ucma_id *id;
	size_t i;

	for (i = 0; i < cap_ids && ids[i]; i++)
		;
	if (i == cap_ids) {
		size_t cap = cap_ids ? cap_ids * 2 : 64;
		struct ucma_id **n;

		if (cap > UCMA_MAX_IDS)
			cap = UCMA_MAX_IDS;
		if (cap <= cap_ids)
			return -1;
		n = realloc(ids, cap * sizeof(*n));
		if (!n)
			return -1;
		memset(n + cap_ids, 0, (cap - cap_ids) * sizeof(*n));
		ids = n;
		cap_ids = cap;
	}
	id = calloc(1, sizeof(*id));
	if (!id)
		return -1;
	id->chan = ch;
	id->dev = -1;
	ids[i] = id;
	return (int)i;
}

struct ucma_id *ucma_id_find_locked(uint32_t app_id)
{
	return app_id < cap_ids ? ids[app_id] : NULL;
}

int ucma_id_by_handle_locked(struct ucma_chan *ch, int dev, uint32_t handle)
{
	for (size_t i = 0; i < cap_ids; i++)
		if (ids[i] && ids[i]->chan == ch && ids[i]->dev == dev && ids[i]->handle == handle)
			return (int)i;
	return -1;
}

int ucma_id_by_uid_locked(struct ucma_chan *ch, int dev, uint64_t uid)
{
	for (size_t i = 0; i < cap_ids; i++)
		if (ids[i] && ids[i]->chan == ch && ids[i]->uid == uid &&
		    (ids[i]->dev == dev || (dev >= 0 && (ids[i]->wild_mask & (1u << dev)))))
			return (int)i;
	return -1;
}

void ucma_id_free_locked(uint32_t app_id)
{
	if (app_id >= cap_ids || !ids[app_id])
		return;
	free(ids[app_id]->opts);
	free(ids[app_id]->applied);
	free(ids[app_id]);
	ids[app_id] = NULL;
}

void ucma_id_free_chan_locked(struct ucma_chan *ch)
{
	for (size_t i = 0; i < cap_ids; i++)
		if (ids[i] && ids[i]->chan == ch)
			ucma_id_free_locked((uint32_t)i);
}

int ucma_id_each_on_dev_locked(struct ucma_chan *ch, int dev,
			       void (*fn)(void *arg, uint64_t uid, uint32_t handle), void *arg)
{
	int n = 0;

	for (size_t i = 0; i < cap_ids; i++) {
		if (ids[i] && ids[i]->chan == ch && ids[i]->dev == dev) {
			fn(arg, ids[i]->uid, ids[i]->handle);
			n++;
		}
	}
	return n;
}
