#!/bin/sh
# it_demo: the README's main job, scripts/demo, as CI runs it (on the tree
# make check has just built: UROCE_DEMO_NO_BUILD=1; its pcap in this test's
# directory): exit 0; ibv_rc_pingpong -t's 1000 x 4 KiB on both sides with
# no failure marker; the clock-cycle statistics line of both sides; and
# `uroce inspect --summary` of the capture: every packet RoCEv2 with a good
# ICRC, at least the 1000 x 4 SEND packets (path MTU 1024) each way.
. "$top_srcdir/tests/lib.sh"
TMPDIR=$T UROCE_DEMO_NO_BUILD=1 UROCE="$top_builddir/uroce" timeout 300 "$top_srcdir/scripts/demo" >"$T/demo.out" 2>&1
rc=$?
cat "$T/demo.out"
expect_eq "scripts/demo exit status" 0 "$rc"
expect_eq "8192000-byte lines (server and client)" 2 "$(grep -Ec '^8192000 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' "$T/demo.out")"
expect_eq "1000-iteration lines (server and client)" 2 "$(grep -Ec '^1000 iters in [0-9.]+ seconds = [0-9.]+ usec/iter$' "$T/demo.out")"
expect_eq "failure markers" "" "$(grep -E 'Failed status|Couldn|invalid data|poll CQ failed|parse WC failed' "$T/demo.out")"
for side in server client; do
	grep -Eq "^$side +min [1-9][0-9]*  avg [0-9]+  max [1-9][0-9]* cycles at [1-9][0-9]* kHz = avg [0-9.]+ us between receives" "$T/demo.out" ||
		fail "$side timestamp line" "$side  min N  avg N  max N cycles at K kHz = ..." "$(grep "^$side " "$T/demo.out")"
done
sum=$(grep '^summary: ' "$T/demo.out")
n=$(echo "$sum" | sed -n 's/^summary: \([0-9]*\) packets, .*/\1/p')
[ -n "$n" ] && [ "$n" -ge 8000 ] || fail "captured packets" ">= 8000 (1000 x 4 packets of 1 KiB each way)" "$sum"
echo "$sum" | grep -q "^summary: $n packets, RoCEv2 $n, RoCEv1 0, non-RoCE skipped 0, malformed 0, bad ICRC 0" ||
	fail "capture summary: every packet RoCEv2 with a good ICRC" "RoCEv2 $n ... bad ICRC 0" "$sum"
echo "ok: $sum"
