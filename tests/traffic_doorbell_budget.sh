#!/bin/sh
# traffic_doorbell_budget: the doorbell service's per-client budget
# (emu/nic/doorbell.h DOORBELL_CLIENT_BUDGET = 32 send WQEs a loop turn).
# ib_write_bw -q 16 with 128 WQEs in flight per QP keeps far more than 32
# send WQEs waiting in one client's rings; `uroce status` must show that no
# client ever got more than 32 in one loop turn (turn_max = 32 exactly: the
# budget was reached and never passed) and that turns were cut short by it
# (budget_stops > 0); every WRITE still completes (perftest's own check).
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
