/*
 * cm_mcast.c - JOIN_IP_MCAST, JOIN_MCAST and LEAVE_MCAST (<rdma/rdma_user_cm.h>)
 * for a RoCEv2 device, as the kernel's ucma.c / cma.c answer them
 * (ucma_process_join, rdma_join_multicast, cma_iboe_join_multicast,
 * cma_make_mc_event): a join is a local decision, no MAD goes out; the
 * MULTICAST_JOIN event carries the UD parameters librdmacm attaches the
 * id's QP with (ibv_attach_mcast; emu/mcast/ delivers). docs/rdma-cm.md
 * "Multicast".
 */
#include "config.h"
#include "emu/cm/cm_int.h"
#include "emu/cm/cm_mcast.h"
#include "emu/obj/client.h"
#include "emu/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* RDMA_CM_EVENT_MULTICAST_JOIN of the kernel's enum rdma_cm_event_type. */
#define CM_EVENT_MULTICAST_JOIN 12
/* IPV6_DEFAULT_HOPLIMIT: cma_iboe_join_multicast's hop limit for an IPv4
 * group on RoCEv2. */
#define CM_MC_HOP_LIMIT 64
/* Memberships of one id (the kernel bounds them by memory only). */
#define CM_MC_PER_ID 1024u

static unsigned int count(const struct cm_id *id)
{
	unsigned int n = 0;

	for (const struct cm_mc *m = id->mcs; m; m = m->next)
		n++;
	return n;
}

/* The common part of both joins: ADDR (LEN bytes as the command gives it)
 * and JOIN_FLAGS for id HANDLE. */
static int join(struct cm_conn *c, uint32_t handle, uint64_t uid, const struct sockaddr_storage *addr,
		size_t addr_size, uint16_t join_flags, uint32_t *mc_handle)
{
	struct rdma_ucm_event_resp ev;
	struct cm_id *id = cm_id_get(c, handle);
	const uint8_t *ip4;
	struct cm_mc *m;

	if (!id)
		return ENOENT;
	/* ucma_process_join: FULLMEMBER or SENDONLY_FULLMEMBER; the size the
	 * family has */
	if (join_flags > RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return EINVAL;
	if (addr->ss_family == AF_INET6) {
		if (addr_size != sizeof(struct sockaddr_in6))
			return EINVAL;
		/* cma_iboe_join_multicast: an IPv6 group on RoCEv2 is not supported */
		ulog_limited(ULOG_LIMIT_REFUSED, ULOG_WARN,
			     "client#%u: rdma_join_multicast of an IPv6 group refused (RoCEv2 joins IPv4 groups only)",
			     c->client->id);
		return EOPNOTSUPP;
	}
	if (addr->ss_family != AF_INET || addr_size != sizeof(struct sockaddr_in))
		return EINVAL;
	/* rdma_join_multicast: a bound or address-resolved UD id */
	if ((id->state != CS_BOUND && id->state != CS_ADDR_RESOLVED) || id->qp_type != IBV_QPT_UD)
		return EINVAL;
	ip4 = (const uint8_t *)&((const struct sockaddr_in *)addr)->sin_addr;
	/* cma_zero_addr refuses 0.0.0.0; a unicast address names no group */
	if ((ip4[0] & 0xf0) != 0xe0)
		return EINVAL;
	if (count(id) >= CM_MC_PER_ID || !cm_event_room(id->conn))
		return ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return ENOMEM;
	m->handle = c->cm->next_handle++;
	m->uid = uid;
	/* cma_iboe_set_mgid for RoCEv2: the IPv4 group, v4-mapped */
	m->mgid[10] = m->mgid[11] = 0xff;
	memcpy(m->mgid + 12, ip4, 4);
	m->next = id->mcs;
	id->mcs = m;

	/* cma_make_mc_event with ib_init_ah_from_mcmember's AH: MLID 0, SL 0 */
	cm_event_init(id, &ev, CM_EVENT_MULTICAST_JOIN, 0);
	ev.uid = uid;
	ev.id = m->handle;
	ev.param.ud.qp_num = 0xffffff;
	ev.param.ud.qkey = CM_UDP_QKEY;
	memcpy(ev.param.ud.ah_attr.grh.dgid, m->mgid, 16);
	ev.param.ud.ah_attr.grh.sgid_index = 0;
	ev.param.ud.ah_attr.grh.hop_limit = CM_MC_HOP_LIMIT;
	ev.param.ud.ah_attr.is_global = 1;
	ev.param.ud.ah_attr.port_num = 1;
	cm_event_post(id, &ev);
	m->events_reported++;
	*mc_handle = m->handle;
	return 0;
}

int cm_cmd_join_ip_mcast(struct cm_conn *c, const uint8_t *in, uint8_t *out, uint32_t *n_out)
{
	struct rdma_ucm_join_ip_mcast cmd;
	struct rdma_ucm_create_id_resp resp = { 0 };
	struct sockaddr_storage ss;
	size_t size;
	int rc;

	memcpy(&cmd, in, sizeof(cmd));
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, &cmd.addr, sizeof(cmd.addr));
	/* rdma_addr_size_in6: the size of the family the address names */
	size = ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) :
	       ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : 0;
	rc = join(c, cmd.id, cmd.uid, &ss, size, RDMA_MC_JOIN_FLAG_FULLMEMBER, &resp.id);
	if (rc)
		return rc;
	memcpy(out, &resp, sizeof(resp));
	*n_out = sizeof(resp);
	return 0;
}

int cm_cmd_join_mcast(struct cm_conn *c, const uint8_t *in, uint8_t *out, uint32_t *n_out)
{
	struct rdma_ucm_join_mcast cmd;
	struct rdma_ucm_create_id_resp resp = { 0 };
	int rc;

	memcpy(&cmd, in, sizeof(cmd));
	rc = join(c, cmd.id, cmd.uid, (const struct sockaddr_storage *)&cmd.addr, cmd.addr_size,
		  cmd.join_flags, &resp.id);
	if (rc)
		return rc;
	memcpy(out, &resp, sizeof(resp));
	*n_out = sizeof(resp);
	return 0;
}

int cm_cmd_leave_mcast(struct cm_conn *c, const uint8_t *in, uint8_t *out, uint32_t *n_out)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp = { 0 };
	struct cm_id *id;

	memcpy(&cmd, in, sizeof(cmd));
	for (id = c->cm->ids; id; id = id->next) {
		if (id->conn != c)
			continue;
		for (struct cm_mc **p = &id->mcs; *p; p = &(*p)->next) {
			struct cm_mc *m = *p;

			if (m->handle != cmd.id)
				continue;
			*p = m->next;
			resp.events_reported = m->events_reported;
			free(m);
			memcpy(out, &resp, sizeof(resp));
			*n_out = sizeof(resp);
			return 0;
		}
	}
	return ENOENT;
}
