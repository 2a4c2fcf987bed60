#!/bin/sh
# traffic_uc_ud_pingpong: rdma-core's unmodified ibv_uc_pingpong (4 KiB
# messages, MTU 1024: multi-packet UC SENDs) and ibv_ud_pingpong -s 1024
# (UD SENDs through an AH, 40-byte GRH area in every receive buffer), server
# and client as two processes on uroce0.  Each: both exit 0, exact byte and
# iteration counts (size x iters x 2), no failure marker; run with -c so the
# receiver checks the payload.  Source: docs/clients.md §1.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0

# run NAME PROGRAM SIZE ITERS ARGS
run() {
	_name=$1 _prog=$2 _size=$3 _iters=$4
	shift 4
	_p=$(free_tcp_port)
	_b="$UROCE run -- $_prog -d uroce0 -i 1 -g 0 -p $_p"
	pair 120 "$_p" "$_b $*" "$_b $* 127.0.0.1"
	_rc=$?
	for _side in srv cli; do
		echo "---- $_name $_side: $_prog $*"
		cat "$T/$_side.log"
	done
	[ $_rc -eq 0 ] || fail "$_name: both sides exit 0"
	for _side in srv cli; do
		_f=$T/$_side.log
		grep -Eq "^$((_size * _iters * 2)) bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec\$" "$_f" ||
			fail "$_name $_side: bytes line" "$((_size * _iters * 2)) bytes in S seconds = R Mbit/sec" "$(grep 'bytes in' "$_f")"
		grep -Eq "^$_iters iters in [0-9.]+ seconds = [0-9.]+ usec/iter\$" "$_f" ||
			fail "$_name $_side: iters line" "$_iters iters in S seconds = U usec/iter" "$(grep 'iters in' "$_f")"
		expect_eq "$_name $_side: failure markers" "" \
			"$(grep -E 'Failed status|Couldn|invalid data|poll CQ failed|parse WC failed' "$_f")"
	done
	echo "ok: $_name"
}

run uc ibv_uc_pingpong 4096 1000 -c
run ud ibv_ud_pingpong 1024 1000 -s 1024 -c
