#!/bin/sh
# Shared contexts at the control socket (tests/daemon_share.c): a context
# imported with a descriptor of its command file only, PD/MR/DM imports and
# unimports with exact handles, keys and statuses (a foreign file, a stale
# handle, unimport twice, destroy while imported), importers ended with the
# original; the daemon stays up.
. "$top_srcdir/tests/daemon_lib.sh"

start_uroced
"$top_builddir/tests/daemon_share" "$SOCK" || fail "shared contexts"
kill -0 "$PID" 2>/dev/null || fail "uroced died"
grep -q "imported the context of client#" "$D/log" || fail "no import in the log"
echo "shared contexts: imports, refusals, end with the original"
