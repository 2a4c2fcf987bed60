/*
 * raw_held.c - IBV_WQ_FLAGS_DELAY_DROP (ibv_create_wq(3)): a ConnectX RQ
 * with delay_drop_en does not drop a packet that finds no receive WQE but
 * waits for software to post one. Here a frame for a DELAY_DROP WQ in RDY
 * without a WQE is kept, in order, up to RAW_HELD_MAX frames, and goes into
 * the WQEs the next doorbell (or the next frame) finds; beyond that, or for
 * any other QP, it is dropped and counted (rx_no_wqe). RESET, ERR, clearing
 * the flag and destroying the WQ drop what is held (counted the same way).
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"

#include <stdlib.h>
#include <string.h>

void raw_held_add(struct ctl_qp *qp, const uint8_t *f, size_t len, const struct steer_hit *hit)
{
	struct eth_port *p = qp->owner->dev->eth;
	struct raw_qp *r = qp->raw;
	struct raw_held *h = NULL;

	if (r->is_wq && (r->wq_flags & IBV_WQ_FLAGS_DELAY_DROP) && r->n_held < RAW_HELD_MAX)
		h = malloc(sizeof(*h) + len);
	if (!h) {
		r->rx_dropped++;
		p->st.rx_no_wqe++;
		return;
	}
	h->next = NULL;
	h->has_tag = hit->has_tag;
	h->tag = hit->tag;
	h->len = (uint32_t)len;
	memcpy(h->frame, f, len);
	if (!r->held)
		r->held_tail = &r->held;
	*r->held_tail = h;
	r->held_tail = &h->next;
	r->n_held++;
}

void raw_held_drop(struct ctl_qp *qp)
{
	struct eth_port *p = qp->owner->dev->eth;
	struct raw_qp *r = qp->raw;

	while (r->held) {
		struct raw_held *h = r->held;

		r->held = h->next;
		free(h);
		r->rx_dropped++;
		if (p)
			p->st.rx_no_wqe++;
	}
	r->n_held = 0;
}
