#!/bin/sh
# traffic_dev_window: the device window (emu/xport/dev_window.c,
# XPORT_DEV_UNACKED_PSNS 1024, XPORT_FAIR_UNACKED_PSNS 16) under unmodified
# perftest between two devices (client on uroce0 at 127.0.0.1, server on
# uroce1 at 127.0.0.2, MTU 4096), read from uroce0's status line
# `device_window psns= fair= in_flight= max= stops=`:
# - ib_write_bw -s 65536 -q 64 -n 200 (64 QPs, 128 WRITEs of 16 packets in
#   flight on each: 8,192 PSNs, 32 MiB, without the device window): the
#   window stopped QPs (stops >= 1), the most in flight is at least 1,024
#   and at most 2,048 (a QP below 16 in flight may always send, 64 x 16 past
#   the window at worst; 8,192 without it), nothing in flight after, the
#   server's socket dropped nothing (rx_drops rcvbuf_full=0) and every QP's
#   data arrived (perftest exits 0 with no failure marker);
# - ib_write_bw -s 65536 -n 2000 (one QP, its own window of 128 PSNs below
#   the device's): the window never stops it (stops unchanged).
. "$top_srcdir/tests/lib.sh"

dw() { dev_status_field device_window "$1"; }

up --dev uroce0 --addr 127.0.0.1 --mtu 4096
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" --mtu 4096 >"$T/up1.out" 2>&1 ||
	{ cat "$T/up1.out"; fail "uroce up uroce1"; }
expect_eq "device window, fair share" "1024 16" "$(dw psns) $(dw fair)"

perftest_two ib_write_bw -s 65536 -q 64 -n 200
uroce status --dev uroce0 | grep '^device_window'
s1=$(dw stops)
[ "$s1" -ge 1 ] || fail "-q 64: QPs stopped by the device window" ">= 1" "$s1"
m=$(dw max)
[ "$m" -ge 1024 ] && [ "$m" -le 2048 ] || fail "-q 64: most PSNs in flight" "1024..2048" "$m"
expect_eq "-q 64: PSNs in flight after the run" 0 "$(dw in_flight)"
uroce status --dev uroce1 >"$T/st1" || fail "uroce status uroce1"
grep '^rx_drops' "$T/st1"
expect_eq "-q 64: the server's receive-buffer drops" 0 \
	"$(sed -n 's/^rx_drops .*rcvbuf_full=\([0-9]*\).*/\1/p' "$T/st1")"

perftest_two ib_write_bw -s 65536 -n 2000
expect_eq "one QP: stops by the device window" "$s1" "$(dw stops)"
echo "ok: device window"
