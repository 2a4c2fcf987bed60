#!/bin/sh
# traffic_events: tests/traffic_events (Check) inside `uroce run`: a
# completion event whose CQE the application already polled is skipped on a
# blocking channel (the CQ is re-armed) and delivered on a non-blocking one.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 120 "$UROCE" run -- "$top_builddir/tests/traffic_events"
rc=$?
expect_eq "traffic_events exit status" 0 "$rc"
