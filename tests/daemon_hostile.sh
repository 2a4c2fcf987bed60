#!/bin/sh
# Hostile-client test: malformed, truncated, oversized, wrong-opcode,
# wrong-handle, out-of-range and descriptor-less control messages each get
# their exact errno, the daemon keeps running and serves a good client, and
# every object is gone once the clients close (tests/hostile_client.c).
. "$top_srcdir/tests/daemon_lib.sh"

start_uroced
"$top_builddir/tests/hostile_client" "$SOCK" || fail "hostile_client reported failures"
kill -0 "$PID" 2>/dev/null || fail "uroced died"
t=$(totals) || fail "status failed after the hostile client"
[ "$t" = "totals clients=0 pd=0 mr=0 cq=0 qp=0 ah=0" ] || fail "expected all-zero totals, got: $t"
echo "daemon alive, $t"
