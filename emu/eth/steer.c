/*
 * steer.c - flow steering rules of raw packet QPs (ibv_create_flow(3),
 * CREATE_FLOW in uroce/abi_flow.h) and the lookup that picks the QPs a
 * frame goes to. The rule semantics (priorities, the default and sniffer
 * rule types, DROP and TAG actions) are in docs/raw-packet.md "Steering".
 *
 * A rule keeps each spec's value and mask in the layouts of
 * <infiniband/verbs.h>; a frame is turned once into the same layouts
 * (struct frame_key) and a spec matches when (key & mask) == (value & mask)
 * byte by byte. A VXLAN frame has two levels: its outer headers, which
 * plain specs match, and the frame it carries, which specs with
 * IBV_FLOW_SPEC_INNER match; VXLAN_TUNNEL matches its VNI.
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"
#include "emu/log.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { L_ETH, L_IPV4, L_IPV6, L_TCP, L_UDP, L_NUM };
enum { OUTER, INNER, LEVELS };

/* What a rule matches at one level (outer or inner headers). */
struct steer_match {
	unsigned int layers;        /* 1 << L_* */
	struct ibv_flow_eth_filter eth_val, eth_mask;
	struct ibv_flow_ipv4_ext_filter ip4_val, ip4_mask;
	struct ibv_flow_ipv6_filter ip6_val, ip6_mask;
	struct ibv_flow_tcp_udp_filter l4_val, l4_mask;
};

struct steer_rule {
	uint32_t handle;
	struct ctl_client *owner;
	struct ctl_qp *qp;
	enum ibv_flow_attr_type type;
	uint16_t priority;
	bool drop;
	bool has_tag;
	uint32_t tag;
	struct eth_counters *counters; /* COUNT action, or NULL */
	struct steer_match m[LEVELS];
	bool tunnel;                /* a VXLAN_TUNNEL spec: the frame is VXLAN ... */
	uint32_t vni_val, vni_mask; /* ... with this tunnel_id (network order) */
	struct steer_rule *next;
};

/* A frame at one level in the filters' layouts (network order where the
 * frame is). */
struct frame_key {
	unsigned int layers;
	struct ibv_flow_eth_filter eth;
	struct ibv_flow_ipv4_ext_filter ip4;
	struct ibv_flow_ipv6_filter ip6;
	struct ibv_flow_tcp_udp_filter l4;
};

/* Both levels of a frame: INNER has no layers unless the frame is VXLAN. */
struct frame_keys {
	struct frame_key k[LEVELS];
	bool vxlan;
	uint32_t vni;               /* tunnel_id as verbs lays it: htobe32(VNI) */
};

static bool masked_eq(const void *key, const void *val, const void *mask, size_t n)
{
	const uint8_t *k = key, *v = val, *m = mask;

	for (size_t i = 0; i < n; i++)
		if ((k[i] & m[i]) != (v[i] & m[i]))
			return false;
	return true;
}

static void frame_key(const uint8_t *f, const struct frame_info *fi, struct frame_key *k)
{
	memset(k, 0, sizeof(*k));
	k->layers = 1u << L_ETH;
	memcpy(k->eth.dst_mac, fi->dst_mac, 6);
	memcpy(k->eth.src_mac, fi->src_mac, 6);
	k->eth.ether_type = htobe16(fi->ether_type);
	k->eth.vlan_tag = htobe16(fi->vlan_tci);
	if (fi->l3 == FRAME_L3_IPV4) {
		const uint8_t *ip = f + fi->l3_off;

		k->layers |= 1u << L_IPV4;
		memcpy(&k->ip4.src_ip, ip + 12, 4);
		memcpy(&k->ip4.dst_ip, ip + 16, 4);
		k->ip4.proto = ip[9];
		k->ip4.tos = ip[1];
		k->ip4.ttl = ip[8];
		k->ip4.flags = ip[6] >> 5;
	} else if (fi->l3 == FRAME_L3_IPV6) {
		const uint8_t *ip = f + fi->l3_off;
		uint32_t vtf = (uint32_t)ip[0] << 24 | (uint32_t)ip[1] << 16 | (uint32_t)ip[2] << 8 | ip[3];

		k->layers |= 1u << L_IPV6;
		memcpy(k->ip6.src_ip, ip + 8, 16);
		memcpy(k->ip6.dst_ip, ip + 24, 16);
		k->ip6.flow_label = htobe32(vtf & 0xFFFFF);
		k->ip6.next_hdr = ip[6];
		k->ip6.traffic_class = (uint8_t)(vtf >> 20);
		k->ip6.hop_limit = ip[7];
	}
	if (fi->l4 != FRAME_L4_NONE) {
		const uint8_t *l4 = f + fi->l4_off;

		k->layers |= 1u << (fi->l4 == FRAME_L4_UDP ? L_UDP : L_TCP);
		memcpy(&k->l4.src_port, l4, 2);
		memcpy(&k->l4.dst_port, l4 + 2, 2);
	}
}

