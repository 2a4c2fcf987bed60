#!/bin/sh
# traffic_qpex_mw: tests/traffic_qpex_mw (Check) inside `uroce run`: the
# window builders of the extended post API (ibv_wr_bind_mw, ibv_wr_local_inv,
# ibv_wr_send_inv) with bounds, rights, invalidation, batches and aborts
# (see traffic_qpex_mw.c).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_qpex_mw"
rc=$?
expect_eq "traffic_qpex_mw exit status" 0 "$rc"
