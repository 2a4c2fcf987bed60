#!/bin/sh
# traffic_hostile: tests/traffic_hostile.py inside `uroce run`: forged RoCEv2
# packets with valid ICRCs at live QPs, junk datagrams, unsolicited responses,
# a duplicate-READ flood, RNR with rnr_retry 0, unmapped registered buffers
# and a CQ overrun, each with exact QP states, completion statuses and async
# events; the daemon keeps serving fresh QPs after each group.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 180 "$UROCE" run -- /usr/bin/python3 -u "$top_srcdir/tests/traffic_hostile.py" "$UROCE_PORT" >"$T/out" 2>&1
rc=$?
cat "$T/out"
expect_eq "traffic_hostile.py exit status" 0 "$rc"
expect_eq "daemon still up after the hostile traffic" 0 "$("$UROCE" status >/dev/null 2>&1; echo $?)"
