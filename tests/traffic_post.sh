#!/bin/sh
# traffic_post: tests/traffic_post (Check) inside `uroce run`: post errors
# (EINVAL before RTS, ENOMEM on a full send queue with *bad_wr at the first
# WR left), inline data without an MR, posting in ERR flushes.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 120 "$UROCE" run -- "$top_builddir/tests/traffic_post"
rc=$?
expect_eq "traffic_post exit status" 0 "$rc"
