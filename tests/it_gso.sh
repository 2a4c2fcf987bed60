#!/bin/sh
# it_gso: UDP GSO and GRO between two devices (docs/gso.md).  Two network
# namespaces joined by a veth pair (10.79.0.1/24, 10.79.0.2/24, MTU 1500),
# whose ends segment in software (ethtool tx-udp-segmentation off), so
# tcpdump on the veth sees each RoCEv2 packet as the peer receives it.
# rdma-core's ibv_rc_pingpong -c, 200 SENDs of 64 KiB at MTU 1024 (64
# packets each) each way:
#  1. GSO on (the default): every datagram on the wire carries the IPv4 ID
#     the kernel gives it (0 for a datagram sent alone or first of a
#     UDP_SEGMENT send, then +1 per segment), counted exactly against the
#     device's own counters, and `uroce inspect` verifies every ICRC over
#     the header the kernel really wrote.
#  2. --no-gso: every ID 0, no UDP_SEGMENT send; the RoCE content of the
#     data packets (opcode, flags, payload bytes in PSN order) is
#     byte-identical to run 1's, both ways.
#  3. GRO: two devices on the namespace's loopback (which passes UDP_SEGMENT
#     sends whole): each device's UDP_GRO reads and the datagrams in them
#     are exactly the other's UDP_SEGMENT sends and their datagrams.
#  4. The kernel refuses a run (the link's MTU lowered under the devices):
#     the device resends it datagram by datagram, each refused and counted
#     as too big, as without GSO.
# Needs root (namespaces, tcpdump) and ethtool: exit 77 (SKIP) without root.
. "$top_srcdir/tests/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: it_gso needs root to create network namespaces and capture"
	exit 77
fi
for p in ip ethtool tcpdump python3 ibv_rc_pingpong; do
	command -v $p >/dev/null 2>&1 || fail "$p not found (scripts/install-deps)"
done
NSA=uroce-gso-$$-a
NSB=uroce-gso-$$-b
RA=$T/runa
RB=$T/runb
mkdir -p "$RA" "$RB"

_gso_exit() {
	_rc=$?
	for _r in "$RA" "$RB"; do
		[ -d "$_r" ] && UROCE_RUN_DIR=$_r "$UROCE" down --all >/dev/null 2>&1
	done
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	exit $_rc
}
trap '_gso_exit; _lib_exit' EXIT

ip netns add "$NSA" && ip netns add "$NSB" || fail "ip netns add"
ip link add va netns "$NSA" type veth peer name vb netns "$NSB" || fail "veth pair"
ip -n "$NSA" link set lo up && ip -n "$NSB" link set lo up &&
	ip -n "$NSA" addr add 10.79.0.1/24 dev va && ip -n "$NSB" addr add 10.79.0.2/24 dev vb &&
	ip -n "$NSA" link set va up && ip -n "$NSB" link set vb up || fail "addresses"
ip netns exec "$NSA" ethtool -K va tx-udp-segmentation off >/dev/null &&
	ip netns exec "$NSB" ethtool -K vb tx-udp-segmentation off >/dev/null || fail "ethtool -K tx-udp-segmentation off"

in_ns() {
	_ns=$1 _rd=$2
	shift 2
	ip netns exec "$_ns" env UROCE_RUN_DIR="$_rd" "$@"
}

