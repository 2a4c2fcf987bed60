#!/bin/sh
# it_wire: what uroce puts on the wire (docs/transport.md, "What uroce
# sends"), captured by tcpdump on the loopback while Debian's perftest
# ib_send_bw runs between uroce0 (127.0.0.1) and uroce1 (127.0.0.2) with
# --tclass 0x62 (DSCP 24, ECN ECT(0)) on both sides: every RoCEv2 packet
# in both directions has IP ID 0, DF, TTL 64, TOS 0x62, the UDP source port
# of the flow-label convention for the two QPNs (rdma_get_udp_sport, as
# mlx5 and kernel rxe pick it), and an ICRC `uroce inspect` verifies over
# the header the kernel really wrote.
# Both devices run with --no-gso: the loopback passes a UDP_SEGMENT send
# whole, so tcpdump -i lo would see one datagram per run (docs/gso.md);
# tests/it_gso.sh checks GSO on a link that segments.
# Needs root for tcpdump (CAP_NET_RAW): exit 77 (SKIP) otherwise.
. "$top_srcdir/tests/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: it_wire captures with tcpdump, which needs root"
	exit 77
fi
command -v tcpdump >/dev/null 2>&1 || fail "tcpdump not found (Debian package tcpdump)"
command -v tshark >/dev/null 2>&1 || fail "tshark not found (Debian package tshark)"
up --dev uroce0 --no-gso
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" --no-gso >/dev/null || fail "uroce up uroce1"

tcpdump -i lo -n -U -B 65536 -w "$T/wire.pcap" "udp dst port $UROCE_PORT" 2>"$T/tcpdump.err" &
_td=$!
_n=100
until grep -q "listening on" "$T/tcpdump.err"; do
	_n=$((_n - 1))
	[ $_n -gt 0 ] || fail "tcpdump did not start: $(cat "$T/tcpdump.err")"
	sleep 0.1
done
sleep 1

_p=$(free_tcp_port)
pair 120 "$_p" "$UROCE run -- ib_send_bw -d uroce0 -x 0 -F -n 20 -s 3000 --tclass=0x62 -p $_p" \
	"$UROCE run -- ib_send_bw -d uroce1 -x 0 -F -n 20 -s 3000 --tclass=0x62 -p $_p 127.0.0.1"
_rc=$?
sleep 1
kill -INT "$_td"
wait "$_td"
cat "$T/cli.log"
expect_eq "ib_send_bw: both sides exit 0" 0 "$_rc"

# QPNs of the two ends, from the client's "local address" / "remote address" lines
qa=$(sed -n 's/^ local address: .* QPN \(0x[0-9a-f]*\) .*/\1/p' "$T/cli.log")
qb=$(sed -n 's/^ remote address: .* QPN \(0x[0-9a-f]*\) .*/\1/p' "$T/cli.log")
[ -n "$qa" ] && [ -n "$qb" ] || fail "QPNs in the perftest output"
# rdma_get_udp_sport(0, qa, qb): docs/wire-format.md §1.7
v=$((qa * qb))
v=$((v ^ (v >> 20)))
v=$((v ^ (v >> 40)))
fl=$((v & 0xFFFFF))
sport=$((0xC000 | ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14))))
echo "QPNs $qa $qb: flow label $(printf 0x%05x $fl), UDP source port $(printf 0x%04x $sport)"

tshark -r "$T/wire.pcap" -n -T fields -E separator=' ' -e ip.id -e ip.flags.df -e ip.ttl -e ip.dsfield \
	-e udp.srcport -e ip.src >"$T/fields" 2>"$T/tshark.err" || fail "tshark: $(cat "$T/tshark.err")"
total=$(wc -l <"$T/fields")
# the receiver acknowledges once per receive batch (coalesced ACKs, docs/transport.md)
[ "$total" -ge 21 ] || fail "packets captured" ">= 21 (20 SEND ONLY at MTU 4096, at least one ACK)" "$total"
# DF prints as 1 or True depending on the tshark version
good=$(awk -v sp="$sport" '($1 == "0x0000" && ($2 == "1" || $2 == "True") && $3 == 64 && $4 == "0x62" &&
	$5 == sp) { n++ } END { print n + 0 }' "$T/fields")
expect_eq "packets with ID 0, DF, TTL 64, TOS 0x62, UDP source port $sport" "$total" "$good"
from1=$(awk '$6 == "127.0.0.1"' "$T/fields" | wc -l)
from2=$(awk '$6 == "127.0.0.2"' "$T/fields" | wc -l)
[ "$from1" -gt 0 ] && [ "$from2" -gt 0 ] || fail "both directions captured" "> 0 each" "$from1 $from2"
echo "ok: $total packets ($from1 from uroce0, $from2 from uroce1)"

"$UROCE" inspect --summary --port "$UROCE_PORT" "$T/wire.pcap" >"$T/inspect" 2>&1
_irc=$?
cat "$T/inspect"
expect_eq "uroce inspect: exit status (every ICRC good)" 0 "$_irc"
grep -q "^summary: $total packets, RoCEv2 $total, .* malformed 0, bad ICRC 0\$" "$T/inspect" ||
	fail "inspect summary" "summary: $total packets, RoCEv2 $total, ... malformed 0, bad ICRC 0" "$(head -1 "$T/inspect")"
