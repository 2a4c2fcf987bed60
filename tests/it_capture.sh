#!/bin/sh
# it_capture: `uroce capture start|stop DEV FILE` and `uroce up --pcap FILE`
# drive the daemon's pcap recorder: the daemon's status follows, a relative
# FILE is made absolute, the file is a valid (empty, no traffic yet) pcap
# that tshark reads, and an unwritable path is refused with a message.
# With traffic: up --pcap records every packet of an ibv_rc_pingpong run,
# exact counts per opcode, every ICRC good.
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

# `uroce up --pcap FILE` records real traffic: ibv_rc_pingpong, 10 rounds of
# 4 KiB at MTU 1024 = 20 SENDs of 4 packets (FIRST, 2 MIDDLE, LAST) and one
# ACK each, every ICRC good (a device on another port than 4791 needs
# inspect's --port).
uroce down --dev uroce0 >/dev/null 2>&1 || fail "uroce down"
up --dev uroce0 --pcap "$T/traffic.pcap"
_p=$(free_tcp_port)
pair 60 "$_p" "$UROCE run -- ibv_rc_pingpong -d uroce0 -g 0 -n 10 -s 4096 -m 1024 -p $_p" \
	"$UROCE run -- ibv_rc_pingpong -d uroce0 -g 0 -n 10 -s 4096 -m 1024 -p $_p 127.0.0.1" ||
	{ cat "$T/srv.log" "$T/cli.log"; fail "ibv_rc_pingpong under capture"; }
expect_eq "capture stop after traffic" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"
uroce inspect --port "$UROCE_PORT" --summary "$T/traffic.pcap" >"$T/insp" 2>&1
expect_eq "inspect exit status" 0 $?
expect_line "inspect summary" "$T/insp" \
	"summary: 100 packets, RoCEv2 100, RoCEv1 0, non-RoCE skipped 0, malformed 0, bad ICRC 0"
expect_line "inspect opcodes" "$T/insp" \
	"opcodes: RC_SEND_FIRST 20, RC_SEND_MIDDLE 40, RC_SEND_LAST 20, RC_ACKNOWLEDGE 20"
