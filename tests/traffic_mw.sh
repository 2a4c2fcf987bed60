#!/bin/sh
# traffic_mw: tests/traffic_mw (Check) inside `uroce run`: memory windows of
# type 1 and 2 (bind, RDMA WRITE/READ/atomic through their rkeys byte-exact,
# bounds and rights, unbind, LOCAL_INV, SEND_WITH_INV, dealloc, bind errors,
# 1000 bind/write/invalidate cycles).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_mw"
rc=$?
expect_eq "traffic_mw exit status" 0 "$rc"
