/*
 * ucma.c - CM_HELLO and the rdma_ucm commands (include/uroce/abi_cm.h), one
 * table row per command with its struct size and answer size, with the
 * semantics and errnos of the kernel's ucma.c / cma.c for a RoCE device.
 * Commands about addresses and ids are here; the connection protocol is
 * cm_conn.c, INIT_QP_ATTR cm_qp_attr.c.
 */
#include "config.h"
#include "emu/cm/cm_int.h"
#include "emu/cm/cm_mcast.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"
#include "emu/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <endian.h>
#include <infiniband/ib.h>
#include <rdma/ib_user_sa.h>

struct ucma_ctx {
	struct cm_conn *c;
	const uint8_t *in;
	uint16_t in_len;
	uint8_t *out;
	uint16_t out_len;   /* room the caller gave */
	uint32_t *n_out;    /* bytes written */
};

typedef int (*ucma_fn)(struct ucma_ctx *x);

struct ucma_desc {
	ucma_fn fn;
	const char *name;
	uint16_t in_size;   /* the command struct */
	uint16_t out_size;  /* answer; the caller must give room for it (ENOSPC) */
};

/* ---- ids ---------------------------------------------------------------- */

static int get_id(struct ucma_ctx *x, uint32_t handle, struct cm_id **id)
{
	*id = cm_id_get(x->c, handle);
	return *id ? 0 : ENOENT;
}

static void answer(struct ucma_ctx *x, const void *p, size_t n)
{
	if (n > x->out_len)
		n = x->out_len;
	memcpy(x->out, p, n);
	*x->n_out = (uint32_t)n;
}

static int cmd_create_id(struct ucma_ctx *x)
{
	struct rdma_ucm_create_id cmd;
	struct rdma_ucm_create_id_resp resp;
	uint8_t qp_type;
	struct cm_id *id;
	int err;

	memcpy(&cmd, x->in, sizeof(cmd));
	switch (cmd.ps) {
	case RDMA_PS_TCP: qp_type = IBV_QPT_RC; break;
	case RDMA_PS_UDP: case RDMA_PS_IPOIB: qp_type = IBV_QPT_UD; break;
	case RDMA_PS_IB:
		if (cmd.qp_type != IBV_QPT_RC && cmd.qp_type != IBV_QPT_UD)
			return EINVAL;
		qp_type = cmd.qp_type;
		break;
	default:
		return EINVAL;
	}
	id = cm_id_new(x->c, cmd.uid, cmd.ps, qp_type, &err);
	if (!id)
		return err;
	resp.id = id->handle;
	answer(x, &resp, sizeof(resp));
	return 0;
}

static int cmd_destroy_id(struct ucma_ctx *x)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	resp.events_reported = id->events_reported;
	cm_destroy(id);
	answer(x, &resp, sizeof(resp));
	return 0;
}

/* The size of the sockaddr of FAMILY that a command must give exactly
 * (ucma.c rdma_addr_size_kss), 0 for another family. */
static size_t family_size(const void *p)
{
	switch (((const struct sockaddr *)p)->sa_family) {
	case AF_INET: return sizeof(struct sockaddr_in);
	case AF_INET6: return sizeof(struct sockaddr_in6);
	case AF_IB: return sizeof(struct sockaddr_ib);
	default: return 0;
	}
}

static int cmd_bind_ip(struct ucma_ctx *x)
{
	struct rdma_ucm_bind_ip cmd;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	return cm_id_bind(id, (const struct sockaddr *)&cmd.addr, sizeof(cmd.addr));
}

static int cmd_bind(struct ucma_ctx *x)
{
	struct rdma_ucm_bind cmd;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if (cmd.reserved || !cmd.addr_size || cmd.addr_size != family_size(&cmd.addr))
		return EINVAL;
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	return cm_id_bind(id, (const struct sockaddr *)&cmd.addr, cmd.addr_size);
}

/* ---- address and route -------------------------------------------------- */

/* Can the device's address reach DST? A UDP socket bound to it connect()s
 * (routing picks a path or refuses). Returns 0 or the errno. */
