/*
 * inspect_print.c - text and JSON lines for one RoCE packet (see
 * inspect_print.h; formats in docs/inspect.md).  Headers are printed in the
 * order the packet carries them, driven by the opcode table's header mask.
 */
#include "config.h"

#include "print.h"

#include <inttypes.h>

#include "json.h"

/* IBA Table 45 (docs/wire-format.md §1.3). */
static const char *const rnr_ms[32] = {
	"655.36", "0.01", "0.02", "0.03", "0.04", "0.06", "0.08", "0.12",
	"0.16", "0.24", "0.32", "0.48", "0.64", "0.96", "1.28", "1.92",
	"2.56", "3.84", "5.12", "7.68", "10.24", "15.36", "20.48", "30.72",
	"40.96", "61.44", "81.92", "122.88", "163.84", "245.76", "327.68", "491.52",
};

static const char *const nak_names[] = {
	[ROCE_NAK_PSN_SEQ_ERR] = "PSN_SEQ_ERR",
	[ROCE_NAK_INVALID_REQ] = "INVALID_REQ",
	[ROCE_NAK_REM_ACCESS_ERR] = "REM_ACCESS_ERR",
	[ROCE_NAK_REM_OP_ERR] = "REM_OP_ERR",
	[ROCE_NAK_INVALID_RD_REQ] = "INVALID_RD_REQ",
};

unsigned insp_icrc_display(uint32_t v)
{
	return (v & 0xFFu) << 24 | (v & 0xFF00u) << 8 | (v >> 8 & 0xFF00u) | v >> 24;
}

const char *insp_aeth_type(uint8_t syn)
{
	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		return "ACK";
	case ROCE_AETH_RNR_NAK:
		return "RNR_NAK";
	case ROCE_AETH_NAK:
		return "NAK";
	default:
		return "RESERVED";
	}
}

const char *insp_nak_name(uint8_t code)
{
	if (code < sizeof(nak_names) / sizeof(nak_names[0]))
		return nak_names[code];
	return "RESERVED";
}

const char *insp_rnr_ms(uint8_t code)
{
	return rnr_ms[code & 0x1F];
}

static int has(const struct insp_rec *r, enum roce_hdr h)
{
	return r->have_all && r->pkt.op && (r->pkt.op->hdrs & ROCE_HDR_BIT(h));
}

/* "RoCEv2 vlan 100 10.0.0.1:49152 > 10.0.0.2:4791" */
static void text_where(FILE *fp, const struct insp_rec *r)
{
	unsigned i;

	if (!r->version) {
		/* a frame too broken to say what it is */
		fprintf(fp, "%" PRIu64 " -", r->frame);
		return;
	}
	fprintf(fp, "%" PRIu64 " RoCEv%d", r->frame, r->version);
	if (r->link.nvlan) {
		fputs(" vlan ", fp);
		for (i = 0; i < r->link.nvlan && i < LINK_MAX_VLANS; i++)
			fprintf(fp, "%s%u", i ? "." : "", r->link.vlan[i]);
	}
	if (!r->have_addr)
		fputs(" ? > ?", fp);
	else if (r->version == 2 && r->link.kind == LINK_IPV6)
		fprintf(fp, " [%s]:%u > [%s]:%u", r->src, r->sport, r->dst, r->dport);
	else if (r->version == 2)
		fprintf(fp, " %s:%u > %s:%u", r->src, r->sport, r->dst, r->dport);
	else
		fprintf(fp, " %s > %s", r->src, r->dst);
}

static void text_aeth(FILE *fp, const struct roce_hdrs *h)
{
	uint8_t syn = h->aeth.syndrome, val = syn & ROCE_AETH_VALUE_MASK;

	fprintf(fp, " aeth %s", insp_aeth_type(syn));
	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		fprintf(fp, " credit %u", val);
		break;
	case ROCE_AETH_RNR_NAK:
		fprintf(fp, " timer %u (%s ms)", val, insp_rnr_ms(val));
		break;
	case ROCE_AETH_NAK:
		fprintf(fp, " %s", insp_nak_name(val));
		break;
	default:
		fprintf(fp, " value %u", val);
		break;
	}
	fprintf(fp, " msn %" PRIu32, h->aeth.msn);
}

static void text_flags(FILE *fp, const struct roce_hdrs *h)
{
	const char *sep = " flags ";
	const struct {
		int on;
		const char *name;
	} f[] = {
		{ h->se, "SE" }, { h->mig, "M" }, { h->ackreq, "A" },
		{ h->fecn, "FECN" }, { h->becn, "BECN" },
	};
	unsigned i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (!f[i].on)
			continue;
		fprintf(fp, "%s%s", sep, f[i].name);
		sep = ",";
	}
	if (*sep == ' ')
		fputs(" flags -", fp);
}

