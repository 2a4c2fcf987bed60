/*
 * ucma_cmd.c - the rdma_ucm commands librdmacm write()s on a channel
 * (<rdma/rdma_user_cm.h>; uroce/abi_cm.h "UCMA"; docs/rdma-cm.md, "Provider").
 *
 * Each command is described once in cmd_table: where its id and its response
 * address sit, and what it means for an id the provider still keeps (one
 * whose device no command has decided yet). Most are forwarded to the id's
 * daemon with the id translated; CREATE_ID, DESTROY_ID, the address commands
 * (which decide the device), SET_OPTION, GET_EVENT, MIGRATE_ID and the
 * multicast ids have handlers of their own. The errnos are the kernel's
 * (drivers/infiniband/core/ucma.c): EINVAL for a short write, an unknown
 * command or an id of another channel, ENOENT for an unknown id, ENOSPC for
 * a response buffer too small, ENOSYS for a command without handler.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ucma.h"

/* RDMA_CM_EVENT_CONNECT_REQUEST of enum rdma_cm_event_type (<rdma/rdma_cma.h>). */
#define UCMA_EVENT_CONNECT_REQUEST 4
/* Largest address family value the kernel takes (AF_IB, <rdma/ib.h>). */
#define UCMA_AF_IB 27

/* What a command does with an id whose device is not decided yet. */
enum pending_action {
	P_NONE,     /* the handler deals with it */
	P_EINVAL,   /* wrong state for the kernel too: EINVAL */
	P_ZERO,     /* a query of an idle id: all-zero answer (no device yet) */
	P_FIRST,    /* LISTEN binds an idle id to the wildcard address: the first device */
};

struct cmd_desc;
typedef int (*cmd_fn)(struct ucma_chan *ch, const struct cmd_desc *d, uint8_t *in,
		      size_t in_len, uint16_t out);

struct cmd_desc {
	const char *name;
	size_t min_in;   /* sizeof the command struct */
	int id_off;      /* offset of the __u32 id, or -1 */
	int resp_off;    /* offset of the __aligned_u64 response, or -1 */
	enum pending_action pending;
	cmd_fn fn;       /* NULL: forward */
};

static int do_create_id(struct ucma_chan *, const struct cmd_desc *, uint8_t *, size_t, uint16_t);
static int do_destroy_id(struct ucma_chan *, const struct cmd_desc *, uint8_t *, size_t, uint16_t);
static int do_addr(struct ucma_chan *, const struct cmd_desc *, uint8_t *, size_t, uint16_t);
static int do_set_option(struct ucma_chan *, const struct cmd_desc *, uint8_t *, size_t, uint16_t);
static int do_get_event(struct ucma_chan *, const struct cmd_desc *, uint8_t *, size_t, uint16_t);
static int do_migrate(struct ucma_chan *, const struct cmd_desc *, uint8_t *, size_t, uint16_t);
static int do_join(struct ucma_chan *, const struct cmd_desc *, uint8_t *, size_t, uint16_t);
static int do_leave(struct ucma_chan *, const struct cmd_desc *, uint8_t *, size_t, uint16_t);
static int do_listen(struct ucma_chan *, const struct cmd_desc *, uint8_t *, size_t, uint16_t);

