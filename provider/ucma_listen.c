/*
 * ucma_listen.c - a wildcard listener on every device (ucma.h; docs/rdma-cm.md,
 * "Provider").
 *
 * The kernel's rdma_listen on an id bound to the wildcard address (or not
 * bound at all) listens on every RDMA device (cma_listen_on_all): a connect
 * request reaching any of them comes to the one id. Here every device is its
 * own daemon, so the provider makes a listening daemon id on each further
 * device for the application's id. Their CONNECT_REQUEST events carry the
 * application's uid, which ucma_id_by_uid_locked maps to the id through
 * wild_mask; the connection's new id then belongs to the device the request
 * came to. The extra daemon ids never surface otherwise: their other events
 * are dropped (no id has that handle as its own) and a daemon that goes away
 * takes only them, as the kernel drops a device's internal listener silently.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ucma.h"

int ucma_dev_call(struct ucma_chan *ch, int dev, uint32_t cmd, const void *in, size_t in_len,
		  void *out, size_t out_len)
{
	struct ucma_conn *c;
	size_t got = 0;
	int err;

	err = ucma_chan_conn(ch, dev, &c);
	if (err)
		return err;
	return ucma_call(c, cmd, in, in_len, out, out_len, &got);
}

/* Destroys daemon id handle on dev (nothing to report if the daemon is gone). */
static void destroy_on(struct ucma_chan *ch, int dev, uint32_t handle)
{
	struct rdma_ucm_destroy_id cmd = { .id = handle };
	struct rdma_ucm_destroy_id_resp resp;

	ucma_dev_call(ch, dev, RDMA_USER_CM_CMD_DESTROY_ID, &cmd, sizeof(cmd), &resp, sizeof(resp));
}

/*
 * One further device: CREATE_ID, the options again (each a struct
 * rdma_ucm_set_option and its value; opts is a private copy), BIND to addr,
 * LISTEN. 0 with *handle set, or an errno value (nothing left behind).
 */
static int listen_on(struct ucma_chan *ch, int dev, const struct rdma_ucm_create_id *create,
		     uint8_t *opts, size_t opts_len, const struct __kernel_sockaddr_storage *addr,
		     uint16_t addr_size, int backlog, uint32_t *handle)
{
	struct rdma_ucm_create_id_resp cresp = { 0 };
	struct rdma_ucm_bind bind = { 0 };
	struct rdma_ucm_listen listen = { 0 };
	struct ucma_conn *c;
	int err;

	err = ucma_dev_call(ch, dev, RDMA_USER_CM_CMD_CREATE_ID, create, sizeof(*create), &cresp,
			    sizeof(cresp));
	if (err)
		return err;
	err = ucma_chan_conn(ch, dev, &c);
	if (!err)
		err = ucma_replay_options(c, cresp.id, opts, opts_len);
	if (!err) {
		bind.id = cresp.id;
		bind.addr_size = addr_size;
		memcpy(&bind.addr, addr, sizeof(bind.addr));
		err = ucma_dev_call(ch, dev, RDMA_USER_CM_CMD_BIND, &bind, sizeof(bind), NULL, 0);
	}
	if (!err) {
		listen.id = cresp.id;
		listen.backlog = backlog;
		err = ucma_dev_call(ch, dev, RDMA_USER_CM_CMD_LISTEN, &listen, sizeof(listen), NULL, 0);
	}
	if (err)
		destroy_on(ch, dev, cresp.id);
	else
		*handle = cresp.id;
	return err;
}

