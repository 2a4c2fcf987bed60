#!/bin/sh
# traffic_qpex: tests/traffic_qpex (Check) inside `uroce run`: the
# extended post-send API (ibv_wr_*) on RC, UC and UD QPs, its error rules
# and 3000 batches of 64 KiB at MTU 1024 (see traffic_qpex.c).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 600 "$UROCE" run -- "$top_builddir/tests/traffic_qpex"
rc=$?
expect_eq "traffic_qpex exit status" 0 "$rc"
