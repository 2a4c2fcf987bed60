#!/bin/sh
# traffic_flush_aw: tests/traffic_flush_aw (Check) inside `uroce run`:
# ATOMIC WRITE and FLUSH through ibv_wr_atomic_write / ibv_wr_flush (see
# traffic_flush_aw.c; FLUSH where the verbs.h has it, rdma-core >= 45).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 600 "$UROCE" run -- "$top_builddir/tests/traffic_flush_aw"
rc=$?
expect_eq "traffic_flush_aw exit status" 0 "$rc"
