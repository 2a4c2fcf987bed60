#!/bin/sh
# it_capture: `uroce capture start|stop DEV FILE` and `uroce up --pcap FILE`
# drive the daemon's pcap recorder: the daemon's status follows, a relative
# FILE is made absolute, the file is a valid (empty, no traffic yet) pcap
# that tshark reads, and an unwritable path is refused with a message.
# (Frames from real traffic are checked by the data-path tests.)
. "$top_srcdir/tests/lib.sh"
: "${TSHARK:?tshark was not found by configure (Debian package tshark)}"

up --dev uroce0 --pcap "$T/boot.pcap"
uroce status --dev uroce0 >"$T/status" 2>&1
expect_line "up --pcap starts a capture" "$T/status" "capture on file=$T/boot.pcap frames=0"
expect_eq "capture stop" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"
uroce status --dev uroce0 >"$T/status" 2>&1
expect_line "status after stop" "$T/status" "capture off"
expect_eq "pcap file header only (bytes)" 24 "$(stat -c %s "$T/boot.pcap")"
expect_eq "tshark reads it: frames" 0 "$("$TSHARK" -r "$T/boot.pcap" 2>/dev/null | wc -l)"
expect_eq "pcap magic (nanosecond pcap)" "4d3cb2a1" "$(od -An -tx1 -N4 "$T/boot.pcap" | tr -d ' ')"

mkdir "$T/work"
out=$(cd "$T/work" && uroce capture start uroce0 rel.pcap 2>&1)
expect_eq "capture start with a relative path" "uroce0: capturing to $T/work/rel.pcap" "$out"
uroce status --dev uroce0 >"$T/status" 2>&1
expect_line "status while capturing" "$T/status" "capture on file=$T/work/rel.pcap frames=0"
expect_eq "capture stop" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"
[ -f "$T/work/rel.pcap" ] || fail "capture file" "$T/work/rel.pcap" "missing"
echo "ok: $T/work/rel.pcap written"

uroce capture start uroce0 /nonexistent/x.pcap >"$T/out" 2>"$T/err"
expect_eq "capture to a missing directory: exit" 1 $?
expect_eq "capture to a missing directory: message" "uroce capture: uroce0: the daemon refused to capture to /nonexistent/x.pcap" \
	"$(tail -n 1 "$T/err")"
uroce capture start uroce0 >/dev/null 2>&1
expect_eq "capture start without a file: exit" 2 $?
