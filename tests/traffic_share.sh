#!/bin/sh
# traffic_share: tests/traffic_share (Check) inside `uroce run`: a context,
# PD, MR and DM imported by another process from the cmd_fd it was sent,
# 1000 rounds of 64 KiB RDMA WRITEs into and out of the imported MR at
# MTU 1024, EBUSY while imported, a foreign /dev/null refused, DEVICE_FATAL
# when the original goes. Cases listed in tests/traffic_share.c.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_share"
rc=$?
expect_eq "traffic_share exit status" 0 "$rc"
