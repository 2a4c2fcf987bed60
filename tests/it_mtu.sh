#!/bin/sh
# it_mtu: the port MTU follows the interface, as rxe's does.  Two network
# namespaces made here, joined by a veth pair; addresses 10.77.0.1/24 and
# 10.77.0.2/24 (IPv6 fd77::1/64, fd77::2/64) exist only inside them.
#  1. `uroce up` on the veth: the active MTU is the largest IB MTU whose
#     packets (IP + UDP + BTH + RETH + ImmDt + payload + ICRC) fit the
#     interface MTU read at `uroce up` time, IPv4 and IPv6 (table); --mtu may
#     lower it, a higher one fails with one clear line; an interface too
#     small for IB MTU 256 fails.
#  2. uroce0 in each namespace on MTU-1500 links: ibv_devinfo shows
#     active_mtu 1024 on both, and perftest ib_write_bw, ib_read_bw and
#     ib_send_bw with default options (-d uroce0 -x 0) pass between them.
#  3. The interface MTU lowered after `uroce up`: the kernel refuses the
#     1024-byte-payload datagrams (EMSGSIZE); they are counted (tx_errors,
#     tx_too_big in `uroce status`) and logged, not dropped silently.
# Needs root (network namespaces): exit 77 (SKIP) otherwise.
. "$top_srcdir/tests/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: it_mtu needs root to create network namespaces and a veth pair"
	exit 77
fi
command -v ip >/dev/null 2>&1 || fail "ip (iproute2) not found"
NSA=uroce-mtu-$$-a
NSB=uroce-mtu-$$-b
RA=$T/runa
RB=$T/runb
mkdir -p "$RA" "$RB"

_mtu_exit() {
	_rc=$?
	for _r in "$RA" "$RB"; do
		[ -d "$_r" ] && UROCE_RUN_DIR=$_r "$UROCE" down --all >/dev/null 2>&1
	done
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	exit $_rc
}
trap '_mtu_exit; _lib_exit' EXIT

ip netns add "$NSA" && ip netns add "$NSB" || fail "ip netns add"
ip link add va netns "$NSA" type veth peer name vb netns "$NSB" || fail "veth pair"
ip -n "$NSA" link set lo up && ip -n "$NSB" link set lo up &&
	ip -n "$NSA" addr add 10.77.0.1/24 dev va && ip -n "$NSB" addr add 10.77.0.2/24 dev vb &&
	ip -n "$NSA" addr add fd77::1/64 dev va nodad && ip -n "$NSB" addr add fd77::2/64 dev vb nodad &&
	ip -n "$NSA" link set va up && ip -n "$NSB" link set vb up || fail "addresses"

# in NS RUNDIR CMD...: CMD in namespace NS with UROCE_RUN_DIR=RUNDIR.
in_ns() {
	_ns=$1 _rd=$2
	shift 2
	ip netns exec "$_ns" env UROCE_RUN_DIR="$_rd" "$@"
}

# set_mtu BYTES: the veth's MTU on both ends.
set_mtu() {
	ip -n "$NSA" link set va mtu "$1" && ip -n "$NSB" link set vb mtu "$1" || fail "mtu $1"
}

# 1. The table: interface MTU, address, --mtu (- = none) -> active MTU or
# the error.  Headers: IPv4 20 + 8 + 12 + 16 + 4 + 4 = 64, IPv6 84.  Rows
# under 1280 come last: there the kernel takes IPv6 off the interface.
rows=0
while read -r ifmtu addr opt want; do
	set_mtu "$ifmtu"
	set -- --dev uroce0 --addr "$addr" --port 4791
	[ "$opt" = - ] || set -- "$@" --mtu "$opt"
	in_ns "$NSA" "$RA" "$UROCE" up "$@" >"$T/up.out" 2>&1
	_rc=$?
	case $want in
	[0-9]*)
		[ $_rc -eq 0 ] || { cat "$T/up.out"; fail "uroce up $* on MTU $ifmtu"; }
		expect_eq "MTU $ifmtu $addr --mtu $opt: uroce up says" "$want" \
			"$(sed -n 's/^uroce0: uroced pid [0-9]* on .* mtu \([0-9]*\), socket .*/\1/p' "$T/up.out")"
		in_ns "$NSA" "$RA" "$UROCE" status >"$T/status" 2>&1
		expect_line "MTU $ifmtu $addr --mtu $opt: daemon status" "$T/status" \
			"device uroce0 addr $addr port 4791 mtu $want state PORT_ACTIVE"
		in_ns "$NSA" "$RA" "$UROCE" down --dev uroce0 >/dev/null 2>&1 || fail "uroce down"
		;;
	*)
		[ $_rc -eq 1 ] || fail "MTU $ifmtu $addr --mtu $opt: exit status" 1 "$_rc"
		_msg=$(printf '%s' "$want" | tr '_' ' ')
		expect_eq "MTU $ifmtu $addr --mtu $opt: message" "uroce up: $_msg" "$(cat "$T/up.out")"
		;;
	esac
	rows=$((rows + 1))
