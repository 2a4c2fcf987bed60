#!/bin/sh
# traffic_loop_turns: the latency path's event-loop turns (docs/performance.md,
# "The latency path's system calls"). perftest's ib_write_lat and
# ib_read_lat, -s 2 -n 2000, server and client on one device at MTU 1024 (two
# QPs of uroce0, so every packet goes to the device's own socket): both exit 0
# with their result row, and `uroce status`'s `loop` line, read before and
# after each program, shows
# - self_reads >= 2 per iteration: each request and each response (the
#   WRITE's ACK, the READ response) sent to the device's own address was
#   read before the loop polled, without a wake-up from epoll_wait;
# - self_reads_empty at most 1 % of those reads (loopback UDP queues the
#   datagram on the receiving socket before sendmmsg returns);
# - loop turns per iteration at most 3.2: a turn per doorbell (two WRITEs,
#   or one READ, per iteration) plus slack for control messages, timers and
#   scheduling (without the direct reads each packet costs a turn of its
#   own: about 5.4 turns per ib_write_lat iteration, 3 per ib_read_lat).
. "$top_srcdir/tests/lib.sh"

ITERS=2000
up --dev uroce0 --mtu 1024

# loop_field NAME: the field NAME of the status line "loop ...".
loop_field() {
	uroce status --dev uroce0 | sed -n "s/^loop .*\b$1=\([0-9]*\).*/\1/p"
}

# run PROGRAM MAX_TURNS_X10: PROGRAM -s 2 -n ITERS, then the checks above
# with at most MAX_TURNS_X10 / 10 loop turns per iteration.
run() {
	_t0=$(loop_field turns) _r0=$(loop_field self_reads) _e0=$(loop_field self_reads_empty)
	[ -n "$_t0" ] && [ -n "$_r0" ] && [ -n "$_e0" ] || fail "status has a loop line" "loop turns=N self_reads=N self_reads_empty=N" "$(uroce status --dev uroce0 | grep '^loop')"
	perftest "$1" lat 2 "$ITERS" -s 2 -n "$ITERS"
	_t=$(($(loop_field turns) - _t0))
	_r=$(($(loop_field self_reads) - _r0))
	_e=$(($(loop_field self_reads_empty) - _e0))
	echo "$1: $_t loop turns, $_r reads of datagrams sent to self, $_e of them empty, for $ITERS iterations"
	[ "$_r" -ge $((2 * ITERS)) ] || fail "$1: self_reads >= 2 per iteration" ">= $((2 * ITERS))" "$_r"
	[ $((_e * 100)) -le "$_r" ] || fail "$1: self_reads_empty <= 1 % of self_reads" "<= $((_r / 100))" "$_e"
	[ $((_t * 10)) -le $(($2 * ITERS)) ] ||
		fail "$1: loop turns per iteration <= $2/10" "<= $(($2 * ITERS / 10))" "$_t"
	echo "ok: $1: $(awk -v t="$_t" -v n="$ITERS" 'BEGIN { printf "%.2f", t / n }') loop turns per iteration"
}

run ib_write_lat 32
run ib_read_lat 22
uroce down --dev uroce0 >/dev/null || fail "uroce down"
