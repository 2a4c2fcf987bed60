#!/bin/sh
# it_cli: `uroce up` refuses bad options and busy ports with one clear line
# (exit 1) and leaves nothing behind; it is idempotent; the other
# subcommands refuse a device that is not up.
. "$top_srcdir/tests/lib.sh"

# expect_fail WHAT MESSAGE CMD...: CMD exits 1 with exactly MESSAGE on stderr.
expect_fail() {
	_what=$1 _msg=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	_rc=$?
	expect_eq "$_what: exit status" 1 "$_rc"
	expect_eq "$_what: message" "$_msg" "$(cat "$T/err")"
}

# Option errors (table: option, message).
while IFS='|' read -r opts msg; do
	# shellcheck disable=SC2086
	expect_fail "up $opts" "$msg" uroce up $opts
done <<'CASES'
--mtu 1500|uroce up: --mtu '1500' is not an IB MTU: use 256, 512, 1024, 2048 or 4096 (bytes)
--mtu 8192|uroce up: --mtu '8192' is not an IB MTU: use 256, 512, 1024, 2048 or 4096 (bytes)
--port 0|uroce up: --port '0' is not a UDP port (1..65535)
--port 70000|uroce up: --port '70000' is not a UDP port (1..65535)
--port http|uroce up: --port 'http' is not a UDP port (1..65535)
--addr 1.2.3.4|uroce up: --addr: address 1.2.3.4 is not configured on any local interface (Cannot assign requested address)
--addr 127.0.0.300|uroce up: --addr: '127.0.0.300' is not an IPv4 or IPv6 address
--addr 0.0.0.0|uroce up: --addr: address 0.0.0.0 is unspecified or multicast; a device needs one unicast address
--dev rxe0|uroce up: device name 'rxe0' starts with 'rxe': the rdma-core rxe provider would claim it; use e.g. uroce0
--dev ../x|uroce up: '../x' is not a valid device name (letters, digits, '_' and '-', starting with a letter)
--gid-tbl-len 0|uroce up: --gid-tbl-len '0' must be 1..128
--loss 101|uroce up: --loss '101' is not a percentage (0..100)
--clock-khz 999|uroce up: --clock-khz '999' must be 1000..10000000 (kHz)
--clock-khz 10000001|uroce up: --clock-khz '10000001' must be 1000..10000000 (kHz)
--clock-bits 23|uroce up: --clock-bits '23' must be 24..64
--clock-bits 65|uroce up: --clock-bits '65' must be 24..64
--bogus|uroce up: unknown argument '--bogus' (see uroce up --help)
--dev|uroce up: option --dev needs a value
CASES
expect_eq "nothing left after refused ups" "" "$(ls "$UROCE_RUN_DIR/sysfs/class/infiniband" 2>/dev/null)"

# A run directory others can write to, or that is someone else's, is
# refused: programs trust the socket path it publishes.
mkdir -m 777 "$T/shared" && chmod 777 "$T/shared"
expect_fail "up in a world-writable run directory" \
	"uroce up: run directory $T/shared is writable by other users (mode 777); chmod go-w it or use another" \
	env UROCE_RUN_DIR="$T/shared" "$UROCE" up

# A UDP port some other program holds.
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
time.sleep(120)' >"$T/holder" &
holder=$!
n=0
while [ ! -s "$T/holder" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
busy=$(cat "$T/holder")
expect_fail "up on a port held by another program" \
	"uroce up: UDP port $busy on 127.0.0.1 is already in use (bound: 127.0.0.1:$busy)" uroce up --port "$busy"
# The daemon's own bind failure, reached when ss sees nothing (here: an
# ss that lists no sockets first in PATH), is passed on with its message.
mkdir "$T/noss" && printf '#!/bin/sh\nexit 0\n' >"$T/noss/ss" && chmod +x "$T/noss/ss"
PATH=$T/noss:$PATH uroce up --port "$busy" >"$T/out" 2>"$T/err"
expect_eq "up on a busy port, daemon's check: exit" 1 $?
case $(cat "$T/err") in
"uroce up: uroced failed to start uroce0 on 127.0.0.1:$busy: "*"Address already in use"*) echo "ok: $(cat "$T/err")" ;;
*) fail "up on a busy port, daemon's check: message" \
	"uroce up: uroced failed to start uroce0 on 127.0.0.1:$busy: ...Address already in use..." "$(cat "$T/err")" ;;
esac
kill "$holder"
wait "$holder" 2>/dev/null
expect_eq "nothing left after the busy-port refusal" "" "$(ls "$UROCE_RUN_DIR/sysfs/class/infiniband" 2>/dev/null)"