static bool level_matches(const struct steer_match *r, const struct frame_key *k)
{
	if ((k->layers & r->layers) != r->layers)
		return false;
	if ((r->layers & (1u << L_ETH)) && !masked_eq(&k->eth, &r->eth_val, &r->eth_mask, sizeof(k->eth)))
		return false;
	if ((r->layers & (1u << L_IPV4)) && !masked_eq(&k->ip4, &r->ip4_val, &r->ip4_mask, sizeof(k->ip4)))
		return false;
	if ((r->layers & (1u << L_IPV6)) && !masked_eq(&k->ip6, &r->ip6_val, &r->ip6_mask, sizeof(k->ip6)))
		return false;
	if ((r->layers & (1u << L_TCP | 1u << L_UDP)) &&
	    !masked_eq(&k->l4, &r->l4_val, &r->l4_mask, sizeof(k->l4)))
		return false;
	return true;
}

static bool rule_matches(const struct steer_rule *r, const struct frame_keys *k)
{
	if (r->tunnel && (!k->vxlan || (k->vni & r->vni_mask) != (r->vni_val & r->vni_mask)))
		return false;
	return level_matches(&r->m[OUTER], &k->k[OUTER]) && level_matches(&r->m[INNER], &k->k[INNER]);
}

/* Both levels of frame F (decoded in FI). */
static void frame_keys(const uint8_t *f, const struct frame_info *fi, struct frame_keys *k)
{
	struct frame_info inner;
	uint32_t off, vni;

	frame_key(f, fi, &k->k[OUTER]);
	k->vxlan = frame_vxlan_inner(f, fi, &inner, &off, &vni);
	k->vni = htobe32(vni);
	if (k->vxlan)
		frame_key(f + off, &inner, &k->k[INNER]);
	else
		memset(&k->k[INNER], 0, sizeof(k->k[INNER]));
}

/* Adds R's QP to OUT unless it is there already. */
static unsigned int hit_add(struct steer_hit *out, unsigned int n, unsigned int max,
			    const struct steer_rule *r)
{
	for (unsigned int i = 0; i < n; i++)
		if (out[i].qp == r->qp) {
			if (r->has_tag && !out[i].has_tag) {
				out[i].has_tag = true;
				out[i].tag = r->tag;
			}
			return n;
		}
	if (n == max)
		return n;
	out[n].qp = r->qp;
	out[n].has_tag = r->has_tag;
	out[n].tag = r->tag;
	return n + 1;
}

unsigned int steer_lookup(struct eth_port *p, const uint8_t *frame, size_t len, const struct frame_info *fi,
			  bool defaults, struct steer_hit *out, unsigned int max, bool *drop)
{
	struct frame_keys k;
	const struct steer_rule *r;
	unsigned int n = 0, best = 0x10000;
	bool mcast = fi->dst_mac[0] & 1, any_mc_default = false, best_drop = false;

	*drop = false;
	frame_keys(frame, fi, &k);
	/* NORMAL rules: the lowest priority value among the matches wins */
	for (r = p->rules; r; r = r->next)
		if (r->type == IBV_FLOW_ATTR_NORMAL && r->priority < best && rule_matches(r, &k))
			best = r->priority;
	if (best <= 0xFFFF) {
		for (r = p->rules; r; r = r->next) {
			if (r->type != IBV_FLOW_ATTR_NORMAL || r->priority != best || !rule_matches(r, &k))
				continue;
			if (r->counters) {
				r->counters->packets++;
				r->counters->bytes += len;
			}
			if (r->drop)
				best_drop = true;
			else
				n = hit_add(out, n, max, r);
		}
		if (best_drop) {
			n = 0;
			*drop = true;
		}
	} else if (defaults) {
		for (r = p->rules; r; r = r->next)
			if (r->type == IBV_FLOW_ATTR_MC_DEFAULT)
				any_mc_default = true;
		for (r = p->rules; r; r = r->next) {
			if (r->type == IBV_FLOW_ATTR_ALL_DEFAULT && !(mcast && any_mc_default))
				n = hit_add(out, n, max, r);
			else if (r->type == IBV_FLOW_ATTR_MC_DEFAULT && mcast)
				n = hit_add(out, n, max, r);
		}
	}
	/* sniffers see every frame of the port, sent or received */
	for (r = p->rules; r; r = r->next)
		if (r->type == IBV_FLOW_ATTR_SNIFFER)
			n = hit_add(out, n, max, r);
	return n;
}