done <<'EOF'
1500 10.77.0.1 - 1024
1500 fd77::1 - 1024
1500 10.77.0.1 512 512
1500 fd77::1 256 256
1500 10.77.0.1 2048 --mtu_2048_does_not_fit_interface_va_(MTU_1500):_the_largest_IB_MTU_whose_packets_(64_bytes_of_headers_+_payload)_fit_is_1024
1500 fd77::1 4096 --mtu_4096_does_not_fit_interface_va_(MTU_1500):_the_largest_IB_MTU_whose_packets_(84_bytes_of_headers_+_payload)_fit_is_1024
1280 fd77::1 - 1024
2112 10.77.0.1 - 2048
2111 10.77.0.1 - 1024
2132 fd77::1 - 2048
2131 fd77::1 - 1024
4160 10.77.0.1 - 4096
4159 10.77.0.1 - 2048
4180 fd77::1 - 4096
4179 fd77::1 - 2048
9000 10.77.0.1 - 4096
9000 fd77::1 - 4096
1088 10.77.0.1 - 1024
1087 10.77.0.1 - 512
576 10.77.0.1 - 512
575 10.77.0.1 - 256
320 10.77.0.1 - 256
319 10.77.0.1 - interface_va_(owner_of_10.77.0.1)_has_MTU_319:_too_small_for_RoCEv2_(IB_MTU_256_needs_320_bytes)
EOF
expect_eq "MTU table rows" 23 "$rows"

# 2. Two devices on MTU-1500 links, perftest with default options.
set_mtu 1500
in_ns "$NSA" "$RA" "$UROCE" up --dev uroce0 --addr 10.77.0.1 || fail "uroce up in $NSA"
in_ns "$NSB" "$RB" "$UROCE" up --dev uroce0 --addr 10.77.0.2 || fail "uroce up in $NSB"
for _s in "$NSA $RA" "$NSB $RB"; do
	set -- $_s
	in_ns "$1" "$2" "$UROCE" run -- ibv_devinfo -d uroce0 >"$T/devinfo" 2>&1
	expect_line "$1: active_mtu" "$T/devinfo" "\t\t\tactive_mtu:\t\t1024 (3)"
	expect_line "$1: max_mtu" "$T/devinfo" "\t\t\tmax_mtu:\t\t4096 (5)"
done

