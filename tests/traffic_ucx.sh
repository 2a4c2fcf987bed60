#!/bin/sh
# traffic_ucx: Debian's UCX 1.13 (unmodified ucx_info, ucx_perftest) on
# uroce0 through `uroce run`. ucx_info -d lists rc_verbs and ud_verbs on
# uroce0:1; ucx_perftest tag_lat, tag_bw and ucp_put_bw first with UCX's
# default transports (only UCX_NET_DEVICES=uroce0:1; see perf_default), then
# server and client
# as two processes with UCX_NET_DEVICES=uroce0:1 and UCX_TLS=rc_verbs,ud_verbs
# (UCX's default picks shared memory between processes of one host; RC needs
# UD as its wire-up transport): both sides exit 0, both log (UCX_LOG_LEVEL=info)
# that the endpoint runs on rc_verbs/uroce0:1, and the client's Final row
# has exactly the iterations asked for (1000; 100 for tag_bw with 1 MiB
# messages, which go by rendezvous: an RDMA READ). rc_verbs receives through an
# SRQ. UCP atomics ucp_add, ucp_fadd, ucp_cswap (1000 iterations, emulated
# with active messages: lane amo_am); UCT atomics add_lat, fadd, cswap on
# rc_verbs, whose capture holds >= 1000 FETCH_ADD / COMPARE_SWAP requests,
# each with one ATOMIC Acknowledge. No speed is asserted. Source:
# docs/clients.md §4. UCX 1.13 logs an endpoint configuration as
# "ep_cfg[0]: tag(...)", 1.18 as "NAME intra-node cfg#0 tag(...)". UCX's options for this host's UCX (the fence mode,
# ucx_perftest's MPI mode off) come from ucx_setup (tests/lib.sh).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
ucx_setup

timeout 60 "$UROCE" run -- ucx_info -d >"$T/info.log" 2>&1
expect_eq "ucx_info -d exit status" 0 "$?"
for tl in rc_verbs ud_verbs; do
	_n=$(grep -A1 "Transport: $tl\$" "$T/info.log" | grep -c 'Device: uroce0:1$')
	expect_eq "ucx_info -d: $tl on uroce0:1" 1 "$_n"
done

# udp_counter NAME: NAME=N from the device's `udp` status line.
udp_counter() {
	uroce status --dev uroce0 | sed -n "s/^udp .*\\b$1=\\([0-9]*\\).*/\\1/p"
}