/* A VXLAN_TUNNEL spec at S (SIZE bytes) into R: its size or -EINVAL (a
 * second one, a VNI over 24 bits). */
static int tunnel_parse(const uint8_t *s, uint16_t size, struct steer_rule *r)
{
	struct ibv_flow_spec_tunnel t;

	if (size != sizeof(t) || r->tunnel)
		return -EINVAL;
	memcpy(&t, s, sizeof(t));
	/* the VNI is 24 bits: tunnel_id's top byte (network order) */
	if ((t.val.tunnel_id | t.mask.tunnel_id) & htobe32(0xFF000000u))
		return -EINVAL;
	r->tunnel = true;
	r->vni_val = t.val.tunnel_id;
	r->vni_mask = t.mask.tunnel_id;
	return size;
}

/* Parses one spec at S (LEFT bytes left) into R (counters: C's). Returns
 * its size, or a negative errno. */
static int spec_parse(const uint8_t *s, uint32_t left, struct steer_rule *r, struct ctl_client *c)
{
	struct ibv_flow_spec_tcp_udp l4;
	struct steer_match *m;
	uint32_t type;
	uint16_t size;
	int layer = -1;

	if (left < 8)
		return -EINVAL;
	memcpy(&type, s, 4);
	memcpy(&size, s + 4, 2);
	if (size < 8 || size > left)
		return -EINVAL;
	/* an inner spec matches the headers a VXLAN frame carries */
	m = &r->m[type & IBV_FLOW_SPEC_INNER ? INNER : OUTER];
	if ((type & IBV_FLOW_SPEC_INNER) && (type & ~(uint32_t)IBV_FLOW_SPEC_INNER) >= IBV_FLOW_SPEC_VXLAN_TUNNEL)
		return -EOPNOTSUPP;
	switch (type & ~(uint32_t)IBV_FLOW_SPEC_INNER) {
	case IBV_FLOW_SPEC_ETH: {
		struct ibv_flow_spec_eth e;

		if (size != sizeof(e))
			return -EINVAL;
		memcpy(&e, s, sizeof(e));
		m->eth_val = e.val;
		m->eth_mask = e.mask;
		layer = L_ETH;
		break;
	}
	case IBV_FLOW_SPEC_IPV4: {
		struct ibv_flow_spec_ipv4 e;

		if (size != sizeof(e))
			return -EINVAL;
		memcpy(&e, s, sizeof(e));
		m->ip4_val.src_ip = e.val.src_ip;
		m->ip4_val.dst_ip = e.val.dst_ip;
		m->ip4_mask.src_ip = e.mask.src_ip;
		m->ip4_mask.dst_ip = e.mask.dst_ip;
		layer = L_IPV4;
		break;
	}
	case IBV_FLOW_SPEC_IPV4_EXT: {
		struct ibv_flow_spec_ipv4_ext e;

		if (size != sizeof(e))
			return -EINVAL;
		memcpy(&e, s, sizeof(e));
		m->ip4_val = e.val;
		m->ip4_mask = e.mask;
		layer = L_IPV4;
		break;
	}
	case IBV_FLOW_SPEC_IPV6: {
		struct ibv_flow_spec_ipv6 e;

		if (size != sizeof(e))
			return -EINVAL;
		memcpy(&e, s, sizeof(e));
		m->ip6_val = e.val;
		m->ip6_mask = e.mask;
		layer = L_IPV6;
		break;
	}
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP:
		if (size != sizeof(l4))
			return -EINVAL;
		memcpy(&l4, s, sizeof(l4));
		m->l4_val = l4.val;
		m->l4_mask = l4.mask;
		layer = (type & ~(uint32_t)IBV_FLOW_SPEC_INNER) == IBV_FLOW_SPEC_TCP ? L_TCP : L_UDP;
		break;
	case IBV_FLOW_SPEC_VXLAN_TUNNEL:
		return tunnel_parse(s, size, r);
	case IBV_FLOW_SPEC_ACTION_TAG: {
		struct ibv_flow_spec_action_tag t;

		if (size != sizeof(t) || r->has_tag)
			return -EINVAL;
		memcpy(&t, s, sizeof(t));
		/* the CQE's flow tag field is 24 bits (MLX5_FLOW_TAG_MASK) */
		if (t.tag_id > 0xFFFFFF)
			return -EINVAL;
		r->has_tag = true;
		r->tag = t.tag_id;
		return size;
	}
	case IBV_FLOW_SPEC_ACTION_COUNT: {
		struct ibv_flow_spec_counter_action a;
		uint64_t handle;

		if (size != sizeof(a) || r->counters)
			return -EINVAL;
		/* the provider put the daemon's handle where the pointer was */
		memcpy(&handle, s + offsetof(struct ibv_flow_spec_counter_action, counters), sizeof(handle));
		r->counters = counters_find(c->dev->eth, c, handle);
		if (!r->counters)
			return -EINVAL;
		return size;
	}
	case IBV_FLOW_SPEC_ACTION_DROP:
		if (size != sizeof(struct ibv_flow_spec_action_drop))
			return -EINVAL;
		r->drop = true;
		return size;
	default:
		return -EOPNOTSUPP;
	}
	/* one spec per layer; L3 and L4 each one of a kind */
	if ((m->layers & (1u << layer)) ||
	    ((layer == L_IPV4 || layer == L_IPV6) && (m->layers & (1u << L_IPV4 | 1u << L_IPV6))) ||
	    ((layer == L_TCP || layer == L_UDP) && (m->layers & (1u << L_TCP | 1u << L_UDP))))
		return -EINVAL;
	m->layers |= 1u << layer;
	return size;
}

