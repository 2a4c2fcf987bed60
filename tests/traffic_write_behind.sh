#!/bin/sh
# traffic_write_behind: the responder's write-behind (docs/transport.md
# "Write-behind", emu/nic/mem_wb.c) under unmodified clients at MTU 4096,
# read from `uroce status` (line "mem_wb staged= pwrites= bytes= mem_write_faults=")
# before and after each program:
# - ibv_rc_pingpong -s 65536 -c, 200 iterations (400 SENDs of 16 packets,
#   data checked by the program): exactly 400 x 65536 bytes written from
#   staging, 6400 packets staged, between 400 and 800 pwrites (one or two
#   per message instead of 16), no fault;
# - ib_write_bw -s 65536 -n 300 (16-packet WRITEs, many in flight): exactly
#   300 x 65536 bytes, between 1 and 600 pwrites, no fault;
# - ib_read_bw -s 65536 -n 1000 (the requester writes the 16 READ responses
#   of each message while it sends the next READ requests, which must not
#   cut the run): exactly 1000 x 65536 bytes, at most 1.2 pwrites per
#   message (1.00 measured; 1.99 when every transmit wrote the run);
# - ib_write_bw -s 65536 -n 1000 -m 1024 (64 packets per message, more than
#   one receive batch of 32 datagrams): exactly 1000 x 65536 bytes, at most
#   1.2 pwrites per message (1.00 measured; 2.00 when each receive batch's
#   end wrote the run).
. "$top_srcdir/tests/lib.sh"

# wb FIELD: FIELD of the daemon's mem_wb status line.
wb() { dev_status_field mem_wb "$1"; }

up --dev uroce0 --mtu 4096
s0=$(wb staged) p0=$(wb pwrites) b0=$(wb bytes) f0=$(wb mem_write_faults)
pingpong rc64k ibv_rc_pingpong uroce0 65536 200 -s 65536 -m 4096 -c -n 200
s1=$(wb staged) p1=$(wb pwrites) b1=$(wb bytes) f1=$(wb mem_write_faults)
echo "ibv_rc_pingpong 400 x 64 KiB: staged $((s1 - s0)) pwrites $((p1 - p0)) bytes $((b1 - b0)) faults $((f1 - f0))"
expect_eq "rc_pingpong: bytes written from staging" 26214400 $((b1 - b0))
expect_eq "rc_pingpong: packets staged" 6400 $((s1 - s0))
expect_eq "rc_pingpong: mem_write_faults" 0 $((f1 - f0))
[ $((p1 - p0)) -ge 400 ] && [ $((p1 - p0)) -le 800 ] ||
	fail "rc_pingpong: pwrites for 400 messages of 16 packets" "400..800" $((p1 - p0))

perftest ib_write_bw bw 65536 300 -s 65536 -n 300 -m 4096
p2=$(wb pwrites) b2=$(wb bytes) f2=$(wb mem_write_faults)
echo "ib_write_bw 300 x 64 KiB: pwrites $((p2 - p1)) bytes $((b2 - b1)) faults $((f2 - f1))"
expect_eq "ib_write_bw: bytes written from staging" 19660800 $((b2 - b1))
[ $((p2 - p1)) -ge 1 ] && [ $((p2 - p1)) -le $(((b2 - b1) / 32768)) ] ||
	fail "ib_write_bw: pwrites per 64 KiB written" "<= 2" "$((p2 - p1)) for $((b2 - b1)) bytes"
expect_eq "ib_write_bw: mem_write_faults" 0 $((f2 - f1))

# runs MSGS NAME P0 B0 F0: the counters since P0 B0 F0 for MSGS messages of
# 64 KiB: exact bytes, no fault, at most 1.2 pwrites per message.
runs() {
	_p=$(wb pwrites) _b=$(wb bytes) _f=$(wb mem_write_faults)
	echo "$2 $1 x 64 KiB: pwrites $((_p - $3)) bytes $((_b - $4)) faults $((_f - $5))"
	expect_eq "$2: bytes written from staging" $(($1 * 65536)) $((_b - $4))
	expect_eq "$2: mem_write_faults" 0 $((_f - $5))
	[ $((10 * (_p - $3))) -le $((12 * $1)) ] ||
		fail "$2: pwrites for $1 messages" "<= 1.2 per message ($(($1 * 12 / 10)))" $((_p - $3))
}

perftest ib_read_bw bw 65536 1000 -s 65536 -n 1000 -m 4096
runs 1000 ib_read_bw "$p2" "$b2" "$f2"
p3=$(wb pwrites) b3=$(wb bytes) f3=$(wb mem_write_faults)
perftest ib_write_bw bw 65536 1000 -s 65536 -n 1000 -m 1024
runs 1000 "ib_write_bw -m 1024" "$p3" "$b3" "$f3"
echo "ok: write-behind counts"
