#!/bin/sh
# inspect_follow: `uroce inspect --follow FILE` reads a capture file while
# the daemon is still writing it (docs/inspect.md, "Live capture"):
#  - started before any traffic, it prints the packets of an
#    ibv_rc_pingpong run (200 x 4096 bytes at MTU 1024: 2000 frames) while
#    the capture is still on (the daemon flushes its file every clock tick,
#    1 s), one line each with the opcodes of the run;
#  - SIGINT ends it with the summary of all 2000 packets and exit status 0;
#  - a file that is not classic pcap (pcapng) or never gets a header: one
#    line and exit status 2.
. "$top_srcdir/tests/lib.sh"
: "${TSHARK:?tshark was not found by configure (Debian package tshark)}"
INSPECT="$UROCE inspect"

up --dev uroce0 --mtu 1024 --pcap "$T/live.pcap"
$INSPECT --follow --port "$UROCE_PORT" "$T/live.pcap" >"$T/follow.out" 2>"$T/follow.err" &
follower=$!
pingpong live ibv_rc_pingpong uroce0 4096 200 -s 4096 -n 200 -m 1024
# packets(): the packet lines printed so far
packets() { grep -c 'RoCEv2' "$T/follow.out"; }
n=0
until [ "$(packets)" -ge 2000 ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "packet lines printed while the capture runs" 2000 "$(packets)"
	sleep 0.1
done
uroce status --dev uroce0 | grep -q '^capture on ' || fail "the capture is still on"
echo "ok: 2000 packet lines printed while the capture was still on"
for op in RC_SEND_FIRST:200 RC_SEND_MIDDLE:400 RC_SEND_LAST:200 RC_ACKNOWLEDGE:200; do
	name=${op%:*} want=${op#*:}
	# 200 messages each way: twice the per-direction count
	expect_eq "$name lines" $((want * 2)) "$(grep -c " $name " "$T/follow.out")"
done
kill -INT $follower
wait $follower
expect_eq "--follow exit status after SIGINT" 0 "$?"
expect_line "summary after SIGINT" "$T/follow.out" \
	"summary: 2000 packets, RoCEv2 2000, RoCEv1 0, non-RoCE skipped 0, malformed 0, bad ICRC 0"
expect_eq "--follow stderr" "" "$(cat "$T/follow.err")"

# not classic pcap: tshark writes pcapng by default
"$TSHARK" -r "$T/live.pcap" -w "$T/ng.pcapng" -F pcapng 2>/dev/null || fail "tshark -F pcapng"
$INSPECT --follow "$T/ng.pcapng" >/dev/null 2>"$T/ng.err"
expect_eq "--follow on pcapng: exit status" 2 "$?"
expect_eq "--follow on pcapng: message" "uroce inspect: $T/ng.pcapng: --follow reads classic pcap files only (magic 0x0a0d0d0a)" \
	"$(cat "$T/ng.err")"
: >"$T/empty.pcap"
timeout 30 $INSPECT --follow "$T/empty.pcap" >/dev/null 2>"$T/empty.err"
expect_eq "--follow on a file without a header: exit status" 2 "$?"
expect_eq "--follow on a file without a header: message" "uroce inspect: $T/empty.pcap: no pcap file header within 10 s" \
	"$(cat "$T/empty.err")"
$INSPECT --follow "$T/missing.pcap" >/dev/null 2>"$T/missing.err"
expect_eq "--follow on a missing file: exit status" 2 "$?"
expect_eq "--follow on a missing file: message" "uroce inspect: $T/missing.pcap: No such file or directory" \
	"$(cat "$T/missing.err")"
