#!/bin/sh
# traffic_perftest: Debian's perftest 4.5 (unmodified) over uroce0 with
# -x 0 and the TCP exchange (no rdma_cm): ib_send_bw, ib_send_lat,
# ib_write_bw, ib_write_lat, ib_read_bw, ib_read_lat, and ib_atomic_bw /
# ib_atomic_lat with -A CMP_AND_SWAP and -A FETCH_AND_ADD, short runs.  Each:
# both sides exit 0, no failure marker, and the client's result row has
# perftest's default size (65536 bytes for BW, 2 for latency, 8 for
# atomics) and exactly the iterations asked for, and is plausible (BW: average > 0 MB/s;
# latency: 0 < t_min <= t_avg, finite).  The
# write/read servers never touch their CQ: the daemon is the responder.
# Source: docs/clients.md §2.  No speed is asserted.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0

perftest ib_send_bw bw 65536 200 -n 200
perftest ib_send_lat lat 2 200 -n 200
perftest ib_write_bw bw 65536 200 -n 200
perftest ib_write_lat lat 2 200 -n 200
perftest ib_read_bw bw 65536 200 -n 200
perftest ib_read_lat lat 2 200 -n 200
# Atomics are 8 bytes; -o 16 keeps 16 in flight (max_rd_atomic and
# max_dest_rd_atomic 16, the device's max_qp_rd_atom).
perftest ib_atomic_bw bw 8 2000 -A CMP_AND_SWAP -n 2000 -o 16
perftest ib_atomic_bw bw 8 2000 -A FETCH_AND_ADD -n 2000 -o 16
perftest ib_atomic_lat lat 8 500 -A CMP_AND_SWAP -n 500
perftest ib_atomic_lat lat 8 500 -A FETCH_AND_ADD -n 500
# Inline (-I): perftest picks inline sizes from a table of known vendor and
# part ids and turns inline off for any other device, even when -I asks for
# it (docs/clients.md §2); uroce does not pose as a known vendor, so the run
# goes on without inline data, and says so on both sides.
perftest ib_write_lat lat 2 200 -n 200 -I 64
for _side in srv cli; do
	expect_eq "ib_write_lat -I 64 $_side: inline turned off" 1 \
		"$(grep -c 'Device not recognized to implement inline feature. Disabling it' "$T/$_side.log")"
	expect_eq "ib_write_lat -I 64 $_side: header" 1 "$(grep -c 'Max inline data : 0\[B\]' "$T/$_side.log")"
done