# perf_default TEST LANE ITERS: ucx_perftest with UCX's default transports,
# only the device named (UCX_NET_DEVICES=uroce0:1). Between two processes of
# one host UCX moves the data through shared memory, but each UCP worker
# opens rc_verbs on uroce0 (SRQ included) and the endpoint carries an
# rc_verbs/uroce0:1 lane whose wire-up crosses the device: both sides exit
# 0, no ERROR, that lane on both sides, the iterations exact, and the
# device's `uroce status` UDP rx/tx packet counters grew.
perf_default() {
	_rx0=$(udp_counter rx_packets) _tx0=$(udp_counter tx_packets)
	_p=$(free_tcp_port)
	_b="$UROCE run -- ucx_perftest $UCX_PERFTEST_ARGS -p $_p -t $1 -n $3"
	pair 120 "$_p" "$_b" "$_b 127.0.0.1"
	_rc=$?
	cat "$T/cli.log"
	[ $_rc -eq 0 ] || fail "ucx_perftest -t $1 (default transports): both sides exit 0"
	for _side in srv cli; do
		expect_eq "$1 default $_side: ERROR lines" "" "$(grep 'UCX  ERROR' "$T/$_side.log")"
		expect_eq "$1 default $_side: an rc_verbs/uroce0:1 lane" 1 \
			"$(grep -c "\(ep_cfg\[0\]:\|cfg#0\) $2(.*rc_verbs/uroce0:1.*)\$" "$T/$_side.log")"
	done
	expect_eq "$1 default: Final iterations" "$3" "$(awk '$1 == "Final:" { print $2 }' "$T/cli.log")"
	_rx1=$(udp_counter rx_packets) _tx1=$(udp_counter tx_packets)
	[ "$_rx1" -gt "$_rx0" ] && [ "$_tx1" -gt "$_tx0" ] ||
		fail "$1 default: uroce status udp packets grew" "> $_rx0/$_tx0" "$_rx1/$_tx1"
	echo "ok: ucx_perftest -t $1, default transports: udp rx_packets $_rx0 -> $_rx1"
}
export UCX_NET_DEVICES=uroce0:1 UCX_LOG_LEVEL=info
perf_default tag_lat tag 1000
perf_default tag_bw tag 1000
perf_default ucp_put_bw rma 1000

export UCX_TLS=rc_verbs,ud_verbs

# perf TEST LANE ITERS [ARGS]: ucx_perftest -t TEST -n ITERS ARGS; LANE tag or rma.
perf() {
	_p=$(free_tcp_port)
	_b="$UROCE run -- ucx_perftest $UCX_PERFTEST_ARGS -p $_p -t $1 -n $3 ${4:-}"
	pair 120 "$_p" "$_b" "$_b 127.0.0.1"
	_rc=$?
	for _side in srv cli; do
		echo "---- ucx_perftest -t $1 $_side"
		cat "$T/$_side.log"
	done
	[ $_rc -eq 0 ] || fail "ucx_perftest -t $1: both sides exit 0"
	for _side in srv cli; do
		expect_eq "$1 $_side: ERROR lines" "" "$(grep 'UCX  ERROR' "$T/$_side.log")"
		expect_eq "$1 $_side: endpoint on rc_verbs/uroce0:1" 1 \
			"$(grep -c "\(ep_cfg\[0\]:\|cfg#0\) $2(rc_verbs/uroce0:1)\$" "$T/$_side.log")"
	done
	expect_eq "$1: Final iterations" "$3" "$(awk '$1 == "Final:" { print $2 }' "$T/cli.log")"
	echo "ok: ucx_perftest -t $1: $(grep '^Final:' "$T/cli.log")"
}

perf tag_lat tag 1000
perf tag_bw tag 1000
perf ucp_put_bw rma 1000
# 1 MiB: the rendezvous protocol (RDMA READ of the sender's buffer)
perf tag_bw tag 100 "-s 1048576"

# UCP atomics: ucx_perftest asks for 32- and 64-bit atomics; rc_verbs offers
# 64-bit device atomics only, so UCP emulates them with active messages over
# rc_verbs (lane amo_am; docs/clients.md §4).
perf ucp_add amo_am 1000
perf ucp_fadd amo_am 1000
perf ucp_cswap amo_am 1000

# uct_amo TEST OPCODE: UCT-level ucx_perftest TEST (-x rc_verbs -d uroce0:1,
# 1000 iterations) with the device's capture on: both sides exit 0, the
# client's Final row has 1000 iterations, and the capture holds at least
# 1000 OPCODE requests (warm-up adds some), each answered by exactly one
# ATOMIC Acknowledge, and nothing else.
uct_amo() {
	_p=$(free_tcp_port)
	uroce capture start uroce0 "$T/$1.pcap" >/dev/null || fail "capture start"
	_b="$UROCE run -- ucx_perftest $UCX_PERFTEST_ARGS -p $_p -t $1 -x rc_verbs -d uroce0:1 -n 1000"
	pair 120 "$_p" "$_b" "$_b 127.0.0.1"
	_rc=$?
	uroce capture stop uroce0 >/dev/null || fail "capture stop"
	cat "$T/cli.log"
	[ $_rc -eq 0 ] || fail "ucx_perftest -t $1 -x rc_verbs: both sides exit 0"
	expect_eq "$1: Final iterations" 1000 "$(awk '$1 == "Final:" { print $2 }' "$T/cli.log")"
	"$UROCE" inspect --summary --port "$UROCE_PORT" "$T/$1.pcap" >"$T/$1.sum"
	expect_eq "$1: uroce inspect exit status" 0 "$?"
	cat "$T/$1.sum"
	_ops=$(sed -n 's/^opcodes: //p' "$T/$1.sum")
	_n=$(echo "$_ops" | sed -n "s/^.*$2 \\([0-9]*\\).*\$/\\1/p")
	[ -n "$_n" ] && [ "$_n" -ge 1000 ] || fail "$1: $2 packets" ">= 1000" "$_ops"
	expect_eq "$1: opcodes in the capture" "RC_ATOMIC_ACKNOWLEDGE $_n, $2 $_n" "$_ops"
}
uct_amo add_lat RC_FETCH_ADD
uct_amo fadd RC_FETCH_ADD
uct_amo cswap RC_COMPARE_SWAP
