/*
 * inspect_print.h - the per-packet output of `uroce inspect`: one text line
 * or one JSON object per RoCE packet.  Formats are specified in
 * docs/inspect.md; tests compare them byte for byte.
 */
#ifndef UROCE_TOOLS_INSPECT_PRINT_H
#define UROCE_TOOLS_INSPECT_PRINT_H

#include <stdio.h>

#include "decode.h"

/* One text line for REC (status OK, BAD_ICRC or MALFORMED; not SKIPPED). */
void insp_print_text(FILE *fp, const struct insp_rec *rec);

/* One JSON object (one line) for REC (not SKIPPED). */
void insp_print_json(FILE *fp, const struct insp_rec *rec);

/*
 * ICRC as the 4 wire bytes read in order (big-endian), e.g. 0x82fd002a for
 * wire bytes 82 fd 00 2a: the form hex dumps and tshark's
 * infiniband.invariant.crc show.  VALUE is the codec's number (icrc.h).
 */
unsigned insp_icrc_display(uint32_t value);

/* Name of an AETH syndrome's type ("ACK", "RNR_NAK", "NAK", "RESERVED"). */
const char *insp_aeth_type(uint8_t syndrome);

/* Name of a NAK code ("PSN_SEQ_ERR", ...), "RESERVED" for 5..31. */
const char *insp_nak_name(uint8_t code);

/* RNR NAK timer code 0..31 as milliseconds text ("655.36", "0.01", ...). IBA Table 45. */
const char *insp_rnr_ms(uint8_t code);

#endif /* UROCE_TOOLS_INSPECT_PRINT_H */
