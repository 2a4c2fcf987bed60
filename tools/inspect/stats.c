/*
 * inspect_stats.c - counting and the end-of-run summary (see inspect_stats.h).
 */
#include "config.h"

#include "stats.h"

#include <inttypes.h>

#include "json.h"

void insp_stats_add(struct insp_stats *s, const struct insp_rec *r)
{
	s->packets++;
	if (r->version == 2)
		s->rocev2++;
	else if (r->version == 1)
		s->rocev1++;
	switch (r->status) {
	case INSP_SKIPPED:
		s->non_roce++;
		break;
	case INSP_OK:
		s->by_opcode[r->pkt.h.opcode]++;
		break;
	case INSP_BAD_ICRC:
		s->bad_icrc++;
		s->by_opcode[r->pkt.h.opcode]++;
		break;
	case INSP_MALFORMED:
		s->malformed++;
		if (r->err >= 0 && r->err < INSP_E__END)
			s->by_err[r->err]++;
		break;
	}
}

int insp_stats_failed(const struct insp_stats *s)
{
	return s->malformed || s->bad_icrc;
}

void insp_stats_print_text(FILE *fp, const struct insp_stats *s)
{
	const char *sep = "";
	unsigned i;

	fprintf(fp, "summary: %" PRIu64 " packets, RoCEv2 %" PRIu64 ", RoCEv1 %" PRIu64
		", non-RoCE skipped %" PRIu64 ", malformed %" PRIu64 ", bad ICRC %" PRIu64 "\n",
		s->packets, s->rocev2, s->rocev1, s->non_roce, s->malformed, s->bad_icrc);
	fputs("opcodes:", fp);
	for (i = 0; i < 256; i++) {
		if (!s->by_opcode[i])
			continue;
		fprintf(fp, "%s %s %" PRIu64, sep, roce_opcode_name((uint8_t)i), s->by_opcode[i]);
		sep = ",";
	}
	fputs(*sep ? "\n" : " none\n", fp);
	sep = "";
	fputs("errors:", fp);
	for (i = 0; i < INSP_E__END; i++) {
		if (!s->by_err[i])
			continue;
		fprintf(fp, "%s %s %" PRIu64, sep, insp_err_name((int)i), s->by_err[i]);
		sep = ",";
	}
	fputs(*sep ? "\n" : " none\n", fp);
}

void insp_stats_print_json(FILE *fp, const struct insp_stats *s)
{
	struct jsonw j;
	unsigned i;

	jsonw_begin(&j, fp);
	jsonw_obj(&j, "summary");
	jsonw_u64(&j, "packets", s->packets);
	jsonw_u64(&j, "roce", s->rocev2 + s->rocev1);
	jsonw_u64(&j, "rocev2", s->rocev2);
	jsonw_u64(&j, "rocev1", s->rocev1);
	jsonw_u64(&j, "non_roce", s->non_roce);
	jsonw_u64(&j, "malformed", s->malformed);
	jsonw_u64(&j, "bad_icrc", s->bad_icrc);
	jsonw_obj(&j, "opcodes");
	for (i = 0; i < 256; i++)
		if (s->by_opcode[i])
			jsonw_u64(&j, roce_opcode_name((uint8_t)i), s->by_opcode[i]);
	jsonw_obj_end(&j);
	jsonw_obj(&j, "errors");
	for (i = 0; i < INSP_E__END; i++)
		if (s->by_err[i])
			jsonw_u64(&j, insp_err_name((int)i), s->by_err[i]);
	jsonw_obj_end(&j);
	jsonw_end(&j);
}
