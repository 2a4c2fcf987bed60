#!/bin/sh
# inspect_psn_graph_live: `uroce inspect --psn-graph` and `--latency-svg` on
# uroce's own capture of a lossy run (`uroce up --loss 5 --seed 7 --pcap`,
# MTU 1024; unmodified perftest: ib_write_bw and ib_read_bw of 64 KiB
# through `uroce run`). tests/inspect_psn_graph.py --capture asserts, per
# request flow, the resends drawn (by cause, in --json and as SVG marks) =
# --flows' retransmitted, the READ responses sent again = the response
# flows' retransmitted, the first PSN and packet count = --flows, the
# histogram's counts = the messages of --flows; at least one resend; both
# SVGs parse and render (rsvg-convert).
. "$top_srcdir/tests/lib.sh"
PY=${PYTHON:-python3}

up --dev uroce0 --mtu 1024 --loss 5 --seed 7 --pcap "$T/lossy.pcap"
perftest ib_write_bw bw 65536 200 -s 65536 -n 200
perftest ib_read_bw bw 65536 100 -s 65536 -n 100
uroce down --dev uroce0 >/dev/null || fail "uroce down"
top_srcdir=$top_srcdir top_builddir=$top_builddir $PY "$top_srcdir/tests/inspect_psn_graph.py" \
	--capture "$T/lossy.pcap" --port "$UROCE_PORT" >"$T/graph.out" 2>&1
_rc=$?
cut -c1-200 "$T/graph.out"
expect_eq "inspect_psn_graph.py --capture" 0 "$_rc"
