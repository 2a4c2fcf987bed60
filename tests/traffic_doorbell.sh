#!/bin/sh
# traffic_doorbell: tests/traffic_doorbell (Check) inside `uroce run`: two
# threads of one context, then two processes, post bursts of SENDs and
# receives while the daemon sleeps and wakes; every WQE completes with the
# exact bytes (abi_ring.h "Doorbell suppression": no lost wake-up).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_doorbell"
rc=$?
expect_eq "traffic_doorbell exit status" 0 "$rc"
