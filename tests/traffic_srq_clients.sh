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

perftest ib_send_bw bw 65536 200 --use-srq -n 200
perftest ib_send_lat lat 2 200 --use-srq -n 200
