#!/bin/sh
# traffic_fatal: a daemon that dies, stops or restarts under its clients
# (docs/provider.md, "When the daemon goes away"; tests/traffic_fatal.c):
# - kill: SIGKILL under a client with 100 receives and 10 sends outstanding:
#   busy polling alone returns exactly 100 + 10 IBV_WC_WR_FLUSH_ERR, then
#   IBV_EVENT_DEVICE_FATAL once, later verbs EIO; `uroce up` then starts a
#   clean daemon on the same device and the same port;
# - ibv_rc_pingpong (1,000,000 iterations) on both sides of a SIGKILLed
#   daemon, busy polling and with -e (blocked in ibv_get_cq_event): both exit
#   1 within 30 s (a hang is rc 124) with a flushed completion, a failed post
#   or a failed ibv_get_cq_event (EIO);
# - stop: SIGSTOP: control verbs fail with ETIMEDOUT after
#   UROCE_CTL_TIMEOUT_MS=1000, and work again after SIGCONT;
# - peer: the peer daemon SIGKILLed and restarted (its new QP takes the old
#   QPN and stays in INIT): the RC requester gets IBV_WC_RETRY_EXC_ERR.
. "$top_srcdir/tests/lib.sh"
PROG=$top_builddir/tests/traffic_fatal

# start MODE: runs traffic_fatal MODE in the background, fed through fd 3,
# and waits for its "ready" line.
start() {
	mkfifo "$T/in.$1"
	UROCE_CTL_TIMEOUT_MS=1000 timeout 120 "$UROCE" run -- "$PROG" "$1" <"$T/in.$1" >"$T/out.$1" 2>&1 &
	PID=$!
	exec 3>"$T/in.$1"
	_n=300
	until grep -qx ready "$T/out.$1"; do
		_n=$((_n - 1))
		[ $_n -gt 0 ] && kill -0 $PID 2>/dev/null || { cat "$T/out.$1"; fail "traffic_fatal $1: never ready"; }
		sleep 0.1
	done
}

# finish MODE: waits for it; it must exit 0.
finish() {
	exec 3>&-
	wait $PID
	_rc=$?
	cat "$T/out.$1"
	expect_eq "traffic_fatal $1 exit status" 0 "$_rc"
}

daemon_pid() {
	cat "$UROCE_RUN_DIR/$1.pid"
}

# -- kill
up --dev uroce0 --mtu 1024
start kill
kill -KILL "$(daemon_pid uroce0)"
echo go >&3
finish kill
expect_line "kill: the provider says why" "$T/out.kill" \
	"uroce: uroce0: the daemon is gone (its end of the control socket closed): outstanding work completes with IBV_WC_WR_FLUSH_ERR, verbs fail with EIO"
uroce up --dev uroce0 --mtu 1024 --port "$UROCE_PORT" >"$T/up2.out" 2>&1 || { cat "$T/up2.out"; fail "uroce up after SIGKILL"; }
expect_line "uroce up after SIGKILL removes the leftovers" "$T/up2.out" \
	"uroce0: removed the leftovers of a device whose daemon is gone"
urun ibv_devinfo -d uroce0 >"$T/devinfo" 2>&1 || { cat "$T/devinfo"; fail "ibv_devinfo on the restarted daemon"; }
expect_line "restarted device: port active" "$T/devinfo" "\t\t\tstate:\t\t\tPORT_ACTIVE (4)"

# -- ibv_rc_pingpong, daemon killed mid-run: busy polling (MODE ""), then
# blocked in ibv_get_cq_event (MODE -e)
# pingpong_killed MODE MARKER: both sides exit 1 within 30 s, each printing
# the provider's line (busy polling) and exactly one MARKER line.
pingpong_killed() {
	_p=$(free_tcp_port)
	_b="$UROCE run -- ibv_rc_pingpong -d uroce0 -g 0 -n 1000000 $1 -p $_p"
	timeout 30 sh -c "$_b" >"$T/srv.log" 2>&1 &
	_sp=$!
	wait_listen "$_p" 30 || fail "ibv_rc_pingpong $1 server never listened"
	timeout 30 sh -c "$_b 127.0.0.1" >"$T/cli.log" 2>&1 &
	_cp=$!
	# both QPs in RTS and receiving: the run is under way
	_n=300
	until [ "$(uroce status --dev uroce0 2>/dev/null | grep -c ' state=RTS .* rx_pkts=[1-9]')" = 2 ]; do
		_n=$((_n - 1))
		[ $_n -gt 0 ] || fail "ibv_rc_pingpong $1: no traffic within 30 s"
		sleep 0.1
	done
	kill -KILL "$(daemon_pid uroce0)"
	wait $_sp
	_s=$?
	wait $_cp
	_c=$?
	cat "$T/srv.log" "$T/cli.log"
	expect_eq "ibv_rc_pingpong $1: server and client exit status (124 = hang)" "1 1" "$_s $_c"
	for _side in srv cli; do
		expect_eq "ibv_rc_pingpong $1 $_side: failure line" 1 "$(grep -c -E "$2" "$T/$_side.log")"
	done
}
pingpong_killed "" '^Failed status Work Request Flushed Error \(5\)|^Couldn.t post send'
for _side in srv cli; do
	expect_eq "$_side: provider line" 1 "$(grep -c '^uroce: uroce0: the daemon is gone' "$T/$_side.log")"
done
uroce up --dev uroce0 --mtu 1024 --port "$UROCE_PORT" >/dev/null || fail "uroce up after SIGKILL (2)"
pingpong_killed -e '^Failed to get cq_event|^Couldn.t post send|^Failed status Work Request Flushed Error \(5\)'
uroce down --dev uroce0 >/dev/null 2>&1

# -- stop
up --dev uroce0
start stop
kill -STOP "$(daemon_pid uroce0)"
echo go >&3
until grep -q 'ibv_modify_qp on a stopped daemon' "$T/out.stop"; do
	kill -0 $PID 2>/dev/null || break
	sleep 0.1
done
kill -CONT "$(daemon_pid uroce0)"
echo go >&3
finish stop
expect_eq "stop: one ETIMEDOUT line per timed-out verb" 2 \
	"$(grep -c '^uroce: uroce0: no reply from the daemon to .* within 1000 ms (is uroced stopped?): ETIMEDOUT$' "$T/out.stop")"
uroce down --dev uroce0 >/dev/null

# -- peer
up --dev uroce0
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" >/dev/null || fail "uroce up uroce1"
start peer
kill -KILL "$(daemon_pid uroce1)"
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" >/dev/null || fail "uroce up uroce1 again"
echo go >&3
finish peer