# ns_listening TCPPORT: something listens on TCPPORT in NSA (within 60 s).
ns_listening() {
	_n=600
	while [ $_n -gt 0 ]; do
		ip netns exec "$NSA" ss -H -t -l -n 2>/dev/null | awk '{print $4}' | grep -q ":$1\$" && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# perftest 4.5's default iterations: 5000 for ib_write_bw, 1000 for the others
for spec in ib_write_bw:5000 ib_read_bw:1000 ib_send_bw:1000; do
	prog=${spec%:*} iters=${spec#*:}
	_p=$(free_tcp_port)
	timeout 300 ip netns exec "$NSA" env UROCE_RUN_DIR="$RA" "$UROCE" run -- \
		"$prog" -d uroce0 -x 0 -p "$_p" >"$T/srv.log" 2>&1 &
	_sp=$!
	ns_listening "$_p" || echo "$prog: the server never listened on TCP port $_p"
	timeout 300 ip netns exec "$NSB" env UROCE_RUN_DIR="$RB" "$UROCE" run -- \
		"$prog" -d uroce0 -x 0 -p "$_p" 10.77.0.1 >"$T/cli.log" 2>&1
	_c=$?
	wait $_sp
	_s=$?
	echo "---- $prog server (rc $_s)"
	cat "$T/srv.log"
	echo "---- $prog client (rc $_c)"
	cat "$T/cli.log"
	expect_eq "$prog: exit status server client" "0 0" "$_s $_c"
	# #bytes #iterations BW-peak BW-average MsgRate: perftest's defaults
	_row=$(grep -E '^[[:space:]]*[0-9]+([[:space:]]+[0-9.]+){4}[[:space:]]*$' "$T/cli.log")
	expect_eq "$prog: #bytes #iterations" "65536 $iters" "$(echo "$_row" | awk '{print $1, $2}')"
	echo "$_row" | awk '{ exit !($4 > 0) }' || fail "$prog: BW average > 0" "> 0" "$_row"
	grep -q "Mtu[[:space:]]*: 1024\[B\]" "$T/cli.log" || fail "$prog: perftest chose MTU 1024" "Mtu : 1024[B]" \
		"$(grep -i mtu "$T/cli.log")"
done
for _s in "$NSA $RA" "$NSB $RB"; do
	set -- $_s
	in_ns "$1" "$2" "$UROCE" status >"$T/status" 2>&1
	expect_eq "$1: tx_errors tx_too_big after perftest" "tx_errors=0 tx_too_big=0" \
		"$(sed -n 's/^udp .* \(tx_errors=[0-9]* tx_too_big=[0-9]*\).*$/\1/p' "$T/status")"
done

# 3. The interface shrinks under a running device: every datagram over 1000
# bytes is refused by the kernel; counted and logged, and the QP fails with
# a retry error (never a silent hang).
set_mtu 1000
_p=$(free_tcp_port)
timeout 120 ip netns exec "$NSA" env UROCE_RUN_DIR="$RA" "$UROCE" run -- \
	ibv_rc_pingpong -d uroce0 -g 0 -m 1024 -s 4096 -n 5 -p "$_p" >"$T/srv.log" 2>&1 &
_sp=$!
ns_listening "$_p" || echo "ibv_rc_pingpong: the server never listened on TCP port $_p"
timeout 120 ip netns exec "$NSB" env UROCE_RUN_DIR="$RB" "$UROCE" run -- \
	ibv_rc_pingpong -d uroce0 -g 0 -m 1024 -s 4096 -n 5 -p "$_p" 10.77.0.1 >"$T/cli.log" 2>&1
_c=$?
kill "$_sp" 2>/dev/null
wait "$_sp"
cat "$T/cli.log"
[ $_c -ne 0 ] && [ $_c -ne 124 ] || fail "ibv_rc_pingpong over a 1000-byte link: fails without hanging" "rc 1" "rc $_c"
grep -q "Failed status transport retry counter exceeded (12)" "$T/cli.log" ||
	fail "client: retry error" "Failed status transport retry counter exceeded (12)" "$(cat "$T/cli.log")"
in_ns "$NSB" "$RB" "$UROCE" status >"$T/status" 2>&1
cat "$T/status"
_errs=$(sed -n 's/^udp .* tx_errors=\([0-9]*\) tx_too_big=\([0-9]*\).*$/\1 \2/p' "$T/status")
set -- $_errs
[ $# -eq 2 ] && [ "$1" -gt 0 ] && [ "$1" = "$2" ] ||
	fail "client device counts the refused datagrams" "tx_errors=N tx_too_big=N, N > 0" "$_errs"
echo "ok: $1 datagrams refused with EMSGSIZE, counted"
# SEND FIRST with 1024 bytes: BTH 12 + 1024 + ICRC 4 = 1040 bytes of UDP payload
grep -q "UDP payload of 1040 bytes to 10.77.0.1 not sent: Message too long: larger than the path MTU; use a smaller IB MTU (uroce up --mtu)" \
	"$RB/uroce0.log" || fail "client daemon log names the refused datagram" "UDP payload of 1040 bytes ... Message too long" \
	"$(grep -i 'not sent' "$RB/uroce0.log")"
_lines=$(grep -c "not sent" "$RB/uroce0.log")
[ "$_lines" -le 5 ] || fail "log lines rate-limited (at most one a second)" "<= 5" "$_lines"
echo "ok: $_lines log line(s) for $1 refused datagrams"
