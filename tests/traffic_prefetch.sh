#!/bin/sh
# traffic_prefetch: small send WQEs' payloads read together (docs/transport.md
# "Prefetch of small payloads", emu/xport/prefetch.c) under unmodified
# perftest clients between two devices (client on uroce0 at 127.0.0.1,
# server on uroce1 at 127.0.0.2: on one device the internal loopback keeps
# the requester so far ahead that the client's batches are one or two WQEs),
# read from uroce0's `uroce status` (line "mem_reads preads= bytes=
# prefetch_reads= prefetch_wqes=") before and after each:
# - ib_write_bw and ib_send_bw -s 8 -n 5000 -l 8 (lists of 8 WQEs a post,
#   from buffers 64 bytes apart): at most one pread per 4 messages and at
#   least 3750 of the 5000 WQEs prefetched (about 350 preads and 5000 WQEs
#   measured; 5000 preads without prefetch). Without -l the client posts
#   one WQE a completion, and how many queue up depends on which process
#   the scheduler runs: 400 to 5000 were prefetched in runs of ib_send_bw,
#   and ib_write_bw lost its batches in a full suite on a loaded machine;
#   a list is published with one producer index, so it is taken whole;
# - ib_write_bw -s 65536 -n 300: nothing prefetched (over 256 bytes).
. "$top_srcdir/tests/lib.sh"

# mr FIELD: FIELD of the daemon's mem_reads status line.
mr() { dev_status_field mem_reads "$1"; }

up --dev uroce0 --addr 127.0.0.1 --mtu 4096
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" --mtu 4096 >"$T/up1.out" 2>&1 ||
	{ cat "$T/up1.out"; fail "uroce up uroce1"; }
for prog in ib_write_bw ib_send_bw; do
	r0=$(mr preads) w0=$(mr prefetch_wqes)
	perftest_two $prog -s 8 -n 5000 -l 8
	r1=$(mr preads) w1=$(mr prefetch_wqes)
	echo "$prog 5000 x 8 B: preads $((r1 - r0)) prefetched WQEs $((w1 - w0))"
	[ $((r1 - r0)) -le 1250 ] || fail "$prog -s 8: preads for 5000 messages" "<= 1250" $((r1 - r0))
	[ $((w1 - w0)) -ge 3750 ] && [ $((w1 - w0)) -le 5000 ] ||
		fail "$prog -s 8: WQEs prefetched of 5000" "3750..5000" $((w1 - w0))
done
w0=$(mr prefetch_wqes)
perftest_two ib_write_bw -s 65536 -n 300
expect_eq "ib_write_bw -s 65536: WQEs prefetched" 0 $(($(mr prefetch_wqes) - w0))
echo "ok: prefetch counts"
