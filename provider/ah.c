/*
 * ah.c - address handles (UD destinations).
 *
 * RoCE addresses by GID: an AH without a GRH has no destination and is
 * refused with EINVAL, as on every RoCE device (pyverbs test_create_ah_roce;
 * docs/clients.md §0 item 3). The daemon resolves the GID to a UDP endpoint.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "uroce.h"

/*
 * ibv_create_ah (libibverbs sets ah->context and ah->pd afterwards).
 * Errors (errno): EINVAL for is_global 0, port_num != 1, sgid_index >=
 * gid_tbl_len; ENOMEM.
 */
struct ibv_ah *uroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct uroce_context *ctx = to_uctx(pd->context);
	struct uroce_create_ah_req req = { .pd_handle = to_upd(pd)->handle };
	struct uroce_handle_resp resp;
	struct uroce_ah *ah;
	int ret;

	if (!attr->is_global || attr->port_num != 1 ||
	    attr->grh.sgid_index >= ctx->gid_tbl_len)
		return uroce_fail_null(EINVAL);
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return uroce_fail_null(ENOMEM);
	req.attr = *attr;
	ret = uroce_ctl_call(ctx, UROCE_OP_CREATE_AH, &req, sizeof(req), NULL, 0,
			     &resp, sizeof(resp), NULL, NULL);
	if (ret) {
		free(ah);
		return uroce_fail_null(ret);
	}
	ah->handle = resp.handle;
	ah->ibv_ah.handle = resp.handle;
	return &ah->ibv_ah;
}

/* ibv_destroy_ah. Returns 0 or EINVAL. */
int uroce_destroy_ah(struct ibv_ah *ibah)
{
	struct uroce_ah *ah = to_uah(ibah);
	int ret = uroce_ctl_destroy(to_uctx(ibah->context), UROCE_OP_DESTROY_AH, ah->handle);

	if (ret)
		return ret;
	free(ah);
	return 0;
}
