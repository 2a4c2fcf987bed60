#!/bin/sh
# traffic_doorbell_budget: the doorbell service's per-client budget
# (emu/nic/doorbell.h DOORBELL_CLIENT_BUDGET = 32 send WQEs a loop turn,
# DOORBELL_SHARED_BUDGET = 4 while more than one client posts).
# 1. ib_write_bw -q 16 with 128 WQEs in flight per QP keeps far more than 32
#    send WQEs waiting in one client's rings; `uroce status` must show that
#    no client ever got more than 32 in one loop turn (turn_max = 32
#    exactly: the budget was reached and never passed), that turns were cut
#    short by it (budget_stops > 0), and that a lone poster never had the
#    budget shared (shared_stops = shared_max = 0);
# 2. a second such client floods at the same time (-D 15 in the background):
#    under the shared budget no client got more than 4 in a turn
#    (shared_max = 4 exactly) and turns were cut at it (shared_stops > 0).
# Every WRITE still completes (perftest's own check, both exit 0), and no
# client was ever paused for lies (pauses = 0: every WQE they posted was
# work; tests/traffic_flood_rings.sh is the liar).
. "$top_srcdir/tests/lib.sh"

BUDGET=32

field() {
	uroce status --dev uroce0 | sed -n "s/^doorbells .*\b$1=\([0-9]*\).*/\1/p"
}

up --dev uroce0 --mtu 1024
expect_eq "before traffic: turn_max" 0 "$(field turn_max)"
# (perftest counts the iterations of all 16 QPs in its result row)
perftest ib_write_bw bw 4096 32000 -s 4096 -n 2000 -q 16 -t 128
expect_eq "ib_write_bw -q 16 -t 128: most send WQEs one client got in a turn" "$BUDGET" "$(field turn_max)"
stops=$(field budget_stops)
[ -n "$stops" ] && [ "$stops" -gt 0 ] || fail "turns cut short by the budget" "> 0" "$stops"
echo "ok: $stops QP turns cut short by the client budget"
expect_eq "one flooding client: turns cut at the shared budget" 0 "$(field shared_stops)"
expect_eq "one flooding client: most under the shared budget" 0 "$(field shared_max)"

# 2. two flooding clients at once
bp=$(free_tcp_port)
bg="$UROCE run -- ib_write_bw -d uroce0 -i 1 -x 0 -F -p $bp -s 4096 -q 16 -t 128 -D 15"
timeout "$(tmo 120)" sh -c "$bg" >"$T/bg_srv.log" 2>&1 &
bs=$!
wait_listen "$bp" "$(tmo 60)" || fail "background ib_write_bw server listens on $bp"
timeout "$(tmo 120)" sh -c "$bg 127.0.0.1" >"$T/bg_cli.log" 2>&1 &
bc=$!
# the background client is posting once the budget stops turns again (its
# stdout, a file, is block-buffered: nothing shows there before it ends)
n=0
until [ "$(field budget_stops)" -gt $((stops + 100)) ]; do
	n=$((n + 1)); [ $n -lt 600 ] || fail "background ib_write_bw posting" "budget_stops > $((stops + 100))" "$(field budget_stops)"
	sleep 0.1
done
perftest ib_write_bw bw 4096 32000 -s 4096 -n 2000 -q 16 -t 128
wait $bc; rc_c=$?
wait $bs; rc_s=$?
expect_eq "background ib_write_bw -D 15: client and server exit status" "0 0" "$rc_c $rc_s"
expect_eq "two flooding clients: most send WQEs one client got in a shared turn" 4 "$(field shared_max)"
# honest posting is never taken for lies (DOORBELL_PAUSE_SECONDS)
expect_eq "honest flooding clients: doorbell pauses" 0 "$(field pauses)"
sstops=$(field shared_stops)
[ -n "$sstops" ] && [ "$sstops" -gt 0 ] || fail "turns cut short by the shared budget" "> 0" "$sstops"
echo "ok: $sstops QP turns cut at the shared budget of 4"
