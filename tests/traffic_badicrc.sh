#!/bin/sh
# traffic_badicrc: packets with a bad ICRC forged at live QPs of uroce0 (a
# SEND with a receive posted, an RDMA WRITE into an MR open to remote
# writes) complete nothing and write nothing; the same packets with a good
# ICRC are accepted (tests/traffic_badicrc.c). The daemon counts exactly the
# two drops, both by their ICRC (status line "rx_drops bad=2 ... bad_icrc=2").
. "$top_srcdir/tests/lib.sh"
up --dev uroce0 --addr 127.0.0.1
timeout 120 "$UROCE" run -- "$top_builddir/tests/traffic_badicrc" "$UROCE_PORT"
rc=$?
expect_eq "traffic_badicrc exit status" 0 "$rc"
uroce status --dev uroce0 >"$T/status" 2>&1 || fail "uroce status: $(cat "$T/status")"
expect_eq "bad packets counted by the daemon" "rx_drops bad=2 no_qp=0 bad_src=0 bad_icrc=2 rcvbuf_full=0" \
	"$(grep '^rx_drops ' "$T/status")"
