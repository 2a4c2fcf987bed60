/*
 * cm_id.c - rdma_cm ids: handles per CM connection, the device's list of
 * ids, addresses and the port spaces (the kernel's cma.c bind rules:
 * cma_get_port, cma_check_port).
 */
#include "config.h"
#include "emu/cm/cm_int.h"
#include "emu/cm/cm_mcast.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/nic/port.h"
#include "netstack/packet.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

void cm_dev_gid(const struct cm_dev *cm, union ibv_gid *gid)
{
	port_local_gid(cm->dev, gid);
}

void cm_sa_ip(const struct sockaddr_storage *sa, uint8_t ip[16], uint16_t *port)
{
	memset(ip, 0, 16);
	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, &s4->sin_addr, 4);
		if (port)
			*port = ntohs(s4->sin_port);
	} else if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		memcpy(ip, &s6->sin6_addr, 16);
		if (port)
			*port = ntohs(s6->sin6_port);
	} else if (port) {
		*port = 0;
	}
}

void cm_sa_make(struct sockaddr_storage *sa, int family, const uint8_t ip[16], uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)sa;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, ip + 12, 4);
		s4->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, ip, 16);
		s6->sin6_port = htons(port);
	}
}

uint32_t cm_uid_ids(const struct cm_dev *cm, uid_t uid)
{
	const struct cm_conn *c;
	uint32_t n = 0;

	for (c = cm->conns; c; c = c->next)
		if (c->client->uid == uid)
			n += c->ids.count;
	return n;
}

struct cm_id *cm_id_new(struct cm_conn *c, uint64_t uid, uint16_t ps, uint8_t qp_type, int *err)
{
	struct cm_dev *cm = c->cm;
	uid_t owner = c->client->uid;
	struct cm_id *id;

	if (owner != 0 && owner != cm->dev->uid && cm_uid_ids(cm, owner) >= cm->max_ids) {
		*err = ENOMEM;
		return NULL;
	}
	id = calloc(1, sizeof(*id));
	if (!id) {
		*err = ENOMEM;
		return NULL;
	}
	if (objtab_add(&c->ids, id, &id->slot)) {
		free(id);
		*err = ENOMEM;
		return NULL;
	}
	id->handle = cm->next_handle++;
	if (!cm->next_handle) /* after 2^32 - 1 ids: wraps, skipping 0 */
		cm->next_handle = 1;
	id->cm = cm;
	id->conn = c;
	id->uid = uid;
	id->ps = ps;
	id->qp_type = qp_type;
	id->state = CS_IDLE;
	id->path_mtu = cm->dev->active_mtu;
	id->max_cm_retries = CM_MAX_RETRIES;
	if (getrandom(&id->seq_num, sizeof(id->seq_num), 0) != sizeof(id->seq_num))
		id->seq_num = (uint32_t)random();
	id->seq_num &= 0xffffff; /* cma: a random 24-bit starting PSN per id */
	/* cm.c: a cyclic counter XOR a random operand, never 0 (0 names
	 * "no comm ID" in a REJ) */
	do
		id->local_comm_id = cm->next_comm_id++ ^ cm->comm_id_operand;
	while (!id->local_comm_id);
	ev_init(&id->timer, NULL);
	id->next = cm->ids;
	if (cm->ids)
		cm->ids->prev = id;
	cm->ids = id;
	cm->n_ids++;
	return id;
}

struct cm_id *cm_id_get(struct cm_conn *c, uint32_t handle)
{
	uint32_t s;

	/* a scan: at most the uid's quota of ids per connection */
	for (s = 1; handle && s <= c->ids.cap; s++) {
		struct cm_id *id = objtab_get(&c->ids, s);

		if (id && id->handle == handle)
			return id;
	}
	return NULL;
}

void cm_id_free(struct cm_id *id)
{
	struct cm_dev *cm = id->cm;
	struct cm_id *o;

	while (id->mcs) { /* its multicast memberships (cm_mcast.c) */
		struct cm_mc *m = id->mcs;

		id->mcs = m->next;
		free(m);
	}
	if (id->listener) {
		id->listener->pending--;
		cm->n_pending--;
	}
	if (id->pend_dev)
		cm->n_pending_dev--;
	/* pending ids of a listener that goes away lose their listener (and
	 * are no longer counted: as unpend) */
	for (o = cm->ids; o; o = o->next)
		if (o->listener == id) {
			o->listener = NULL;
			cm->n_pending--;
			if (o->pend_dev) {
				o->pend_dev = false;
				cm->n_pending_dev--;
			}
		}
	objtab_del(&id->conn->ids, id->slot);
	if (id->prev)
		id->prev->next = id->next;
	else
		cm->ids = id->next;
	if (id->next)
		id->next->prev = id->prev;
	cm->n_ids--;
	free(id);
}

/* Whether IP (v4-mapped or IPv6) is a loopback address: 127.0.0.0/8, ::1. */
static bool is_loopback(const uint8_t ip[16])
{
	static const uint8_t v6lo[16] = { [15] = 1 };

	return (roce_addr_is_v4mapped(ip) && ip[12] == 127) || !memcmp(ip, v6lo, 16);
}

/*
 * Whether IP (v4-mapped or IPv6) is the device's address or, in *ANY, counts
 * as the wildcard: 0.0.0.0, ::, and a loopback address that is not the
 * device's own (the kernel's cma_any_addr: rdma_bind_addr attaches no device
 * to a loopback address, and a listener there hears every address).
 */
