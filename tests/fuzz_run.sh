#!/bin/sh
# fuzz_run.sh HARNESS CORPUS MAX_LEN [DEFAULT_SECONDS]: run the libFuzzer
# harness tests/HARNESS of the build tree for FUZZ_SECONDS seconds (default
# DEFAULT_SECONDS, 5) with seed FUZZ_SEED (default 1) and a per-input
# limit of FUZZ_TIMEOUT seconds (default 10; raise it on a loaded machine,
# where a starved input can exceed it without hanging), starting from the
# committed seed corpus tests/CORPUS of the source tree, inputs of at most
# MAX_LEN bytes. New corpus entries go to a scratch directory removed
# afterwards; a failing input is left as tests/HARNESS-crash-* in the build
# tree. Exit status: the harness's; a crash, leak or timeout is 1 (libFuzzer's
# own default for them, 77, is automake's SKIP).
set -e
harness=$1 corpus=$2 max_len=$3
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
secs=${FUZZ_SECONDS:-${4:-5}}
seed=${FUZZ_SEED:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/uroce-$harness.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
exec_status=0
"$top_builddir/tests/$harness" -max_total_time="$secs" -seed="$seed" -timeout="${FUZZ_TIMEOUT:-10}" \
	-max_len="$max_len" -print_final_stats=1 -error_exitcode=1 -timeout_exitcode=1 \
	-artifact_prefix="$top_builddir/tests/$harness-crash-" \
	"$work" "$top_srcdir/tests/$corpus" || exec_status=$?
exit $exec_status
