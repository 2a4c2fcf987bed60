#!/bin/sh
# traffic_mcast: tests/traffic_mcast (Check) under `uroce run`: attach and
# detach errors and limits, UD multicast delivery on uroce0 and between
# uroce0 (127.0.0.1) and uroce1 (127.0.0.2) over their VXLAN segment
# (docs/multicast.md); then `uroce status` counts exactly what went where.
. "$top_srcdir/tests/lib.sh"

while :; do
	vp=$((20000 + $(rand16) % 40000))
	ss -H -u -a -n 2>/dev/null | awk '{print $4}' | grep -q ":$vp\$" || break
done
up --dev uroce0 --mtu 1024 --vxlan-port "$vp" --vxlan-peer 127.0.0.2
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" --mtu 1024 --vxlan-port "$vp" \
	--vxlan-peer 127.0.0.1 >/dev/null || fail "uroce up uroce1"
timeout 600 "$UROCE" run -- "$top_builddir/tests/traffic_mcast"
rc=$?
expect_eq "traffic_mcast exit status" 0 "$rc"
uroce status --dev uroce0 >"$T/st0" || fail "uroce status uroce0"
uroce status --dev uroce1 >"$T/st1" || fail "uroce status uroce1"
grep '^mcast' "$T/st0" "$T/st1"
# uroce0 sent 2000 + 1 + 1 + 1 + 100 + 1 (delivery) + 1000 (two_devices);
# its QPs took 3103 of them and 1000 frames of uroce1; the wrong Q_Key one
# is dropped by every attached QP, so no QP took it: rx_dropped.
expect_eq "uroce0 mcast line" \
	"mcast groups=0 attached=0 tx=3104 tx_segment=3104 rx_local=3103 rx_segment=1000 rx_no_group=0 rx_dropped=1" \
	"$(grep '^mcast' "$T/st0")"
# uroce1: 1000 sent; every frame of uroce0 arrived: 2104 for groups none of
# its QPs was attached to, 1000 delivered
expect_eq "uroce1 mcast line" \
	"mcast groups=0 attached=0 tx=1000 tx_segment=1000 rx_local=1000 rx_segment=1000 rx_no_group=2104 rx_dropped=0" \
	"$(grep '^mcast' "$T/st1")"
