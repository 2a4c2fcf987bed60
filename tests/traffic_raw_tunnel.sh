#!/bin/sh
# traffic_raw_tunnel: VXLAN tunnel and inner flow specs and inner RSS
# (docs/raw-packet.md §4, §5) between uroce0 (127.0.0.1) and uroce1
# (127.0.0.2) on one segment: tests/traffic_raw_tunnel (Check) under
# `uroce run`; then `uroce status` counts exactly the 60 frames on UDP 4790
# that no rule took.
. "$top_srcdir/tests/lib.sh"

while :; do
	vp=$((20000 + $(rand16) % 40000))
	ss -H -u -a -n 2>/dev/null | awk '{print $4}' | grep -q ":$vp\$" || break
done
up --dev uroce0 --vxlan-port "$vp" --vxlan-peer 127.0.0.2
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" --vxlan-port "$vp" \
	--vxlan-peer 127.0.0.1 >/dev/null || fail "uroce up uroce1"
timeout 900 "$UROCE" run -- "$top_builddir/tests/traffic_raw_tunnel"
expect_eq "traffic_raw_tunnel exit status" 0 "$?"
uroce status --dev uroce1 >"$T/st" || fail "uroce status"
for kv in rx_no_rule=60 rx_no_wqe=0 rx_rule_drop=0; do
	grep -q "^eth .* $kv\( \|\$\)" "$T/st" || fail "uroce1: $kv" "$kv" "$(grep '^eth' "$T/st")"
done
echo "ok: uroce status counts the 60 frames no rule took"
