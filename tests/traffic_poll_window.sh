#!/bin/sh
# traffic_poll_window: uroced --poll-window (emu/nic/poll_window.h).
# - default: usec=50 and stall_usec=200, and after ib_send_lat -n 2000 on
#   one device at least one window opened;
# - --poll-window 0: after the same run the status line is
#   `poll_window usec=0 opened=0 closed=0 turns=0 caught=0 stall_usec=200
#   stalls=0 shut=0` exactly: the loop never polls, it sleeps between
#   messages;
# - --poll-window 1000000 (1 s) --poll-window-stall 0 (a yield may lose the
#   CPU for any time, as on a machine shared with other tests): the same
#   run; the loop never sleeps between two messages (less than a second
#   apart), so at most 10 windows open during it for 4,000 messages, and at
#   least 500 of its polled turns found traffic (one per 8 messages: a turn
#   may take both clients' doorbells and the loopback packets between them,
#   and a daemon slowed by the sanitizers finds more waiting per turn; one
#   run under ASan had 1,816 for 4,000 messages; a loop that slept between
#   messages would have opened a window for each instead);
# - a stall: the daemon pinned to one CPU beside a process that spins there
#   without yielding, a 1 s window, the default stall limit and 40,000
#   messages (at least 0.1 s, where the scheduler gives the spinner its
#   share of the CPU in slices of a millisecond or more): once the spinner
#   gets its slice the daemon's yield loses the CPU for longer than 200 us,
#   so each window but the last ends in a stall (opened <= stalls + 1, at
#   least one), traffic then meets shut windows (shut >= 1: without the
#   100 ms shut period every message after a stall would open a window),
#   and at most one window opens per 10 messages;
# - then idle: once the last window ran out (a second after the last
#   message) the loop sleeps for good; over
#   the next 2.5 s (two wake-ups of the HCA clock's timer, and the status
#   requests themselves) no window opens and no turn is polled: opened and
#   turns do not move, exactly;
# - a daemon that never saw traffic opens no window in 2.5 s either;
# - nor one that received only datagrams failing the receive checks
#   (tests/poll_window_junk.py: 1,000 each of random bytes, a valid packet
#   for a QP that does not exist, the same with a wrong ICRC): exact rx_drops
#   bad=2000 no_qp=1000 bad_icrc=2000, rx_taken=0, windows opened 0, turns
#   0 under a 1 s window; then real traffic on that daemon opens one;
# - --deterministic and --busy-poll turn it off (usec=0: the window is
#   wall-clock time; the loop never sleeps anyway);
# - uroce up refuses 1000001 and a non-number, with a message, exit 1.
. "$top_srcdir/tests/lib.sh"

ITERS=2000
pw() { dev_status_field poll_window "$1"; }

up --dev uroce0 --mtu 1024
perftest ib_send_lat lat 2 "$ITERS" -s 2 -n "$ITERS"
uroce status --dev uroce0 | grep '^poll_window'
expect_eq "default: usec" 50 "$(pw usec)"
expect_eq "default: stall_usec" 200 "$(pw stall_usec)"
[ "$(pw opened)" -ge 1 ] || fail "default: windows opened by $((2 * ITERS)) messages" ">= 1" "$(pw opened)"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

up --dev uroce0 --mtu 1024 --poll-window 0
perftest ib_send_lat lat 2 "$ITERS" -s 2 -n "$ITERS"
expect_eq "--poll-window 0: the poll window's status" \
	"poll_window usec=0 opened=0 closed=0 turns=0 caught=0 stall_usec=200 stalls=0 shut=0" \
	"$(uroce status --dev uroce0 | grep '^poll_window')"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

