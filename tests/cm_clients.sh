#!/bin/sh
# cm_clients: unmodified librdmacm programs over uroce (docs/rdma-cm.md):
# rping (100 verified pings, every line of -v output exact), ucmatose (RC,
# 4 connections), udaddy (UD, 4 connections), rdma_server/rdma_client, ib_send_bw -R and ib_read_lat -R,
# ib_write_lat -R and ib_read_bw -R, rsockets (rstream and riostream, data verified, 1 B to 64 KiB),
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

# wait_listen_cm PID: until an rdma_cm id listens on one of the devices (the
# `cm` line of uroce status; only the pair's server listens), at most 30 s
# or until PID ends. rdma_cm ports are no TCP ports one can wait for, and a
# REQ that comes before the listen is refused (REJ 8) as the kernel refuses
# it: a ucmatose -c 4 client refused on its first connection exits while
# the server accepts the other three, which the client's daemon then
# refuses in turn (REJ 28 to the server).
wait_listen_cm() {
	_n=0
	until uroce status 2>/dev/null | grep -Eq "^cm ids=[0-9]+ listens=[1-9]"; do
		[ $_n -lt 300 ] && kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
		_n=$((_n + 1))
	done
}

# try_pair NAME SECONDS SERVER CLIENT: SERVER in the background (at most
# SECONDS), CLIENT once it listens; logs in $T/NAME.srv and $T/NAME.cli,
# exit statuses in _s and _c; true iff both are 0, else both logs printed.
try_pair() {
	timeout "$2" sh -c "$3" >"$T/$1.srv" 2>&1 &
	_sp=$!
	wait_listen_cm $_sp || echo "$1: the server never listened"
	timeout 60 sh -c "$4" >"$T/$1.cli" 2>&1
	_c=$?
	[ $_c -eq 0 ] || kill $_sp 2>/dev/null
	wait $_sp
	_s=$?
	[ $_s -ne 0 ] || [ $_c -ne 0 ] || return 0
	echo "---- server"; cat "$T/$1.srv"; echo "---- client"; cat "$T/$1.cli"
	return 1
}

# run_pair NAME SERVER CLIENT: try_pair once; both must exit 0.
run_pair() {
	try_pair "$1" 120 "$2" "$3" || fail "$1: server rc=$_s client rc=$_c"
	echo "ok: $1 server and client exit 0"
}

R="$UROCE run --"
port=$(free_tcp_port)
# rping's stderr goes to its own file: its "DISCONNECT EVENT" line would
# land inside a ping line where the buffered stdout is cut at 4096 bytes.
run_pair rping "$R rping -s -v -V -a 127.0.0.1 -p $port -C 100 2>$T/rping.srv.err" \
	"$R rping -c -v -V -a 127.0.0.1 -p $port -C 100 2>>$T/rping.cli.err"
expect_eq "rping client output" "$(rping_expect "ping data: " 100)" "$(grep -v DISCONNECT "$T/rping.cli")"
# After the last ping the server's loop finds the connection DISCONNECTED (10)
# where it waits for the next RDMA_READ_ADV and says so on stderr, as it does
# over the kernel's rdma_cm; stdout and stderr interleave in any order.
rping_srv() { grep -v -e DISCONNECT -e '^wait for RDMA_READ_ADV state 10$' "$1"; }
expect_eq "rping server output" "$(rping_expect "server ping data: " 100)" "$(rping_srv "$T/rping.srv")"

port=$(free_tcp_port)
run_pair ucmatose "$R ucmatose -b 127.0.0.1 -p $port -c 4 -C 10" "$R ucmatose -s 127.0.0.1 -p $port -c 4 -C 10"
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

run_pair udaddy "$R udaddy -b 127.0.0.1 -c 4 -C 10" "$R udaddy -s 127.0.0.1 -c 4 -C 10"
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

