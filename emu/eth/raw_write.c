/*
 * raw_write.c - a received frame's bytes into a receive WQE's memory, for
 * the plain and the striding receive paths (raw_rx.c, raw_stride.c).
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"
#include "emu/nic/mem_access.h"

/* Writes LEN bytes of DATA at ADDR of LKEY for QP: 0 or IBV_WC_LOC_PROT_ERR. */
enum ibv_wc_status raw_rx_write(struct ctl_qp *qp, uint32_t lkey, uint64_t addr, const uint8_t *data, size_t len)
{
	if (mem_access_qp(qp->owner->dev, qp->pd->pdn, qp->qpn, false, lkey, addr, (void *)data, (uint32_t)len,
			  IBV_ACCESS_LOCAL_WRITE, XPORT_MEM_WRITE) != XPORT_MEM_OK)
		return IBV_WC_LOC_PROT_ERR;
	return IBV_WC_SUCCESS;
}

