#!/bin/sh
# traffic_wq: the receive WQ flags (CVLAN stripping, scatter FCS, delay
# drop) and the striding RQ of urocedv(3) on uroce0 with no VXLAN segment:
# tests/traffic_wq (Check) sends frames from a raw QP to the device's own
# MAC and checks every byte and completion field (docs/raw-packet.md §5).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0 --vxlan-port 0
TRAFFIC_WQ_STATUS="$UROCE status --dev uroce0" timeout 600 "$UROCE" run -- "$top_builddir/tests/traffic_wq"
rc=$?
expect_eq "traffic_wq exit status" 0 "$rc"
