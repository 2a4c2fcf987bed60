#!/bin/sh
# traffic_tm: tests/traffic_tm (Check) inside `uroce run`: tag matching on
# uroce0 at MTU 1024: caps, list operations, expected / unexpected / no-tag
# / malformed messages, SYNC, rendezvous at 64 KiB, 127 tags. Cases listed
# in tests/traffic_tm.c; docs/tag-matching.md.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_tm"
rc=$?
expect_eq "traffic_tm exit status" 0 "$rc"
