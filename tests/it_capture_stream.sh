#!/bin/sh
# it_capture_stream: `uroce capture start DEV -` streams the capture live
# into a pipe (docs/inspect.md, "Live capture"):
#  1. into tshark reading the pipe: ibv_rc_pingpong 200 x 4096 bytes at MTU
#     1024 = 400 messages of 4 packets + 400 ACKs = 2000 frames, every one
#     read by tshark while it runs; status "frames=2000 dropped=0";
#  2. a reader that does not read until the traffic is over: the device is
#     not held up (ib_write_bw 2000 x 64 KiB completes with its exact result
#     line), frames that do not fit the 8 MiB queue are dropped and counted,
#     and what the reader gets at last is a well-formed pcap with exactly
#     the frames the status counted (none cut short);
#  3. a reader that goes away (head -c 4096): the capture stops by itself
#     ("capture off", the log says why), the device carries on and a new
#     capture starts;
#  4. stdout a terminal: refused with a message, nothing started.
. "$top_srcdir/tests/lib.sh"
: "${TSHARK:?tshark was not found by configure (Debian package tshark)}"
PY=${PYTHON:-python3}

up --dev uroce0 --mtu 1024
cap_status() { uroce status --dev uroce0 | sed -n 's/^capture //p'; }
# capture_on WHAT [ERRFILE]: wait (10 s at most) for the capture a reader started
capture_on() {
	_n=0
	until cap_status | grep -q '^on '; do
		_n=$((_n + 1))
		[ $_n -lt 100 ] || fail "$1 never started${2:+: $(cat "$2")}"
		sleep 0.1
	done
}

# 1. tshark on the pipe
(uroce capture start uroce0 - 2>"$T/start.err" | "$TSHARK" -r - -n -d "udp.port==$UROCE_PORT,infiniband" -T fields -e infiniband.bth.opcode \
	>"$T/live.txt" 2>"$T/tshark.err") &
reader=$!
capture_on "the live capture" "$T/start.err"
pingpong live ibv_rc_pingpong uroce0 4096 200 -s 4096 -n 200 -m 1024
expect_eq "status after the pingpong" "on file=pipe:[$(cap_status | sed -n 's/.*pipe:\[\([0-9]*\)\].*/\1/p')] frames=2000 dropped=0" "$(cap_status)"
expect_eq "capture stop" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"
wait $reader
expect_eq "frames tshark read from the pipe" 2000 "$(wc -l <"$T/live.txt")"
# RC SEND FIRST 0, MIDDLE 1, LAST 2, ACKNOWLEDGE 17
expect_eq "opcodes read from the pipe" "400 0
800 1
400 17
400 2" "$(sort "$T/live.txt" | uniq -c | sed 's/^ *//')"
expect_eq "tshark errors" "" "$(grep -v 'Running as user' "$T/tshark.err")"
expect_eq "the start message goes to stderr" \
	"uroce0: capturing to stdout (a live stream until 'uroce capture stop uroce0')" "$(cat "$T/start.err")"

# 2. a reader that waits: it holds the pipe open and reads only once
# $T/go exists, after the traffic.
rm -f "$T/go"
(uroce capture start uroce0 - 2>/dev/null | $PY -c '
import os, sys, time
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
with open(sys.argv[2], "wb") as f:
    while True:
        b = sys.stdin.buffer.read(1 << 20)
        if not b:
            break
        f.write(b)
' "$T/go" "$T/late.pcap") &
reader=$!
capture_on "the second live capture"
p=$(free_tcp_port)
pair 240 "$p" "$UROCE run -- ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 2000 -p $p" \
	"$UROCE run -- ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 2000 -p $p 127.0.0.1" ||
	{ cat "$T/cli.log"; fail "ib_write_bw with a reader that does not read"; }
grep -Eq '^ 65536 +2000 ' "$T/cli.log" || fail "ib_write_bw result line" " 65536 2000 ..." "$(cat "$T/cli.log")"
echo "ok: ib_write_bw 2000 x 65536 completed while the pipe's reader slept"
st=$(cap_status)
frames=$(echo "$st" | sed -n 's/.* frames=\([0-9]*\) dropped=[0-9]*$/\1/p')
dropped=$(echo "$st" | sed -n 's/.* dropped=\([0-9]*\)$/\1/p')
echo "capture status: $st"
[ "${dropped:-0}" -gt 0 ] || fail "frames dropped for the sleeping reader" "> 0" "$dropped"
echo "ok: $dropped frames dropped, $frames kept"
expect_eq "capture stop" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"
touch "$T/go"
wait $reader
expect_eq "frames in what the late reader got" "$frames" "$("$TSHARK" -r "$T/late.pcap" 2>"$T/late.err" | wc -l)"
expect_eq "tshark errors on it (a record cut short would show)" "" "$(grep -v 'Running as user' "$T/late.err")"

# 3. a reader that goes away
(uroce capture start uroce0 - 2>/dev/null | head -c 4096 >/dev/null) &
reader=$!
capture_on "the third live capture"
pingpong gone ibv_rc_pingpong uroce0 4096 200 -s 4096 -n 200 -m 1024
wait $reader
n=0
until [ "$(cap_status)" = off ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "capture after the reader left" off "$(cap_status)"
	sleep 0.1
done
echo "ok: the capture stopped by itself when its reader left"
grep -q 'capture: the reader of pipe:\[[0-9]*\] went away (Broken pipe)' "$UROCE_RUN_DIR/uroce0.log" ||
	fail "the daemon's log says why the capture stopped"
echo "ok: logged: $(grep -o 'capture: the reader of .*' "$UROCE_RUN_DIR/uroce0.log")"
expect_eq "a new capture starts" "uroce0: capturing to $T/after.pcap" "$(uroce capture start uroce0 "$T/after.pcap" 2>&1)"
uroce capture stop uroce0 >/dev/null

# 4. stdout a terminal (script(1) gives the command one)
script -qec "$UROCE capture start uroce0 -" /dev/null >"$T/tty.out" 2>&1
expect_eq "capture to a terminal: exit status" 1 "$?"
grep -q 'stdout is a terminal; pipe it into a reader' "$T/tty.out" ||
	fail "capture to a terminal: message" "stdout is a terminal..." "$(cat "$T/tty.out")"
echo "ok: capture to a terminal refused"
expect_eq "status after the refusal" off "$(cap_status)"
