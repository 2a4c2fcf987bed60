/*
 * inspect_fuzz.c - libFuzzer harness of `uroce inspect`'s per-frame path:
 * link-layer framing (every supported link type), RoCE classification, the
 * netstack decode, both printers, the flow table and the transport-rule
 * checker (with its per-flow statistics), the points and pixel columns of
 * the PSN graph with their JSON, on hostile bytes.  Built with
 * $(FUZZ_CC) and ASan/UBSan; run by tests/inspect_fuzz.sh.
 *
 * Input: byte 0 selects the link type (table below), byte 1 bit 0 says the
 * frame was cut by the snapshot length (len = caplen + 100); the rest is
 * the captured frame, in a buffer of exactly its size.
 */
#include "config.h"

#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/inspect/check.h"
#include "tools/inspect/decode.h"
#include "tools/inspect/flows.h"
#include "tools/inspect/print.h"
#include "tools/inspect/psn_json.h"
#include "tools/inspect/psn_plot.h"
#include "tools/inspect/psn_trace.h"

static const int dlts[] = {
	DLT_EN10MB, DLT_RAW, 228 /* IPV4 */, 229 /* IPV6 */, DLT_LINUX_SLL,
	276 /* LINUX_SLL2 */, DLT_NULL, DLT_LOOP, DLT_IEEE802_11 /* unsupported */,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	static struct insp_rec rec;
	static struct insp_flows flows;
	static struct insp_check *chk;
	static struct psn_trace trace;
	uint8_t *frame;
	size_t n;
	int dlt;

	if (size < 2)
		return 0;
	if (!sink)
		sink = fopen("/dev/null", "w");
	if (!chk)
		chk = insp_check_new(data[1] & 2 ? 1024 : 0);
	dlt = dlts[data[0] % (sizeof(dlts) / sizeof(dlts[0]))];
	n = size - 2;
	frame = malloc(n ? n : 1);	/* exact size: ASan sees any overread */
	if (!frame)
		return 0;
	memcpy(frame, data + 2, n);
	insp_decode(dlt, frame, n, (data[1] & 1) ? n + 100 : n, 4791, &rec);
	rec.frame = 1;
	if (rec.status != INSP_SKIPPED && sink) {
		insp_print_text(sink, &rec);
		insp_print_json(sink, &rec);
		insp_flows_add(&flows, &rec);
		if (chk) {
			insp_check_add(chk, &rec);
			psn_trace_add(&trace, chk, &rec);
		}
		if (flows.n >= 64) {
			size_t i;

			for (i = 0; i < trace.n; i++) {
				struct psn_plot p;

				/* a few columns, so that points share them */
				if (psn_plot_build(&p, &trace.v[i], 1 + data[1] % 16) == 0) {
					psn_json(sink, (uint32_t)i + 1, "fuzz", &p);
					psn_plot_free(&p);
				}
			}
			psn_trace_free(&trace);
			insp_flows_print_text(sink, &flows, chk);
			insp_flows_print_json(sink, &flows, chk);
			insp_flows_free(&flows);
			if (chk) {
				insp_check_finish(chk, sink, data[1] & 4);
				insp_check_free(chk);
				chk = NULL;
			}
		}
	}
	free(frame);
	return 0;
}
