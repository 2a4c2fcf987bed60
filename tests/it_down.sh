#!/bin/sh
# it_down: `uroce down` while a client has the device open: the client's
# ibv_get_async_event returns IBV_EVENT_DEVICE_FATAL, the daemon exits, and
# the device leaves the sysfs tree (ibv_devices no longer lists it); a
# second device of the same run directory stays up.  Also the port events:
# `uroce link set` down/up reaches the same client as IBV_EVENT_PORT_ERR /
# IBV_EVENT_PORT_ACTIVE.
. "$top_srcdir/tests/lib.sh"
up --dev uroce1
up --dev uroce0
dpid=$(cat "$UROCE_RUN_DIR/uroce0.pid")

cat >"$T/wait.py" <<'PY'
# Open uroce0, report ready, print each async event until DEVICE_FATAL.
import sys
import pyverbs.enums as e
from pyverbs.device import Context

names = {e.IBV_EVENT_DEVICE_FATAL: 'IBV_EVENT_DEVICE_FATAL',
         e.IBV_EVENT_PORT_ERR: 'IBV_EVENT_PORT_ERR',
         e.IBV_EVENT_PORT_ACTIVE: 'IBV_EVENT_PORT_ACTIVE'}
ctx = Context(name='uroce0')
open(sys.argv[1], 'w').write('ready\n')
while True:
    ev = ctx.get_async_event()
    t = ev.event_type
    ev.ack()
    print(names.get(t, t), flush=True)
    if t == e.IBV_EVENT_DEVICE_FATAL:
        break
PY
timeout 60 "$UROCE" run -- /usr/bin/python3 "$T/wait.py" "$T/ready" >"$T/events" 2>&1 &
client=$!
n=0
while [ ! -s "$T/ready" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
[ -s "$T/ready" ] || fail "pyverbs client" "ready" "$(cat "$T/events")"

# wait_lines N: until the client printed N events (or 10 s).
wait_lines() {
	_n=0
	while [ "$(wc -l <"$T/events")" -lt "$1" ] && [ $_n -lt 100 ]; do sleep 0.1; _n=$((_n + 1)); done
}
uroce link set uroce0 down >/dev/null
wait_lines 1
uroce link set uroce0 up >/dev/null
wait_lines 2

out=$(uroce down --dev uroce0)
expect_eq "uroce down" "uroce0: down (uroced pid $dpid stopped)" "$out"
wait "$client"
expect_eq "client exit status" 0 $?
expect_eq "async events seen by the client" "IBV_EVENT_PORT_ERR
IBV_EVENT_PORT_ACTIVE
IBV_EVENT_DEVICE_FATAL" "$(cat "$T/events")"
[ ! -d "/proc/$dpid" ] || fail "daemon after down" "exited" "pid $dpid still there"
echo "ok: uroced $dpid exited"

urun ibv_devices >"$T/devices" 2>&1
expect_eq "devices listed after down" "uroce1" "$(awk -F'\t' 'NR > 2 { gsub(/ /, "", $1); print $1 }' "$T/devices")"
uroce status >"$T/status" 2>&1
expect_eq "status: only uroce1 left" "== uroce1: up" "$(grep '^==' "$T/status" | cut -d, -f1)"
