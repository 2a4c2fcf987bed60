#!/bin/sh
# traffic_lossy: with `uroce up --loss 5 --seed 7` (the daemon drops 5% of
# the packets it sends, reproducibly), 10,000 RC SENDs of mixed sizes
# (1..9000 bytes, path MTU 1024) between two contexts arrive byte-exact,
# in order, each completed exactly once (tests/traffic_lossy.c); the
# daemon's counters show that packets were really dropped.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0 --mtu 1024 --loss 5 --seed 7
timeout 600 "$UROCE" run -- "$top_builddir/tests/traffic_lossy" 10000 >"$T/out" 2>&1
rc=$?
cat "$T/out"
expect_eq "traffic_lossy exit status" 0 "$rc"
expect_eq "summary" "10000 messages, $(awk 'BEGIN {
	s = 0
	for (i = 0; i < 10000; i++) {
		if (i % 5 == 0) { split("1 1023 1024 1025 2048 4096 9000", e, " "); s += e[int(i / 5) % 7 + 1] }
		else { x = (i * 2654435761) % 4294967296; s += 1 + int(x / 256) % 6000 }
	}
	print s }') bytes: all completed once, in order, byte-exact" "$(cat "$T/out")"
uroce status --dev uroce0 >"$T/status" 2>&1
udp=$(grep '^udp ' "$T/status")
echo "$udp"
dropped=$(echo "$udp" | sed -n 's/.* tx_dropped=\([0-9]*\).*/\1/p')
[ -n "$dropped" ] && [ "$dropped" -gt 0 ] || fail "packets dropped by --loss 5" "> 0" "$udp"
echo "ok: the daemon dropped $dropped packets"
