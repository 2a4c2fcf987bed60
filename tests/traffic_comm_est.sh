#!/bin/sh
# traffic_comm_est: tests/traffic_comm_est (Check) inside `uroce run`: an RC
# QP in RTR gets one IBV_EVENT_COMM_EST on its context's async fd at its
# first packet, and none after (tests/traffic_comm_est.c).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_comm_est"
rc=$?
expect_eq "traffic_comm_est exit status" 0 "$rc"
