/*
 * dv.c - urocedv's entry points that need the device: whether a device is
 * uroce's, and the CQ whose completions urocedv_poll_cq_wc (dv_wc.c) reads
 * into custom WCs (<infiniband/urocedv.h>, urocedv(3)).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "uroce.h"

/* urocedv.h */
UROCE_DV_EXPORT int urocedv_is_supported(struct ibv_device *device)
{
	return device && uroce_is_device(device);
}

/* urocedv.h: ibv_create_cq_ex plus the custom-WC layout of attr->wc_flags. */
UROCE_DV_EXPORT struct ibv_cq_ex *urocedv_create_cq_wc(struct ibv_context *context,
						 struct ibv_cq_init_attr_ex *attr,
						 struct urocedv_wc_layout *layout)
{
	struct ibv_cq_ex *ibcq;
	struct uroce_cq *cq;

	if (!attr || !layout)
		return uroce_fail_null(EINVAL);
	if (!context || !uroce_is_device(context->device)) {
		fprintf(stderr, UROCE_LOG_PREFIX "urocedv_create_cq_wc: %s is not a uroce device\n",
			context ? ibv_get_device_name(context->device) : "(no context)");
		return uroce_fail_null(EOPNOTSUPP);
	}
	if (attr->wc_flags & ~UROCEDV_WC_FIELDS) {
		fprintf(stderr, UROCE_LOG_PREFIX "urocedv_create_cq_wc: wc_flags 0x%llx outside "
			"UROCEDV_WC_FIELDS (0x%llx)\n", (unsigned long long)attr->wc_flags,
			(unsigned long long)UROCEDV_WC_FIELDS);
		return uroce_fail_null(EOPNOTSUPP);
	}
	ibcq = ibv_create_cq_ex(context, attr);
	if (!ibcq)
		return NULL;
	cq = to_ucq_ex(ibcq);
	uroce_dv_wc_setup(cq);
	*layout = cq->wc_layout;
	return ibcq;
}
