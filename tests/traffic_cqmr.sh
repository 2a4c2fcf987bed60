#!/bin/sh
# traffic_cqmr: tests/traffic_cqmr (Check) inside `uroce run`: ibv_rereg_mr
# with every flag combination across a real RC connection, ibv_resize_cq
# with CQEs held and under 3000 completions, ibv_modify_cq event
# moderation, IGNORE_OVERRUN, max_inline_data. Cases listed in
# tests/traffic_cqmr.c.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_cqmr"
rc=$?
expect_eq "traffic_cqmr exit status" 0 "$rc"
