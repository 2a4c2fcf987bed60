#!/bin/sh
# traffic_xrc: tests/traffic_xrc (Check) inside `uroce run`: XRC domains,
# XRC SRQs of two contexts sharing a domain through a file behind one
# XRC_RECV QP, 2000 SENDs and 1000 RDMA WRITEs of 64 KiB at MTU 1024, and
# requests naming no SRQ, an SRQ of another domain and a destroyed SRQ;
# the same over ODP MRs (xrc_odp_caps).
# Cases listed in tests/traffic_xrc.c; docs/xrc.md.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_xrc"
rc=$?
expect_eq "traffic_xrc exit status" 0 "$rc"