void insp_print_text(FILE *fp, const struct insp_rec *r)
{
	const struct roce_hdrs *h = &r->pkt.h;

	text_where(fp, r);
	if (r->have_bth) {
		fprintf(fp, " %s dqpn 0x%06" PRIx32 " psn %" PRIu32,
			roce_opcode_name(h->opcode), h->dqpn, h->psn);
		if (h->pkey != ROCE_DEFAULT_PKEY)
			fprintf(fp, " pkey 0x%04x", h->pkey);
	}
	if (r->status == INSP_MALFORMED) {
		fprintf(fp, " MALFORMED %s: %s\n", insp_err_name(r->err), insp_err_message(r->err));
		return;
	}
	if (has(r, ROCE_HDR_DETH))
		fprintf(fp, " deth qkey 0x%08" PRIx32 " srcqp 0x%06" PRIx32, h->deth.qkey, h->deth.sqpn);
	if (has(r, ROCE_HDR_XRCETH))
		fprintf(fp, " xrc_srqn 0x%06" PRIx32, h->xrc_srqn);
	if (has(r, ROCE_HDR_FETH))	/* FLUSH: selectivity level, placement type */
		fprintf(fp, " feth sel %u plt %u", h->feth.sel, h->feth.plt);
	if (has(r, ROCE_HDR_RETH))
		fprintf(fp, " reth va 0x%016" PRIx64 " rkey 0x%08" PRIx32 " len %" PRIu32,
			h->reth.va, h->reth.rkey, h->reth.dma_len);
	if (has(r, ROCE_HDR_ATOMICETH))
		fprintf(fp, " atomic va 0x%016" PRIx64 " rkey 0x%08" PRIx32
			" swap_add 0x%016" PRIx64 " compare 0x%016" PRIx64,
			h->atomic.va, h->atomic.rkey, h->atomic.swap_add, h->atomic.compare);
	if (has(r, ROCE_HDR_AETH))
		text_aeth(fp, h);
	if (has(r, ROCE_HDR_ATOMICACKETH))
		fprintf(fp, " orig 0x%016" PRIx64, h->atomic_ack_orig);
	if (has(r, ROCE_HDR_IMMDT))
		fprintf(fp, " imm 0x%08" PRIx32, h->imm);
	if (has(r, ROCE_HDR_IETH))
		fprintf(fp, " ieth rkey 0x%08" PRIx32, h->ieth_rkey);
	fprintf(fp, " payload %" PRIu32 " pad %u", r->pkt.payload_len, h->pad);
	text_flags(fp, h);
	if (r->status == INSP_OK)
		fputs(" ICRC ok\n", fp);
	else
		fprintf(fp, " ICRC BAD(expected %08x, got %08x)\n",
			insp_icrc_display(r->pkt.icrc_calc), insp_icrc_display(r->pkt.icrc_wire));
}

static const char *status_name(enum insp_status s)
{
	switch (s) {
	case INSP_OK:
		return "ok";
	case INSP_BAD_ICRC:
		return "bad_icrc";
	case INSP_MALFORMED:
		return "malformed";
	default:
		return "skipped";
	}
}

static void json_aeth(struct jsonw *j, const struct roce_hdrs *h)
{
	uint8_t syn = h->aeth.syndrome, val = syn & ROCE_AETH_VALUE_MASK;

	jsonw_obj(j, "aeth");
	jsonw_u64(j, "syndrome", syn);
	jsonw_str(j, "type", insp_aeth_type(syn));
	switch (syn & ROCE_AETH_TYPE_MASK) {
	case ROCE_AETH_ACK:
		jsonw_u64(j, "credit_count", val);
		break;
	case ROCE_AETH_RNR_NAK:
		jsonw_u64(j, "timer", val);
		jsonw_str(j, "timer_ms", insp_rnr_ms(val));
		break;
	case ROCE_AETH_NAK:
		jsonw_u64(j, "error_code", val);
		jsonw_str(j, "error", insp_nak_name(val));
		break;
	default:
		break;
	}
	jsonw_u64(j, "msn", h->aeth.msn);
	jsonw_obj_end(j);
}

