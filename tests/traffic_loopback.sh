#!/bin/sh
# traffic_loopback: the internal loopback (docs/daemon.md "Internal
# loopback", emu/nic/loopback.c) under unmodified clients, server and client
# on one device at MTU 1024, capturing:
# - ibv_rc_pingpong -s 65536 -c -n 100 (data checked by the program): every
#   datagram the device received came through the internal loopback
#   (loopback = rx_packets = tx_packets, none spilled, no socket read);
#   the capture holds exactly those datagrams, each once, every ICRC good
#   (`uroce inspect`, which recomputes them), 128 x 64 SEND packets among
#   them; no receive drop;
# - ib_write_bw -s 65536 -n 500 -q 4: exits 0 with its row (2,000 messages:
#   perftest counts the iterations of every QP); every datagram
#   the device sent reached it (rx_packets = tx_packets: ring or spill);
# - with one bit of 3 % of transmitted packets flipped (`uroce fault set
#   tx corrupt=3%`), the same ibv_rc_pingpong still passes its data check:
#   the receive side checks the ICRC of looped-back datagrams when a fault
#   is set, so corrupted ones are dropped (bad_icrc > 0, at most the
#   injector's corrupted count) and retransmitted;
# - with `corrupt=20% delay=20ms` set and cleared live while
#   ibv_rc_pingpong -s 65536 -c -n 40 runs: the packets held at the clear
#   are checked too, bad_icrc = corrupted exactly (a corruption never hits
#   BTH byte 4, docs/fault-injection.md), nothing left held or dropped.
. "$top_srcdir/tests/lib.sh"

# field LINE NAME: NAME=N of the status line starting with LINE.
field() {
	uroce status --dev uroce0 | sed -n "s/^$1 .*\b$2=\([0-9]*\).*/\1/p"
}

up --dev uroce0 --mtu 1024 --pcap "$T/lb.pcap"
pingpong rc64k ibv_rc_pingpong uroce0 65536 100 -s 65536 -m 1024 -c -n 100
rx=$(field udp rx_packets) tx=$(field udp tx_packets) lb=$(field loop loopback)
echo "rx_packets $rx tx_packets $tx loopback $lb"
[ "$rx" -ge 12800 ] || fail "rx_packets for 200 messages of 64 packets" ">= 12800" "$rx"
expect_eq "loopback = rx_packets" "$rx" "$lb"
expect_eq "tx_packets = rx_packets" "$rx" "$tx"
expect_eq "loopback_spilled" 0 "$(field loop loopback_spilled)"
expect_eq "self_reads" 0 "$(field loop self_reads)"
expect_eq "rcvbuf_full" 0 "$(field rx_drops rcvbuf_full)"
expect_eq "bad" 0 "$(field rx_drops bad)"
expect_eq "capture stop" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"
uroce inspect --port "$UROCE_PORT" --summary "$T/lb.pcap" >"$T/insp" 2>&1
expect_eq "inspect exit status" 0 $?
cat "$T/insp"
expect_line "inspect summary" "$T/insp" \
	"summary: $lb packets, RoCEv2 $lb, RoCEv1 0, non-RoCE skipped 0, malformed 0, bad ICRC 0"
grep -q "RC_SEND_MIDDLE 12400" "$T/insp" || fail "62 SEND_MIDDLE packets per message" "RC_SEND_MIDDLE 12400" "$(grep opcodes "$T/insp")"

perftest ib_write_bw bw 65536 2000 -s 65536 -n 500 -m 1024 -q 4
rx=$(field udp rx_packets) tx=$(field udp tx_packets)
echo "after ib_write_bw -q 4: rx_packets $rx tx_packets $tx loopback $(field loop loopback) spilled $(field loop loopback_spilled)"
expect_eq "ib_write_bw: tx_packets = rx_packets" "$tx" "$rx"
expect_eq "ib_write_bw: rcvbuf_full" 0 "$(field rx_drops rcvbuf_full)"

uroce fault set uroce0 tx corrupt=3% >/dev/null || fail "uroce fault set tx corrupt=3%"
icrc0=$(field rx_drops bad_icrc)
pingpong rc64k_corrupt ibv_rc_pingpong uroce0 65536 100 -s 65536 -m 1024 -c -n 100
icrc=$(($(field rx_drops bad_icrc) - icrc0))
corrupted=$(field "fault tx" corrupted)
echo "corrupted $corrupted, dropped with a bad ICRC $icrc"
[ "$corrupted" -gt 0 ] || fail "the injector corrupted packets" "> 0" "$corrupted"
[ "$icrc" -gt 0 ] && [ "$icrc" -le "$corrupted" ] ||
	fail "looped-back corrupted packets dropped by the ICRC check" "1..$corrupted" "$icrc"

# Packets the injector holds (delay) were corrupted when taken; cleared live
# while they wait, they leave with no fault set and must still be checked.
uroce fault clear uroce0 >/dev/null || fail "uroce fault clear"
icrc0=$(field rx_drops bad_icrc) corrupted0=$(field "fault tx" corrupted) pk0=$(field "fault tx" packets)
uroce fault set uroce0 tx corrupt=20% delay=20ms >/dev/null || fail "uroce fault set tx corrupt=20% delay=20ms"
pingpong rc64k_held ibv_rc_pingpong uroce0 65536 40 -s 65536 -m 1024 -c -n 40 >"$T/held.log" 2>&1 &
pp=$!
i=0
while [ $(($(field "fault tx" packets) - pk0)) -lt 2000 ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
held=$(field "fault tx" held)
uroce fault clear uroce0 >/dev/null || fail "uroce fault clear while packets are held"
wait $pp
rc=$?
cat "$T/held.log"
[ $rc -eq 0 ] || fail "ibv_rc_pingpong with held corrupted packets released after the clear"
icrc=$(($(field rx_drops bad_icrc) - icrc0)) corrupted=$(($(field "fault tx" corrupted) - corrupted0))
echo "held at the clear $held; corrupted $corrupted, dropped with a bad ICRC $icrc"
expect_eq "fault tx held after the run" 0 "$(field "fault tx" held)"
expect_eq "fault tx queue_dropped" 0 "$(field "fault tx" queue_dropped)"
[ "$corrupted" -gt 0 ] || fail "the injector corrupted packets" "> 0" "$corrupted"
expect_eq "every corrupted packet dropped by the ICRC check, held ones too" "$corrupted" "$icrc"
uroce down --dev uroce0 >/dev/null || fail "uroce down"
