/*
 * flow.c - flow steering rules of raw packet QPs: ibv_create_flow(3) and
 * ibv_destroy_flow forwarded to the daemon (CREATE_FLOW / DESTROY_FLOW,
 * uroce/abi_flow.h), which matches every frame against them
 * (docs/raw-packet.md "Steering").
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "uroce.h"

/* A counters object (ibv_create_counters(3)): the daemon counts packets and
 * bytes per object; the provider keeps which description goes to which
 * index of ibv_read_counters' array (static attach only, as mlx5). */
struct uroce_counter_point {
	enum ibv_counter_description desc;
	uint32_t index;
};
struct uroce_counters {
	struct verbs_counters vc;
	pthread_mutex_t lock;
	struct uroce_counter_point *pts;
	uint32_t n;
	uint32_t bound; /* rules naming it: no more attach */
};

static struct uroce_counters *to_ucounters(struct ibv_counters *c)
{
	return (struct uroce_counters *)c;
}

struct uroce_flow {
	struct ibv_flow flow;
	uint32_t handle;
	struct uroce_counters *counters; /* its COUNT action's, or NULL */
};

/*
 * ibv_create_flow. The specs after *flow_attr are copied as they are (each
 * starts with its type and size). Errors (errno): EINVAL (not a raw packet
 * QP, num_of_specs specs larger than UROCE_FLOW_SPECS_MAX bytes or with a
 * size under 8 bytes, and what the daemon refuses: a bad spec size, a
 * second spec of one layer, specs on a default or sniffer rule, port != 1,
 * comp_mask != 0), EOPNOTSUPP (spec types and flags uroce does not match
 * on), ENOMEM.
 */
struct ibv_flow *uroce_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	struct uroce_context *ctx = to_uctx(qp->context);
	struct uroce_create_flow_req req;
	struct uroce_create_flow_resp resp;
	const uint8_t *spec = (const uint8_t *)(attr + 1);
	struct uroce_counters *counters = NULL;
	struct uroce_flow *f;
	uint32_t off = 0;
	int ret;

	if (qp->qp_type != IBV_QPT_RAW_PACKET || attr->comp_mask)
		return uroce_fail_null(EINVAL);
	memset(&req, 0, sizeof(req));
	for (unsigned int i = 0; i < attr->num_of_specs; i++) {
		uint16_t size;

		memcpy(&size, spec + off + 4, sizeof(size));
		if (size < 8 || off + size > UROCE_FLOW_SPECS_MAX)
			return uroce_fail_null(EINVAL);
		memcpy(req.specs + off, spec + off, size);
		if (size == sizeof(struct ibv_flow_spec_counter_action) &&
		    ((const struct ibv_flow_spec *)(spec + off))->hdr.type == IBV_FLOW_SPEC_ACTION_COUNT) {
			/* the daemon knows the object by its handle */
			struct ibv_flow_spec_counter_action a;
			uint64_t h;

			memcpy(&a, spec + off, sizeof(a));
			if (!a.counters || a.counters->context != qp->context || counters)
				return uroce_fail_null(EINVAL);
			counters = to_ucounters(a.counters);
			/* as mlx5: nothing attached, nothing to count */
			if (!counters->n)
				return uroce_fail_null(EINVAL);
			h = counters->vc.handle;
			memcpy(req.specs + off + offsetof(struct ibv_flow_spec_counter_action, counters), &h, sizeof(h));
		}
		off += size;
	}
	req.qp_handle = to_uqp(qp)->handle;
	req.type = attr->type;
	req.priority = attr->priority;
	req.port = attr->port;
	req.num_of_specs = attr->num_of_specs;
	req.flags = attr->flags;
	req.specs_len = off;
	f = calloc(1, sizeof(*f));
	if (!f)
		return uroce_fail_null(ENOMEM);
	ret = uroce_ctl_call(ctx, UROCE_OP_CREATE_FLOW, &req, sizeof(req), NULL, 0, &resp,
			     sizeof(resp), NULL, NULL);
	if (ret) {
		free(f);
		return uroce_fail_null(ret);
	}
	f->handle = resp.handle;
	f->counters = counters;
	if (counters) {
		pthread_mutex_lock(&counters->lock);
		counters->bound++;
		pthread_mutex_unlock(&counters->lock);
	}
	f->flow.context = qp->context;
	f->flow.handle = resp.handle;
	return &f->flow;
}

