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
#   300 x 65536 bytes, between 1 and 600 pwrites, no fault.
. "$top_srcdir/tests/lib.sh"

# wb FIELD: FIELD of the daemon's mem_wb status line.
wb() {
	uroce status --dev uroce0 >"$T/status" 2>&1 || fail "uroce status"
	_v=$(sed -n "s/^mem_wb .*[ ]$1=\([0-9]*\).*\$/\1/p; s/^mem_wb $1=\([0-9]*\).*\$/\1/p" "$T/status")
	[ -n "$_v" ] || fail "mem_wb $1 in uroce status" "mem_wb ... $1=N" "$(cat "$T/status")"
	echo "$_v"
}

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
echo "ok: write-behind counts"
