#!/bin/sh
# XRC domains at the control socket (tests/daemon_xrcd.c): two processes
# share domains through files, private domains, EAGAIN / EINVAL of
# O_CREAT / O_EXCL, domains freed with their last handle and at disconnect,
# the device limit; the daemon stays up.
. "$top_srcdir/tests/daemon_lib.sh"

start_uroced
mkdir "$D/xrcd"
"$top_builddir/tests/daemon_xrcd" "$SOCK" "$D/xrcd" || fail "XRC domains"
kill -0 "$PID" 2>/dev/null || fail "uroced died"
echo "XRC domains: shared, private, limits"
