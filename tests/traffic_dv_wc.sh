#!/bin/sh
# traffic_dv_wc: urocedv(3) against a live daemon. tests/traffic_dv_wc
# (Check: the API's errors and layout; 2000 RC messages of 64 KiB polled
# with urocedv_poll_cq_wc, every field exact), then tools/cq_bench's three
# polls (ibv_poll_cq, the iterator, urocedv_poll_cq_wc) on CQs the daemon
# fills with 4096 receive CQEs (one round each), with and without timestamps: cq_bench exits
# 1 unless every completion has the next wr_id, SUCCESS, RECV, 64 bytes,
# the QP's number and a non-decreasing timestamp.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0 --mtu 1024
timeout 120 "$UROCE" run -- "$top_builddir/tests/traffic_dv_wc"
rc=$?
expect_eq "traffic_dv_wc exit status" 0 "$rc"
for design in classic iter dv; do
	for ts in "" --ts; do
		tsn=0
		[ -z "$ts" ] || tsn=1
		out=$(timeout 120 "$UROCE" run -- "$top_builddir/tools/cq_bench" --design "$design" $ts \
			--n 4096 --rounds 1) || fail "cq_bench --design $design $ts failed: $out"
		case $out in
		"$design ts=$tsn cqes=4096 "*) echo "ok: cq_bench --design $design $ts: 4096 completions checked" ;;
		*) fail "cq_bench --design $design $ts printed: $out" ;;
		esac
	done
done
