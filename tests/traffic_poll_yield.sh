#!/bin/sh
# traffic_poll_yield: the provider yields the CPU while a CQ stays empty
# (provider/poll_yield.h): tests/traffic_poll_yield (Check) inside
# `uroce run` on uroce0 counts its sched_yield calls through the real
# provider: 10 per 640 empty polls by default, none with
# UROCE_POLL_YIELD=0, one per poll with 1, and a completion restarts the
# count.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0 --mtu 1024
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_poll_yield"
rc=$?
expect_eq "traffic_poll_yield exit status" 0 "$rc"
uroce down --dev uroce0 >/dev/null || fail "uroce down"
echo "ok"
