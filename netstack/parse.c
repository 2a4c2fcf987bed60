/*
 * parse.c - decode BTH .. ICRC of one packet, driven by the opcode table.
 *
 * The last 4 bytes are always the ICRC; every header must fit before them,
 * or the packet is truncated "in" that header (one error per header kind).
 * The payload and pad rules are docs/wire-format.md §1.5.  What this layer cannot
 * know (path MTU, PSN windows, QP state) is the transport engine's job.
 */
#include <string.h>

#include "netstack/icrc.h"
#include "netstack/packet.h"
#include "netstack/wire.h"

typedef void (*eth_decode_fn)(const uint8_t *p, struct roce_hdrs *h);

static void dec_rdeth(const uint8_t *p, struct roce_hdrs *h)
{
	h->rdeth_eecn = wire_get24(p + 1);
}

static void dec_deth(const uint8_t *p, struct roce_hdrs *h)
{
	h->deth.qkey = wire_get32(p);
	h->deth.sqpn = wire_get24(p + 5);
}

static void dec_xrceth(const uint8_t *p, struct roce_hdrs *h)
{
	h->xrc_srqn = wire_get24(p + 1);
}

static void dec_feth(const uint8_t *p, struct roce_hdrs *h)
{
	h->feth.sel = (p[3] & ROCE_FETH_SEL_MASK) >> ROCE_FETH_SEL_SHIFT;
	h->feth.plt = p[3] & ROCE_FETH_PLT_MASK;
}

static void dec_reth(const uint8_t *p, struct roce_hdrs *h)
{
	h->reth.va = wire_get64(p);
	h->reth.rkey = wire_get32(p + 8);
	h->reth.dma_len = wire_get32(p + 12);
}

static void dec_atomiceth(const uint8_t *p, struct roce_hdrs *h)
{
	h->atomic.va = wire_get64(p);
	h->atomic.rkey = wire_get32(p + 8);
	h->atomic.swap_add = wire_get64(p + 12);
	h->atomic.compare = wire_get64(p + 20);
}

static void dec_aeth(const uint8_t *p, struct roce_hdrs *h)
{
	h->aeth.syndrome = p[0];
	h->aeth.msn = wire_get24(p + 1);
}

static void dec_atomicacketh(const uint8_t *p, struct roce_hdrs *h)
{
	h->atomic_ack_orig = wire_get64(p);
}

static void dec_immdt(const uint8_t *p, struct roce_hdrs *h)
{
	h->imm = wire_get32(p);
}

static void dec_ieth(const uint8_t *p, struct roce_hdrs *h)
{
	h->ieth_rkey = wire_get32(p);
}

/* Per header kind (enum roce_hdr): size, decoder, error when cut short. */
static const struct {
	uint8_t size;
	uint8_t trunc_err;
	eth_decode_fn decode;
} eth_desc[ROCE_HDR__COUNT] = {
	/* RD opcodes are refused before their headers are looked at */
	[ROCE_HDR_RDETH] = { ROCE_RDETH_LEN, ROCE_E_OPCODE_UNSUPPORTED, dec_rdeth },
	[ROCE_HDR_DETH] = { ROCE_DETH_LEN, ROCE_E_TRUNC_DETH, dec_deth },
	[ROCE_HDR_XRCETH] = { ROCE_XRCETH_LEN, ROCE_E_TRUNC_XRCETH, dec_xrceth },
	[ROCE_HDR_FETH] = { ROCE_FETH_LEN, ROCE_E_TRUNC_FETH, dec_feth },
	[ROCE_HDR_RETH] = { ROCE_RETH_LEN, ROCE_E_TRUNC_RETH, dec_reth },
	[ROCE_HDR_ATOMICETH] = { ROCE_ATOMICETH_LEN, ROCE_E_TRUNC_ATOMICETH, dec_atomiceth },
	[ROCE_HDR_AETH] = { ROCE_AETH_LEN, ROCE_E_TRUNC_AETH, dec_aeth },
	[ROCE_HDR_ATOMICACKETH] = { ROCE_ATOMICACKETH_LEN, ROCE_E_TRUNC_ATOMICACKETH, dec_atomicacketh },
	[ROCE_HDR_IMMDT] = { ROCE_IMMDT_LEN, ROCE_E_TRUNC_IMMDT, dec_immdt },
	[ROCE_HDR_IETH] = { ROCE_IETH_LEN, ROCE_E_TRUNC_IETH, dec_ieth },
};

