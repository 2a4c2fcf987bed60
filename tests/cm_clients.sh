#!/bin/sh
# cm_clients: unmodified librdmacm programs over uroce (docs/rdma-cm.md):
# rping (10 verified pings, every line of -v output exact), ucmatose (RC),
# udaddy (UD), rdma_server/rdma_client, ib_send_bw -R and ib_read_lat -R,
# on one device, then across two devices (uroce1 at 127.0.0.2 on the same
# UDP port; rping -I picks the source). The run on uroce0 is captured and
# tshark's ib dissector must show the CM MADs on QP1: a REP and an RTU per
# RC connection, REQs (retries included), udaddy's SIDR exchange, DREQs.
# Needs the daemon's connection manager and the provider's interception.
. "$top_srcdir/tests/lib.sh"
: "${TSHARK:?tshark was not found by configure (Debian package tshark)}"
up --dev uroce0 --pcap "$T/cm.pcap"
p0=$UROCE_PORT

# rping_expect PREFIX COUNT: the lines rping -v prints for COUNT pings of the
# default 64 bytes (rping.c: "rdma-ping-N: " then letters from 'A'+N
# cycling over 65..122, the last byte 0).
rping_expect() {
	awk -v pre="$1" -v n="$2" 'BEGIN {
		start = 65
		for (p = 0; p < n; p++) {
			s = "rdma-ping-" p ": "
			c = start
			while (length(s) < 63) { s = s sprintf("%c", c); c++; if (c > 122) c = 65 }
			print pre s
			start++; if (start > 122) start = 65
		}
	}'
}

# client_retry TIMEOUT CMD: CMD until it exits 0 (the server may not listen
# yet: rdma_cm ports are no TCP ports one can wait for), at most TIMEOUT s.
client_retry() {
	_end=$(($(date +%s) + $1))
	shift
	while :; do
		timeout 60 sh -c "$*" >"$T/cli.log" 2>&1 && return 0
		[ "$(date +%s)" -lt "$_end" ] || return 1
		sleep 1
	done
}

# run_pair NAME SERVER CLIENT: SERVER in the background, CLIENT retried;
# both must exit 0; logs in $T/NAME.srv and $T/NAME.cli.
run_pair() {
	timeout 120 sh -c "$2" >"$T/$1.srv" 2>&1 &
	_sp=$!
	client_retry 60 "$3"
	_c=$?
	cp "$T/cli.log" "$T/$1.cli"
	wait $_sp
	_s=$?
	if [ $_s -ne 0 ] || [ $_c -ne 0 ]; then
		echo "---- server"; cat "$T/$1.srv"; echo "---- client"; cat "$T/$1.cli"
		fail "$1: server rc=$_s client rc=$_c"
	fi
	echo "ok: $1 server and client exit 0"
}

R="$UROCE run --"
port=$(free_tcp_port)
run_pair rping "$R rping -s -v -V -a 127.0.0.1 -p $port -C 10" \
	"$R rping -c -v -V -a 127.0.0.1 -p $port -C 10"
expect_eq "rping client output" "$(rping_expect "ping data: " 10)" "$(grep -v DISCONNECT "$T/rping.cli")"
expect_eq "rping server output" "$(rping_expect "server ping data: " 10)" "$(grep -v DISCONNECT "$T/rping.srv")"

port=$(free_tcp_port)
run_pair ucmatose "$R ucmatose -b 127.0.0.1 -p $port -C 10" "$R ucmatose -s 127.0.0.1 -p $port -C 10"
expect_eq "ucmatose server output" "cmatose: starting server
initiating data transfers
completing sends
receiving data transfers
data transfers complete
cmatose: disconnecting
disconnected
test complete
return status 0" "$(cat "$T/ucmatose.srv")"
expect_eq "ucmatose client output" "cmatose: starting client
cmatose: connecting
receiving data transfers
sending replies
data transfers complete
test complete
return status 0" "$(cat "$T/ucmatose.cli")"

run_pair udaddy "$R udaddy -b 127.0.0.1 -C 10" "$R udaddy -s 127.0.0.1 -C 10"
expect_eq "udaddy server output" "udaddy: starting server
receiving data transfers
sending replies
data transfers complete
test complete
return status 0" "$(cat "$T/udaddy.srv")"
expect_eq "udaddy client output" "udaddy: starting client
udaddy: connecting
initiating data transfers
receiving data transfers
data transfers complete
test complete
return status 0" "$(cat "$T/udaddy.cli")"

port=$(free_tcp_port)
run_pair rdma_server_client "$R rdma_server -s 127.0.0.1 -p $port" "$R rdma_client -s 127.0.0.1 -p $port"
expect_eq "rdma_server output" "rdma_server: start
rdma_server: end 0" "$(cat "$T/rdma_server_client.srv")"
expect_eq "rdma_client output" "rdma_client: start
rdma_client: end 0" "$(cat "$T/rdma_server_client.cli")"

