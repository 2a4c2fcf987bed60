#!/bin/sh
# it_counters: the port counters of the device tree (ports/1/counters,
# ports/1/hw_counters, state) are fed by the daemon with real traffic and
# agree with `uroce status` (docs/install.md, "Counters").
#  - 1000 iterations of rdma-core's ibv_ud_pingpong -s 2048 on one device:
#    2000 datagrams of BTH 12 + DETH 8 + 2048 + ICRC 4 = 2072 bytes each way
#    through the device's UDP socket, so port_xmit_packets = port_rcv_packets
#    = 2000 and port_xmit_data = port_rcv_data = 2000 * 2072 / 4 = 1036000
#    words, read from the files 1.5 s later without asking the daemon (the
#    once-a-second rewrite), then the same in `uroce status`; no hw counter moves.
#  - `uroce link set down/up`: state "1: DOWN" / "4: ACTIVE", phys_state,
#    link_downed 1.
#  - ibv_rc_pingpong (200 iterations) on a device dropping 5 % of what it
#    sends (--loss 5 --seed 3): after both programs exit (their QPs are
#    destroyed) local_ack_timeout_err > 0, duplicate_request > 0,
#    port_xmit_discards > 0, and every file equals the status line.
. "$top_srcdir/tests/lib.sh"

# counter DIR NAME: the value in the device tree
counter() {
	cat "$UROCE_RUN_DIR/sysfs/class/infiniband/uroce0/ports/1/$1/$2"
}
# status_field LINE_PREFIX NAME: NAME=VALUE from the status line LINE_PREFIX
status_field() {
	sed -n "s/^$1 .*\\b$2=\\([0-9]*\\).*/\\1/p" "$T/status"
}

up --dev uroce0
expect_eq "state after up" "4: ACTIVE" "$(counter . state)"
expect_eq "phys_state after up" "5: LinkUp" "$(counter . phys_state)"
expect_eq "hw_counters/lifespan (ms between rewrites)" 1000 "$(counter hw_counters lifespan)"
for c in port_xmit_packets port_rcv_packets port_xmit_data port_rcv_data link_downed; do
	expect_eq "$c before traffic" 0 "$(counter counters $c)"
done

tcp=$(free_tcp_port)
pp="$UROCE run -- ibv_ud_pingpong -d uroce0 -g 0 -p $tcp -n 1000 -s 2048"
pair 60 "$tcp" "$pp" "$pp 127.0.0.1" || { cat "$T/srv.log" "$T/cli.log"; fail "ibv_ud_pingpong"; }
grep -q '^4096000 bytes in ' "$T/cli.log" || { cat "$T/cli.log"; fail "ibv_ud_pingpong output"; }
sleep 1.5
expect_eq "port_xmit_packets" 2000 "$(counter counters port_xmit_packets)"
expect_eq "port_rcv_packets" 2000 "$(counter counters port_rcv_packets)"
expect_eq "unicast_xmit_packets" 2000 "$(counter counters unicast_xmit_packets)"
expect_eq "port_xmit_data (4-byte words)" 1036000 "$(counter counters port_xmit_data)"
expect_eq "port_rcv_data (4-byte words)" 1036000 "$(counter counters port_rcv_data)"
expect_eq "port_rcv_errors" 0 "$(counter counters port_rcv_errors)"
expect_eq "port_xmit_discards" 0 "$(counter counters port_xmit_discards)"
for c in duplicate_request packet_seq_err local_ack_timeout_err rnr_nak_retry_err; do
	expect_eq "hw_counters/$c (UD)" 0 "$(counter hw_counters $c)"
done
uroce status --dev uroce0 >"$T/status" || fail "uroce status"
expect_line "uroce status: the same counters" "$T/status" \
	"counters port_xmit_data=1036000 port_rcv_data=1036000 port_xmit_packets=2000 port_rcv_packets=2000 port_rcv_errors=0 port_xmit_discards=0 link_downed=0"
expect_line "uroce status: hw counters" "$T/status" \
	"hw_counters duplicate_request=0 packet_seq_err=0 local_ack_timeout_err=0 rnr_nak_retry_err=0"
# the same UDP totals on the udp line (another view of the same packets)
expect_eq "udp tx_bytes / 4" 1036000 "$(($(status_field udp tx_bytes) / 4))"

uroce link set uroce0 down >/dev/null || fail "link set down"
expect_eq "state after link down" "1: DOWN" "$(counter . state)"
expect_eq "phys_state after link down" "3: Disabled" "$(counter . phys_state)"
expect_eq "link_downed" 1 "$(counter counters link_downed)"
uroce link set uroce0 up >/dev/null || fail "link set up"
expect_eq "state after link up" "4: ACTIVE" "$(counter . state)"
expect_eq "link_downed after up" 1 "$(counter counters link_downed)"
uroce down --dev uroce0 >/dev/null

# Retransmissions on a lossy device: hw counters of destroyed QPs stay.
up --dev uroce0 --loss 5 --seed 3
tcp=$(free_tcp_port)
pp="$UROCE run -- ibv_rc_pingpong -d uroce0 -g 0 -p $tcp -n 200 -s 4096"
pair 120 "$tcp" "$pp" "$pp 127.0.0.1" || { cat "$T/srv.log" "$T/cli.log"; fail "ibv_rc_pingpong at 5% loss"; }
uroce status --dev uroce0 >"$T/status" || fail "uroce status"
grep -q '^client ' "$T/status" && fail "a client is still connected"
for c in port_xmit_packets port_rcv_packets port_xmit_data port_rcv_data port_xmit_discards; do
	expect_eq "$c: file = status" "$(status_field counters "$c")" "$(counter counters "$c")"
done
for c in duplicate_request packet_seq_err local_ack_timeout_err rnr_nak_retry_err; do
	expect_eq "hw_counters/$c: file = status" "$(status_field hw_counters "$c")" "$(counter hw_counters "$c")"
done
for c in local_ack_timeout_err duplicate_request; do
	v=$(counter hw_counters $c)
	[ "$v" -gt 0 ] || fail "hw_counters/$c after RC at 5% loss" "> 0" "$v"
	echo "ok: hw_counters/$c = $v after RC at 5% loss"
done
v=$(counter counters port_xmit_discards)
expect_eq "port_xmit_discards = tx_dropped" "$(status_field udp tx_dropped)" "$v"
[ "$v" -gt 0 ] || fail "port_xmit_discards at 5% loss" "> 0" "$v"