static void decode_bth(const uint8_t *b, struct roce_hdrs *h)
{
	h->opcode = b[0];
	h->se = b[1] & ROCE_BTH_SE;
	h->mig = b[1] & ROCE_BTH_MIG;
	h->pad = (b[1] & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
	h->tver = b[1] & ROCE_BTH_TVER_MASK;
	h->pkey = wire_get16(b + 2);
	h->fecn = b[4] & ROCE_BTH_FECN;
	h->becn = b[4] & ROCE_BTH_BECN;
	h->resv6 = b[4] & 0x3f;
	h->dqpn = wire_get24(b + 5);
	h->ackreq = b[8] & ROCE_BTH_ACKREQ;
	h->resv7 = b[8] & ROCE_BTH_RESV7_MASK;
	h->psn = wire_get24(b + 9);
}

/* Payload and pad rules for a packet with REST bytes between headers and ICRC. */
static int check_payload(const struct roce_opcode_info *op, unsigned pad, size_t rest)
{
	if (op->flags & ROCE_OPF_CNP) {
		if (rest < ROCE_CNP_PAD_LEN)
			return ROCE_E_TRUNC_CNP;
		if (rest > ROCE_CNP_PAD_LEN)
			return ROCE_E_PAYLOAD_UNEXPECTED;
	}
	if (pad && (op->flags & (ROCE_OPF_PAYLOAD | ROCE_OPF_LAST)) !=
			   (ROCE_OPF_PAYLOAD | ROCE_OPF_LAST))
		return ROCE_E_PAD_UNEXPECTED;
	if (pad > rest)
		return ROCE_E_PAD_TOO_BIG;
	if (rest & 3)
		return ROCE_E_PAD_ALIGN;
	if (!(op->flags & (ROCE_OPF_PAYLOAD | ROCE_OPF_CNP)) && rest)
		return ROCE_E_PAYLOAD_UNEXPECTED;
	if (rest > ROCE_MAX_PAYLOAD)
		return ROCE_E_PAYLOAD_TOO_BIG;
	if ((op->flags & ROCE_OPF_PAYLOAD) && op->fixed_payload >= 0 &&
	    rest - pad != (size_t)op->fixed_payload)
		return ROCE_E_PAYLOAD_LEN;
	return ROCE_OK;
}

int roce_parse_bth(const uint8_t *buf, size_t len, struct roce_pkt *pkt)
{
	const struct roce_opcode_info *op;
	size_t rest;
	int err;

	if (!buf || !pkt)
		return ROCE_E_INVAL;
	memset(&pkt->h, 0, sizeof(pkt->h));
	pkt->op = NULL;
	pkt->bth = buf;
	pkt->roce_len = (uint32_t)(len > UINT32_MAX ? UINT32_MAX : len);
	pkt->payload = NULL;
	pkt->payload_len = 0;
	pkt->icrc_wire = 0;
	if (len < ROCE_BTH_LEN)
		return ROCE_E_TRUNC_BTH;
	decode_bth(buf, &pkt->h);
	if (pkt->h.tver != ROCE_BTH_TVER)
		return ROCE_E_TVER;
	op = roce_opcode_info(pkt->h.opcode);
	pkt->op = op;
	if (!op)
		return ROCE_E_OPCODE_UNKNOWN;
	if (op->flags & ROCE_OPF_UNSUPPORTED)
		return ROCE_E_OPCODE_UNSUPPORTED;

	for (unsigned i = 0; i < ROCE_HDR__COUNT; i++) {
		if (!(op->hdrs & ROCE_HDR_BIT(i)))
			continue;
		if (len < (size_t)op->offset[i] + eth_desc[i].size + ROCE_ICRC_LEN)
			return eth_desc[i].trunc_err;
	}
	if (len < (size_t)op->hdr_len + ROCE_ICRC_LEN)
		return ROCE_E_TRUNC_ICRC;
	rest = len - op->hdr_len - ROCE_ICRC_LEN;
	err = check_payload(op, pkt->h.pad, rest);
	if (err)
		return err;

	for (unsigned i = 0; i < ROCE_HDR__COUNT; i++)
		if (op->hdrs & ROCE_HDR_BIT(i))
			eth_desc[i].decode(buf + op->offset[i], &pkt->h);
	if (op->flags & (ROCE_OPF_PAYLOAD | ROCE_OPF_CNP))
		pkt->payload = buf + op->hdr_len;
	pkt->payload_len = (uint32_t)(rest - pkt->h.pad);
	pkt->icrc_wire = roce_icrc_get(buf + len - ROCE_ICRC_LEN);
	return ROCE_OK;
}
