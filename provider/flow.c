/*
 * flow.c - flow steering rules of raw packet QPs: ibv_create_flow(3) and
 * ibv_destroy_flow forwarded to the daemon (CREATE_FLOW / DESTROY_FLOW,
 * uroce/abi_flow.h), which matches every frame against them
 * (docs/raw-packet.md "Steering").
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce.h"

struct uroce_flow {
	struct ibv_flow flow;
	uint32_t handle;
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
	f->flow.context = qp->context;
	f->flow.handle = resp.handle;
	return &f->flow;
}

/* ibv_destroy_flow: 0, or EINVAL for a rule the daemon does not know. */
int uroce_destroy_flow(struct ibv_flow *flow)
{
	struct uroce_flow *f = (struct uroce_flow *)flow;
	struct uroce_handle_req req = { .handle = f->handle };
	struct uroce_handle_resp resp;
	int ret;

	ret = uroce_ctl_call(to_uctx(flow->context), UROCE_OP_DESTROY_FLOW, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret && !uroce_daemon_gone(ret))
		return ret;
	free(f);
	return 0;
}