static int reachable(const struct cm_dev *cm, const struct sockaddr_storage *dst)
{
	struct sockaddr_storage me = cm->dev->addr, to = *dst;
	socklen_t len = me.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int fd, rc = 0;

	if (dst->ss_family != me.ss_family)
		return EAFNOSUPPORT;
	if (me.ss_family == AF_INET) {
		((struct sockaddr_in *)&me)->sin_port = 0;
		((struct sockaddr_in *)&to)->sin_port = htons(cm->dev->port);
	} else {
		((struct sockaddr_in6 *)&me)->sin6_port = 0;
		((struct sockaddr_in6 *)&to)->sin6_port = htons(cm->dev->port);
	}
	fd = socket(me.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (bind(fd, (struct sockaddr *)&me, len) < 0 || connect(fd, (struct sockaddr *)&to, len) < 0)
		rc = errno;
	close(fd);
	return rc;
}

/* Copy a user sockaddr of SIZE bytes into SS; family AF_INET/AF_INET6 with
 * their sizes. Returns 0, EAFNOSUPPORT (AF_IB) or EINVAL. */
static int take_sa(const void *p, size_t size, struct sockaddr_storage *ss)
{
	const struct sockaddr *sa = p;

	memset(ss, 0, sizeof(*ss));
	if (sa->sa_family == AF_INET && size >= sizeof(struct sockaddr_in))
		memcpy(ss, p, sizeof(struct sockaddr_in));
	else if (sa->sa_family == AF_INET6 && size >= sizeof(struct sockaddr_in6))
		memcpy(ss, p, sizeof(struct sockaddr_in6));
	else if (sa->sa_family == AF_IB)
		return EAFNOSUPPORT;
	else
		return EINVAL;
	return 0;
}

static int resolve(struct cm_id *id, const struct sockaddr_storage *src, const struct sockaddr_storage *dst)
{
	struct rdma_ucm_event_resp ev;
	int rc;

	if (id->state != CS_IDLE && id->state != CS_BOUND)
		return EINVAL;
	if (!id->bound) {
		struct sockaddr_storage any;

		if (src && src->ss_family) {
			any = *src;
		} else {
			memset(&any, 0, sizeof(any));
			any.ss_family = dst->ss_family;
		}
		if ((rc = cm_id_bind(id, (struct sockaddr *)&any, sizeof(any))))
			return rc;
	}
	/* the source of a resolved id is the device's address (a wildcard
	 * bind takes it, as rdma_resolve_addr does from the route) */
	{
		uint8_t ip[16];
		uint16_t port;
		union ibv_gid me;

		cm_sa_ip(&id->src, ip, &port);
		cm_dev_gid(id->cm, &me);
		cm_sa_make(&id->src, id->cm->dev->addr.ss_family, me.raw, port);
	}
	id->dst = *dst;
	rc = reachable(id->cm, dst);
	if (rc) {
		cm_event_init(id, &ev, RDMA_CM_EVENT_ADDR_ERROR, -rc);
		id->state = CS_BOUND;
	} else {
		cm_event_init(id, &ev, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
		id->state = CS_ADDR_RESOLVED;
	}
	cm_event_post(id, &ev);
	return 0;
}

static int cmd_resolve_ip(struct ucma_ctx *x)
{
	struct rdma_ucm_resolve_ip cmd;
	struct sockaddr_storage src, dst;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	if ((rc = take_sa(&cmd.dst_addr, sizeof(cmd.dst_addr), &dst)))
		return rc;
	if (cmd.src_addr.sin6_family && (rc = take_sa(&cmd.src_addr, sizeof(cmd.src_addr), &src)))
		return rc;
	return resolve(id, cmd.src_addr.sin6_family ? &src : NULL, &dst);
}

static int cmd_resolve_addr(struct ucma_ctx *x)
{
	struct rdma_ucm_resolve_addr cmd;
	struct sockaddr_storage src, dst;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if (cmd.reserved || (cmd.src_size && cmd.src_size != family_size(&cmd.src_addr)) || !cmd.dst_size ||
	    cmd.dst_size != family_size(&cmd.dst_addr))
		return EINVAL;
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	if ((rc = take_sa(&cmd.dst_addr, cmd.dst_size, &dst)))
		return rc;
	if (cmd.src_size && (rc = take_sa(&cmd.src_addr, cmd.src_size, &src)))
		return rc;
	return resolve(id, cmd.src_size ? &src : NULL, &dst);
}

static int cmd_resolve_route(struct ucma_ctx *x)
{
	struct rdma_ucm_resolve_route cmd;
	struct rdma_ucm_event_resp ev;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	if (id->state != CS_ADDR_RESOLVED)
		return EINVAL;
	id->state = CS_ROUTE_RESOLVED;
	cm_event_init(id, &ev, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	cm_event_post(id, &ev);
	return 0;
}

/* ---- queries ------------------------------------------------------------ */

static uint16_t sa_size(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? sizeof(struct sockaddr_in)
	       : ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : 0;
}

static bool has_route(const struct cm_id *id)
{
	return id->state >= CS_ROUTE_RESOLVED && id->state != CS_LISTEN;
}

/* The IBTA path record of ID's route, packed (IBTA 15.2.5.16; the kernel's
 * ib_sa_pack_path of what cma_resolve_iboe_route fills for RoCE). */
static void path_record(const struct cm_id *id, uint8_t rec[64])
{
	union ibv_gid me;
	uint64_t sid;
	uint8_t ip[16];
	uint16_t dport;
	int i;

	cm_dev_gid(id->cm, &me);
	cm_sa_ip(&id->dst, ip, &dport);
	sid = id->service_id ? id->service_id : ((uint64_t)id->ps << 16 | dport);
	memset(rec, 0, 64);
	for (i = 0; i < 8; i++)
		rec[i] = (uint8_t)(sid >> (56 - 8 * i));
	memcpy(rec + 8, id->peer_gid.raw, 16);
	if (!id->passive && id->state < CS_REQ_SENT)
		memcpy(rec + 8, ip, 16);
	memcpy(rec + 24, me.raw, 16);
	rec[40] = rec[41] = rec[42] = rec[43] = 0xff;      /* DLID, SLID: permissive */
	rec[47] = CM_DEFAULT_HOP_LIMIT;                     /* raw traffic 0, flow label 0 */
	rec[48] = id->tos;                                  /* TClass */
	rec[49] = 0x80;                                     /* reversible, NumbPath 0 */
	rec[50] = rec[51] = 0xff;                           /* P_Key */
	rec[53] = 0;                                        /* QoS class 0, SL 0 */
	rec[54] = (uint8_t)(2 << 6 | id->path_mtu);         /* selector "exactly" */
	rec[55] = (uint8_t)(2 << 6 | cm_packet_rate(id->cm));
	rec[56] = (uint8_t)(2 << 6 | CM_PACKET_LIFETIME);
}

static int query_addr(struct ucma_ctx *x, struct cm_id *id)
{
	struct rdma_ucm_query_addr_resp r;

	memset(&r, 0, sizeof(r));
	if (cm_id_has_device(id)) { /* else all zero: ucma_query_device_addr */
		r.node_guid = htobe64(id->cm->dev->node_guid);
		r.port_num = 1;
		r.pkey = 0xffff;
		r.ibdev_index = 0xffffffff; /* no netlink index: librdmacm matches by node GUID */
	}
	r.src_size = sa_size(&id->src);
	memcpy(&r.src_addr, &id->src, r.src_size);
	r.dst_size = sa_size(&id->dst);
	memcpy(&r.dst_addr, &id->dst, r.dst_size);
	answer(x, &r, sizeof(r));
	return 0;
}

static int query_path(struct ucma_ctx *x, struct cm_id *id)
{
	uint8_t buf[sizeof(struct rdma_ucm_query_path_resp) + sizeof(struct ib_path_rec_data)];
	struct rdma_ucm_query_path_resp *r = (void *)buf;

	if (x->out_len < sizeof(*r))
		return ENOSPC;
	memset(buf, 0, sizeof(buf));
	r->num_paths = has_route(id) ? 1 : 0;
	/* ucma_query_path fills a path only while more than one record's room is left */
	if (r->num_paths && x->out_len > sizeof(*r) + sizeof(struct ib_path_rec_data)) {
		r->path_data[0].flags = IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL;
		path_record(id, (uint8_t *)r->path_data[0].path_rec);
		answer(x, buf, sizeof(buf));
	} else {
		answer(x, buf, sizeof(*r));
	}
	return 0;
}

static void sib(const struct cm_id *id, const uint8_t gid[16], uint16_t port, struct sockaddr_ib *s)
{
	memset(s, 0, sizeof(*s));
	s->sib_family = AF_IB;
	if (cm_id_has_device(id))
		s->sib_pkey = htobe16(0xffff);
	memcpy(&s->sib_addr, gid, 16);
	s->sib_sid = htobe64((uint64_t)id->ps << 16 | port);
	s->sib_sid_mask = htobe64(~0ull);
}

static int query_gid(struct ucma_ctx *x, struct cm_id *id)
{
	struct rdma_ucm_query_addr_resp r;
	struct sockaddr_ib s;
	union ibv_gid me;
	uint8_t ip[16];
	uint16_t port;

	memset(&r, 0, sizeof(r));
	memset(&me, 0, sizeof(me)); /* no device: rdma_read_gids gives zeros */
	if (cm_id_has_device(id)) {
		r.node_guid = htobe64(id->cm->dev->node_guid);
		r.port_num = 1;
		r.pkey = 0xffff;
		r.ibdev_index = 0xffffffff;
		cm_dev_gid(id->cm, &me);
	}
	cm_sa_ip(&id->src, ip, &port);
	sib(id, me.raw, port, &s);
	r.src_size = sizeof(s);
	memcpy(&r.src_addr, &s, sizeof(s));
	if (id->dst.ss_family) {
		cm_sa_ip(&id->dst, ip, &port);
		sib(id, ip, port, &s);
		r.dst_size = sizeof(s);
		memcpy(&r.dst_addr, &s, sizeof(s));
	}
	answer(x, &r, sizeof(r));
	return 0;
}

static int cmd_query(struct ucma_ctx *x)
{
	struct rdma_ucm_query cmd;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	switch (cmd.option) {
	case RDMA_USER_CM_QUERY_ADDR:
		return x->out_len < sizeof(struct rdma_ucm_query_addr_resp) ? ENOSPC : query_addr(x, id);
	case RDMA_USER_CM_QUERY_PATH:
		return query_path(x, id);
	case RDMA_USER_CM_QUERY_GID:
		return x->out_len < sizeof(struct rdma_ucm_query_addr_resp) ? ENOSPC : query_gid(x, id);
	default:
		return ENOSYS;
	}
}

static int cmd_query_route(struct ucma_ctx *x)
{
	struct rdma_ucm_query cmd;
	struct rdma_ucm_query_route_resp r;
	struct cm_id *id;
	union ibv_gid me;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	memset(&r, 0, sizeof(r));
	if (cm_id_has_device(id)) { /* else ucma_query_route stops at the addresses */
		r.node_guid = htobe64(id->cm->dev->node_guid);
		r.port_num = 1;
		r.ibdev_index = 0xffffffff;
	}
	memcpy(&r.src_addr, &id->src, sa_size(&id->src));
	memcpy(&r.dst_addr, &id->dst, sa_size(&id->dst));
	if (has_route(id)) {
		uint8_t ip[16];

		r.num_paths = 1;
		cm_dev_gid(id->cm, &me);
		cm_sa_ip(&id->dst, ip, NULL);
		memcpy(r.ib_route[0].dgid, ip, 16);
		memcpy(r.ib_route[0].sgid, me.raw, 16);
		r.ib_route[0].dlid = r.ib_route[0].slid = htobe16(0xffff);
		r.ib_route[0].reversible = 1;
		r.ib_route[0].pkey = htobe16(0xffff);
		r.ib_route[0].hop_limit = CM_DEFAULT_HOP_LIMIT;
		r.ib_route[0].traffic_class = id->tos;
		r.ib_route[0].mtu_selector = 2;
		r.ib_route[0].mtu = id->path_mtu;
		r.ib_route[0].rate_selector = 2;
		r.ib_route[0].rate = cm_packet_rate(id->cm);
		r.ib_route[0].packet_life_time_selector = 2;
		r.ib_route[0].packet_life_time = CM_PACKET_LIFETIME;
	}
	answer(x, &r, sizeof(r));
	return 0;
}

/* ---- connections -------------------------------------------------------- */

static int cmd_listen(struct ucma_ctx *x)
{
	struct rdma_ucm_listen cmd;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	if (id->state == CS_IDLE) {
		struct sockaddr_storage any;

		/* rdma_listen of an unbound id binds it to the wildcard */
		memset(&any, 0, sizeof(any));
		any.ss_family = id->cm->dev->addr.ss_family;
		if ((rc = cm_id_bind(id, (struct sockaddr *)&any, sizeof(any))))
			return rc;
	}
	if (id->state != CS_BOUND && id->state != CS_LISTEN)
		return EINVAL;
	if (id->state == CS_BOUND && id->reuseaddr) {
		/* cma_bind_listen: a listener shares its port with nobody */
		const struct cm_id *o;
		uint8_t ip[16], oip[16];
		uint16_t port, oport;

		cm_sa_ip(&id->src, ip, &port);
		for (o = id->cm->ids; o; o = o->next) {
			if (o == id || !o->bound || o->passive || o->ps != id->ps)
				continue;
			cm_sa_ip(&o->src, oip, &oport);
			if (oport == port)
				return EADDRINUSE;
		}
	}
	id->backlog = cmd.backlog > 0 && cmd.backlog < CM_BACKLOG_MAX ? cmd.backlog : CM_BACKLOG_MAX;
	id->state = CS_LISTEN;
	return 0;
}

static int cmd_connect(struct ucma_ctx *x)
{
	struct rdma_ucm_connect cmd;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if (!cmd.conn_param.valid)
		return EINVAL;
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	return cm_connect(id, &cmd.conn_param);
}

static int cmd_accept(struct ucma_ctx *x)
{
	struct rdma_ucm_accept cmd;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	if (cmd.conn_param.valid)
		id->uid = cmd.uid; /* ucma_accept: the new id's uid from now on */
	return cm_accept(id, &cmd.conn_param);
}

static int cmd_reject(struct ucma_ctx *x)
{
	struct rdma_ucm_reject cmd;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	/* ucma_reject: 0 means consumer defined (28); 28 and 31 (vendor
	 * option not supported, ECE) are the reasons a user may give */
	if (!cmd.reason)
		cmd.reason = CM_REJ_CONSUMER_DEFINED;
	if (cmd.reason != CM_REJ_CONSUMER_DEFINED && cmd.reason != 31)
		return EINVAL;
	return cm_reject(id, cmd.reason, cmd.private_data, cmd.private_data_len);
}

static int cmd_disconnect(struct ucma_ctx *x)
{
	struct rdma_ucm_disconnect cmd;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	return cm_disconnect(id);
}

static int cmd_init_qp_attr(struct ucma_ctx *x)
{
	struct rdma_ucm_init_qp_attr cmd;
	struct ib_uverbs_qp_attr a;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if (cmd.qp_state > IBV_QPS_ERR)
		return EINVAL;
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	if ((rc = cm_init_qp_attr(id, cmd.qp_state, &a)))
		return rc;
	answer(x, &a, sizeof(a));
	return 0;
}

static int cmd_set_option(struct ucma_ctx *x)
{
	struct rdma_ucm_set_option cmd;
	const uint8_t *val = x->in + sizeof(cmd);
	struct cm_id *id;
	int rc, v;

	memcpy(&cmd, x->in, sizeof(cmd));
	if (cmd.optlen > x->in_len - sizeof(cmd))
		return EINVAL;
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	if (cmd.level == RDMA_OPTION_IB)
		return cmd.optname == RDMA_OPTION_IB_PATH ? EOPNOTSUPP : ENOSYS;
	if (cmd.level != RDMA_OPTION_ID)
		return ENOSYS;
	switch (cmd.optname) {
	case RDMA_OPTION_ID_TOS:
		if (cmd.optlen != 1)
			return EINVAL;
		id->tos = val[0];
		id->tos_set = true;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (cmd.optlen != sizeof(int))
			return EINVAL;
		memcpy(&v, val, sizeof(v));
		if (cmd.optname == RDMA_OPTION_ID_REUSEADDR) {
			/* rdma_set_reuseaddr: while idle, or turning it on
			 * while not listening */
			if (id->state != CS_IDLE && !(v && id->state != CS_LISTEN))
				return EINVAL;
			id->reuseaddr = v != 0;
		} else {
			if (id->state != CS_IDLE && id->state != CS_BOUND)
				return EINVAL;
			id->afonly = v != 0;
		}
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (cmd.optlen != 1)
			return EINVAL;
		if (id->qp_type != IBV_QPT_RC)
			return EINVAL;
		id->ack_timeout = val[0] & 31;
		id->timeout_set = true;
		return 0;
	default:
		return ENOSYS;
	}
}

static int cmd_notify(struct ucma_ctx *x)
{
	struct rdma_ucm_notify cmd;
	struct cm_id *id;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	/* ib_cm_notify(IB_EVENT_COMM_EST): the first packet came before the RTU */
	if (cmd.event == IBV_EVENT_COMM_EST && id->state == CS_REP_SENT) {
		struct rdma_ucm_event_resp ev;

		cm_wire_stop(id);
		id->state = CS_ESTABLISHED;
		cm_event_init(id, &ev, RDMA_CM_EVENT_ESTABLISHED, 0);
		cm_event_post(id, &ev);
	}
	return 0;
}

/* MIGRATE_ID (ucma_migrate_id): the id moves to another CM connection of the
 * same process on this device, named by its conn_tag in `fd` (the provider
 * puts it there); it keeps its handle; events not yet written stay with the
 * old connection (the provider drops them). ENOENT: no such connection of
 * this process. */
static int cmd_migrate_id(struct ucma_ctx *x)
{
	struct rdma_ucm_migrate_id cmd;
	struct rdma_ucm_migrate_resp resp;
	struct cm_conn *t;
	struct cm_id *id;
	uint32_t slot;
	int rc;

	memcpy(&cmd, x->in, sizeof(cmd));
	if ((rc = get_id(x, cmd.id, &id)))
		return rc;
	for (t = x->c->cm->conns; t; t = t->next)
		if (t->tag == cmd.fd && t->client->pid == x->c->client->pid && t->client->uid == x->c->client->uid)
			break;
	if (!t)
		return ENOENT;
	if (t != x->c) {
		if (objtab_add(&t->ids, id, &slot))
			return ENOMEM;
		objtab_del(&x->c->ids, id->slot);
		id->slot = slot;
		id->conn = t;
	}
	resp.events_reported = id->events_reported;
	answer(x, &resp, sizeof(resp));
	return 0;
}

static int cmd_join_ip_mcast(struct ucma_ctx *x)
{
	return cm_cmd_join_ip_mcast(x->c, x->in, x->out, x->n_out);
}

static int cmd_join_mcast(struct ucma_ctx *x)
{
	return cm_cmd_join_mcast(x->c, x->in, x->out, x->n_out);
}

static int cmd_leave_mcast(struct ucma_ctx *x)
{
	return cm_cmd_leave_mcast(x->c, x->in, x->out, x->n_out);
}

static int cmd_unsupported(struct ucma_ctx *x)
{
	return EOPNOTSUPP;
}

#define CMD(c, fn, in, out) [RDMA_USER_CM_CMD_##c] = { fn, #c, in, out }
static const struct ucma_desc cmds[] = {
	CMD(CREATE_ID, cmd_create_id, sizeof(struct rdma_ucm_create_id), sizeof(struct rdma_ucm_create_id_resp)),
	CMD(DESTROY_ID, cmd_destroy_id, sizeof(struct rdma_ucm_destroy_id),
	    sizeof(struct rdma_ucm_destroy_id_resp)),
	CMD(BIND_IP, cmd_bind_ip, sizeof(struct rdma_ucm_bind_ip), 0),
	CMD(RESOLVE_IP, cmd_resolve_ip, sizeof(struct rdma_ucm_resolve_ip), 0),
	CMD(RESOLVE_ROUTE, cmd_resolve_route, sizeof(struct rdma_ucm_resolve_route), 0),
	CMD(QUERY_ROUTE, cmd_query_route, sizeof(struct rdma_ucm_query),
	    sizeof(struct rdma_ucm_query_route_resp)),
	CMD(CONNECT, cmd_connect, sizeof(struct rdma_ucm_connect), 0),
	CMD(LISTEN, cmd_listen, sizeof(struct rdma_ucm_listen), 0),
	CMD(ACCEPT, cmd_accept, sizeof(struct rdma_ucm_accept), 0),
	CMD(REJECT, cmd_reject, sizeof(struct rdma_ucm_reject), 0),
	CMD(DISCONNECT, cmd_disconnect, sizeof(struct rdma_ucm_disconnect), 0),
	CMD(INIT_QP_ATTR, cmd_init_qp_attr, sizeof(struct rdma_ucm_init_qp_attr),
	    sizeof(struct ib_uverbs_qp_attr)),
	CMD(GET_OPTION, cmd_unsupported, 0, 0),
	CMD(SET_OPTION, cmd_set_option, sizeof(struct rdma_ucm_set_option), 0),
	CMD(NOTIFY, cmd_notify, sizeof(struct rdma_ucm_notify), 0),
	CMD(JOIN_IP_MCAST, cmd_join_ip_mcast, sizeof(struct rdma_ucm_join_ip_mcast),
	    sizeof(struct rdma_ucm_create_id_resp)),
	CMD(LEAVE_MCAST, cmd_leave_mcast, sizeof(struct rdma_ucm_destroy_id),
	    sizeof(struct rdma_ucm_destroy_id_resp)),
	CMD(MIGRATE_ID, cmd_migrate_id, sizeof(struct rdma_ucm_migrate_id), sizeof(struct rdma_ucm_migrate_resp)),
	CMD(QUERY, cmd_query, sizeof(struct rdma_ucm_query), 0),
	CMD(BIND, cmd_bind, sizeof(struct rdma_ucm_bind), 0),
	CMD(RESOLVE_ADDR, cmd_resolve_addr, sizeof(struct rdma_ucm_resolve_addr), 0),
	CMD(JOIN_MCAST, cmd_join_mcast, sizeof(struct rdma_ucm_join_mcast), sizeof(struct rdma_ucm_create_id_resp)),
};

int op_ucma(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_ucma_req *req = call->req;
	struct uroce_ucma_resp *resp = call->resp;
	const struct ucma_desc *d;
	struct ucma_ctx x;
	uint8_t in[UROCE_UCMA_IN_MAX + 8];
	int rc;

	if (!c->cm)
		return EPROTO;
	resp->out_len = 0;
	if (req->cmd >= sizeof(cmds) / sizeof(cmds[0]) || !cmds[req->cmd].fn)
		return EOPNOTSUPP;
	d = &cmds[req->cmd];
	if (req->in_len > UROCE_UCMA_IN_MAX || req->out_len > UROCE_UCMA_OUT_MAX || req->in_len < d->in_size)
		return EINVAL;
	if (req->out_len < d->out_size)
		return ENOSPC;
	/* aligned copy of the command; bytes past in_len are zero */
	memset(in, 0, sizeof(in));
	memcpy(in, req->in, req->in_len);
	x.c = c->cm;
	x.in = in;
	x.in_len = req->in_len;
	x.out = resp->out;
	x.out_len = req->out_len;
	x.n_out = &resp->out_len;
	rc = d->fn(&x);
	if (rc)
		resp->out_len = 0;
	return rc;
}