int ucma_listen_others(struct ucma_chan *ch, uint32_t app_id, int backlog)
{
	struct rdma_ucm_query q = { 0 };
	struct rdma_ucm_query_addr_resp qa = { 0 };
	struct rdma_ucm_create_id create = { 0 };
	uint32_t handles[UCMA_MAX_DEVS];
	uint32_t mask = 0;
	uint8_t *opts = NULL;
	size_t opts_len = 0, want;
	struct ucma_id *id;
	int dev, err = 0;

	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (!id || id->chan != ch || id->dev < 0) {
		pthread_mutex_unlock(&ucma_lock);
		return id ? EINVAL : ENOENT;
	}
	dev = id->dev;
	q.id = id->handle;
	create.uid = id->uid;
	create.ps = id->ps;
	create.qp_type = id->qp_type;
	want = id->applied_len;
	if (want) {
		opts = malloc(want);
		if (opts) {
			memcpy(opts, id->applied, want);
			opts_len = want;
		}
	}
	pthread_mutex_unlock(&ucma_lock);
	if (want && !opts)
		return ENOMEM;

	/* The port the first device chose for an unbound or port-0 id. */
	q.option = RDMA_USER_CM_QUERY_ADDR;
	q.response = (uintptr_t)&qa;
	err = ucma_dev_call(ch, dev, RDMA_USER_CM_CMD_QUERY, &q, sizeof(q), &qa, sizeof(qa));
	for (int d = 0; !err && d < ch->ndevs; d++) {
		uint8_t *copy;

		if (d == dev)
			continue;
		copy = opts_len ? malloc(opts_len) : NULL;
		if (opts_len && !copy) {
			err = ENOMEM;
			break;
		}
		if (opts_len)
			memcpy(copy, opts, opts_len);
		err = listen_on(ch, d, &create, copy, opts_len, &qa.src_addr, qa.src_size, backlog,
				&handles[d]);
		free(copy);
		if (!err)
			mask |= 1u << d;
	}
	free(opts);
	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (!err && id && id->chan == ch) {
		id->wild_mask = mask;
		memcpy(id->wild_handle, handles, sizeof(handles));
		mask = 0;
	} else if (!err) {
		err = ENOENT; /* destroyed meanwhile */
	}
	pthread_mutex_unlock(&ucma_lock);
	for (int d = 0; d < UCMA_MAX_DEVS; d++)
		if (mask & (1u << d))
			destroy_on(ch, d, handles[d]);
	return err;
}

void ucma_listen_drop(struct ucma_chan *ch, uint32_t app_id)
{
	uint32_t handles[UCMA_MAX_DEVS], mask = 0;
	struct ucma_id *id;

	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (id && id->chan == ch) {
		mask = id->wild_mask;
		memcpy(handles, id->wild_handle, sizeof(handles));
		id->wild_mask = 0;
	}
	pthread_mutex_unlock(&ucma_lock);
	for (int d = 0; d < UCMA_MAX_DEVS; d++)
		if (mask & (1u << d))
			destroy_on(ch, d, handles[d]);
}

/* The index in ch's device list of device `dev` of another channel, or -1. */
static int same_dev(struct ucma_chan *ch, struct ucma_chan *from, int dev)
{
	for (int i = 0; i < ch->ndevs; i++)
		if (!strcmp(ch->devs[i].name, from->devs[dev].name))
			return i;
	return -1;
}

void ucma_listen_migrate(struct ucma_chan *from, struct ucma_chan *ch, uint32_t app_id)
{
	uint32_t handles[UCMA_MAX_DEVS], moved[UCMA_MAX_DEVS], mask = 0, nmask = 0;
	struct ucma_id *id;

	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (id && id->chan == from) {
		mask = id->wild_mask;
		memcpy(handles, id->wild_handle, sizeof(handles));
	}
	pthread_mutex_unlock(&ucma_lock);
	for (int e = 0; e < UCMA_MAX_DEVS; e++) {
		struct rdma_ucm_migrate_id m = { .id = handles[e] };
		struct rdma_ucm_migrate_resp r;
		struct ucma_conn *c;
		int t;

		if (!(mask & (1u << e)))
			continue;
		t = same_dev(ch, from, e);
		if (t >= 0 && !ucma_chan_conn(ch, t, &c)) {
			m.fd = c->conn_tag;
			if (!ucma_dev_call(from, e, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof(m), &r,
					   sizeof(r))) {
				nmask |= 1u << t;
				moved[t] = handles[e];
				continue;
			}
		}
		{
			struct rdma_ucm_destroy_id dc = { .id = handles[e] };
			struct rdma_ucm_destroy_id_resp dr;

			ucma_dev_call(from, e, RDMA_USER_CM_CMD_DESTROY_ID, &dc, sizeof(dc), &dr,
				      sizeof(dr));
		}
	}
	pthread_mutex_lock(&ucma_lock);
	id = ucma_id_find_locked(app_id);
	if (id && id->chan == from) {
		id->wild_mask = nmask;
		memcpy(id->wild_handle, moved, sizeof(moved));
	}
	pthread_mutex_unlock(&ucma_lock);
}
