#!/bin/sh
# traffic_ud_robust: tests/traffic_ud_robust.py inside `uroce run`: a UD
# SEND of 2000 bytes into a 1064-byte receive buffer completes that receive
# with IBV_WC_LOC_LEN_ERR, the UD QP stays in RTS and the next SEND arrives
# byte-exact (docs/transport.md, UD receive).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0 --mtu 4096
timeout 60 "$UROCE" run -- /usr/bin/python3 -u "$top_srcdir/tests/traffic_ud_robust.py" >"$T/out" 2>&1
rc=$?
cat "$T/out"
expect_eq "traffic_ud_robust.py exit status" 0 "$rc"
