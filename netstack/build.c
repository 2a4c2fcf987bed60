/*
 * build.c - encode BTH + ETHs + payload + pad (+ an ICRC slot) for one
 * packet, driven by the opcode table; roce_build_udp adds the ICRC for the
 * UDP socket path.  The builder refuses what the parser would reject, so
 * everything it writes parses back to the same values.
 */
#include <string.h>

#include "netstack/icrc.h"
#include "netstack/packet.h"
#include "netstack/wire.h"

typedef void (*eth_encode_fn)(uint8_t *p, const struct roce_hdrs *h);

static void enc_rdeth(uint8_t *p, const struct roce_hdrs *h)
{
	p[0] = 0;
	wire_put24(p + 1, h->rdeth_eecn);
}

static void enc_deth(uint8_t *p, const struct roce_hdrs *h)
{
	wire_put32(p, h->deth.qkey);
	p[4] = 0;
	wire_put24(p + 5, h->deth.sqpn);
}

static void enc_xrceth(uint8_t *p, const struct roce_hdrs *h)
{
	p[0] = 0;
	wire_put24(p + 1, h->xrc_srqn);
}

static void enc_feth(uint8_t *p, const struct roce_hdrs *h)
{
	p[0] = p[1] = p[2] = 0;
	p[3] = (uint8_t)(h->feth.sel << ROCE_FETH_SEL_SHIFT | h->feth.plt);
}

static void enc_reth(uint8_t *p, const struct roce_hdrs *h)
{
	wire_put64(p, h->reth.va);
	wire_put32(p + 8, h->reth.rkey);
	wire_put32(p + 12, h->reth.dma_len);
}

static void enc_atomiceth(uint8_t *p, const struct roce_hdrs *h)
{
	wire_put64(p, h->atomic.va);
	wire_put32(p + 8, h->atomic.rkey);
	wire_put64(p + 12, h->atomic.swap_add);
	wire_put64(p + 20, h->atomic.compare);
}

static void enc_aeth(uint8_t *p, const struct roce_hdrs *h)
{
	p[0] = h->aeth.syndrome;
	wire_put24(p + 1, h->aeth.msn);
}

static void enc_atomicacketh(uint8_t *p, const struct roce_hdrs *h)
{
	wire_put64(p, h->atomic_ack_orig);
}

static void enc_immdt(uint8_t *p, const struct roce_hdrs *h)
{
	wire_put32(p, h->imm);
}

static void enc_ieth(uint8_t *p, const struct roce_hdrs *h)
{
	wire_put32(p, h->ieth_rkey);
}

static const eth_encode_fn eth_encode[ROCE_HDR__COUNT] = {
	[ROCE_HDR_RDETH] = enc_rdeth,
	[ROCE_HDR_DETH] = enc_deth,
	[ROCE_HDR_XRCETH] = enc_xrceth,
	[ROCE_HDR_FETH] = enc_feth,
	[ROCE_HDR_RETH] = enc_reth,
	[ROCE_HDR_ATOMICETH] = enc_atomiceth,
	[ROCE_HDR_AETH] = enc_aeth,
	[ROCE_HDR_ATOMICACKETH] = enc_atomicacketh,
	[ROCE_HDR_IMMDT] = enc_immdt,
	[ROCE_HDR_IETH] = enc_ieth,
};

size_t roce_packet_len(uint8_t opcode, uint32_t payload_len)
{
	const struct roce_opcode_info *op = roce_opcode_info(opcode);

	if (!op)
		return 0;
	/* roce_build_bth writes a CNP's 16 reserved bytes even when LEN is 0 */
	if ((op->flags & ROCE_OPF_CNP) && payload_len == 0)
		payload_len = ROCE_CNP_PAD_LEN;
	return (size_t)op->hdr_len + payload_len + ((-payload_len) & 3u) + ROCE_ICRC_LEN;
}

/* Field ranges (24-bit numbers, reserved bits) of the headers OP carries. */
static int check_fields(const struct roce_opcode_info *op, const struct roce_hdrs *h)
{
	if (h->dqpn > ROCE_QPN_MASK || h->psn > ROCE_PSN_MASK || h->tver > ROCE_BTH_TVER_MASK ||
	    h->resv6 > 0x3f || h->resv7 > ROCE_BTH_RESV7_MASK)
		return ROCE_E_INVAL;
	if ((op->hdrs & ROCE_HDR_BIT(ROCE_HDR_AETH)) && h->aeth.msn > ROCE_AETH_MSN_MASK)
		return ROCE_E_INVAL;
	if ((op->hdrs & ROCE_HDR_BIT(ROCE_HDR_DETH)) && h->deth.sqpn > ROCE_QPN_MASK)
		return ROCE_E_INVAL;
	if ((op->hdrs & ROCE_HDR_BIT(ROCE_HDR_XRCETH)) && h->xrc_srqn > ROCE_QPN_MASK)
		return ROCE_E_INVAL;
	if ((op->hdrs & ROCE_HDR_BIT(ROCE_HDR_FETH)) && (h->feth.sel > 3 || h->feth.plt > 15))
		return ROCE_E_INVAL;
	return ROCE_OK;
}

