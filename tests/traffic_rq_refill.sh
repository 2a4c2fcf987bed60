#!/bin/sh
# traffic_rq_refill: tests/traffic_rq_refill (Check) inside `uroce run`: a
# client writes malformed receive WQEs into its own RQ ring without a
# doorbell; the daemon finds each when a SEND (RC) or datagram (UD) arrives.
# Exact statuses for both sides, the hostile QP in ERR, a clean pair after
# every row. Meanwhile another client, rdma-core's ibv_rc_pingpong (4096
# bytes x 500 iterations), runs to its exact counts, and the daemon is
# still up at the end.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
(pingpong other ibv_rc_pingpong uroce0 4096 500 -n 500) >"$T/other.out" 2>&1 &
other=$!
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_rq_refill"
rc=$?
wait $other
orc=$?
cat "$T/other.out"
expect_eq "traffic_rq_refill exit status" 0 "$rc"
expect_eq "the other client's ibv_rc_pingpong (exact counts)" 0 "$orc"
uroce status >"$T/status" 2>&1 || { cat "$T/status"; fail "uroce status"; }
grep -q '^== uroce0: up, ' "$T/status" || { cat "$T/status"; fail "daemon still serving uroce0"; }
echo "ok: uroce0 still up"
