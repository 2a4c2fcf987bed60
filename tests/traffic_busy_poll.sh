#!/bin/sh
# traffic_busy_poll: `uroce up --busy-poll` (docs/daemon.md, docs/performance.md).
# - the daemon logs that it busy-polls, and its event loop never sleeps:
#   with no traffic at all, at least 15 of 20 samples of its state in
#   /proc/PID/stat over one second are R (running or runnable; a daemon that
#   waits in epoll_wait is S in every sample, as the plain device below is);
# - unmodified ibv_rc_pingpong over it (4096 bytes x 1000 and, with -c,
#   64 KiB x 200 at MTU 4096): exact byte and iteration counts on both sides;
# - `uroce down` ends it (the idle watcher does not keep the loop alive).
. "$top_srcdir/tests/lib.sh"

# running PID: how many of 20 samples, 50 ms apart, show state R.
running() {
	_n=0 _i=0
	while [ $_i -lt 20 ]; do
		_st=$(sed 's/^.*) \(.\).*$/\1/' "/proc/$1/stat" 2>/dev/null)
		[ "$_st" != R ] || _n=$((_n + 1))
		_i=$((_i + 1))
		sleep 0.05
	done
	echo "$_n"
}

up --dev uroce0
pid=$(cat "$UROCE_RUN_DIR/uroce0.pid")
idle=$(running "$pid")
echo "plain device: $idle of 20 samples running"
[ "$idle" -le 5 ] || fail "plain device sleeps when idle" "<= 5 of 20 samples R" "$idle"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

up --dev uroce0 --busy-poll
pid=$(cat "$UROCE_RUN_DIR/uroce0.pid")
grep -q 'busy-polling: the event loop never sleeps' "$UROCE_RUN_DIR/uroce0.log" ||
	fail "busy-poll log line" "busy-polling: the event loop never sleeps" "$(cat "$UROCE_RUN_DIR/uroce0.log")"
busy=$(running "$pid")
echo "busy-polling device: $busy of 20 samples running"
[ "$busy" -ge 15 ] || fail "busy-polling device does not sleep" ">= 15 of 20 samples R" "$busy"

. "$top_srcdir/tests/traffic_lib.sh"
run plain 4096 1000
run big 65536 200 -s 65536 -m 4096 -c -n 200

uroce down --dev uroce0 >/dev/null || fail "uroce down"
n=0
while kill -0 "$pid" 2>/dev/null && [ $n -lt 50 ]; do
	sleep 0.1
	n=$((n + 1))
done
kill -0 "$pid" 2>/dev/null && fail "uroce down ends the busy-polling daemon" "exited" "pid $pid alive after 5 s"
echo "ok: busy-polling daemon exited on uroce down"
