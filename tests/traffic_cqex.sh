#!/bin/sh
# traffic_cqex: tests/traffic_cqex (Check) inside `uroce run`: every subset
# of the supported wc_flags under RC SEND / SEND_WITH_IMM / RDMA_WRITE /
# RDMA_WRITE_WITH_IMM / RDMA_READ, UD SEND and error completions, each
# accessor checked exactly (see traffic_cqex.c).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 600 "$UROCE" run -- "$top_builddir/tests/traffic_cqex"
rc=$?
expect_eq "traffic_cqex exit status" 0 "$rc"
