#!/bin/sh
# traffic_raw: raw packet QPs between uroce0 (127.0.0.1) and uroce1
# (127.0.0.2), one VXLAN segment (docs/raw-packet.md):
#  - forged VXLAN datagrams to uroce1 (raw_vxlan_forge.py) are dropped and
#    counted, and the daemon carries on;
#  - tests/traffic_raw (Check) under `uroce run`: frames of 18..1514 bytes,
#    jumbo frames to 9014 bytes (9018 with a VLAN tag) at --eth-mtu 9000,
#    IBV_SEND_IP_CSUM, 3024 frames between two QPs of one device (48 a post:
#    the client doorbell budget cuts the turn at 32), steering
#    (rules, priorities, DROP, COUNT, tag, C-VLAN, default and sniffer rules),
#    negative paths;
#  - `uroce status` counts exactly the frames no rule took and the one a
#    DROP rule took;
#  - `uroce capture` of uroce0 decoded by tshark: vxlan, then eth / vlan /
#    ip / udp with the exact fields of the VLAN-tagged frame.
. "$top_srcdir/tests/lib.sh"
: "${TSHARK:?tshark was not found by configure (Debian package tshark)}"

# a UDP port nobody uses on 127.0.0.1 or 127.0.0.2
while :; do
	vp=$((20000 + $(rand16) % 40000))
	ss -H -u -a -n 2>/dev/null | awk '{print $4}' | grep -q ":$vp\$" || break
done
vni=$((0x5a0001))
# jumbo frames: MTU 9000 on both (traffic_raw.c sends up to 9014 and 9018 bytes)
up --dev uroce0 --vxlan-port "$vp" --vxlan-vni "$vni" --vxlan-peer 127.0.0.2 --eth-mtu 9000
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" --vxlan-port "$vp" --vxlan-vni "$vni" \
	--vxlan-peer 127.0.0.1 --eth-mtu 9000 >/dev/null || fail "uroce up uroce1"
uroce status --dev uroce1 >"$T/st0" || fail "uroce status"
grep -q "^eth mac=02:00:7f:00:00:02 mtu=9000 vxlan=on vxlan_port=$vp vni=$vni peers=1 " "$T/st0" ||
	fail "uroce1's eth line" "eth mac=02:00:7f:00:00:02 mtu=9000 vxlan=on vxlan_port=$vp vni=$vni peers=1 ..." \
		"$(grep '^eth' "$T/st0")"

"$PYTHON3" "$top_srcdir/tests/raw_vxlan_forge.py" 127.0.0.2 "$vp" "$vni" 9000 || fail "raw_vxlan_forge.py"
# the daemon reads them before it answers the status request that follows
sleep 1
uroce status --dev uroce1 >"$T/st1" || fail "uroce status after the forged datagrams"
for kv in rx_vxlan=7 rx_bad_vxlan=6 rx_wrong_vni=1 rx_frames=0; do
	grep -q "^eth .* $kv " "$T/st1" || fail "uroce1 after forging: $kv" "$kv" "$(grep '^eth' "$T/st1")"
done
echo "ok: 7 forged VXLAN datagrams dropped and counted"

uroce capture start uroce0 "$T/raw.pcap" >/dev/null || fail "uroce capture start"
timeout 900 "$UROCE" run -- "$top_builddir/tests/traffic_raw"
rc=$?
uroce capture stop uroce0 >/dev/null || fail "uroce capture stop"
expect_eq "traffic_raw exit status" 0 "$rc"

uroce status --dev uroce1 >"$T/st2" || fail "uroce status"
uroce status --dev uroce0 >"$T/st3" || fail "uroce status"
grep '^eth' "$T/st2" "$T/st3"
# 4 frames to UDP port 5003 matched no rule; 1 + 3 went to DROP rules
# (test_steering, test_count)
for kv in rx_no_rule=4 rx_rule_drop=4 rx_no_wqe=0 rx_bad_vxlan=6 tx_errors=0; do
	grep -q "^eth .* $kv\( \|\$\)" "$T/st2" || fail "uroce1: $kv" "$kv" "$(grep '^eth' "$T/st2")"
done
grep -q "^eth .* rules=0 " "$T/st2" || fail "uroce1: every rule destroyed" "rules=0" "$(grep '^eth' "$T/st2")"
echo "ok: uroce status counts the dropped frames"

# raw QP sends are charged to the client's doorbell budget (32 send WQEs a
# loop turn, emu/nic/doorbell.h): test_one_device_many posts 48 at a time
db=$(grep '^doorbells' "$T/st3")
expect_eq "uroce0: most raw send WQEs one client got in a loop turn" 32 \
	"$(echo "$db" | sed -n 's/.*\bturn_max=\([0-9]*\).*/\1/p')"
stops=$(echo "$db" | sed -n 's/.*\bbudget_stops=\([0-9]*\).*/\1/p')
[ -n "$stops" ] && [ "$stops" -gt 0 ] || fail "uroce0: turns cut short by the budget" "> 0" "$db"
echo "ok: raw sends within the client budget ($stops turns cut short)"

# tshark: every VXLAN datagram uroce0 sent, with the VNI; the one
# VLAN-tagged frame (test_steering) field by field
tx=$(sed -n 's/^eth .* tx_vxlan=\([0-9]*\) .*/\1/p' "$T/st3")
"$TSHARK" -r "$T/raw.pcap" -n -d "udp.port==$vp,vxlan" -Y "vxlan && ip.src==127.0.0.1" \
	-T fields -E separator=' ' -e vxlan.vni -e eth.src -e eth.dst >"$T/vx" 2>"$T/tshark.err" ||
	fail "tshark: $(cat "$T/tshark.err")"
expect_eq "VXLAN datagrams in the capture = uroce0's tx_vxlan" "$tx" "$(wc -l <"$T/vx")"
expect_eq "all with VNI $vni, from 02:00:7f:00:00:01" "$tx" \
	"$(awk -v v="$vni" '$1 == v && $2 == "02:00:7f:00:00:01"' "$T/vx" | wc -l)"
"$TSHARK" -r "$T/raw.pcap" -n -d "udp.port==$vp,vxlan" -Y "vxlan && vlan && udp.dstport==5002" \
	-T fields -E separator=' ' -e udp.dstport -e vxlan.flags -e vxlan.vni -e eth.dst -e eth.src -e vlan.priority \
	-e vlan.id -e vlan.etype -e ip.src -e ip.dst -e ip.proto -e ip.len -e udp.srcport -e udp.length \
	>"$T/vlan" 2>"$T/tshark.err" || fail "tshark: $(cat "$T/tshark.err")"
expect_eq "the VLAN frame, decoded" "$vp,5002 0x0800 $vni 02:00:7f:00:00:02 02:00:7f:00:00:01 3 5 0x0800 127.0.0.1,10.0.0.1 127.0.0.2,10.0.0.2 17,17 $((20 + 8 + 8 + 300)),282 $vp,9 $((8 + 8 + 300)),262" \
	"$(cat "$T/vlan")"
echo "ok: tshark decodes vxlan / eth / vlan / ip / udp"
