#!/bin/sh
# traffic_raw_tso: TSO on raw packet QPs, uroce0 (127.0.0.1) sending to
# uroce1 (127.0.0.2) on one VXLAN segment (docs/raw-packet.md §3):
#  - tests/traffic_raw_tso (Check) under `uroce run`: tso_caps, the
#    max_tso_header bounds, a 64 KiB IBV_WR_TSO at MSS 1448 as 46 segments
#    checked byte for byte and reassembled, 199 more of other sizes and
#    MSS, IPv6 through ibv_wr_send_tso, the refused posts and WQEs;
#  - `uroce capture` of uroce0 read by tshark with checksum validation on:
#    exactly the segments the test sent to TCP port 7001, each with the
#    inner IPv4 and TCP checksums good, and the three segments sent without
#    IBV_SEND_IP_CSUM to port 7002 with the TCP checksum bad (the header's).
. "$top_srcdir/tests/lib.sh"
: "${TSHARK:?tshark was not found by configure (Debian package tshark)}"

while :; do
	vp=$((20000 + $(rand16) % 40000))
	ss -H -u -a -n 2>/dev/null | awk '{print $4}' | grep -q ":$vp\$" || break
done
up --dev uroce0 --vxlan-port "$vp" --vxlan-peer 127.0.0.2
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" --vxlan-port "$vp" \
	--vxlan-peer 127.0.0.1 >/dev/null || fail "uroce up uroce1"

uroce capture start uroce0 "$T/tso.pcap" >/dev/null || fail "uroce capture start"
timeout 900 "$UROCE" run -- "$top_builddir/tests/traffic_raw_tso"
rc=$?
uroce capture stop uroce0 >/dev/null || fail "uroce capture stop"
expect_eq "traffic_raw_tso exit status" 0 "$rc"

# segments test_tso_ipv4 sent: k = 0: 64 KiB at 1448; k = 1..199: k*331 % 20000
# bytes at 536 + k % 912
want=$(awk 'BEGIN { n = 46; for (k = 1; k < 200; k++) { l = (k * 331) % 20000; m = 536 + k % 912;
	n += l <= m ? 1 : int((l + m - 1) / m) } print n }')
"$TSHARK" -r "$T/tso.pcap" -n -d "udp.port==$vp,vxlan" -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE \
	-Y "vxlan && tcp.dstport==7001" -T fields -E separator=' ' -e ip.checksum.status -e tcp.checksum.status \
	-e tcp.len >"$T/v4" 2>"$T/tshark.err" || fail "tshark: $(cat "$T/tshark.err")"
expect_eq "IPv4 TSO segments in the capture" "$want" "$(wc -l <"$T/v4")"
# outer and inner IPv4 header checksums good (1,1), TCP checksum good (1)
expect_eq "IPv4 TSO segments with every checksum good" "$want" "$(awk '$1 == "1,1" && $2 == "1"' "$T/v4" | wc -l)"
expect_eq "full segments of 1448 bytes" 45 "$(awk '$3 == 1448' "$T/v4" | wc -l)"
"$TSHARK" -r "$T/tso.pcap" -n -d "udp.port==$vp,vxlan" -o tcp.check_checksum:TRUE \
	-Y "vxlan && tcp.dstport==7002" -T fields -E separator=' ' -e tcp.checksum.status -e tcp.len \
	>"$T/v6" 2>"$T/tshark.err" || fail "tshark: $(cat "$T/tshark.err")"
expect_eq "IPv6 segments: 21 with good checksums, then 3 without IP_CSUM" \
	"$(printf '1 1440\n%.0s' $(seq 20); printf '1 1200\n0 20\n0 20\n0 10')" "$(cat "$T/v6")"
echo "ok: tshark reads $want IPv4 TSO segments with good checksums"
