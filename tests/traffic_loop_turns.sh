#!/bin/sh
# traffic_loop_turns: the latency path's event-loop turns (docs/performance.md,
# "The latency path's system calls", "Internal loopback"). perftest's
# ib_write_lat and ib_read_lat, -s 2 -n 2000, server and client on one device
# at MTU 1024 (two QPs of uroce0, so every packet goes to the device's own
# address): both exit 0 with their result row, and `uroce status`'s `loop`
# line, read before and after each program, shows
# - with the internal loopback (the default): loopback >= 4 per ib_write_lat
#   iteration (two WRITEs, each with AckReq, and their two ACKs) and >= 2 per
#   ib_read_lat iteration (request and response), none spilled to the
#   socket and no read of the socket for them (self_reads 0);
# - with --kernel-loopback: self_reads >= 2 per iteration: each request and
#   each response sent to the device's own address was read before the loop
#   polled, without a wake-up from epoll_wait; self_reads_empty at most 1 %
#   of those reads (loopback UDP queues the datagram on the receiving socket
#   before sendmmsg returns); loopback 0;
# - either way, loop turns per iteration at most 3.2: a turn per doorbell (two
#   WRITEs, or one READ, per iteration) plus slack for control messages,
#   timers and scheduling (when each packet costs a turn of its own it is
#   about 5.4 turns per ib_write_lat iteration, 3 per ib_read_lat). The
#   daemons run with --poll-window 0: the turns counted are those of a loop
#   that sleeps between messages (a window's polled turns count too, and
#   their number follows the scheduler: traffic_poll_window.sh).
. "$top_srcdir/tests/lib.sh"

ITERS=2000

# loop_field NAME: the field NAME of the status line "loop ...".
loop_field() {
	uroce status --dev uroce0 | sed -n "s/^loop .*\b$1=\([0-9]*\).*/\1/p"
}

# run MODE PROGRAM MAX_TURNS_X10 PACKETS: PROGRAM -s 2 -n ITERS, then the
# checks above for MODE (internal or kernel) with at most MAX_TURNS_X10 / 10
# loop turns and at least PACKETS datagrams to self per iteration.
run() {
	_t0=$(loop_field turns) _r0=$(loop_field self_reads) _e0=$(loop_field self_reads_empty)
	_l0=$(loop_field loopback) _s0=$(loop_field loopback_spilled)
	[ -n "$_t0" ] && [ -n "$_r0" ] && [ -n "$_e0" ] && [ -n "$_l0" ] && [ -n "$_s0" ] ||
		fail "status has a loop line" "loop turns=N self_reads=N self_reads_empty=N loopback=N loopback_spilled=N" \
			"$(uroce status --dev uroce0 | grep '^loop')"
	perftest "$2" lat 2 "$ITERS" -s 2 -n "$ITERS"
	_t=$(($(loop_field turns) - _t0))
	_r=$(($(loop_field self_reads) - _r0))
	_e=$(($(loop_field self_reads_empty) - _e0))
	_l=$(($(loop_field loopback) - _l0))
	_s=$(($(loop_field loopback_spilled) - _s0))
	echo "$1 $2: $_t loop turns, $_l datagrams through the internal loopback ($_s spilled), $_r reads of the socket for datagrams sent to self, $_e of them empty, for $ITERS iterations"
	if [ "$1" = internal ]; then
		[ "$_l" -ge $(($4 * ITERS)) ] || fail "$2: loopback >= $4 per iteration" ">= $(($4 * ITERS))" "$_l"
		expect_eq "$2: loopback_spilled" 0 "$_s"
		expect_eq "$2: self_reads with the internal loopback" 0 "$_r"
	else
		expect_eq "$2: loopback with --kernel-loopback" 0 "$_l"
		[ "$_r" -ge $((2 * ITERS)) ] || fail "$2: self_reads >= 2 per iteration" ">= $((2 * ITERS))" "$_r"
		[ $((_e * 100)) -le "$_r" ] || fail "$2: self_reads_empty <= 1 % of self_reads" "<= $((_r / 100))" "$_e"
	fi
	[ $((_t * 10)) -le $(($3 * ITERS)) ] ||
		fail "$1 $2: loop turns per iteration <= $3/10" "<= $(($3 * ITERS / 10))" "$_t"
	echo "ok: $1 $2: $(awk -v t="$_t" -v n="$ITERS" 'BEGIN { printf "%.2f", t / n }') loop turns per iteration"
}

up --dev uroce0 --mtu 1024 --poll-window 0
run internal ib_write_lat 32 4
run internal ib_read_lat 22 2
uroce down --dev uroce0 >/dev/null || fail "uroce down"
up --dev uroce0 --mtu 1024 --kernel-loopback --poll-window 0
run kernel ib_write_lat 32 2
run kernel ib_read_lat 22 2
uroce down --dev uroce0 >/dev/null || fail "uroce down"
