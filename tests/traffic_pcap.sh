#!/bin/sh
# traffic_pcap: `uroce capture start|stop uroce0 F.pcap` around real
# traffic (ibv_rc_pingpong with 1 MiB messages over MTU 1024, i.e. FIRST/
# MIDDLE/LAST segments and ACKs; then ib_read_bw: READ requests and
# responses; then ibv_ud_pingpong: UD SENDs): the file decodes in tshark
# with no malformed packet and no expert error (docs/wire-format.md §3 flags),
# tshark sees as many RoCE packets as `uroce inspect`, every ICRC is good
# and every request flow's PSNs are consecutive with no repeat (no loss, so
# no retransmission; `uroce inspect --flows`, exit 0).
. "$top_srcdir/tests/lib.sh"
: "${TSHARK:?tshark was not found by configure (Debian package tshark)}"
up --dev uroce0 --mtu 1024

expect_eq "capture start" "uroce0: capturing to $T/f.pcap" "$(uroce capture start uroce0 "$T/f.pcap" 2>&1)"
p=$(free_tcp_port)
B="$UROCE run -- ibv_rc_pingpong -d uroce0 -g 0 -m 1024 -s 1048576 -n 5 -p $p"
pair 60 "$p" "$B" "$B 127.0.0.1" || { cat "$T/srv.log" "$T/cli.log"; fail "ibv_rc_pingpong"; }
p=$(free_tcp_port)
B="$UROCE run -- ib_read_bw -d uroce0 -x 0 -F -n 20 -s 8192 -p $p"
pair 60 "$p" "$B" "$B 127.0.0.1" || { cat "$T/srv.log" "$T/cli.log"; fail "ib_read_bw"; }
p=$(free_tcp_port)
B="$UROCE run -- ibv_ud_pingpong -d uroce0 -g 0 -s 512 -n 5 -p $p"
pair 60 "$p" "$B" "$B 127.0.0.1" || { cat "$T/srv.log" "$T/cli.log"; fail "ibv_ud_pingpong"; }
expect_eq "capture stop" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"

heur='--disable-heuristic rpcrdma_infiniband --disable-heuristic mellanox_eoib --disable-heuristic sdp_infiniband
--disable-heuristic smb_direct_infiniband --disable-heuristic smcr_infiniband --disable-heuristic iser_infiniband
--disable-heuristic nvme_rdma --disable-heuristic lnet_ib --disable-heuristic fc_infiniband --disable-heuristic eth_over_ib'
# shellcheck disable=SC2086
"$TSHARK" -r "$T/f.pcap" -o "infiniband.rroce.port:$UROCE_PORT" $heur -T fields -E separator='|' \
	-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn \
	-e _ws.malformed -e _ws.expert >"$T/tshark.out" 2>"$T/tshark.err" || fail "tshark: $(cat "$T/tshark.err")"
frames=$(wc -l <"$T/tshark.out")
roce=$(awk -F'|' '$2 != ""' "$T/tshark.out" | wc -l)
echo "tshark: $frames frames, $roce with a BTH"
[ "$frames" -gt 100 ] || fail "frames captured" "> 100" "$frames"
expect_eq "frames tshark decodes as RoCE (BTH)" "$frames" "$roce"
expect_eq "malformed or expert-flagged frames" "" "$(awk -F'|' '$5 != "" || $6 != ""' "$T/tshark.out" | head -5)"

"$UROCE" inspect --flows --port "$UROCE_PORT" "$T/f.pcap" >"$T/inspect.out" 2>&1
rc=$?
tail -n 20 "$T/inspect.out"
expect_eq "uroce inspect --flows exit status" 0 "$rc"
grep -q "^summary: $frames packets, RoCEv2 $frames, RoCEv1 0, non-RoCE skipped 0, malformed 0, bad ICRC 0" "$T/inspect.out" ||
	fail "inspect summary" "summary: $frames packets, RoCEv2 $frames, ... malformed 0, bad ICRC 0" "$(grep '^summary' "$T/inspect.out")"
echo "ok: every ICRC good"
nflows=$(grep -c '^flow ' "$T/inspect.out")
[ "$nflows" -ge 3 ] || fail "flows" ">= 3" "$nflows"
# Requests: each PSN once, none skipped (no loss here, so no retransmission).
# Responses: no PSN twice; ACKs are coalesced, so an ACK flow may skip PSNs.
expect_eq "request flows with gaps or repeats" "" \
	"$(grep '^flow .* requests: ' "$T/inspect.out" | grep -Ev 'gaps 0, repeats 0$')"
expect_eq "response flows with repeats" "" "$(grep '^flow .* responses: ' "$T/inspect.out" | grep -Ev 'repeats 0$')"
echo "ok: $nflows flows, PSNs consecutive"
