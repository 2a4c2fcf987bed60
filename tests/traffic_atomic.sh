#!/bin/sh
# traffic_atomic: tests/traffic_atomic (Check) inside `uroce run`: device
# attributes, CMP_AND_SWP / FETCH_AND_ADD values and completions, the error
# statuses of misaligned, no-access and no-resource atomics, and 2
# processes x 4 QPs x 5000 FETCH_ADDs racing on one word (exact sum, every
# original once).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_atomic"
rc=$?
expect_eq "traffic_atomic exit status" 0 "$rc"
