/*
 * counters.c - flow counters (ibv_create_counters(3); CREATE_COUNTERS,
 * DESTROY_COUNTERS, READ_COUNTERS in uroce/abi_flow.h): packets and bytes of
 * the frames the rules naming a counters object took. Which descriptions a
 * reader wants at which index is the provider's business (as mlx5's).
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"

#include <errno.h>
#include <stdlib.h>

struct eth_counters *counters_find(struct eth_port *p, const struct ctl_client *c, uint64_t handle)
{
	struct eth_counters *k;

	if (!p)
		return NULL;
	for (k = p->counters; k; k = k->next)
		if (k->handle == handle && k->owner == c)
			return k;
	return NULL;
}

int op_create_counters(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_handle_resp *resp = call->resp;
	struct eth_port *p = c->dev->eth;
	struct eth_counters *k;

	if (!p)
		return EOPNOTSUPP;
	if (p->n_counters >= UROCE_COUNTERS_MAX)
		return ENOMEM;
	k = calloc(1, sizeof(*k));
	if (!k)
		return ENOMEM;
	k->handle = ++p->next_counters_handle;
	k->owner = c;
	k->next = p->counters;
	p->counters = k;
	p->n_counters++;
	resp->handle = k->handle;
	return 0;
}

static void counters_unlink(struct eth_port *p, struct eth_counters *k)
{
	struct eth_counters **pp;

	for (pp = &p->counters; *pp != k; pp = &(*pp)->next)
		;
	*pp = k->next;
	p->n_counters--;
	free(k);
}

int op_destroy_counters(struct ctl_client *c, struct ctl_call *call)
{
	struct eth_port *p = c->dev->eth;
	struct eth_counters *k = counters_find(p, c, req_handle(call));

	if (!k)
		return EINVAL;
	if (k->users)
		return EBUSY;
	counters_unlink(p, k);
	return 0;
}

int op_read_counters(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_read_counters_resp *resp = call->resp;
	struct eth_counters *k = counters_find(c->dev->eth, c, req_handle(call));

	if (!k)
		return EINVAL;
	resp->packets = k->packets;
	resp->bytes = k->bytes;
	return 0;
}

void counters_client_gone(struct eth_port *p, const struct ctl_client *c)
{
	struct eth_counters *k = p->counters, *next;

	for (; k; k = next) {
		next = k->next;
		if (k->owner == c)
			counters_unlink(p, k);
	}
}