# perf_pair NAME SERVER_ARGS: perftest over rdma_cm (-R). perftest connects
# twice: its own exchange QP, then the test's QP, each side creating its
# second id once the first connection has carried the parameters. The
# client's second REQ can reach the daemon before the server's second
# rdma_listen (address resolution is immediate here, where a kernel resolves
# a neighbour first); it is refused with REJ 8 (no listener), as the kernel
# refuses it, and perftest gives up. So the client starts once the server
# listens, and a pair that failed is run again, at most 6 times, each try
# logged; the port is new each time (under the sanitizers on a loaded 2-CPU
# machine three tries in a row have lost the race).
perf_pair() {
	_try=1
	while :; do
		_port=$(free_tcp_port)
		try_pair "$1" 60 "$R $2 -p $_port" "$R $2 -p $_port 127.0.0.1" && break
		echo "---- $1 try $_try: server rc=$_s client rc=$_c"
		[ $_try -lt 6 ] || fail "$1: 6 tries failed"
		_try=$((_try + 1))
	done
	echo "ok: $1 server and client exit 0 (try $_try)"
}
perf_pair ib_send_bw "ib_send_bw -d uroce0 -R -F -n 200 -s 4096"
grep -Eq '^ 4096 +200 ' "$T/ib_send_bw.cli" || fail "ib_send_bw -R result line" " 4096 200 ..." "$(cat "$T/ib_send_bw.cli")"
echo "ok: ib_send_bw -R: 200 x 4096 bytes"
perf_pair ib_read_lat "ib_read_lat -d uroce0 -R -F -n 200 -s 64"
grep -Eq '^ 64 +200 ' "$T/ib_read_lat.cli" || fail "ib_read_lat -R result line" " 64 200 ..." "$(cat "$T/ib_read_lat.cli")"
echo "ok: ib_read_lat -R: 200 x 64 bytes"
perf_pair ib_write_lat "ib_write_lat -d uroce0 -R -F -n 1000 -s 64"
grep -Eq '^ 64 +1000 ' "$T/ib_write_lat.cli" || fail "ib_write_lat -R result line" " 64 1000 ..." "$(cat "$T/ib_write_lat.cli")"
echo "ok: ib_write_lat -R: 1000 x 64 bytes"
perf_pair ib_read_bw "ib_read_bw -d uroce0 -R -F -n 500 -s 65536"
for side in srv cli; do
	grep -Eq '^ 65536 +500 ' "$T/ib_read_bw.$side" || fail "ib_read_bw -R result line ($side)" " 65536 500 ..." "$(cat "$T/ib_read_bw.$side")"
done
echo "ok: ib_read_bw -R: 500 x 65536 bytes"

expect_eq "capture stop" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"

# The CM MADs of the run (CM class 0x07 on QP1, IBTA 12.6). Every RC
# connection has one REQ, one REP and one RTU: rping and rdma_server/rdma_client
# one each, ucmatose -c 4 four, ib_send_bw -R, ib_read_lat -R, ib_write_lat -R
# and ib_read_bw -R two each (perftest connects its exchange QP and the
# test's QP through the CM): 14, more if a perftest pair had to run again. udaddy -c 4's UD exchanges are
# SIDR (0x0017/0x0018), four of each.
"$TSHARK" -r "$T/cm.pcap" -o "infiniband.rroce.port:$p0" -Y 'infiniband.mad.mgmtclass == 0x07' \
	-T fields -e infiniband.mad.attributeid >"$T/mads" 2>"$T/tshark.err" ||
	fail "tshark: $(cat "$T/tshark.err")"
count() { grep -cx "$1" "$T/mads"; }
# Every REP has its RTU; a perftest pair run again adds a refused REQ.
[ "$(count 0x0013)" -ge 14 ] || fail "CM REP MADs" ">= 14" "$(count 0x0013)"
expect_eq "CM RTU MADs = REP MADs" "$(count 0x0013)" "$(count 0x0014)"
[ "$(count 0x0010)" -ge "$(count 0x0013)" ] || fail "CM REQ MADs" ">= $(count 0x0013)" "$(count 0x0010)"
[ "$(count 0x0017)" -ge 4 ] || fail "CM SIDR_REQ MADs (udaddy)" ">= 4" "$(count 0x0017)"
[ "$(count 0x0018)" -ge 4 ] || fail "CM SIDR_REP MADs (udaddy)" ">= 4" "$(count 0x0018)"
[ "$(count 0x0015)" -ge "$(count 0x0013)" ] || fail "CM DREQ MADs" ">= $(count 0x0013)" "$(count 0x0015)"
echo "ok: CM MADs: REQ $(count 0x0010), REP $(count 0x0013), RTU $(count 0x0014), SIDR_REQ $(count 0x0017), DREQ $(count 0x0015)"

