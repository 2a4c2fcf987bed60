#!/bin/sh
# traffic_rc_pingpong: rdma-core's unmodified ibv_rc_pingpong, server and
# client as two processes on uroce0 (GID 0 = ::ffff:127.0.0.1, RoCE v2):
# plain; -c (the server checks every page); -s 1 MiB over MTU 4096 with -c;
# -e (completion channel); -t (extended CQ with completion timestamps);
# -N (the ibv_wr_* post API) with 64 KiB at MTU 1024 and -c;
# -t -e is traffic_rc_pingpong_ts_events.sh.  Each run: both sides exit 0, print the exact byte and iteration
# counts (bytes = size x iters x 2), and no failure marker.  With -t both
# sides print Max/Min/Average receive completion clock cycles, with
# 0 < Min <= Average <= Max, and the average agrees with
# usec/iter x hca_core_clock(kHz) / 1000 within 25% (one round trip per
# receive) - units, not speed.  Source: docs/clients.md §1.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
. "$top_srcdir/tests/traffic_lib.sh"

run plain 4096 1000
run content 4096 1000 -c
run big 1048576 20 -s 1048576 -m 4096 -c -n 20
run events 4096 1000 -e
run stamps 4096 1000 -t
run new_send 65536 200 -s 65536 -m 1024 -c -n 200 -N
stamps stamps