void insp_print_json(FILE *fp, const struct insp_rec *r)
{
	const struct roce_hdrs *h = &r->pkt.h;
	struct jsonw j;
	char ts[40];

	jsonw_begin(&j, fp);
	jsonw_u64(&j, "frame", r->frame);
	snprintf(ts, sizeof(ts), "%" PRId64 ".%09ld", r->ts_sec, r->ts_nsec);
	jsonw_str(&j, "time", ts);
	jsonw_str(&j, "status", status_name(r->status));
	jsonw_u64(&j, "version", (uint64_t)r->version);
	if (r->link.nvlan)
		jsonw_u16_array(&j, "vlan", r->link.vlan,
				r->link.nvlan < LINK_MAX_VLANS ? r->link.nvlan : LINK_MAX_VLANS);
	if (r->have_addr) {
		jsonw_str(&j, "src", r->src);
		jsonw_str(&j, "dst", r->dst);
		if (r->version == 2) {
			jsonw_u64(&j, "sport", r->sport);
			jsonw_u64(&j, "dport", r->dport);
		}
	}
	if (r->status == INSP_MALFORMED) {
		jsonw_str(&j, "error", insp_err_name(r->err));
		jsonw_str(&j, "message", insp_err_message(r->err));
	}
	if (r->have_bth) {
		jsonw_u64(&j, "opcode", h->opcode);
		jsonw_str(&j, "opcode_name", roce_opcode_name(h->opcode));
		jsonw_u64(&j, "destqp", h->dqpn);
		jsonw_u64(&j, "psn", h->psn);
		jsonw_u64(&j, "p_key", h->pkey);
		jsonw_bool(&j, "se", h->se);
		jsonw_bool(&j, "m", h->mig);
		jsonw_u64(&j, "padcnt", h->pad);
		jsonw_u64(&j, "tver", h->tver);
		jsonw_bool(&j, "fecn", h->fecn);
		jsonw_bool(&j, "becn", h->becn);
		jsonw_bool(&j, "a", h->ackreq);
	}
	if (!r->have_all) {
		jsonw_end(&j);
		return;
	}
	if (has(r, ROCE_HDR_DETH)) {
		jsonw_obj(&j, "deth");
		jsonw_u64(&j, "q_key", h->deth.qkey);
		jsonw_u64(&j, "srcqp", h->deth.sqpn);
		jsonw_obj_end(&j);
	}
	if (has(r, ROCE_HDR_XRCETH)) {
		jsonw_obj(&j, "xrceth");
		jsonw_u64(&j, "xrc_srqn", h->xrc_srqn);
		jsonw_obj_end(&j);
	}
	if (has(r, ROCE_HDR_FETH)) {
		jsonw_obj(&j, "feth");
		jsonw_u64(&j, "sel", h->feth.sel);
		jsonw_u64(&j, "plt", h->feth.plt);
		jsonw_obj_end(&j);
	}
	if (has(r, ROCE_HDR_RETH)) {
		jsonw_obj(&j, "reth");
		jsonw_u64(&j, "va", h->reth.va);
		jsonw_u64(&j, "r_key", h->reth.rkey);
		jsonw_u64(&j, "dmalen", h->reth.dma_len);
		jsonw_obj_end(&j);
	}
	if (has(r, ROCE_HDR_ATOMICETH)) {
		jsonw_obj(&j, "atomiceth");
		jsonw_u64(&j, "va", h->atomic.va);
		jsonw_u64(&j, "r_key", h->atomic.rkey);
		jsonw_u64(&j, "swapdt", h->atomic.swap_add);
		jsonw_u64(&j, "cmpdt", h->atomic.compare);
		jsonw_obj_end(&j);
	}
	if (has(r, ROCE_HDR_AETH))
		json_aeth(&j, h);
	if (has(r, ROCE_HDR_ATOMICACKETH)) {
		jsonw_obj(&j, "atomicacketh");
		jsonw_u64(&j, "origremdt", h->atomic_ack_orig);
		jsonw_obj_end(&j);
	}
	if (has(r, ROCE_HDR_IMMDT))
		jsonw_u64(&j, "immdt", h->imm);
	if (has(r, ROCE_HDR_IETH))
		jsonw_u64(&j, "ieth", h->ieth_rkey);
	jsonw_u64(&j, "payload_len", r->pkt.payload_len);
	jsonw_hex(&j, "icrc", insp_icrc_display(r->pkt.icrc_wire), 8);
	jsonw_hex(&j, "icrc_expected", insp_icrc_display(r->pkt.icrc_calc), 8);
	jsonw_bool(&j, "icrc_ok", r->pkt.icrc_ok);
	jsonw_end(&j);
}
