#!/bin/sh
# traffic_rc_pingpong_ts_events: ibv_rc_pingpong -t -e over uroce0: the
# extended CQ with completion timestamps, woken by completion events.
# rc_pingpong treats a completion event with no CQE behind it as fatal
# ("poll CQ failed 2"), so this needs strict event semantics. Checks as in
# traffic_rc_pingpong.sh (exact counts, timestamps in hca_core_clock units).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
. "$top_srcdir/tests/traffic_lib.sh"

run stamps_events 4096 1000 -t -e
stamps stamps_events
