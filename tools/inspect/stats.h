/*
 * inspect_stats.h - the counters of one `uroce inspect` run and the summary
 * printed at its end (text or JSON; formats in docs/inspect.md).
 */
#ifndef UROCE_TOOLS_INSPECT_STATS_H
#define UROCE_TOOLS_INSPECT_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "decode.h"

struct insp_stats {
	uint64_t packets;		/* frames read from the file */
	uint64_t rocev2, rocev1;	/* RoCE frames (any status but SKIPPED), by version */
	uint64_t non_roce;		/* SKIPPED */
	uint64_t malformed;		/* MALFORMED (includes broken link headers, version 0) */
	uint64_t bad_icrc;		/* BAD_ICRC */
	uint64_t by_opcode[256];	/* fully decoded packets (OK or BAD_ICRC) by BTH opcode */
	uint64_t by_err[INSP_E__END];	/* MALFORMED packets by error number */
};

/* Count REC into S. */
void insp_stats_add(struct insp_stats *s, const struct insp_rec *rec);

/* Whether the run found a problem (exit status 1): malformed or bad ICRC. */
int insp_stats_failed(const struct insp_stats *s);

/* The summary: three text lines, or one JSON object {"summary":{...}}. */
void insp_stats_print_text(FILE *fp, const struct insp_stats *s);
void insp_stats_print_json(FILE *fp, const struct insp_stats *s);

#endif /* UROCE_TOOLS_INSPECT_STATS_H */
