/*
 * obj_pd.c - protection domains: ALLOC_PD / DEALLOC_PD (include/uroce/abi.h).
 * A PD counts its users (MRs, QPs, AHs); it cannot go while it has any
 * (EBUSY, as the kernel's uverbs answers).
 */
#include "config.h"
#include "emu/obj/client.h"
#include "emu/nic/device.h"
#include "emu/log.h"
#include "emu/obj/objects.h"
#include "emu/ctl/ops.h"
#include "emu/ctl/quota.h"

#include <errno.h>
#include <stdlib.h>

int op_alloc_pd(struct ctl_client *c, struct ctl_call *call)
{
	struct uroce_handle_resp *resp = call->resp;
	struct ctl_pd *pd;
	int rc;

	if (req_handle(call) != 0 || ((const struct uroce_handle_req *)call->req)->reserved)
		return EINVAL;
	if (c->dev->counts.pd >= DEV_MAX_PD)
		return ENOMEM;
	if ((rc = quota_check(c, QUOTA_PD)))
		return rc;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return ENOMEM;
	rc = objtab_add_numbered(&c->pds, &c->dev->pdns, pd, &pd->pdn, &pd->handle);
	if (rc) {
		free(pd);
		return rc;
	}
	c->dev->counts.pd++;
	resp->handle = pd->handle;
	return 0;
}

void pd_free(struct ctl_client *c, struct ctl_pd *pd)
{
	objtab_del(&c->pds, pd->handle);
	id_alloc_put(&c->dev->pdns, pd->pdn);
	c->dev->counts.pd--;
	free(pd);
}

int op_dealloc_pd(struct ctl_client *c, struct ctl_call *call)
{
	struct ctl_pd *pd = objtab_get(&c->pds, req_handle(call));

	if (!pd)
		return EINVAL;
	if (pd->users || pd->imported)
		return EBUSY;
	pd_free(c, pd);
	return 0;
}
