#!/bin/sh
# traffic_nodrop: no drops of the daemon's own making. perftest's
# ib_send_bw at its defaults (1000 messages of 65536 bytes, tx depth 128),
# UC and RC, server and client as two processes on one device (so every
# packet the daemon sends, it also receives): both sides exit 0 with the
# result row "65536 1000", and `uroce status` then shows
# - rcvbuf_full=0 (no datagram dropped by the kernel for a full receive
#   buffer: SO_RXQ_OVFL / SO_MEMINFO) and bad=0 no_qp=0 bad_src=0;
# - rx_packets = tx_packets (UC: exactly 16000 = 1000 x 16 packets at MTU
#   4096; a UC message with a lost packet is dropped whole and the server
#   would wait forever: rc 124);
# - the socket buffers the daemon got (udp_buffers), printed.
# docs/daemon.md "Status format", docs/transport.md "Receive path".
. "$top_srcdir/tests/lib.sh"

# run KIND EXTRA_ARGS
run() {
	up --dev uroce0
	_p=$(free_tcp_port)
	_b="$UROCE run -- ib_send_bw -d uroce0 -x 0 -F -p $_p $2"
	pair 120 "$_p" "$_b" "$_b 127.0.0.1"
	_rc=$?
	cat "$T/srv.log" "$T/cli.log"
	[ $_rc -eq 0 ] || fail "ib_send_bw $1: both sides exit 0 (124 = hang)"
	_row=$(grep -E '^[[:space:]]*[0-9]+([[:space:]]+[0-9.]+){4}[[:space:]]*$' "$T/cli.log")
	expect_eq "ib_send_bw $1: #bytes #iterations" "65536 1000" "$(echo "$_row" | awk '{print $1, $2}')"
	uroce status --dev uroce0 >"$T/status.$1" 2>&1 || fail "uroce status"
	grep -E '^(udp|rx_drops)' "$T/status.$1"
	expect_eq "ib_send_bw $1: drops" "rx_drops bad=0 no_qp=0 bad_src=0 bad_icrc=0 rcvbuf_full=0" \
		"$(grep '^rx_drops ' "$T/status.$1")"
	_tx=$(sed -n 's/^udp .* tx_packets=\([0-9]*\) .*/\1/p' "$T/status.$1")
	_rx=$(sed -n 's/^udp rx_packets=\([0-9]*\) .*/\1/p' "$T/status.$1")
	expect_eq "ib_send_bw $1: packets received = packets sent" "$_tx" "$_rx"
	[ "$1" != UC ] || expect_eq "ib_send_bw UC: packets sent" 16000 "$_tx"
	uroce down --dev uroce0 >/dev/null || fail "uroce down"
}

run UC "-c UC"
run RC "-c RC"