# rsockets (librdmacm's rsocket.c over an RC connection of the CM): rstream
# and riostream with -T v, which checks every byte received against the
# sender's counting pattern (common.c verify_buf: "data verification failed
# byte N" and a failure status otherwise). Columns of the result line
# (rstream.c show_perf):
# name, bytes, transfers, iterations, total = 2 x bytes x transfers.
rsock_pair() {
	_name=$1 _prog=$2 _size=$3 _count=$4 _want=$5
	shift 5
	port=$(free_tcp_port)
	run_pair "$_name" "$R $_prog -b 127.0.0.1 -p $port -S $_size -C $_count -T v $*" \
		"$R $_prog -s 127.0.0.1 -p $port -S $_size -C $_count -T v $*"
	for _side in srv cli; do
		expect_eq "$_name $_side result" "name bytes xfers iters total
$_want" "$(awk '{print $1, $2, $3, $4, $5}' "$T/$_name.$_side")"
	done
}
rsock_pair rstream_1 rstream 1 1000 "custom 1 1k 1 1.9k"
rsock_pair rstream_4k rstream 4096 1000 "custom 4k 1k 1 7.8m"
rsock_pair rstream_64k rstream 65536 100 "custom 64k 100 1 12m"
rsock_pair riostream_1 riostream 1 1000 "custom 1 1k 1 1.9k"
rsock_pair riostream_4k riostream 4096 1000 "custom 4k 1k 1 7.8m"
rsock_pair riostream_64k riostream 65536 100 "custom 64k 100 1 12m"
# other rsockets modes of rstream (rstream.c set_test_opt): blocking calls,
# addresses from rdma_getaddrinfo (-T s and -T f use plain TCP sockets)
rsock_pair rstream_block_64k rstream 65536 100 "custom 64k 100 1 12m" -T b
rsock_pair rstream_rai_64k rstream 65536 100 "custom 64k 100 1 12m" -T r

# rstream -T a (non-blocking rsockets polled by rpoll with timeout 0) with
# -T v: the server's result line exact and every byte the client reads
# checked; the client ends with its exact result line, or with status 16 and
# no result line when its last rpoll sees POLLIN | POLLHUP: rstream's do_poll
# (examples/common.c) takes POLLHUP for a failure even with data to read,
# and rsockets reports POLLHUP once it has processed the server's in-band
# RS_CTRL_DISCONNECT, which the server sends right behind its last data,
# so whether the client reads that data first is a race of rstream's on any
# device (docs/rdma-cm.md "Clients: rsockets"). The server is not killed
# when the client fails: it must end on its own with status 0.
rsock_async() {
	_name=$1 _size=$2 _count=$3 _want=$4
	port=$(free_tcp_port)
	timeout 120 $R rstream -b 127.0.0.1 -p $port -S $_size -C $_count -T a -T v >"$T/$_name.srv" 2>&1 &
	_sp=$!
	wait_listen_cm $_sp || echo "$_name: the server never listened"
	timeout 60 $R rstream -s 127.0.0.1 -p $port -S $_size -C $_count -T a -T v >"$T/$_name.cli" 2>&1
	_c=$?
	wait $_sp
	_s=$?
	[ $_s -eq 0 ] || { cat "$T/$_name.srv" "$T/$_name.cli"; fail "$_name: server rc=$_s client rc=$_c"; }
	expect_eq "$_name srv result" "name bytes xfers iters total
$_want" "$(awk '{print $1, $2, $3, $4, $5}' "$T/$_name.srv")"
	case $_c in
	0) expect_eq "$_name cli result" "name bytes xfers iters total
$_want" "$(awk '{print $1, $2, $3, $4, $5}' "$T/$_name.cli")" ;;
	16) expect_eq "$_name cli output (POLLHUP at the last transfer)" "name bytes xfers iters total" \
		"$(awk '{print $1, $2, $3, $4, $5}' "$T/$_name.cli")" ;;
	*) cat "$T/$_name.cli"; fail "$_name: client rc=$_c (0, or 16 for rstream's POLLHUP race)" ;;
	esac
	echo "ok: $_name server exit 0, client exit $_c"
}
rsock_async rstream_async_1 1 1000 "custom 1 1k 1 1.9k"
rsock_async rstream_async_4k 4096 1000 "custom 4k 1k 1 7.8m"
rsock_async rstream_async_64k 65536 100 "custom 64k 100 1 12m"

