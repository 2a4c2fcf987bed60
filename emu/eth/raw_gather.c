/*
 * raw_gather.c - the bytes of a raw packet QP's send WQE (eth_int.h): its
 * inline data or its SGEs read through the QP's PD.
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_access.h"

#include <string.h>

uint32_t raw_gather(struct ctl_qp *qp, const struct xport_send_wqe *w, uint8_t *buf, uint32_t cap,
		    uint32_t min, enum ibv_wc_status *st)
{
	struct uroce_dev *d = qp->owner->dev;
	uint64_t total = 0;

	if (w->send_flags & IBV_SEND_INLINE) {
		total = w->inline_len;
		if (total > cap) {
			*st = IBV_WC_LOC_LEN_ERR;
			return 0;
		}
		memcpy(buf, w->inline_data, w->inline_len);
		return (uint32_t)total;
	}
	for (uint32_t i = 0; i < w->num_sge; i++)
		total += w->sg_list[i].length;
	if (total > cap || total < min) {
		*st = IBV_WC_LOC_LEN_ERR;
		return 0;
	}
	total = 0;
	for (uint32_t i = 0; i < w->num_sge; i++) {
		const struct ibv_sge *s = &w->sg_list[i];

		if (mem_access_qp(d, qp->pd->pdn, qp->qpn, false, s->lkey, s->addr, buf + total, s->length,
				  0, XPORT_MEM_READ) != XPORT_MEM_OK) {
			*st = IBV_WC_LOC_PROT_ERR;
			return 0;
		}
		total += s->length;
	}
	return (uint32_t)total;
}