# ns_listening NS TCPPORT: something listens on TCPPORT in NS (within 60 s).
ns_listening() {
	_n=600
	while [ $_n -gt 0 ]; do
		ip netns exec "$1" ss -H -t -l -n 2>/dev/null | awk '{print $4}' | grep -q ":$2\$" && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# pingpong NSS RDS NSC RDC ADDR TAG: ibv_rc_pingpong -c, 200 x 64 KiB at MTU
# 1024, server in NSS, client in NSC (to ADDR); both must exit 0 with the
# byte count.
pingpong() {
	_p=$(free_tcp_port)
	timeout 300 ip netns exec "$1" env UROCE_RUN_DIR="$2" "$UROCE" run -- \
		ibv_rc_pingpong -d "${DEVS:-uroce0}" -g 0 -c -m 1024 -s 65536 -n 200 -p "$_p" >"$T/srv-$6.log" 2>&1 &
	_sp=$!
	ns_listening "$1" "$_p" || echo "$6: the server never listened on TCP port $_p"
	timeout 300 ip netns exec "$3" env UROCE_RUN_DIR="$4" "$UROCE" run -- \
		ibv_rc_pingpong -d "${DEVC:-uroce0}" -g 0 -c -m 1024 -s 65536 -n 200 -p "$_p" "$5" >"$T/cli-$6.log" 2>&1
	_c=$?
	wait $_sp
	_s=$?
	cat "$T/srv-$6.log" "$T/cli-$6.log"
	expect_eq "$6: ibv_rc_pingpong exit status server client" "0 0" "$_s $_c"
	for _side in srv cli; do
		grep -Eq "^26214400 bytes in [0-9.]+ seconds" "$T/$_side-$6.log" ||
			fail "$6 $_side: bytes line" "26214400 bytes in S seconds ..." "$(grep 'bytes in' "$T/$_side-$6.log")"
	done
}

# offload NS RD [DEV]: OFF = the udp_offload line of the device's status as
# "gso gro sends packets fallbacks gro_reads gro_packets", TXP = its
# tx_packets.
offload() {
	in_ns "$1" "$2" "$UROCE" status --dev "${3:-uroce0}" >"$T/status" 2>&1 || fail "uroce status in $1"
	TXP=$(sed -n 's/^udp .* tx_packets=\([0-9]*\) .*/\1/p' "$T/status")
	OFF=$(sed -n 's/^udp_offload gso=\([^ ]*\) gro=\([^ ]*\) gso_sends=\([0-9]*\) gso_packets=\([0-9]*\) gso_fallbacks=\([0-9]*\) gro_reads=\([0-9]*\) gro_packets=\([0-9]*\)$/\1 \2 \3 \4 \5 \6 \7/p' \
		"$T/status")
}

# run TAG [UP OPTIONS]: both devices up with OPTIONS, the pingpong captured
# on va into $T/TAG.pcap, the devices' offload lines into OFF_A / OFF_B.
run() {
	_tag=$1
	shift
	in_ns "$NSA" "$RA" "$UROCE" up --addr 10.79.0.1 --mtu 1024 "$@" >/dev/null || fail "$_tag: uroce up in $NSA"
	in_ns "$NSB" "$RB" "$UROCE" up --addr 10.79.0.2 --mtu 1024 "$@" >/dev/null || fail "$_tag: uroce up in $NSB"
	ip netns exec "$NSA" tcpdump -i va -n -U -s 0 -B 65536 -w "$T/$_tag.pcap" "udp port 4791" 2>"$T/tcpdump.err" &
	_td=$!
	_n=100
	until grep -q "listening on" "$T/tcpdump.err"; do
		_n=$((_n - 1))
		[ $_n -gt 0 ] || fail "tcpdump did not start: $(cat "$T/tcpdump.err")"
		sleep 0.1
	done
	pingpong "$NSB" "$RB" "$NSA" "$RA" 10.79.0.2 "$_tag"
	sleep 1
	kill -INT $_td
	wait $_td
	offload "$NSA" "$RA"
	OFF_A=$OFF TXP_A=$TXP
	offload "$NSB" "$RB"
	OFF_B=$OFF TXP_B=$TXP
	echo "$_tag: uroce0 in $NSA: tx_packets=$TXP_A offload $OFF_A; in $NSB: tx_packets=$TXP_B offload $OFF_B"
	in_ns "$NSA" "$RA" "$UROCE" down --all >/dev/null
	in_ns "$NSB" "$RB" "$UROCE" down --all >/dev/null
	"$UROCE" inspect --summary "$T/$_tag.pcap" >"$T/inspect" 2>&1
	_irc=$?
	head -3 "$T/inspect"
	expect_eq "$_tag: uroce inspect exit status (every ICRC good)" 0 "$_irc"
	_tot=$((TXP_A + TXP_B))
	expect_line "$_tag: inspect summary" "$T/inspect" \
		"summary: $_tot packets, RoCEv2 $_tot, RoCEv1 0, non-RoCE skipped 0, malformed 0, bad ICRC 0"
	for _src in 10.79.0.1 10.79.0.2; do
		python3 "$top_srcdir/tests/gso_wire.py" data "$T/$_tag.pcap" $_src >"$T/$_tag-$_src.data" ||
			fail "gso_wire.py data"
		# 200 SENDs of 64 packets (FIRST, 62 MIDDLE, LAST) each way
		expect_eq "$_tag: data packets from $_src" 12800 "$(wc -l <"$T/$_tag-$_src.data")"
	done
}

# ids_expect TAG SRC TXP OFFLOAD: the IDs of SRC's datagrams against its
# device's counters: gso_packets - gso_sends of them are later segments
# (ID = previous + 1), the rest have ID 0, none other.
ids_expect() {
	set -- "$1" "$2" "$3" $4
	_later=$(($7 - $6))
	expect_eq "$1: IPv4 IDs from $2 (tx_packets $3, UDP_SEGMENT sends $6 of $7 datagrams)" \
		"packets $3 id0 $(($3 - _later)) idnext $_later other 0" \
		"$(python3 "$top_srcdir/tests/gso_wire.py" ids "$T/$1.pcap" "$2")"
}

# 1. GSO on
run gso
set -- $OFF_A
expect_eq "gso: uroce0 in $NSA: GSO and GRO on" "on on" "$1 $2"
[ "$3" -gt 0 ] && [ "$4" -gt "$3" ] || fail "gso: UDP_SEGMENT sends carried the data" "sends > 0, packets > sends" "$3 $4"
expect_eq "gso: no fallback" 0 "$5"
ids_expect gso 10.79.0.1 "$TXP_A" "$OFF_A"
ids_expect gso 10.79.0.2 "$TXP_B" "$OFF_B"
later=$(python3 "$top_srcdir/tests/gso_wire.py" ids "$T/gso.pcap" 10.79.0.1 | awk '{print $6}')
[ "$later" -ge 12000 ] || fail "gso: most datagrams from 10.79.0.1 left as later segments" ">= 12000" "$later"

# 2. GSO off: all IDs 0, the same content
run nogso --no-gso
for o in "$OFF_A" "$OFF_B"; do
	expect_eq "nogso: udp_offload" "off off 0 0 0 0 0" "$o"
done
ids_expect nogso 10.79.0.1 "$TXP_A" "$OFF_A"
ids_expect nogso 10.79.0.2 "$TXP_B" "$OFF_B"
for _src in 10.79.0.1 10.79.0.2; do
	cmp "$T/gso-$_src.data" "$T/nogso-$_src.data" ||
		fail "data packets from $_src byte-identical with and without GSO" "same" "$(diff "$T/gso-$_src.data" "$T/nogso-$_src.data" | head -4)"
done
echo "ok: 2 x 12800 data packets identical with and without GSO"

# 3. GRO: uroce0 (127.0.0.1) and uroce1 (127.0.0.2) on NSA's loopback
in_ns "$NSA" "$RA" "$UROCE" up --dev uroce0 --addr 127.0.0.1 --mtu 1024 >/dev/null || fail "gro: uroce up uroce0"
in_ns "$NSA" "$RA" "$UROCE" up --dev uroce1 --addr 127.0.0.2 --mtu 1024 >/dev/null || fail "gro: uroce up uroce1"
DEVS=uroce1 DEVC=uroce0 pingpong "$NSA" "$RA" "$NSA" "$RA" 127.0.0.2 gro
offload "$NSA" "$RA" uroce0
O0=$OFF
offload "$NSA" "$RA" uroce1
set -- $O0 $OFF
echo "gro: uroce0 offload $1..$7; uroce1 offload $8..${14}"
[ "$3" -gt 0 ] && [ "${10}" -gt 0 ] || fail "gro: both devices sent with UDP_SEGMENT" "> 0 each" "$3 ${10}"
expect_eq "gro: uroce1's GRO reads/datagrams = uroce0's UDP_SEGMENT sends/datagrams" "$3 $4" "${13} ${14}"
expect_eq "gro: uroce0's GRO reads/datagrams = uroce1's UDP_SEGMENT sends/datagrams" "${10} ${11}" "$6 $7"
in_ns "$NSA" "$RA" "$UROCE" down --all >/dev/null

# 4. The kernel refuses a UDP_SEGMENT send: the veth's MTU lowered to 1000
# under running devices, so a 1040-byte segment no longer fits (EINVAL for
# the send of the run); the device resends the run datagram by datagram, so
# each is refused with EMSGSIZE and counted as too big (as without GSO), and
# GSO stays on.  ibv_rc_pingpong -s 4096: a message is a run of 4.
in_ns "$NSA" "$RA" "$UROCE" up --addr 10.79.0.1 --mtu 1024 >/dev/null || fail "refused: uroce up in $NSA"
in_ns "$NSB" "$RB" "$UROCE" up --addr 10.79.0.2 --mtu 1024 >/dev/null || fail "refused: uroce up in $NSB"
ip -n "$NSA" link set va mtu 1000 && ip -n "$NSB" link set vb mtu 1000 || fail "mtu 1000"
_p=$(free_tcp_port)
timeout 120 ip netns exec "$NSB" env UROCE_RUN_DIR="$RB" "$UROCE" run -- \
	ibv_rc_pingpong -d uroce0 -g 0 -m 1024 -s 4096 -n 5 -p "$_p" >"$T/srv-refused.log" 2>&1 &
_sp=$!
ns_listening "$NSB" "$_p" || echo "refused: the server never listened on TCP port $_p"
timeout 120 ip netns exec "$NSA" env UROCE_RUN_DIR="$RA" "$UROCE" run -- \
	ibv_rc_pingpong -d uroce0 -g 0 -m 1024 -s 4096 -n 5 -p "$_p" 10.79.0.2 >"$T/cli-refused.log" 2>&1
_c=$?
kill "$_sp" 2>/dev/null
wait "$_sp"
cat "$T/cli-refused.log"
grep -q "Failed status transport retry counter exceeded (12)" "$T/cli-refused.log" ||
	fail "refused: client: retry error" "Failed status transport retry counter exceeded (12)" "$(cat "$T/cli-refused.log")"
offload "$NSA" "$RA"
set -- $OFF
_errs=$(sed -n 's/^udp .* tx_errors=\([0-9]*\) tx_too_big=\([0-9]*\).*$/\1 \2/p' "$T/status")
echo "refused: uroce0 in $NSA: offload $OFF; tx_errors tx_too_big $_errs"
expect_eq "refused: GSO and GRO stay on" "on on" "$1 $2"
[ "$5" -gt 0 ] || fail "refused: runs the kernel refused" "> 0" "$5"
# each refused run's 4 datagrams, plus retransmissions that leave alone
set -- $_errs "$5"
[ "$1" = "$2" ] && [ "$2" -ge $(($3 * 4)) ] ||
	fail "refused: tx_errors = tx_too_big >= 4 per refused run" "N N, N >= $(($3 * 4))" "$1 $2"
grep -q "UDP payload of 1040 bytes to 10.79.0.2 not sent: Message too long" "$RA/uroce0.log" ||
	fail "refused: the log names the refused datagram" "UDP payload of 1040 bytes ... Message too long" \
		"$(grep 'not sent' "$RA/uroce0.log")"
echo "ok: GSO both ways, off, GRO on the loopback, a run the kernel refused"
