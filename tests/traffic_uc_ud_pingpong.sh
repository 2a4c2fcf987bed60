#!/bin/sh
# traffic_uc_ud_pingpong: rdma-core's unmodified ibv_uc_pingpong (4 KiB
# messages, MTU 1024: multi-packet UC SENDs) and ibv_ud_pingpong -s 1024
# (UD SENDs through an AH, 40-byte GRH area in every receive buffer), server
# and client as two processes on uroce0.  Each: both exit 0, exact byte and
# iteration counts (size x iters x 2), no failure marker; run with -c so the
# receiver checks the payload.  Source: docs/clients.md §1.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0

pingpong uc ibv_uc_pingpong uroce0 4096 1000 -c
pingpong ud ibv_ud_pingpong uroce0 1024 1000 -s 1024 -c
