/*
 * inspect_check.h - `uroce inspect --check`: follow every RC/UC/UD flow of a
 * capture and report each packet that breaks a transport rule of IBA Vol. 1
 * chapter 9 (the rules as docs/wire-format.md §1.5-§1.6 states them; the
 * rule list with ids and sections is in docs/inspect.md, "Checking the
 * transport rules").
 *
 * A flow is one direction of one QP's traffic (as in flows.h); a request
 * flow and the response flow of the same RC QP pair are joined the first
 * time a response names a PSN the requester sent (or, before that, by
 * matching addresses and UDP source port).  Packets are taken in capture
 * order.  Losses, duplicates and reordering that the requester repairs (a
 * resend of every missing PSN, NAKs answered as the rules say) are legal and
 * only counted; what is never repaired is a finding.
 *
 * Findings are kept and printed sorted by frame number at the end (a gap is
 * known to be unrepaired only when the capture ends).
 */
#ifndef UROCE_TOOLS_INSPECT_CHECK_H
#define UROCE_TOOLS_INSPECT_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "decode.h"

struct insp_check;

/*
 * Make a checker.  PMTU: the path MTU in force, bytes (256, 512, 1024,
 * 2048 or 4096), or 0 to learn it per QP pair from the first packet of a
 * multi-packet message (FIRST/MIDDLE packets carry exactly the PMTU).
 * Returns NULL when out of memory.
 */
struct insp_check *insp_check_new(uint32_t pmtu);

/* Feed the next frame of the capture (any status). */
void insp_check_add(struct insp_check *c, const struct insp_rec *rec);

/*
 * End of the capture: settle what was left open (unrepaired gaps,
 * unanswered NAKs), print every finding sorted by frame and a summary:
 * text "frame N: RULE (IBA §S) FLOW: MESSAGE" lines and one "check:" line,
 * or with JSON one object {"frame","rule","section","flow","message"} per
 * finding and one {"check":{...}} object.  Returns the number of findings.
 */
uint64_t insp_check_finish(struct insp_check *c, FILE *fp, int json);

void insp_check_free(struct insp_check *c);

#endif /* UROCE_TOOLS_INSPECT_CHECK_H */
