#!/bin/sh
# traffic_bad_wqe: tests/traffic_bad_wqe (Check) inside `uroce run`: atomics
# whose local data is not one 8-byte SGE (EINVAL from ibv_post_send and
# ibv_wr_complete; LOC_LEN_ERR when written straight into the SQ ring, the
# buffer untouched), and malformed send and receive WQEs followed by valid
# ones: the malformed one completes in error, every later one flushes, none
# is stranded. The daemon is still up at the end.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_bad_wqe"
rc=$?
expect_eq "traffic_bad_wqe exit status" 0 "$rc"
uroce status >"$T/status" 2>&1 || { cat "$T/status"; fail "uroce status"; }
grep -q '^== uroce0: up, ' "$T/status" || { cat "$T/status"; fail "daemon still serving uroce0"; }
echo "ok: uroce0 still up"