up --dev uroce0 --mtu 1024 --poll-window 1000000 --poll-window-stall 0
expect_eq "--poll-window 1000000: usec" 1000000 "$(pw usec)"
o0=$(pw opened)
c0=$(pw caught)
perftest ib_send_lat lat 2 "$ITERS" -s 2 -n "$ITERS"
uroce status --dev uroce0 | grep '^poll_window'
o=$(($(pw opened) - o0))
c=$(($(pw caught) - c0))
[ "$o" -le 10 ] || fail "windows opened during $((2 * ITERS)) messages (wake-ups from a sleep)" "<= 10" "$o"
[ "$c" -ge $((ITERS / 4)) ] || fail "polled turns that found traffic" ">= $((ITERS / 4))" "$c"
echo "ok: $o windows opened, $c polled turns found traffic, for $((2 * ITERS)) messages"
# the last window runs out a second after the last message
n=0
while [ "$(pw closed)" != "$(pw opened)" ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "the last window ran out within 10 s" "closed = opened" "$(uroce status --dev uroce0 | grep '^poll_window')"
	sleep 0.1
done
o1=$(pw opened)
t1=$(pw turns)
sleep 2.5
expect_eq "idle after the run: windows opened in 2.5 s" "$o1" "$(pw opened)"
expect_eq "idle after the run: loop turns polled in 2.5 s" "$t1" "$(pw turns)"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

# a stall: CPU 0 shared with a process that never yields
SITERS=20000
taskset -c 0 sh -c 'while :; do :; done' &
hog=$!
reap $hog
taskset -c 0 "$UROCE" up --dev uroce0 --mtu 1024 --poll-window 1000000 \
	--port $((20000 + $(rand16) % 40000)) || { kill $hog; fail "uroce up pinned to CPU 0"; }
perftest ib_send_lat lat 2 "$SITERS" -s 2 -n "$SITERS"
kill $hog
uroce status --dev uroce0 | grep '^poll_window'
o=$(pw opened)
st=$(pw stalls)
[ "$st" -ge 1 ] || fail "stalls beside a CPU hog" ">= 1" "$st"
[ "$o" -le $((st + 1)) ] || fail "windows beside a CPU hog all end in a stall" "opened <= stalls + 1 = $((st + 1))" "$o"
[ "$(pw shut)" -ge 1 ] || fail "traffic met windows shut after a stall" ">= 1" "$(pw shut)"
[ $((o * 10)) -le $((2 * SITERS)) ] || fail "windows opened for $((2 * SITERS)) messages beside a CPU hog" "<= $((2 * SITERS / 10))" "$o"
echo "ok: beside a CPU hog $o windows, $st stalls, $(pw shut) traffic turns found them shut"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

up --dev uroce0 --mtu 1024 --poll-window 1000000
sleep 2.5
expect_eq "never any traffic: windows opened" 0 "$(pw opened)"
expect_eq "never any traffic: loop turns polled" 0 "$(pw turns)"
sent=$(/usr/bin/python3 "$top_srcdir/tests/poll_window_junk.py" "$UROCE_PORT" 1000) || fail "poll_window_junk.py"
expect_eq "junk datagrams sent" 3000 "$sent"
n=0
while [ "$(dev_status_field udp rx_packets)" -lt 3000 ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "junk received within 10 s" ">= 3000" "$(dev_status_field udp rx_packets)"
	sleep 0.1
done
uroce status --dev uroce0 | grep '^rx_drops\|^poll_window\|^udp '
expect_eq "junk: rx_drops" "rx_drops bad=2000 no_qp=1000 bad_src=0 bad_icrc=2000 rcvbuf_full=0" \
	"$(grep '^rx_drops' "$T/status")"
expect_eq "junk: datagrams a QP took" 0 "$(dev_status_field udp rx_taken)"
expect_eq "junk: windows opened" 0 "$(pw opened)"
expect_eq "junk: loop turns polled" 0 "$(pw turns)"
perftest ib_send_lat lat 2 200 -s 2 -n 200
[ "$(dev_status_field udp rx_taken)" -ge 400 ] || fail "messages a QP took after the junk" ">= 400" "$(dev_status_field udp rx_taken)"
[ "$(pw opened)" -ge 1 ] || fail "real traffic after the junk opens a window" ">= 1" "$(pw opened)"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

up --dev uroce0 --busy-poll --poll-window 50
expect_eq "--busy-poll: the window is off" 0 "$(pw usec)"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

up --dev uroce0 --deterministic --poll-window 50
expect_eq "--deterministic: the window is off" 0 "$(pw usec)"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

for opt in --poll-window --poll-window-stall; do
	for bad in 1000001 x; do
		uroce up --dev uroce0 --port $((20000 + $(rand16) % 40000)) "$opt" "$bad" >"$T/bad" 2>&1
		rc=$?
		cat "$T/bad"
		expect_eq "uroce up $opt $bad: exit status" 1 "$rc"
		grep -q -- "$opt" "$T/bad" || fail "the refusal names $opt" "$opt ..." "$(cat "$T/bad")"
	done
done
echo "ok"
