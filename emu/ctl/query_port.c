/*
 * query_port.c - QUERY_PORT: the port attributes now (the state changes
 * with `uroce link`). Message layout: include/uroce/abi.h.
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"

#include <errno.h>

int op_query_port(struct ctl_client *c, struct ctl_call *call)
{
	const struct uroce_query_port_req *req = call->req;
	struct uroce_query_port_resp *resp = call->resp;

	if (req->port_num != 1 || req->reserved)
		return EINVAL;
	dev_port_attr(c->dev, &resp->port);
	return 0;
}