#define ROW(c, st, idf, rsp, pend, f)                                                       \
	[RDMA_USER_CM_CMD_##c] = { #c, sizeof(struct st), idf, rsp, pend, f }
#define OFF(st, f) ((int)offsetof(struct st, f))

static const struct cmd_desc cmd_table[] = {
	ROW(CREATE_ID, rdma_ucm_create_id, -1, OFF(rdma_ucm_create_id, response), P_NONE, do_create_id),
	ROW(DESTROY_ID, rdma_ucm_destroy_id, OFF(rdma_ucm_destroy_id, id),
	    OFF(rdma_ucm_destroy_id, response), P_NONE, do_destroy_id),
	ROW(BIND_IP, rdma_ucm_bind_ip, OFF(rdma_ucm_bind_ip, id), -1, P_NONE, do_addr),
	ROW(RESOLVE_IP, rdma_ucm_resolve_ip, OFF(rdma_ucm_resolve_ip, id), -1, P_NONE, do_addr),
	ROW(RESOLVE_ROUTE, rdma_ucm_resolve_route, OFF(rdma_ucm_resolve_route, id), -1, P_EINVAL, NULL),
	ROW(QUERY_ROUTE, rdma_ucm_query, OFF(rdma_ucm_query, id), OFF(rdma_ucm_query, response),
	    P_ZERO, NULL),
	ROW(CONNECT, rdma_ucm_connect, OFF(rdma_ucm_connect, id), -1, P_EINVAL, NULL),
	ROW(LISTEN, rdma_ucm_listen, OFF(rdma_ucm_listen, id), -1, P_FIRST, do_listen),
	ROW(ACCEPT, rdma_ucm_accept, OFF(rdma_ucm_accept, id), -1, P_EINVAL, NULL),
	ROW(REJECT, rdma_ucm_reject, OFF(rdma_ucm_reject, id), -1, P_EINVAL, NULL),
	ROW(DISCONNECT, rdma_ucm_disconnect, OFF(rdma_ucm_disconnect, id), -1, P_EINVAL, NULL),
	ROW(INIT_QP_ATTR, rdma_ucm_init_qp_attr, OFF(rdma_ucm_init_qp_attr, id),
	    OFF(rdma_ucm_init_qp_attr, response), P_EINVAL, NULL),
	ROW(GET_EVENT, rdma_ucm_get_event, -1, OFF(rdma_ucm_get_event, response), P_NONE, do_get_event),
	/* GET_OPTION: no row; the kernel has no handler either (ENOSYS). */
	ROW(SET_OPTION, rdma_ucm_set_option, OFF(rdma_ucm_set_option, id), -1, P_NONE, do_set_option),
	ROW(NOTIFY, rdma_ucm_notify, OFF(rdma_ucm_notify, id), -1, P_EINVAL, NULL),
	ROW(JOIN_IP_MCAST, rdma_ucm_join_ip_mcast, OFF(rdma_ucm_join_ip_mcast, id),
	    OFF(rdma_ucm_join_ip_mcast, response), P_EINVAL, do_join),
	ROW(LEAVE_MCAST, rdma_ucm_destroy_id, OFF(rdma_ucm_destroy_id, id),
	    OFF(rdma_ucm_destroy_id, response), P_NONE, do_leave),
	ROW(MIGRATE_ID, rdma_ucm_migrate_id, OFF(rdma_ucm_migrate_id, id),
	    OFF(rdma_ucm_migrate_id, response), P_NONE, do_migrate),
	ROW(QUERY, rdma_ucm_query, OFF(rdma_ucm_query, id), OFF(rdma_ucm_query, response), P_ZERO, NULL),
	ROW(BIND, rdma_ucm_bind, OFF(rdma_ucm_bind, id), -1, P_NONE, do_addr),
	ROW(RESOLVE_ADDR, rdma_ucm_resolve_addr, OFF(rdma_ucm_resolve_addr, id), -1, P_NONE, do_addr),
	ROW(JOIN_MCAST, rdma_ucm_join_mcast, OFF(rdma_ucm_join_mcast, id),
	    OFF(rdma_ucm_join_mcast, response), P_EINVAL, do_join),
};

static uint32_t get32(const uint8_t *p, int off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static void put32(uint8_t *p, int off, uint32_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

static uint64_t get64(const uint8_t *p, int off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* Copies len bytes to the command's response address: 0 or EFAULT. */
static int respond(const struct cmd_desc *d, const uint8_t *in, const void *data, size_t len)
{
	uint64_t resp;

	if (!len)
		return 0;
	resp = d->resp_off >= 0 ? get64(in, d->resp_off) : 0;
	if (!resp)
		return EFAULT;
	memcpy((void *)(uintptr_t)resp, data, len);
	return 0;
}

/*
 * Looks up the id the command names, as the kernel's ucma_get_ctx: ENOENT if
 * no such id, EINVAL if it is another channel's. Fills *dev and *handle.
 */
static int lookup(struct ucma_chan *ch, uint32_t app_id, int *dev, uint32_t *handle)
{
	struct ucma_id *id;
	int err = 0;

	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (!id)
		err = ENOENT;
	else if (id->chan != ch)
		err = EINVAL;
	else {
		*dev = id->dev;
		*handle = id->handle;
	}
	pthread_mutex_unlock(&ucma_lock);
	return err;
}

/* ------------------------------------------------------------ realizing an id */

/*
 * Creates a kept id in device dev's daemon and replays its SET_OPTIONs.
 * 0, or an errno value (the id stays kept).
 */
static int realize(struct ucma_chan *ch, uint32_t app_id, int dev)
{
	struct rdma_ucm_create_id cmd = { 0 };
	struct rdma_ucm_create_id_resp resp = { 0 };
	struct rdma_ucm_destroy_id dcmd = { 0 };
	struct rdma_ucm_destroy_id_resp dresp;
	struct ucma_conn *c;
	struct ucma_id *id;
	uint8_t *opts;
	size_t opts_len, got;
	bool created;
	int err;

	err = ucma_chan_conn(ch, dev, &c);
	if (err)
		return err;
	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (!id || id->chan != ch) {
		pthread_mutex_unlock(&ucma_lock);
		return id ? EINVAL : ENOENT;
	}
	if (id->dev >= 0) { /* another thread did it */
		pthread_mutex_unlock(&ucma_lock);
		return 0;
	}
	cmd.uid = id->uid;
	cmd.ps = id->ps;
	cmd.qp_type = id->qp_type;
	opts = id->opts;
	opts_len = id->opts_len;
	id->opts = NULL;
	id->opts_len = 0;
	pthread_mutex_unlock(&ucma_lock);

	err = ucma_call(c, RDMA_USER_CM_CMD_CREATE_ID, &cmd, sizeof(cmd), &resp, sizeof(resp), &got);
	created = !err && got == sizeof(resp);
	if (!err && !created)
		err = EPROTO;
	if (!err)
		err = ucma_replay_options(c, resp.id, opts, opts_len);
	if (err && created) {
		dcmd.id = resp.id;
		ucma_call(c, RDMA_USER_CM_CMD_DESTROY_ID, &dcmd, sizeof(dcmd), &dresp,
			  sizeof(dresp), &got);
	}
	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (!err && id && id->chan == ch) {
		id->dev = dev;
		id->handle = resp.id;
		free(id->applied);
		id->applied = opts;
		id->applied_len = opts_len;
	} else if (id && id->chan == ch && !id->opts) {
		id->opts = opts; /* keep them for the next try */
		id->opts_len = opts_len;
	} else {
		free(opts);
	}
	pthread_mutex_unlock(&ucma_lock);
	return err;
}

/* ------------------------------------------------------------ forwarding */

/* Sends the command (id already translated in `in`) and copies the answer. */
static int send_cmd(struct ucma_chan *ch, const struct cmd_desc *d, uint32_t cmd, int dev,
		    uint8_t *in, size_t in_len, uint16_t out, void *outbuf, size_t *got)
{
	struct ucma_conn *c;
	size_t want = out > UROCE_UCMA_OUT_MAX ? UROCE_UCMA_OUT_MAX : out;
	int err;

	err = ucma_chan_conn(ch, dev, &c);
	if (err)
		return err;
	return ucma_call(c, cmd, in, in_len, outbuf, d->resp_off >= 0 ? want : 0, got);
}

static int forward(struct ucma_chan *ch, const struct cmd_desc *d, uint32_t cmd, uint8_t *in,
		   size_t in_len, uint16_t out)
{
	uint8_t outbuf[UROCE_UCMA_OUT_MAX];
	uint32_t app_id = get32(in, d->id_off), handle = 0;
	size_t got = 0;
	int dev = -1, err;

	err = lookup(ch, app_id, &dev, &handle);
	if (err)
		return err;
	if (dev < 0) {
		switch (d->pending) {
		case P_ZERO:
			memset(outbuf, 0, sizeof(outbuf));
			return respond(d, in, outbuf, out > sizeof(outbuf) ? sizeof(outbuf) : out);
		case P_FIRST:
			err = realize(ch, app_id, 0);
			if (err)
				return err;
			err = lookup(ch, app_id, &dev, &handle);
			if (err)
				return err;
			break;
		default:
			return EINVAL;
		}
	}
	put32(in, d->id_off, handle);
	err = send_cmd(ch, d, cmd, dev, in, in_len, out, outbuf, &got);
	if (err)
		return err;
	if (cmd == RDMA_USER_CM_CMD_ACCEPT) {
		/* The kernel takes the accepting id's uid from ACCEPT (ucma_accept). */
		struct ucma_id *id;

		pthread_mutex_lock(&ucma_lock);
		id = ucma_id_find_locked(app_id);
		if (id && id->chan == ch)
			id->uid = get64(in, OFF(rdma_ucm_accept, uid));
		pthread_mutex_unlock(&ucma_lock);
	}
	return respond(d, in, outbuf, got);
}

/* ------------------------------------------------------------ CREATE_ID / DESTROY_ID */

static int do_create_id(struct ucma_chan *ch, const struct cmd_desc *d, uint8_t *in,
			size_t in_len, uint16_t out)
{
	struct rdma_ucm_create_id cmd;
	struct rdma_ucm_create_id_resp resp;
	struct ucma_id *id;
	int app_id;

	(void)in_len;
	if (out < sizeof(resp))
		return ENOSPC;
	memcpy(&cmd, in, sizeof(cmd));
	/* ucma_get_qp_type: the port spaces the kernel knows */
	if (cmd.ps != RDMA_PS_TCP && cmd.ps != RDMA_PS_IB && cmd.ps != RDMA_PS_UDP &&
	    cmd.ps != RDMA_PS_IPOIB)
		return EINVAL;
	pthread_mutex_lock(&ucma_lock);
	app_id = ucma_id_alloc_locked(ch);
	if (app_id >= 0) {
		id = ucma_id_find_locked((uint32_t)app_id);
		id->uid = cmd.uid;
		id->ps = cmd.ps;
		id->qp_type = cmd.qp_type;
	}
	pthread_mutex_unlock(&ucma_lock);
	if (app_id < 0)
		return ENOMEM;
	resp.id = (uint32_t)app_id;
	if (respond(d, in, &resp, sizeof(resp))) {
		pthread_mutex_lock(&ucma_lock);
		ucma_id_free_locked((uint32_t)app_id);
		pthread_mutex_unlock(&ucma_lock);
		return EFAULT;
	}
	return 0;
}

static int do_destroy_id(struct ucma_chan *ch, const struct cmd_desc *d, uint8_t *in,
			 size_t in_len, uint16_t out)
{
	struct rdma_ucm_destroy_id_resp resp, dresp;
	uint32_t app_id = get32(in, d->id_off), handle = 0;
	struct ucma_id *id;
	size_t got;
	int dev = -1, err;

	if (out < sizeof(resp))
		return ENOSPC;
	err = lookup(ch, app_id, &dev, &handle);
	if (err)
		return err;
	ucma_listen_drop(ch, app_id);
	if (dev >= 0) {
		put32(in, d->id_off, handle);
		/* A daemon that is gone has destroyed the id with the connection. */
		err = send_cmd(ch, d, RDMA_USER_CM_CMD_DESTROY_ID, dev, in, in_len,
			       sizeof(dresp), &dresp, &got);
		if (err && err != EIO && err != ETIMEDOUT)
			return err;
	}
	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	resp.events_reported = id ? id->delivered : 0;
	ucma_id_free_locked(app_id);
	pthread_mutex_unlock(&ucma_lock);
	return respond(d, in, &resp, sizeof(resp));
}

/* ------------------------------------------------------------ the address commands */

/* Marks an id as bound to the wildcard address (a LISTEN then covers every device). */
static void set_any(struct ucma_chan *ch, uint32_t app_id)
{
	struct ucma_id *id;

	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (id && id->chan == ch)
		id->any = true;
	pthread_mutex_unlock(&ucma_lock);
}

/* Kernel rdma_addr_size: the size of an AF_INET/AF_INET6/AF_IB address, 0 otherwise. */
static size_t addr_size(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET: return sizeof(struct sockaddr_in);
	case AF_INET6: return sizeof(struct sockaddr_in6);
	case UCMA_AF_IB: return 48; /* sizeof(struct sockaddr_ib), <rdma/ib.h> */
	default: return 0;
	}
}

/*
 * BIND_IP, BIND, RESOLVE_IP, RESOLVE_ADDR: the first command naming an
 * address decides a kept id's device (docs/rdma-cm.md, "Provider").
 */
static int do_addr(struct ucma_chan *ch, const struct cmd_desc *d, uint8_t *in, size_t in_len,
		   uint16_t out)
{
	const struct sockaddr *src = NULL, *dst = NULL;
	uint32_t cmd = (uint32_t)(d - cmd_table), app_id = get32(in, d->id_off), handle;
	int dev = -1, err;

	switch (cmd) {
	case RDMA_USER_CM_CMD_BIND_IP:
		src = (const void *)(in + OFF(rdma_ucm_bind_ip, addr));
		if (!addr_size(src) || src->sa_family == UCMA_AF_IB)
			return EINVAL;
		break;
	case RDMA_USER_CM_CMD_BIND: {
		struct rdma_ucm_bind *b = (void *)in;

		src = (const void *)&b->addr;
		if (b->reserved || !b->addr_size || b->addr_size != addr_size(src))
			return EINVAL;
		break;
	}
	case RDMA_USER_CM_CMD_RESOLVE_IP: {
		struct rdma_ucm_resolve_ip *r = (void *)in;

		src = (const void *)&r->src_addr;
		dst = (const void *)&r->dst_addr;
		if ((src->sa_family && !addr_size(src)) || !addr_size(dst) ||
		    src->sa_family == UCMA_AF_IB || dst->sa_family == UCMA_AF_IB)
			return EINVAL;
		if (!src->sa_family)
			src = NULL;
		break;
	}
	default: { /* RESOLVE_ADDR */
		struct rdma_ucm_resolve_addr *r = (void *)in;

		src = (const void *)&r->src_addr;
		dst = (const void *)&r->dst_addr;
		if ((r->src_size && r->src_size != addr_size(src)) || !r->dst_size ||
		    r->dst_size != addr_size(dst))
			return EINVAL;
		if (!r->src_size)
			src = NULL;
		break;
	}
	}
	/* uroce is RoCE: AF_IB (GIDs and service ids of InfiniBand) is not offered. */
	if ((src && src->sa_family == UCMA_AF_IB) || (dst && dst->sa_family == UCMA_AF_IB))
		return EAFNOSUPPORT;

	err = lookup(ch, app_id, &dev, &handle);
	if (err)
		return err;
	if (dev < 0) {
		bool wild = src && ucma_addr_is_any(src);

		if (!ch->ndevs)
			return ENODEV;
		if (src && !wild)
			dev = ucma_dev_by_addr(ch->devs, ch->ndevs, src);
		/* a loopback address no device has is bound as the wildcard (cma_any_addr) */
		if (dev < 0 && src && !wild && !ucma_addr_is_loopback(src))
			return ENODEV;
		wild = wild || (src && dev < 0);
		if (dev < 0)
			dev = dst ? ucma_dev_by_route(ch->devs, ch->ndevs, dst) : 0;
		err = realize(ch, app_id, dev);
		if (err)
			return err;
		if (wild && (cmd == RDMA_USER_CM_CMD_BIND_IP || cmd == RDMA_USER_CM_CMD_BIND))
			set_any(ch, app_id);
	}
	return forward(ch, d, cmd, in, in_len, out);
}

/* ------------------------------------------------------------ LISTEN */

/*
 * LISTEN: forwarded to the id's device (an unbound id: the first device,
 * which binds it to the wildcard as the kernel does); an id on the wildcard
 * address then listens on every other device too (ucma_listen_others).
 */
static int do_listen(struct ucma_chan *ch, const struct cmd_desc *d, uint8_t *in,
		     size_t in_len, uint16_t out)
{
	struct rdma_ucm_listen l;
	uint32_t handle;
	struct ucma_id *id;
	bool wild = false;
	int dev = -1, err;

	memcpy(&l, in, sizeof(l));
	err = lookup(ch, l.id, &dev, &handle);
	if (err)
		return err;
	err = forward(ch, d, RDMA_USER_CM_CMD_LISTEN, in, in_len, out);
	if (err)
		return err;
	if (dev < 0)
		set_any(ch, l.id);
	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(l.id);
	wild = id && id->chan == ch && id->any && !id->wild_mask && ch->ndevs > 1;
	pthread_mutex_unlock(&ucma_lock);
	return wild ? ucma_listen_others(ch, l.id, l.backlog) : 0;
}

/* ------------------------------------------------------------ SET_OPTION */

/* The option checks the kernel makes before an id has a device (ucma_set_option_id). */
static int check_kept_option(const struct rdma_ucm_set_option *so)
{
	if (so->level != RDMA_OPTION_ID)
		return EINVAL; /* RDMA_OPTION_IB_PATH needs a resolved id */
	switch (so->optname) {
	case RDMA_OPTION_ID_TOS:
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		return so->optlen == sizeof(uint8_t) ? 0 : EINVAL;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		return so->optlen == sizeof(int) ? 0 : EINVAL;
	default:
		return ENOSYS;
	}
}

static int do_set_option(struct ucma_chan *ch, const struct cmd_desc *d, uint8_t *in,
			 size_t in_len, uint16_t out)
{
	uint8_t buf[UROCE_UCMA_IN_MAX];
	struct rdma_ucm_set_option so;
	uint32_t app_id = get32(in, d->id_off), handle;
	struct ucma_id *id;
	size_t len;
	int dev = -1, err;

	(void)in_len;
	memcpy(&so, in, sizeof(so));
	if (so.optlen > sizeof(buf) - sizeof(so))
		return EINVAL;
	if (so.optlen && !so.optval)
		return EFAULT;
	len = sizeof(so) + so.optlen;
	memcpy(buf, &so, sizeof(so));
	memcpy(buf + sizeof(so), (const void *)(uintptr_t)so.optval, so.optlen);
	err = lookup(ch, app_id, &dev, &handle);
	if (err)
		return err;
	if (dev >= 0)
		return forward(ch, d, RDMA_USER_CM_CMD_SET_OPTION, buf, len, out);
	err = check_kept_option(&so);
	if (err)
		return err;
	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (id && id->chan == ch && id->dev < 0) {
		uint8_t *n = realloc(id->opts, id->opts_len + len);

		if (!n) {
			err = ENOMEM;
		} else {
			memcpy(n + id->opts_len, buf, len);
			id->opts = n;
			id->opts_len += len;
		}
	} else {
		err = id ? EAGAIN : ENOENT; /* realized meanwhile: the caller may retry */
	}
	pthread_mutex_unlock(&ucma_lock);
	return err;
}

/* ------------------------------------------------------------ GET_EVENT, MIGRATE_ID */

static int do_get_event(struct ucma_chan *ch, const struct cmd_desc *d, uint8_t *in,
			size_t in_len, uint16_t out)
{
	(void)in_len;
	return ucma_get_event(ch, get64(in, d->resp_off), out);
}

/*
 * MIGRATE_ID is written on the channel the id moves *to*; cmd.fd is the fd of
 * the channel it is on now (librdmacm's rdma_migrate_id, the kernel's
 * ucma_migrate_id). The daemon gets it on the id's current connection, with
 * fd replaced by the conn_tag of the target channel's connection to the same
 * device.
 */
static int do_migrate(struct ucma_chan *ch, const struct cmd_desc *d, uint8_t *in,
		      size_t in_len, uint16_t out)
{
	struct rdma_ucm_migrate_id *m = (void *)in;
	struct rdma_ucm_migrate_resp resp, dresp;
	uint32_t app_id = m->id, handle = 0;
	struct ucma_chan *from;
	struct ucma_conn *c;
	struct ucma_id *id;
	int dev = -1, tdev = -1, err;
	size_t got;

	(void)in_len;
	if (out < sizeof(resp))
		return ENOSPC;
	from = ucma_chan_get((int)m->fd);
	if (!from)
		return EINVAL; /* not an rdma_cm file (ucma_migrate_id) */
	err = lookup(from, app_id, &dev, &handle);
	if (err)
		goto out;
	if (dev >= 0 && from != ch) {
		for (int i = 0; i < ch->ndevs; i++)
			if (!strcmp(ch->devs[i].name, from->devs[dev].name))
				tdev = i;
		err = tdev < 0 ? ENODEV : ucma_chan_conn(ch, tdev, &c);
		if (err)
			goto out;
		m->id = handle;
		m->fd = c->conn_tag;
		err = send_cmd(from, d, RDMA_USER_CM_CMD_MIGRATE_ID, dev, in, sizeof(*m),
			       sizeof(dresp), &dresp, &got);
		if (err)
			goto out;
		ucma_listen_migrate(from, ch, app_id);
	} else {
		tdev = dev;
	}
	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (id && id->chan == from) {
		resp.events_reported = id->delivered;
		id->chan = ch;
		id->dev = tdev;
	} else {
		err = ENOENT;
	}
	pthread_mutex_unlock(&ucma_lock);
	if (!err)
		err = respond(d, in, &resp, sizeof(resp));
out:
	ucma_chan_put(from);
	return err;
}

/* ------------------------------------------------------------ multicast ids */

/* The multicast ids of JOIN_*: the application's number -> (channel, device, daemon's). */
struct mc_ent {
	struct ucma_chan *chan;
	int dev;
	uint32_t handle;
	uint32_t app_id;     /* the id it belongs to */
	uint32_t delivered;  /* its events read by the application */
};
static struct mc_ent *mcs;
static size_t cap_mcs;

static int do_join(struct ucma_chan *ch, const struct cmd_desc *d, uint8_t *in, size_t in_len,
		   uint16_t out)
{
	uint8_t outbuf[UROCE_UCMA_OUT_MAX];
	struct rdma_ucm_create_id_resp resp;
	uint32_t cmd = (uint32_t)(d - cmd_table), app_id = get32(in, d->id_off), handle;
	size_t got = 0, i;
	int dev = -1, err;

	if (out < sizeof(resp))
		return ENOSPC;
	err = lookup(ch, app_id, &dev, &handle);
	if (err)
		return err;
	if (dev < 0)
		return EINVAL; /* rdma_join_multicast wants a bound or resolved id */
	put32(in, d->id_off, handle);
	err = send_cmd(ch, d, cmd, dev, in, in_len, out, outbuf, &got);
	if (err)
		return err;
	if (got < sizeof(resp))
		return EPROTO;
	memcpy(&resp, outbuf, sizeof(resp));
	pthread_mutex_lock(&ucma_lock);
	for (i = 0; i < cap_mcs && mcs[i].chan; i++)
		;
	if (i == cap_mcs) {
		size_t cap = cap_mcs ? cap_mcs * 2 : 16;
		struct mc_ent *n = realloc(mcs, cap * sizeof(*n));

		if (n) {
			memset(n + cap_mcs, 0, (cap - cap_mcs) * sizeof(*n));
			mcs = n;
			cap_mcs = cap;
		}
	}
	if (i < cap_mcs)
		mcs[i] = (struct mc_ent){ .chan = ch, .dev = dev, .handle = resp.id, .app_id = app_id };
	pthread_mutex_unlock(&ucma_lock);
	if (i >= cap_mcs)
		return ENOMEM;
	resp.id = (uint32_t)i;
	return respond(d, in, &resp, sizeof(resp));
}

static int do_leave(struct ucma_chan *ch, const struct cmd_desc *d, uint8_t *in, size_t in_len,
		    uint16_t out)
{
	uint8_t outbuf[UROCE_UCMA_OUT_MAX];
	struct rdma_ucm_destroy_id_resp resp;
	uint32_t mc = get32(in, d->id_off);
	size_t got = 0;
	int dev, err;

	if (out < sizeof(struct rdma_ucm_destroy_id_resp))
		return ENOSPC;
	pthread_mutex_lock(&ucma_lock);
	if (mc >= cap_mcs || !mcs[mc].chan) {
		pthread_mutex_unlock(&ucma_lock);
		return ENOENT;
	}
	if (mcs[mc].chan != ch) {
		pthread_mutex_unlock(&ucma_lock);
		return EINVAL;
	}
	dev = mcs[mc].dev;
	put32(in, d->id_off, mcs[mc].handle);
	pthread_mutex_unlock(&ucma_lock);
	err = send_cmd(ch, d, RDMA_USER_CM_CMD_LEAVE_MCAST, dev, in, in_len, out, outbuf, &got);
	if (err)
		return err;
	/* the events read so far: librdmacm's rdma_leave_multicast waits
	 * until it has acknowledged that many */
	pthread_mutex_lock(&ucma_lock);
	mcs[mc].chan = NULL;
	resp.events_reported = mcs[mc].delivered;
	pthread_mutex_unlock(&ucma_lock);
	(void)got;
	return respond(d, in, &resp, sizeof(resp));
}

int ucma_mc_event_locked(struct ucma_chan *ch, int dev, uint32_t handle)
{
	for (size_t i = 0; i < cap_mcs; i++)
		if (mcs[i].chan == ch && mcs[i].dev == dev && mcs[i].handle == handle) {
			struct ucma_id *id = ucma_id_find_locked(mcs[i].app_id);

			mcs[i].delivered++;
			if (id)
				id->delivered++;
			return (int)i;
		}
	return -1;
}

/* Forgets the multicast ids of a closed channel. */
void ucma_mc_forget_chan_locked(struct ucma_chan *ch)
{
	for (size_t i = 0; i < cap_mcs; i++)
		if (mcs[i].chan == ch)
			mcs[i].chan = NULL;
}

/* ------------------------------------------------------------ write() */

ssize_t ucma_cmd_write(struct ucma_chan *ch, const void *buf, size_t count)
{
	uint8_t in[UROCE_UCMA_IN_MAX];
	struct rdma_ucm_cmd_hdr hdr;
	const struct cmd_desc *d;
	int err;

	if (ch->pid != getpid()) {
		errno = EIO; /* a fork child: the channel is the parent's */
		return -1;
	}
	if (count < sizeof(hdr)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.cmd >= sizeof(cmd_table) / sizeof(cmd_table[0]) ||
	    hdr.in + sizeof(hdr) > count) {
		errno = EINVAL;
		return -1;
	}
	d = &cmd_table[hdr.cmd];
	if (!d->name) {
		errno = ENOSYS;
		return -1;
	}
	/* A shorter struct (an older librdmacm) reads as zeros past its end, a
	 * longer one is cut to the struct this ABI knows. */
	memset(in, 0, sizeof(in));
	memcpy(in, (const uint8_t *)buf + sizeof(hdr), hdr.in < d->min_in ? hdr.in : d->min_in);
	err = d->fn ? d->fn(ch, d, in, d->min_in, hdr.out)
		    : forward(ch, d, hdr.cmd, in, d->min_in, hdr.out);
	if (err) {
		errno = err;
		return -1;
	}
	return (ssize_t)count;
}
