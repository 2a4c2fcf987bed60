#!/bin/sh
# traffic_srq: tests/traffic_srq (Check) inside `uroce run`: shared receive
# queue verbs and errors, two RC QPs (64 KiB messages, MTU 1024) and one UD
# QP sharing one SRQ over 3000 messages, the SRQ limit event, and
# LAST_WQE_REACHED. Cases listed in tests/traffic_srq.c.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_srq"
rc=$?
expect_eq "traffic_srq exit status" 0 "$rc"
