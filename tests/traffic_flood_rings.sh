#!/bin/sh
# traffic_flood_rings: a client that lies about its own rings
# (tests/flood_rings: 16 QPs whose producer indices it moves a queue depth,
# or 2^31, ahead at every doorbell, without pause; as the user nobody when
# the test runs as root) beside another user's ibv_rc_pingpong
# (emu/nic/doorbell.h DOORBELL_PAUSE_SECONDS, docs/security.md):
# 0. the flood alone for 3 s, ringing only while the daemon has not
#    promised to look at the rings unasked (as the provider does): paused
#    1..3100 times, at most 10 poll windows opened (a lie is not traffic;
#    one window per pause before), loop turns at most 5 per pause + 1000
#    (about 3 measured: the daemon sleeps through the pauses); the same
#    liar posting one honest 8-byte RDMA WRITE between two rounds of lies
#    (mixed) is paused too, and every one of its WRITEs completes with
#    success (40,272 in 3 s measured); a client ringing its doorbell for
#    nothing (empty) is paused too, with the same bounds but 24 loop turns
#    a pause (18 measured: 16 idle services make a pause) and no poll
#    window (a doorbell that found no work is not traffic);
# 1. RC QPs: while the flood runs the victim's ibv_rc_pingpong -n 2000
#    (4 KiB, data checked) completes with its exact byte and iteration
#    lines; `uroce status` shows the flooder paused (pauses >= 1), at most
#    once per millisecond of the flood (pauses <= 1000 x its seconds + 100),
#    and the doorbell reads that did not pause it are few: at most the
#    victim's own reads alone (measured first, same run) x 3 + 200 (without
#    the pause the daemon reads the flooder's doorbell tens of thousands of
#    times a second);
# 2. raw packet QPs: the same lies on raw QP rings; `uroce status` answers
#    (within 20 s: a daemon flushing 2^31 WQEs for an index 2^31 ahead did
#    not answer for minutes), and the victim completes again;
# 3. the flooder's output: "moved the indices N times on 16 QPs in S s".
# A client posting honestly is never paused: traffic_doorbell_budget.sh.
. "$top_srcdir/tests/lib.sh"

FLOOD=$top_builddir/tests/flood_rings
SECS=4
ITERS=2000
flooder() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- "$UROCE" run -- "$FLOOD" "$@"
	else
		"$UROCE" run -- "$FLOOD" "$@"
	fi
}
db() { dev_status_field doorbells "$1"; }
victim() {
	pingpong "$1" ibv_rc_pingpong uroce0 4096 "$ITERS" -s 4096 -n "$ITERS" -c
}

# flood_start MODE: the flooder for SECS s in the background, once it
# has been paused at least once; flood_end MODE: its exit and report.
flood_start() {
	_p0=$(db pauses)
	flooder "$SECS" 16 "$1" >"$T/flood_$1.out" 2>&1 &
	fl=$!
	reap $fl
	_n=0
	until [ "$(db pauses)" -gt "$_p0" ]; do
		_n=$((_n + 1))
		[ $_n -lt 100 ] || fail "the $1 flooder paused within 10 s" "pauses > $_p0" "$(db pauses)"
		sleep 0.1
	done
}
flood_end() {
	wait $fl
	expect_eq "flooder ($1): exit status" 0 $?
	cat "$T/flood_$1.out"
	grep -Eq "^moved the indices [1-9][0-9]* times on 16 QPs in $SECS s\$" "$T/flood_$1.out" ||
		fail "$1 flooder's report" "moved the indices N times on 16 QPs in $SECS s" "$(cat "$T/flood_$1.out")"
}

up --dev uroce0 --mtu 1024
pw() { dev_status_field poll_window "$1"; }

# flood_alone MODE K LINE: the flooder alone for 3 s in MODE; it exits 0
# with LINE (a regular expression); it was paused 1..3,100 times, opened at
# most 10 poll windows, and the loop turned at most K times a pause + 1,000
flood_alone() {
	_o0=$(pw opened)
	_t0=$(dev_status_field loop turns)
	_p0=$(db pauses)
	flooder 3 16 "$1" >"$T/flood_$1.out" 2>&1
	expect_eq "flooder ($1): exit status" 0 $?
	cat "$T/flood_$1.out"
	grep -Eq "^$3\$" "$T/flood_$1.out" || fail "$1 flooder's report" "$3" "$(cat "$T/flood_$1.out")"
	_pa=$(($(db pauses) - _p0))
	_tu=$(($(dev_status_field loop turns) - _t0))
	_op=$(($(pw opened) - _o0))
	echo "ok: $1 flood alone: $_pa pauses, $_tu loop turns, $_op poll windows opened"
	[ "$_pa" -ge 1 ] && [ "$_pa" -le 3100 ] || fail "$1: pauses during a 3 s flood" "1..3100" "$_pa"
	[ "$_op" -le 10 ] || fail "$1: poll windows opened by a 3 s flood" "<= 10" "$_op"
	[ "$_tu" -le $(($2 * _pa + 1000)) ] || fail "$1: loop turns during a 3 s flood" "<= $(($2 * _pa + 1000))" "$_tu"
}

# 0. the flood alone, ringing only while the daemon has not promised to
# look at the ring (quiet): the daemon mostly sleeps; then a client ringing
# its doorbell for nothing, as fast as it goes
flood_alone quiet 5 "moved the indices [1-9][0-9]* times on 16 QPs in 3 s"
flood_alone empty 24 "rang the doorbell [1-9][0-9]* times for nothing in 3 s"

# the same liar posting one honest WRITE between two rounds of lies is
# still paused, and its honest WRITEs complete
p0=$(db pauses)
flooder 3 16 mixed >"$T/flood_mixed.out" 2>&1
expect_eq "flooder (mixed): exit status" 0 $?
cat "$T/flood_mixed.out"
pauses=$(($(db pauses) - p0))
[ "$pauses" -ge 1 ] || fail "pauses of a liar with one honest WRITE a round" ">= 1" "$pauses"
grep -Eq "^honest WRITEs: [1-9][0-9]* completed, 0 failed\$" "$T/flood_mixed.out" ||
	fail "the liar's honest WRITEs" "honest WRITEs: N completed, 0 failed" "$(cat "$T/flood_mixed.out")"

# the victim alone: its own doorbell reads
r0=$(db reads)
victim "victim alone"
alone=$(($(db reads) - r0))
echo "ok: the victim alone: $alone doorbell reads"

# 1. RC QPs
r0=$(db reads)
p0=$(db pauses)
flood_start rc
victim "victim beside the RC flood"
flood_end rc
pauses=$(($(db pauses) - p0))
reads=$(($(db reads) - r0))
echo "ok: $pauses pauses, $reads doorbell reads during the RC flood"
[ "$pauses" -le $((1000 * SECS + 100)) ] || fail "pauses during a $SECS s flood" "<= $((1000 * SECS + 100))" "$pauses"
[ $((reads - pauses)) -le $((3 * alone + 200)) ] ||
	fail "doorbell reads that did not pause the flooder" "<= $((3 * alone + 200))" "$((reads - pauses))"

# 2. raw packet QPs
flood_start raw
timeout 20 "$UROCE" status --dev uroce0 >"$T/status_raw" 2>&1
expect_eq "uroce status during the raw flood: exit status" 0 $?
victim "victim beside the raw flood"
flood_end raw
uroce status --dev uroce0 | grep '^doorbells'
echo "ok"