# perftest over rdma_cm: -R exchanges the QP numbers through the CM's private data.
port=$(free_tcp_port)
run_pair ib_send_bw "$R ib_send_bw -d uroce0 -R -F -n 200 -s 4096 -p $port" \
	"$R ib_send_bw -d uroce0 -R -F -n 200 -s 4096 -p $port 127.0.0.1"
grep -Eq '^ 4096 +200 ' "$T/ib_send_bw.cli" || fail "ib_send_bw -R result line" " 4096 200 ..." "$(cat "$T/ib_send_bw.cli")"
echo "ok: ib_send_bw -R: 200 x 4096 bytes"
port=$(free_tcp_port)
run_pair ib_read_lat "$R ib_read_lat -d uroce0 -R -F -n 200 -s 64 -p $port" \
	"$R ib_read_lat -d uroce0 -R -F -n 200 -s 64 -p $port 127.0.0.1"
grep -Eq '^ 64 +200 ' "$T/ib_read_lat.cli" || fail "ib_read_lat -R result line" " 64 200 ..." "$(cat "$T/ib_read_lat.cli")"
echo "ok: ib_read_lat -R: 200 x 64 bytes"

expect_eq "capture stop" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"

# The CM MADs of the run (CM class 0x07 on QP1, IBTA 12.6): rping's
# connection alone gives REQ 0x0010, REP 0x0013, RTU 0x0014; every RC
# connection of the run (rping, ucmatose, rdma_server, ib_send_bw, ib_read_lat:
# 5) has one of each. udaddy's UD exchange is SIDR (0x0017/0x0018).
"$TSHARK" -r "$T/cm.pcap" -o "infiniband.rroce.port:$p0" -Y 'infiniband.mad.mgmtclass == 0x07' \
	-T fields -e infiniband.mad.attributeid >"$T/mads" 2>"$T/tshark.err" ||
	fail "tshark: $(cat "$T/tshark.err")"
count() { grep -cx "$1" "$T/mads"; }
# A client that started before its server listened was refused (REQ + REJ)
# and retried: REQs may be more than 5, REPs and RTUs are exactly 5.
[ "$(count 0x0010)" -ge 5 ] || fail "CM REQ MADs" ">= 5" "$(count 0x0010)"
expect_eq "CM REP MADs" 5 "$(count 0x0013)"
expect_eq "CM RTU MADs" 5 "$(count 0x0014)"
[ "$(count 0x0017)" -ge 1 ] || fail "CM SIDR_REQ MADs (udaddy)" ">= 1" "$(count 0x0017)"
[ "$(count 0x0018)" -ge 1 ] || fail "CM SIDR_REP MADs (udaddy)" ">= 1" "$(count 0x0018)"
[ "$(count 0x0015)" -ge 5 ] || fail "CM DREQ MADs" ">= 5" "$(count 0x0015)"
echo "ok: CM MADs: REQ $(count 0x0010), REP 5, RTU 5, SIDR_REQ $(count 0x0017), DREQ $(count 0x0015)"

# Two devices on one UDP port: uroce1 at 127.0.0.2. The server binds
# 127.0.0.2 (uroce1), the client binds 127.0.0.1 (uroce0) with -I.
uroce up --dev uroce1 --addr 127.0.0.2 --port "$p0" >"$T/up1.out" 2>&1 || { cat "$T/up1.out"; fail "uroce up uroce1"; }
port=$(free_tcp_port)
run_pair rping2 "$R rping -s -v -V -a 127.0.0.2 -p $port -C 10" \
	"$R rping -c -v -V -I 127.0.0.1 -a 127.0.0.2 -p $port -C 10"
expect_eq "rping across devices: client output" "$(rping_expect "ping data: " 10)" "$(grep -v DISCONNECT "$T/rping2.cli")"
expect_eq "rping across devices: server output" "$(rping_expect "server ping data: " 10)" "$(grep -v DISCONNECT "$T/rping2.srv")"
port=$(free_tcp_port)
run_pair ucmatose2 "$R ucmatose -b 127.0.0.2 -p $port -C 10" "$R ucmatose -b 127.0.0.1 -s 127.0.0.2 -p $port -C 10"
expect_eq "ucmatose across devices: client's last line" "return status 0" "$(tail -n 1 "$T/ucmatose2.cli")"
expect_eq "ucmatose across devices: server's last line" "return status 0" "$(tail -n 1 "$T/ucmatose2.srv")"
uroce status >"$T/status" 2>&1
expect_line "uroce1's daemon saw the server" "$T/status" "device uroce1 addr 127.0.0.2 port $p0 mtu 4096 state PORT_ACTIVE"