# Two devices on one UDP port: uroce1 at 127.0.0.2. The server binds
# 127.0.0.2 (uroce1), the client binds 127.0.0.1 (uroce0) with -I.
uroce up --dev uroce1 --addr 127.0.0.2 --port "$p0" >"$T/up1.out" 2>&1 || { cat "$T/up1.out"; fail "uroce up uroce1"; }
port=$(free_tcp_port)
run_pair rping2 "$R rping -s -v -V -a 127.0.0.2 -p $port -C 10 2>$T/rping2.srv.err" \
	"$R rping -c -v -V -I 127.0.0.1 -a 127.0.0.2 -p $port -C 10 2>>$T/rping2.cli.err"
expect_eq "rping across devices: client output" "$(rping_expect "ping data: " 10)" "$(grep -v DISCONNECT "$T/rping2.cli")"
expect_eq "rping across devices: server output" "$(rping_expect "server ping data: " 10)" "$(rping_srv "$T/rping2.srv")"
port=$(free_tcp_port)
run_pair ucmatose2 "$R ucmatose -b 127.0.0.2 -p $port -C 10" "$R ucmatose -b 127.0.0.1 -s 127.0.0.2 -p $port -C 10"
expect_eq "ucmatose across devices: client's last line" "return status 0" "$(tail -n 1 "$T/ucmatose2.cli")"
expect_eq "ucmatose across devices: server's last line" "return status 0" "$(tail -n 1 "$T/ucmatose2.srv")"
uroce status >"$T/status" 2>&1
expect_line "uroce1's daemon saw the server" "$T/status" "device uroce1 addr 127.0.0.2 port $p0 mtu 4096 state PORT_ACTIVE"

# A wildcard listener listens on every device, as the kernel's
# cma_listen_on_all: rping -s without -a, reached through uroce1's address
# from uroce0, and perftest -R's server (it always binds the wildcard) on
# uroce0's command line reached through uroce1. uroce1's daemon counts the
# REQs it received: 1 for rping, then 2 for perftest's two connections.
cm_count() { # DEV FIELD: FIELD= of DEV's cm line in uroce status
	uroce status 2>/dev/null | awk -v d="$1" -v f="$2" '
		$1 == "device" { cur = $2 }
		$1 == "cm" && cur == d { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) print kv[2] } }'
}
req0=$(cm_count uroce1 req_rx)
port=$(free_tcp_port)
run_pair rping_wild "$R rping -s -v -V -p $port -C 10 2>$T/rping_wild.srv.err" \
	"$R rping -c -v -V -I 127.0.0.1 -a 127.0.0.2 -p $port -C 10 2>>$T/rping_wild.cli.err"
expect_eq "wildcard rping server reached via uroce1: client output" "$(rping_expect "ping data: " 10)" "$(grep -v DISCONNECT "$T/rping_wild.cli")"
expect_eq "wildcard rping server reached via uroce1: server output" "$(rping_expect "server ping data: " 10)" "$(rping_srv "$T/rping_wild.srv")"
expect_eq "uroce1's REQs received for the wildcard rping server" "$((req0 + 1))" "$(cm_count uroce1 req_rx)"
_try=1
while :; do
	_port=$(free_tcp_port)
	try_pair send_bw_wild 60 "$R ib_send_bw -d uroce0 -R -F -n 200 -s 4096 -p $_port" \
		"$R ib_send_bw -d uroce1 -R -F -n 200 -s 4096 -p $_port 127.0.0.2" && break
	[ $_try -lt 6 ] || fail "send_bw_wild: 6 tries failed"
	_try=$((_try + 1))
done
grep -Eq '^ 4096 +200 ' "$T/send_bw_wild.cli" || fail "ib_send_bw -R via uroce1: result line" " 4096 200 ..." "$(cat "$T/send_bw_wild.cli")"
echo "ok: ib_send_bw -R, server on the wildcard, client through uroce1 (try $_try)"
expect_eq "every listener gone from uroce0" "0" "$(cm_count uroce0 listens)"
expect_eq "every listener gone from uroce1" "0" "$(cm_count uroce1 listens)"
expect_eq "every id gone from uroce1" "0" "$(cm_count uroce1 ids)"
