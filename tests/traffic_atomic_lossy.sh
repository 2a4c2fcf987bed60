#!/bin/sh
# traffic_atomic_lossy: the race of tests/traffic_atomic (2 processes x 4
# QPs x 1000 FETCH_ADDs of 1 on one word) under `uroce up --loss 2 --seed
# 5`: lost requests and lost ATOMIC Acknowledges make the requesters retry,
# so the responder sees duplicate atomics. The word must still end at
# exactly 8000 with every original 0..7999 returned once: duplicates are
# answered from the replay cache, never executed again. The daemon's
# counters (read while the QPs exist) show the duplicates and the drops.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0 --mtu 1024 --loss 2 --seed 5
TRAFFIC_ATOMIC_STATUS="$UROCE status --dev uroce0 >$T/status 2>&1" \
	timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_atomic" race 2 4 1000 >"$T/out" 2>&1
rc=$?
cat "$T/out"
expect_eq "traffic_atomic race exit status" 0 "$rc"
expect_eq "race result" "race: 2 processes x 4 QPs x 1000 FETCH_ADDs: word 8000, 0 originals wrong or repeated" \
	"$(grep '^race:' "$T/out")"
dups=$(sed -n 's/.* dup_requests=\([0-9]*\).*/\1/p' "$T/status" | awk '{ s += $1 } END { print s + 0 }')
[ "$dups" -gt 0 ] || fail "duplicate requests seen by the responders" "> 0" "$(cat "$T/status")"
echo "ok: the responders answered $dups duplicate requests"
dropped=$(sed -n 's/^udp .* tx_dropped=\([0-9]*\).*/\1/p' "$T/status")
[ -n "$dropped" ] && [ "$dropped" -gt 0 ] || fail "packets dropped by --loss 2" "> 0" "$(grep '^udp ' "$T/status")"
echo "ok: the daemon dropped $dropped packets"
