#!/bin/sh
# Run the libFuzzer harness of the daemon's control protocol
# (tests/fuzz_ctl.c) for FUZZ_SECONDS seconds (default 10, as in `make
# check`; `make fuzz-ctl FUZZ_SECONDS=3600` runs longer), starting from the
# committed seed corpus (tests/fuzz-ctl-corpus: a verbs client's whole life,
# HELLO to DESTROY, and each admin request). New corpus entries go to a
# scratch directory that is removed afterwards; a crash, a leak after close
# or a wrong reply leaves its input as tests/fuzz-ctl-crash-* in the build tree.
set -e
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
secs=${FUZZ_SECONDS:-10}
seed=${FUZZ_SEED:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/uroce-fuzz-ctl.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
exec_status=0
"$top_builddir/tests/fuzz_ctl" -max_total_time="$secs" -seed="$seed" -timeout=10 \
	-max_len=4096 -print_final_stats=1 \
	-artifact_prefix="$top_builddir/tests/fuzz-ctl-crash-" \
	"$work" "$top_srcdir/tests/fuzz-ctl-corpus" || exec_status=$?
exit $exec_status
