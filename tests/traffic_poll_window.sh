#!/bin/sh
# traffic_poll_window: uroced --poll-window (emu/nic/poll_window.h).
# - default (0): after ib_send_lat -n 2000 on one device the status line is
#   `poll_window usec=0 opened=0 closed=0 turns=0 caught=0` exactly: the
#   loop never polls, it sleeps between messages as before;
# - --poll-window 1000000 (1 s): the same run; the loop never sleeps
#   between two messages (less than a second apart), so at most 10 windows
#   open during it for 4,000 messages, and at least 2,000 of its polled
#   turns found traffic (each message's doorbell comes in its own turn);
# - then idle: once the last window ran out (a second after the last
#   message) the loop sleeps for good; over
#   the next 2.5 s (two wake-ups of the HCA clock's timer, and the status
#   requests themselves) no window opens and no turn is polled: opened and
#   turns do not move, exactly;
# - a daemon that never saw traffic opens no window in 2.5 s either;
# - --deterministic and --busy-poll turn it off (usec=0: the window is
#   wall-clock time; the loop never sleeps anyway);
# - uroce up refuses 1000001 and a non-number, with a message, exit 1.
. "$top_srcdir/tests/lib.sh"

ITERS=2000
pw() { dev_status_field poll_window "$1"; }

up --dev uroce0 --mtu 1024
perftest ib_send_lat lat 2 "$ITERS" -s 2 -n "$ITERS"
uroce status --dev uroce0 | grep '^poll_window'
expect_eq "default: the poll window's status" "poll_window usec=0 opened=0 closed=0 turns=0 caught=0" \
	"$(uroce status --dev uroce0 | grep '^poll_window')"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

up --dev uroce0 --mtu 1024 --poll-window 1000000
expect_eq "--poll-window 1000000: usec" 1000000 "$(pw usec)"
o0=$(pw opened)
c0=$(pw caught)
perftest ib_send_lat lat 2 "$ITERS" -s 2 -n "$ITERS"
uroce status --dev uroce0 | grep '^poll_window'
o=$(($(pw opened) - o0))
c=$(($(pw caught) - c0))
[ "$o" -le 10 ] || fail "windows opened during $((2 * ITERS)) messages (wake-ups from a sleep)" "<= 10" "$o"
[ "$c" -ge "$ITERS" ] || fail "polled turns that found traffic" ">= $ITERS" "$c"
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

up --dev uroce0 --mtu 1024 --poll-window 1000000
sleep 2.5
expect_eq "never any traffic: windows opened" 0 "$(pw opened)"
expect_eq "never any traffic: loop turns polled" 0 "$(pw turns)"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

up --dev uroce0 --busy-poll --poll-window 50
expect_eq "--busy-poll: the window is off" 0 "$(pw usec)"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

up --dev uroce0 --deterministic --poll-window 50
expect_eq "--deterministic: the window is off" 0 "$(pw usec)"
uroce down --dev uroce0 >/dev/null || fail "uroce down"

for bad in 1000001 x; do
	uroce up --dev uroce0 --port 4791 --poll-window "$bad" >"$T/bad" 2>&1
	rc=$?
	cat "$T/bad"
	expect_eq "uroce up --poll-window $bad: exit status" 1 "$rc"
	grep -q -- "--poll-window" "$T/bad" || fail "the refusal names --poll-window" "--poll-window ..." "$(cat "$T/bad")"
done
echo "ok"