# A port another device of this run directory uses; idempotent up.
up --dev uroce0
expect_fail "up uroce1 on uroce0's port" "uroce up: UDP port $UROCE_PORT on 127.0.0.1 is already used by device uroce0" \
	uroce up --dev uroce1 --port "$UROCE_PORT"
pid=$(cat "$UROCE_RUN_DIR/uroce0.pid")
expect_eq "same up again" "uroce0: already up (uroced pid $pid on 127.0.0.1:$UROCE_PORT); nothing to do" \
	"$(uroce up --dev uroce0 --port "$UROCE_PORT")"
expect_line "up names the command as it was called" "$T/up.out" "Run verbs programs with:  $UROCE run -- ibv_devinfo -d uroce0"
expect_fail "up again with another MTU" \
	"uroce up: uroce0 is already up with other options (uroced pid $pid, 127.0.0.1:$UROCE_PORT mtu 4096); run 'uroce down --dev uroce0' first" \
	uroce up --dev uroce0 --port "$UROCE_PORT" --mtu 1024

# Subcommands on a device that is not up.
notup="device uroce5 is not up (in $UROCE_RUN_DIR; try 'uroce up --dev uroce5')"
expect_fail "link set on a missing device" "uroce link: $notup" uroce link set uroce5 down
expect_fail "capture on a missing device" "uroce capture: $notup" uroce capture start uroce5 "$T/x.pcap"
expect_fail "env --dev on a missing device" "uroce env: $notup" uroce env --dev uroce5
uroce link set uroce0 sideways >/dev/null 2>&1
expect_eq "link set with a bad state: exit" 2 $?
uroce status --dev uroce5 >"$T/out" 2>&1
expect_eq "status of an unknown device: exit" 1 $?
expect_eq "status of an unknown device" "== uroce5: unknown (nothing in $UROCE_RUN_DIR)" "$(cat "$T/out")"
expect_eq "down of a device that is not up" "uroce5: not up" "$(uroce down --dev uroce5)"
# `uroce down` alone means uroce0; with only another device up (own run
# directory) it names that one and leaves it up.
(
	UROCE_RUN_DIR=$T/run6
	export UROCE_RUN_DIR
	up --dev uroce6 >/dev/null
	out=$(uroce down 2>&1)
	pid6=$(cat "$UROCE_RUN_DIR/uroce6.pid")
	down6=$(uroce down --dev uroce6 2>&1)
	expect_eq "down without --dev while only uroce6 is up" \
		"uroce0: not up (up in $UROCE_RUN_DIR: uroce6; use --dev NAME or --all)" "$out"
	expect_eq "uroce6 was left up" "uroce6: down (uroced pid $pid6 stopped)" "$down6"
) || exit 1

# A daemon that does not answer (stopped): down still gets rid of it.
kill -STOP "$pid"
UROCE_ADMIN_TIMEOUT=2 uroce status --dev uroce0 >"$T/out" 2>&1
expect_eq "status of a stopped daemon: exit" 1 $?
expect_line "status of a stopped daemon" "$T/out" "uroce status: uroce0: the daemon did not answer on $UROCE_RUN_DIR/uroce0.sock"
# link/capture say it did not answer (they said "refused")
while IFS='|' read -r args what; do
	# shellcheck disable=SC2086
	UROCE_ADMIN_TIMEOUT=2 expect_fail "$args on a stopped daemon" \
		"uroce ${args%% *}: uroce0: the daemon did not answer $what within 2 s (stopped or wedged?)" uroce $args
done <<'CASES'
link set uroce0 down|'link down'
link show uroce0|'status'
capture stop uroce0|'capture stop'
CASES
out=$(UROCE_ADMIN_TIMEOUT=2 uroce down --dev uroce0 2>&1)
expect_eq "down of a stopped daemon" "uroce0: down (uroced pid $pid killed (SIGKILL))" "$out"
up --dev uroce0
pid=$(cat "$UROCE_RUN_DIR/uroce0.pid")

# A daemon that died: status says so, up cleans up and starts again.
kill -KILL "$pid"
n=0
while [ -d "/proc/$pid" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
uroce status --dev uroce0 >"$T/out" 2>&1
expect_eq "status of a dead daemon: exit" 1 $?
expect_eq "status of a dead daemon" "== uroce0: down (daemon not running; 'uroce down --dev uroce0' removes the leftovers, see $UROCE_RUN_DIR/uroce0.log)" "$(cat "$T/out")"
up --dev uroce0
expect_line "up after a dead daemon" "$T/up.out" "uroce0: removed the leftovers of a device whose daemon is gone"
