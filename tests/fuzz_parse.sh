#!/bin/sh
# Run the libFuzzer harness of the netstack parsers (tests/fuzz_parse.c) for
# FUZZ_SECONDS seconds (default 5, as in `make check`; `make fuzz
# FUZZ_SECONDS=600` runs longer), starting from the committed seed corpus.
# New corpus entries go to a scratch directory that is removed afterwards;
# a crash leaves its input as tests/fuzz-crash-* in the build tree.
set -e
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
secs=${FUZZ_SECONDS:-5}
seed=${FUZZ_SEED:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/uroce-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
exec_status=0
"$top_builddir/tests/fuzz_parse" -max_total_time="$secs" -seed="$seed" -timeout=10 \
	-max_len=8192 -print_final_stats=1 \
	-artifact_prefix="$top_builddir/tests/fuzz-crash-" \
	"$work" "$top_srcdir/tests/fuzz-corpus" || exec_status=$?
exit $exec_status
