#!/bin/sh
# Run the libFuzzer harness of `uroce inspect` (tests/inspect_fuzz.c) for
# FUZZ_SECONDS seconds (default 3 in `make check`; `make fuzz-inspect
# FUZZ_SECONDS=600` runs longer).  The seed corpus is made here from the
# frames of tests/data/sample.pcap, each under every link-type selector that
# fits it (Ethernet as is; raw IP without the Ethernet header).  A crash
# leaves its input as tests/inspect-fuzz-crash-* in the build tree.
set -e
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
secs=${FUZZ_SECONDS:-3}
seed=${FUZZ_SEED:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/uroce-inspect-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/corpus" "$work/new"
"${PYTHON3:-python3}" - "$top_srcdir/tests/data/sample.pcap" "$work/corpus" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
off, n = 24, 0
while off < len(data):
    caplen = struct.unpack("<I", data[off + 8:off + 12])[0]
    frame = data[off + 16:off + 16 + caplen]
    off += 16 + caplen
    for sel, body in ((0, frame), (1, frame[14:])):
        open("%s/f%02d-%d" % (sys.argv[2], n, sel), "wb").write(bytes([sel, 0]) + body)
    n += 1
PY
status=0
"$top_builddir/tests/inspect_fuzz" -max_total_time="$secs" -seed="$seed" -timeout="${FUZZ_TIMEOUT:-10}" \
	-max_len=9000 -print_final_stats=1 \
	-artifact_prefix="$top_builddir/tests/inspect-fuzz-crash-" \
	"$work/new" "$work/corpus" || status=$?
exit $status