int op_create_flow(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_create_flow_req *req = call->req;
	struct uroce_create_flow_resp *resp = call->resp;
	struct eth_port *p = c->dev->eth;
	struct ctl_qp *qp = objtab_get(&c->qps, req->qp_handle);
	struct steer_rule *r;
	uint32_t off = 0;

	if (!qp || qp->type != IBV_QPT_RAW_PACKET || !qp->raw || !p)
		return EINVAL;
	if (req->reserved || req->port != 1 || req->specs_len > UROCE_FLOW_SPECS_MAX)
		return EINVAL;
	if (req->type > IBV_FLOW_ATTR_SNIFFER)
		return EINVAL;
	if (req->flags & IBV_FLOW_ATTR_FLAGS_EGRESS)
		return EOPNOTSUPP;
	if (req->flags & ~(uint32_t)IBV_FLOW_ATTR_FLAGS_DONT_TRAP)
		return EINVAL;
	/* DONT_TRAP (a copy goes on to lower priorities) is not modelled */
	if (req->flags)
		return EOPNOTSUPP;
	if (p->n_rules >= ETH_FLOWS_MAX)
		return ENOMEM;
	r = calloc(1, sizeof(*r));
	if (!r)
		return ENOMEM;
	for (unsigned int i = 0; i < req->num_of_specs; i++) {
		int n = spec_parse(req->specs + off, req->specs_len - off, r, c);

		if (n < 0) {
			free(r);
			return -n;
		}
		off += (uint32_t)n;
	}
	/* the default and sniffer rule types take no specs (ibv_create_flow(3)) */
	if (req->type != IBV_FLOW_ATTR_NORMAL && (r->m[OUTER].layers || r->m[INNER].layers || r->tunnel || r->drop)) {
		free(r);
		return EINVAL;
	}
	if (r->counters)
		r->counters->users++;
	r->handle = ++p->next_rule_handle ? p->next_rule_handle : ++p->next_rule_handle;
	r->owner = c;
	r->qp = qp;
	r->type = (enum ibv_flow_attr_type)req->type;
	r->priority = req->priority;
	r->next = p->rules;
	p->rules = r;
	p->n_rules++;
	qp->raw->n_rules++;
	resp->handle = r->handle;
	ulog(ULOG_INFO, "client#%u qpn 0x%x flow %u: type %u priority %u layers 0x%x inner 0x%x%s%s%s", c->id,
	     qp->qpn, r->handle, r->type, r->priority, r->m[OUTER].layers, r->m[INNER].layers,
	     r->tunnel ? " vxlan" : "", r->drop ? " drop" : "",
	     r->has_tag ? " tag" : "");
	return 0;
}

static void rule_unlink(struct eth_port *p, struct steer_rule **pp)
{
	struct steer_rule *r = *pp;

	*pp = r->next;
	p->n_rules--;
	if (r->counters)
		r->counters->users--;
	r->qp->raw->n_rules--;
	free(r);
}

int op_destroy_flow(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_handle_req *req = call->req;
	struct eth_port *p = c->dev->eth;
	struct steer_rule **pp;

	if (!p)
		return EINVAL;
	for (pp = &p->rules; *pp; pp = &(*pp)->next)
		if ((*pp)->handle == req->handle && (*pp)->owner == c) {
			rule_unlink(p, pp);
			return 0;
		}
	return EINVAL;
}

void steer_qp_gone(struct eth_port *p, struct ctl_qp *qp)
{
	struct steer_rule **pp = &p->rules;

	while (*pp) {
		if ((*pp)->qp == qp)
			rule_unlink(p, pp);
		else
			pp = &(*pp)->next;
	}
}
