#!/bin/sh
# uroced's command line and admin interface (docs/daemon.md): status format,
# link up|down with port state and async events, capture start|stop writing a
# pcap header, exit statuses 0/1/2, start-up errors, shutdown with
# IBV_EVENT_DEVICE_FATAL to clients and a clean exit.
. "$top_srcdir/tests/daemon_lib.sh"
CHURN="$top_builddir/tests/daemon_churn"

# start-up errors: exit 1 and a message
"$UROCED" --dev uroce0 --addr 127.0.0.1 --sock "$D/x.sock" --mtu 1000 2>"$D/err" && fail "mtu 1000 accepted"
grep -q "bad --mtu" "$D/err" || fail "no message for a bad MTU: $(cat "$D/err")"
"$UROCED" --dev uroce0 --addr 300.1.1.1 --sock "$D/x.sock" 2>"$D/err" && fail "bad address accepted"
grep -q "bad --addr '300.1.1.1'" "$D/err" || fail "no message for a bad address"
"$UROCED" --dev uroce0 --addr 127.0.0.1 --sock "$D/x.sock" --clock-bits 8 2>/dev/null && fail "clock-bits 8 accepted"
"$UROCED" --addr 127.0.0.1 --sock "$D/x.sock" 2>/dev/null && fail "missing --dev accepted"

start_uroced --mtu 1024 --clock-khz 250000 --clock-bits 40
PORT=$(sed -n 's/.*udp port \([0-9]*\) .*/\1/p' "$D/log" | head -1)
first=$("$UROCED" --admin "$SOCK" status | head -1)
[ "$first" = "device uroce0 addr 127.0.0.1 port $PORT mtu 1024 state PORT_ACTIVE" ] || fail "status line 1: $first"
[ "$(totals)" = "totals clients=0 pd=0 mr=0 cq=0 qp=0 ah=0" ] || fail "initial totals"

# a second daemon on the same socket or the same UDP port refuses to start
"$UROCED" --dev uroce1 --addr 127.0.0.1 --port 0 --sock "$SOCK" --daemonize 2>"$D/err" && fail "second daemon on a live socket"
grep -q "Address already in use" "$D/err" || fail "no message for a live socket: $(cat "$D/err")"
"$UROCED" --dev uroce1 --addr 127.0.0.1 --port "$PORT" --sock "$D/y.sock" --daemonize 2>"$D/err" && fail "second daemon on a busy UDP port"
grep -q "Address already in use" "$D/err" || fail "no message for a busy port: $(cat "$D/err")"

# admin exit statuses: 2 usage / no daemon, 1 refused
"$UROCED" --admin "$SOCK" frobnicate 2>/dev/null; [ $? -eq 2 ] || fail "bad admin command: exit not 2"
"$UROCED" --admin "$D/none.sock" status 2>/dev/null; [ $? -eq 2 ] || fail "missing socket: exit not 2"
"$UROCED" --admin "$SOCK" capture stop 2>"$D/err"; [ $? -eq 1 ] || fail "capture stop with none running: exit not 1"
grep -q "refused: No such file or directory" "$D/err" || fail "capture stop message: $(cat "$D/err")"

# link state
"$UROCED" --admin "$SOCK" link down || fail "link down"
"$UROCED" --admin "$SOCK" status | head -1 | grep -q "state PORT_DOWN$" || fail "status after link down"
"$UROCED" --admin "$SOCK" link up || fail "link up"
"$UROCED" --admin "$SOCK" status | head -1 | grep -q "state PORT_ACTIVE$" || fail "status after link up"

# capture: a pcap file header (nanosecond magic, LINKTYPE_RAW) is written
"$UROCED" --admin "$SOCK" capture start "$D/cap.pcap" || fail "capture start"
"$UROCED" --admin "$SOCK" status | grep -q "^capture on file=$D/cap.pcap frames=0\$" || fail "status during capture"
"$UROCED" --admin "$SOCK" capture start "$D/cap2.pcap" 2>/dev/null; [ $? -eq 1 ] || fail "second capture: exit not 1"
"$UROCED" --admin "$SOCK" capture stop || fail "capture stop"
hdr=$(od -An -tx1 -N24 "$D/cap.pcap" | tr -d ' \n')
[ "$hdr" = "4d3cb2a1020004000000000000000000ffff000065000000" ] || fail "pcap header: $hdr"
"$UROCED" --admin "$SOCK" status | grep -q "^capture off\$" || fail "status after capture stop"

# a client sees the clock page, port events and, at shutdown, DEVICE_FATAL
"$CHURN" "$SOCK" events "$UROCED" || fail "events"
i=0
while kill -0 "$PID" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "uroced still running after shutdown"; sleep 0.1
done
[ ! -e "$SOCK" ] || fail "socket left behind"
[ ! -e "$D/pid" ] || fail "pidfile left behind"
grep -q "uroce0 down" "$D/log" || fail "no clean exit in the log"
echo "shutdown: process gone, socket and pidfile removed"
