#!/bin/sh
# traffic_odp: tests/traffic_odp (Check) inside `uroce run`: odp_caps,
# implicit ODP over buffers mapped after registration (300 x 64 KiB WRITE
# and READ), explicit ODP over memory munmapped, remapped and made
# read-only (exact statuses), ibv_advise_mr errors, parent domains with an
# allocator that receives the rings (1000 x 4 KiB SEND).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_odp"
rc=$?
expect_eq "traffic_odp exit status" 0 "$rc"
