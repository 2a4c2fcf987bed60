#!/bin/sh
# traffic_srq_clients: unmodified clients that need a shared receive queue,
# two processes each on uroce0 through `uroce run`: rdma-core's
# ibv_srq_pingpong (16 RC QPs on one SRQ) with its defaults, and with
# 64 KiB messages, 1000 iterations at path MTU 1024; perftest's
# ib_send_bw --use-srq and ib_send_lat --use-srq.  Each: both sides exit
# 0, exact byte and iteration counts, no failure marker.
# Source: docs/clients.md §1 and §2.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0

pingpong srq_default ibv_srq_pingpong uroce0 4096 1000
pingpong srq_64k_mtu1024 ibv_srq_pingpong uroce0 65536 1000 -s 65536 -n 1000 -m 1024

# perf PROGRAM KIND: perftest with --use-srq, 200 iterations.
perf() {
	_prog=$1 _kind=$2
	_p=$(free_tcp_port)
	_b="$UROCE run -- $_prog -d uroce0 -i 1 -x 0 -F -p $_p --use-srq -n 200"
	pair 120 "$_p" "$_b" "$_b 127.0.0.1"
	_rc=$?
	for _side in srv cli; do
		echo "---- $_prog --use-srq $_side"
		cat "$T/$_side.log"
	done
	[ $_rc -eq 0 ] || fail "$_prog --use-srq: both sides exit 0"
	for _side in srv cli; do
		expect_eq "$_prog $_side: failure markers" "" \
			"$(grep -E 'Completion with error|Poll send CQ error|poll CQ failed|Couldn|Failed to|Unable to' "$T/$_side.log")"
	done
	if [ "$_kind" = bw ]; then
		_row=$(grep -E '^[[:space:]]*[0-9]+([[:space:]]+[0-9.]+){4}[[:space:]]*$' "$T/cli.log")
		expect_eq "$_prog --use-srq: #bytes #iterations" "65536 200" "$(echo "$_row" | awk '{print $1, $2}')"
		echo "$_row" | awk '{ exit !($4 > 0) }' || fail "$_prog: BW average > 0" "> 0" "$_row"
	else
		_row=$(grep -E '^[[:space:]]*[0-9]+([[:space:]]+[0-9.]+){8}[[:space:]]*$' "$T/cli.log")
		expect_eq "$_prog --use-srq: #bytes #iterations" "2 200" "$(echo "$_row" | awk '{print $1, $2}')"
		echo "$_row" | awk '{ exit !($6 > 0 && $6 < 1e9 && $3 > 0 && $3 <= $6) }' ||
			fail "$_prog: 0 < t_min <= t_avg, finite" "t_avg in (0, 1e9) usec" "$_row"
	fi
	echo "ok: $_prog --use-srq"
}

perf ib_send_bw bw
perf ib_send_lat lat
