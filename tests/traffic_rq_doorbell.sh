#!/bin/sh
# traffic_rq_doorbell: receive doorbell suppression (abi_ring.h "Receive
# doorbell suppression"; docs/performance.md, "The latency path's system
# calls").
# - perftest's ib_send_lat -s 2 -n 2000, server and client on one device at
#   MTU 1024: exits 0 with its result row, and the doorbells the daemon read
#   (`uroce status`, `doorbells rings=`: eventfd writes drained) are at most
#   1.2 per message (4,000 messages: each side sends 2,000 SENDs and posts
#   2,000 receives). Measured: 2.00 per message (8,000) when every
#   ibv_post_recv rang, 1.00 (4,000: the SENDs' own doorbells, the no_doorbell
#   promise having lapsed between messages) with rq_no_doorbell.
# - tests/traffic_rq_doorbell (Check) inside `uroce run`: receives posted
#   without a doorbell on a QP that then goes to ERR, by ibv_modify_qp and
#   by the engine (remote access error), a full RQ and 300 racing rounds
#   each: every one flushed with IBV_WC_WR_FLUSH_ERR, exact count.
. "$top_srcdir/tests/lib.sh"

ITERS=2000

rings() {
	uroce status --dev uroce0 | sed -n 's/^doorbells .*\brings=\([0-9]*\).*/\1/p'
}

up --dev uroce0 --mtu 1024
_r0=$(rings)
[ -n "$_r0" ] || fail "status has a doorbells line" "doorbells reads=N rings=N" \
	"$(uroce status --dev uroce0 | grep '^doorbells')"
perftest ib_send_lat lat 2 "$ITERS" -s 2 -n "$ITERS"
_r=$(($(rings) - _r0))
_m=$((2 * ITERS))
echo "ib_send_lat: $_r doorbells for $_m messages"
[ $((_r * 10)) -le $((12 * _m)) ] ||
	fail "ib_send_lat: doorbells per message <= 1.2" "<= $((12 * _m / 10))" "$_r"
echo "ok: ib_send_lat: $(awk -v r="$_r" -v n="$_m" 'BEGIN { printf "%.2f", r / n }') doorbells per message"

timeout 600 "$UROCE" run -- "$top_builddir/tests/traffic_rq_doorbell"
rc=$?
expect_eq "traffic_rq_doorbell exit status" 0 "$rc"
uroce down --dev uroce0 >/dev/null || fail "uroce down"