/* ibv_destroy_flow: 0, or EINVAL for a rule the daemon does not know. */
int uroce_destroy_flow(struct ibv_flow *flow)
{
	struct uroce_flow *f = (struct uroce_flow *)flow;
	int ret = uroce_ctl_destroy(to_uctx(flow->context), UROCE_OP_DESTROY_FLOW, f->handle);

	if (ret)
		return ret;
	if (f->counters) {
		pthread_mutex_lock(&f->counters->lock);
		f->counters->bound--;
		pthread_mutex_unlock(&f->counters->lock);
	}
	free(f);
	return 0;
}

/* ibv_create_counters: comp_mask must be 0 (EOPNOTSUPP); ENOMEM. */
struct ibv_counters *uroce_create_counters(struct ibv_context *context, struct ibv_counters_init_attr *attr)
{
	struct uroce_hdr req;
	struct uroce_handle_resp resp;
	struct uroce_counters *k;
	int ret;

	if (attr && attr->comp_mask)
		return uroce_fail_null(EOPNOTSUPP);
	k = calloc(1, sizeof(*k));
	if (!k)
		return uroce_fail_null(ENOMEM);
	memset(&req, 0, sizeof(req));
	ret = uroce_ctl_call(to_uctx(context), UROCE_OP_CREATE_COUNTERS, &req, sizeof(req), NULL, 0, &resp,
			     sizeof(resp), NULL, NULL);
	if (ret) {
		free(k);
		return uroce_fail_null(ret);
	}
	pthread_mutex_init(&k->lock, NULL);
	k->vc.counters.context = context;
	k->vc.handle = resp.handle;
	return &k->vc.counters;
}

/*
 * ibv_attach_counters_point_flow, static mode only (flow NULL), as mlx5:
 * EOPNOTSUPP for a flow, a comp_mask or a description other than PACKETS
 * and BYTES; EBUSY once a rule names the object; ENOMEM.
 */
int uroce_attach_counters_point_flow(struct ibv_counters *counters, struct ibv_counter_attach_attr *attr,
				     struct ibv_flow *flow)
{
	struct uroce_counters *k = to_ucounters(counters);
	struct uroce_counter_point *pts;
	int ret = 0;

	if (flow || attr->comp_mask ||
	    (attr->counter_desc != IBV_COUNTER_PACKETS && attr->counter_desc != IBV_COUNTER_BYTES))
		return EOPNOTSUPP;
	pthread_mutex_lock(&k->lock);
	if (k->bound) {
		ret = EBUSY;
	} else if (!(pts = realloc(k->pts, (k->n + 1) * sizeof(*pts)))) {
		ret = ENOMEM;
	} else {
		k->pts = pts;
		k->pts[k->n].desc = attr->counter_desc;
		k->pts[k->n].index = attr->index;
		k->n++;
	}
	pthread_mutex_unlock(&k->lock);
	return ret;
}

/*
 * ibv_read_counters: VALUES[index] = the sum of the descriptions attached
 * at that index (ibv_attach_counters_point_flow(3)), others 0. EINVAL when
 * an attached index is not below NCOUNTERS; EOPNOTSUPP for flags other
 * than IBV_READ_COUNTERS_ATTR_PREFER_CACHED (every read is exact here).
 */
int uroce_read_counters(struct ibv_counters *counters, uint64_t *values, uint32_t ncounters, uint32_t flags)
{
	struct uroce_counters *k = to_ucounters(counters);
	struct uroce_handle_req req = { .handle = k->vc.handle };
	struct uroce_read_counters_resp resp;
	int ret;

	if (flags & ~(uint32_t)IBV_READ_COUNTERS_ATTR_PREFER_CACHED)
		return EOPNOTSUPP;
	ret = uroce_ctl_call(to_uctx(counters->context), UROCE_OP_READ_COUNTERS, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret)
		return ret;
	pthread_mutex_lock(&k->lock);
	for (uint32_t i = 0; i < k->n; i++)
		if (k->pts[i].index >= ncounters)
			ret = EINVAL;
	if (!ret) {
		memset(values, 0, ncounters * sizeof(*values));
		for (uint32_t i = 0; i < k->n; i++)
			values[k->pts[i].index] += k->pts[i].desc == IBV_COUNTER_PACKETS ? resp.packets : resp.bytes;
	}
	pthread_mutex_unlock(&k->lock);
	return ret;
}

/* ibv_destroy_counters: 0, or EBUSY while a rule names it. */
int uroce_destroy_counters(struct ibv_counters *counters)
{
	struct uroce_counters *k = to_ucounters(counters);
	int ret = uroce_ctl_destroy(to_uctx(counters->context), UROCE_OP_DESTROY_COUNTERS, k->vc.handle);

	if (ret)
		return ret;
	pthread_mutex_destroy(&k->lock);
	free(k->pts);
	free(k);
	return 0;
}