/* Length rules (mirror of parse.c check_payload); *pad receives PadCnt. */
static int check_len(const struct roce_opcode_info *op, uint32_t len, unsigned *pad)
{
	*pad = (-len) & 3u;
	if (op->flags & ROCE_OPF_CNP)
		return len == 0 || len == ROCE_CNP_PAD_LEN ? ROCE_OK : ROCE_E_PAYLOAD_LEN;
	if (!(op->flags & ROCE_OPF_PAYLOAD))
		return len ? ROCE_E_PAYLOAD_UNEXPECTED : ROCE_OK;
	if (len > ROCE_MAX_PAYLOAD)
		return ROCE_E_PAYLOAD_TOO_BIG;
	if (op->fixed_payload >= 0 && len != (uint32_t)op->fixed_payload)
		return ROCE_E_PAYLOAD_LEN;
	if (*pad && !(op->flags & ROCE_OPF_LAST))
		return ROCE_E_PAD_UNEXPECTED; /* FIRST/MIDDLE carry whole MTUs */
	return ROCE_OK;
}

int roce_build_bth(uint8_t *buf, size_t cap, const struct roce_hdrs *h, const void *payload,
		   uint32_t len, size_t *out_len)
{
	const struct roce_opcode_info *op;
	unsigned pad;
	size_t total;
	int err;

	if (!buf || !h || !out_len || (len && !payload && !(h->opcode == ROCE_OP_CNP)))
		return ROCE_E_INVAL;
	op = roce_opcode_info(h->opcode);
	if (!op)
		return ROCE_E_OPCODE_UNKNOWN;
	if (op->flags & ROCE_OPF_UNSUPPORTED)
		return ROCE_E_OPCODE_UNSUPPORTED;
	err = check_fields(op, h);
	if (err)
		return err;
	err = check_len(op, len, &pad);
	if (err)
		return err;
	if (op->flags & ROCE_OPF_CNP)
		len = ROCE_CNP_PAD_LEN; /* 0 means: the 16 reserved bytes, zeroed */
	total = (size_t)op->hdr_len + len + pad + ROCE_ICRC_LEN;
	if (cap < total)
		return ROCE_E_NOSPC;

	buf[0] = h->opcode;
	buf[1] = (uint8_t)((h->se ? ROCE_BTH_SE : 0) | (h->mig ? ROCE_BTH_MIG : 0) |
			   pad << ROCE_BTH_PAD_SHIFT | h->tver);
	wire_put16(buf + 2, h->pkey);
	buf[4] = (uint8_t)((h->fecn ? ROCE_BTH_FECN : 0) | (h->becn ? ROCE_BTH_BECN : 0) | h->resv6);
	wire_put24(buf + 5, h->dqpn);
	buf[8] = (uint8_t)((h->ackreq ? ROCE_BTH_ACKREQ : 0) | h->resv7);
	wire_put24(buf + 9, h->psn);
	for (unsigned i = 0; i < ROCE_HDR__COUNT; i++)
		if (op->hdrs & ROCE_HDR_BIT(i))
			eth_encode[i](buf + op->offset[i], h);
	if (payload && len) {
		if (payload != buf + op->hdr_len)
			memmove(buf + op->hdr_len, payload, len);
	} else if (len) {
		memset(buf + op->hdr_len, 0, len);
	}
	memset(buf + op->hdr_len + len, 0, pad + ROCE_ICRC_LEN);
	*out_len = total;
	return ROCE_OK;
}

int roce_build_udp(uint8_t *buf, size_t cap, const struct roce_l3 *l3, const struct roce_hdrs *h,
		   const void *payload, uint32_t len, size_t *out_len)
{
	size_t n;
	uint32_t crc;
	int err;

	if (!l3 || !out_len || (l3->kind != ROCE_L3_IPV4 && l3->kind != ROCE_L3_IPV6))
		return ROCE_E_INVAL;
	err = roce_build_bth(buf, cap, h, payload, len, &n);
	if (err)
		return err;
	err = roce_icrc_udp(buf, n, l3, &crc);
	if (err)
		return err;
	roce_icrc_put(buf + n - ROCE_ICRC_LEN, crc);
	*out_len = n;
	return ROCE_OK;
}