static bool addr_ok(const struct cm_dev *cm, const uint8_t ip[16], bool *any)
{
	static const uint8_t zero[16], v4any[16] = { [10] = 0xff, [11] = 0xff };
	union ibv_gid me;

	cm_dev_gid(cm, &me);
	if (!memcmp(ip, me.raw, 16)) {
		*any = false;
		return true;
	}
	*any = !memcmp(ip, zero, 16) || !memcmp(ip, v4any, 16) || is_loopback(ip);
	return *any;
}

bool cm_id_has_device(const struct cm_id *id)
{
	uint8_t ip[16];
	bool any;

	if (id->state == CS_IDLE)
		return false;
	if (id->state != CS_BOUND && id->state != CS_LISTEN)
		return true;
	cm_sa_ip(&id->src, ip, NULL);
	addr_ok(id->cm, ip, &any);
	return !any;
}

/* Do bound ids A (being bound to IP:PORT) and O conflict? */
static bool port_conflict(const struct cm_id *a, const uint8_t ip[16], bool any, const struct cm_id *o)
{
	uint8_t oip[16];
	uint16_t oport;
	bool oany;

	if (o == a || !o->bound || o->passive || o->ps != a->ps)
		return false;
	cm_sa_ip(&o->src, oip, &oport);
	(void)oport;
	addr_ok(a->cm, oip, &oany);
	if (!any && !oany && memcmp(ip, oip, 16))
		return false;
	/* cma_check_port: both reuseaddr and neither listening may share */
	return !(a->reuseaddr && o->reuseaddr && o->state != CS_LISTEN);
}

static bool port_in_use(const struct cm_id *id, const uint8_t ip[16], bool any, uint16_t port)
{
	const struct cm_id *o;

	for (o = id->cm->ids; o; o = o->next) {
		uint8_t oip[16];
		uint16_t oport;

		if (!o->bound || o->passive)
			continue;
		cm_sa_ip(&o->src, oip, &oport);
		if (oport == port && port_conflict(id, ip, any, o))
			return true;
	}
	return false;
}

int cm_id_bind(struct cm_id *id, const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr_storage ss;
	uint8_t ip[16];
	uint16_t port;
	bool any;
	int family = id->cm->dev->addr.ss_family;

	if (id->bound || id->state != CS_IDLE)
		return EINVAL;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
		memcpy(&ss, sa, sizeof(struct sockaddr_in));
	else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
		memcpy(&ss, sa, sizeof(struct sockaddr_in6));
	else if (sa->sa_family == AF_IB)
		return EAFNOSUPPORT;
	else
		return EINVAL;
	ss.ss_family = sa->sa_family;
	cm_sa_ip(&ss, ip, &port);
	if (!addr_ok(id->cm, ip, &any))
		return ENODEV;
	/* an IPv4 address on an IPv6 device, or the reverse: not the device's */
	if (!any && ((family == AF_INET) != roce_addr_is_v4mapped(ip)))
		return ENODEV;
	if (port && port < 1024 && id->conn->client->uid != 0)
		return EACCES;
	if (!port) {
		unsigned int tries;
		uint32_t r;

		/* inet_get_local_port_range's default, 32768..60999 */
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)random();
		for (tries = 0; tries < 28232; tries++) {
			port = (uint16_t)(32768 + (r + tries) % 28232);
			if (!port_in_use(id, ip, any, port))
				break;
		}
		if (tries == 28232)
			return EADDRNOTAVAIL;
	} else if (port_in_use(id, ip, any, port)) {
		return EADDRINUSE;
	}
	cm_sa_make(&id->src, ss.ss_family, ip, port);
	if (ss.ss_family == AF_INET6) /* keep scope id and flow info */
		((struct sockaddr_in6 *)&id->src)->sin6_scope_id = ((struct sockaddr_in6 *)&ss)->sin6_scope_id;
	id->bound = true;
	id->state = CS_BOUND;
	return 0;
}

struct cm_id *cm_find_listener(struct cm_dev *cm, uint16_t ps, uint16_t port, const uint8_t dst_ip[16])
{
	struct cm_id *o, *wild = NULL;

	for (o = cm->ids; o; o = o->next) {
		uint8_t ip[16];
		uint16_t p;
		bool any;

		if (o->state != CS_LISTEN || o->ps != ps)
			continue;
		cm_sa_ip(&o->src, ip, &p);
		if (p != port)
			continue;
		addr_ok(cm, ip, &any);
		if (!memcmp(ip, dst_ip, 16))
			return o;
		if (any)
			wild = o;
	}
	return wild;
}

struct cm_id *cm_find_comm(struct cm_dev *cm, uint32_t local_comm_id)
{
	struct cm_id *o;

	for (o = cm->ids; o; o = o->next)
		if (o->local_comm_id == local_comm_id && o->state >= CS_REQ_SENT)
			return o;
	return NULL;
}

struct cm_id *cm_find_remote(struct cm_dev *cm, uint32_t remote_comm_id, const union ibv_gid *peer)
{
	struct cm_id *o;

	for (o = cm->ids; o; o = o->next)
		if (o->state >= CS_REQ_SENT && o->remote_comm_id == remote_comm_id &&
		    !memcmp(o->peer_gid.raw, peer->raw, 16))
			return o;
	return NULL;
}
