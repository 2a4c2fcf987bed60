/*
 * rss_table.c - receive WQ indirection tables and the RSS hash: which WQ of
 * an RSS QP's table a frame goes to, and the links that go when a WQ, an
 * RSS QP or a client does (the messages that make them: rss.c).
 */
#include "config.h"
#include "emu/eth/eth_int.h"
#include "emu/obj/client.h"
#include "emu/obj/objects.h"
#include "emu/nic/device.h"

#include <stdlib.h>
#include <string.h>

void rss_table_free(struct rwq_ind_table **pp)
{
	struct rwq_ind_table *t = *pp;

	for (uint32_t i = 0; i < t->size; i++)
		if (t->wqs[i])
			t->wqs[i]->raw->tables--;
	*pp = t->next;
	free(t->wqs);
	free(t);
}

void rss_qp_gone(struct ctl_qp *qp)
{
	struct eth_port *p = qp->owner->dev->eth;

	if (qp->raw->rss) {
		qp->raw->rss->table->users--;
		free(qp->raw->rss);
		qp->raw->rss = NULL;
	}
	/* a WQ destroyed with its client: the tables keep an empty slot */
	if (qp->raw->is_wq && qp->raw->tables && p)
		for (struct rwq_ind_table *t = p->tables; t; t = t->next)
			for (uint32_t i = 0; i < t->size; i++)
				if (t->wqs[i] == qp)
					t->wqs[i] = NULL;
}

void eth_client_gone(struct ctl_client *c)
{
	struct eth_port *p = c->dev->eth;
	struct rwq_ind_table **pp;

	if (!p)
		return;
	counters_client_gone(p, c);
	for (pp = &p->tables; *pp;) {
		if ((*pp)->owner == c) {
			(*pp)->users = 0;
			rss_table_free(pp);
		} else {
			pp = &(*pp)->next;
		}
	}
}

/* The hash input of frame F (decoded in FI) for fields M into IN (36 bytes
 * at most); returns its length. */
static size_t hash_input(const uint8_t *f, const struct frame_info *fi, uint64_t m, uint8_t *in)
{
	size_t n = 0;

	/* the RSS input order: source address, destination address, source
	 * port, destination port (Microsoft RSS; mlx5 the same) */
	if (fi->l3 == FRAME_L3_IPV4) {
		if (m & IBV_RX_HASH_SRC_IPV4)
			memcpy(in + n, f + fi->l3_off + 12, 4), n += 4;
		if (m & IBV_RX_HASH_DST_IPV4)
			memcpy(in + n, f + fi->l3_off + 16, 4), n += 4;
	} else if (fi->l3 == FRAME_L3_IPV6) {
		if (m & IBV_RX_HASH_SRC_IPV6)
			memcpy(in + n, f + fi->l3_off + 8, 16), n += 16;
		if (m & IBV_RX_HASH_DST_IPV6)
			memcpy(in + n, f + fi->l3_off + 24, 16), n += 16;
	}
	if (fi->l4 == FRAME_L4_UDP) {
		if (m & IBV_RX_HASH_SRC_PORT_UDP)
			memcpy(in + n, f + fi->l4_off, 2), n += 2;
		if (m & IBV_RX_HASH_DST_PORT_UDP)
			memcpy(in + n, f + fi->l4_off + 2, 2), n += 2;
	} else if (fi->l4 != FRAME_L4_NONE) {
		if (m & IBV_RX_HASH_SRC_PORT_TCP)
			memcpy(in + n, f + fi->l4_off, 2), n += 2;
		if (m & IBV_RX_HASH_DST_PORT_TCP)
			memcpy(in + n, f + fi->l4_off + 2, 2), n += 2;
	}
	return n;
}

struct ctl_qp *rss_pick(const struct ctl_qp *qp, const uint8_t *f, const struct frame_info *fi)
{
	const struct raw_rss *rss = qp->raw->rss;
	struct frame_info inner;
	uint32_t off, vni;
	uint8_t in[36];
	size_t n = 0;

	/* IBV_RX_HASH_INNER: the fields of the frame a VXLAN frame carries
	 * (mlx5's inner_header_selector); a frame without one hashes nothing */
	if (!(rss->fields & IBV_RX_HASH_INNER))
		n = hash_input(f, fi, rss->fields, in);
	else if (frame_vxlan_inner(f, fi, &inner, &off, &vni))
		n = hash_input(f + off, &inner, rss->fields, in);
	return rss->table->wqs[frame_toeplitz(rss->key, rss->key_len, in, n) & (rss->table->size - 1)];
}
