#!/bin/sh
# cm_churn: the daemon's connection manager under churn and failure
# (docs/rdma-cm.md "Robustness"), through librdmacm (tests/cm_churn.c).
#
# 1. Churn: CM_CHURN_N (default 1,000) RC connections on uroce0, 8 in
#    flight, each with its own QP: create, resolve, connect, ESTABLISHED,
#    disconnect, DISCONNECTED, destroy. Exactly N of each event on each
#    side; the daemon's MAD counters grow by exactly N REQ/REP/RTU/DREQ/DREP
#    each way, with no REJ, retransmit, timeout, duplicate or drop. After it
#    the daemon has exactly the descriptors it had before any CM use, its
#    CM tables are empty (no id, listener, pending request, CM connection or
#    client); a second round of N connections grows its VmRSS by at most
#    256 kB (the first grows the heap once to its working size; not bounded
#    under ASan, whose allocator keeps freed memory in quarantine).
# 2. A SIGKILLed peer, each way: 8 connections established, one process
#    killed; every connection of the survivor gets DISCONNECTED (status 0)
#    then TIMEWAIT_EXIT (status 0), as the kernel's CM reports a peer whose
#    ucma file is released (cm_destroy_id sends a DREQ), and nothing else;
#    the survivor's rdma_disconnect at DISCONNECTED returns 0. The DREPs the
#    survivor's side sends to the dead ids are dropped (8 drops): those ids
#    are gone, as in the kernel.
. "$top_srcdir/tests/lib.sh"
n=${CM_CHURN_N:-1000}
up --dev uroce0 --mtu 1024
dpid=$(cat "$UROCE_RUN_DIR/uroce0.pid")
B="$UROCE run -- $top_builddir/tests/cm_churn"
port=$(free_tcp_port)

fds() { ls "/proc/$dpid/fd" | wc -l; }
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$dpid/status"; }
# cm_line: the device's `cm` status line; tables: its tables, and the
# number of client lines (every process gone).
cm_line() { uroce status --dev uroce0 | grep '^cm ids='; }
tables() {
	_s=$(uroce status --dev uroce0)
	printf '%s clients=%s\n' "$(printf '%s\n' "$_s" | grep '^cm ids=' | cut -d' ' -f2-6)" \
		"$(printf '%s\n' "$_s" | grep -c '^client ')"
}
# counter NAME LINE: the value of NAME= in a cm line.
counter() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# deltas BEFORE AFTER NAME...: "NAME=after-before" for each NAME.
deltas() {
	_b=$1 _a=$2
	shift 2
	_out=
	for _n in "$@"; do
		_out="$_out $_n=$(($(counter "$_n" "$_a") - $(counter "$_n" "$_b")))"
	done
	echo "${_out# }"
}
COUNTERS="req_tx req_rx rep_tx rep_rx rtu_tx rtu_rx dreq_tx dreq_rx drep_tx drep_rx rej_tx rej_rx mra_tx mra_rx retransmits timeouts duplicates drops refused_backlog"
EMPTY="ids=0 listens=0 established=0 pending=0 conns=0 clients=0"

# wait_for FILE LINE PID: until FILE has LINE, at most 60 s or until PID ends.
wait_for() {
	_n=0
	until grep -qxF "$2" "$1" 2>/dev/null; do
		[ $_n -lt 600 ] && kill -0 "$3" 2>/dev/null || { cat "$1"; fail "waiting for '$2' in $1"; }
		sleep 0.1
		_n=$((_n + 1))
	done
}

# churn NAME COUNT: a churn server and client for COUNT connections; both
# must exit 0 with their exact lines.
churn() {
	timeout 300 $B server 127.0.0.1 "$port" "$2" churn >"$T/$1.srv" 2>&1 &
	_sp=$!
	wait_for "$T/$1.srv" listening $_sp
	timeout 300 $B client 127.0.0.1 "$port" "$2" 8 churn >"$T/$1.cli" 2>&1
	_c=$?
	[ $_c -eq 0 ] || kill $_sp 2>/dev/null
	wait $_sp
	_s=$?
	cat "$T/$1.srv" "$T/$1.cli"
	expect_eq "$1: client exit status" 0 "$_c"
	expect_eq "$1: server exit status" 0 "$_s"
	expect_line "$1: client events" "$T/$1.cli" \
		"client: $2 connections, $2 ADDR_RESOLVED $2 ROUTE_RESOLVED $2 ESTABLISHED $2 DISCONNECTED 0 TIMEWAIT_EXIT, at most 8 in flight"
	expect_line "$1: server events" "$T/$1.srv" \
		"server: $2 CONNECT_REQUEST $2 ESTABLISHED $2 DISCONNECTED 0 TIMEWAIT_EXIT, at most 8 at once"
}

fd0=$(fds)
expect_eq "tables before any CM use" "$EMPTY" "$(tables)"
churn warmup 64
expect_eq "descriptors after the warm-up" "$fd0" "$(fds)"
expect_eq "tables after the warm-up" "$EMPTY" "$(tables)"
rss1=$(rss)
c1=$(cm_line)
churn churn "$n"
c2=$(cm_line)
rss2=$(rss)
expect_eq "MAD counters over $n connections" \
	"req_tx=$n req_rx=$n rep_tx=$n rep_rx=$n rtu_tx=$n rtu_rx=$n dreq_tx=$n dreq_rx=$n drep_tx=$n drep_rx=$n rej_tx=0 rej_rx=0 mra_tx=0 mra_rx=0 retransmits=0 timeouts=0 duplicates=0 drops=0 refused_backlog=0" \
	"$(deltas "$c1" "$c2" $COUNTERS)"
expect_eq "descriptors after $n connections" "$fd0" "$(fds)"
expect_eq "tables after $n connections" "$EMPTY" "$(tables)"
# The first round grows the heap once (about 0.8 MB here: the allocator's
# arenas and tables reaching their working size, the same after 1,000 or
# 3,000 connections); a second round of as many must not grow it again.
echo "daemon VmRSS $rss1 -> $rss2 kB over the first $n connections"
churn again "$n"
rss3=$(rss)
expect_eq "tables after $n more connections" "$EMPTY" "$(tables)"
expect_eq "descriptors after $n more connections" "$fd0" "$(fds)"
if [ -n "${UROCE_ASAN:-}" ]; then
	echo "ASan build: daemon VmRSS $rss2 -> $rss3 kB (not bounded)"
else
	[ $((rss3 - rss2)) -le 256 ] || fail "daemon VmRSS growth over $n more connections" "<= 256 kB" "$((rss3 - rss2)) kB"
	echo "ok: daemon VmRSS $rss2 -> $rss3 kB over $n more connections"
fi

# killed NAME VICTIM SURVIVOR: 8 connections, then VICTIM (server or client)
# is SIGKILLed; SURVIVOR must see each end with DISCONNECTED, TIMEWAIT_EXIT.
killed() {
	_v=$2 _s=$3
	if [ "$_v" = client ]; then
		_send=survive _cend=hold _vf=$T/$1.cli
	else
		_send=hold _cend=survive _vf=$T/$1.srv
	fi
	timeout 120 $B server 127.0.0.1 "$port" 8 $_send >"$T/$1.srv" 2>&1 &
	_sp=$!
	wait_for "$T/$1.srv" listening $_sp
	timeout 120 $B client 127.0.0.1 "$port" 8 8 $_cend >"$T/$1.cli" 2>&1 &
	_cp=$!
	wait_for "$T/$1.cli" "established 8" $_cp
	wait_for "$T/$1.srv" "established 8" $_sp
	_c0=$(cm_line)
	# clients: each process has two lines, its verbs context and its CM event channel
	expect_eq "$1: tables with 8 connections" "ids=17 listens=1 established=16 pending=0 conns=2 clients=4" "$(tables)"
	_vpid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$_vf" | head -n 1)
	[ -n "$_vpid" ] || fail "$1: the $_v's pid line"
	kill -KILL "$_vpid"
	if [ "$_v" = client ]; then
		wait $_sp
		_rs=$?
		wait $_cp
		_sf=$T/$1.srv
	else
		wait $_cp
		_rs=$?
		wait $_sp
		_sf=$T/$1.cli
	fi
	cat "$T/$1.srv" "$T/$1.cli"
	expect_eq "$1: the surviving $_s's exit status" 0 "$_rs"
	if [ "$_s" = server ]; then
		expect_line "$1: survivor's events" "$_sf" \
			"server: 8 CONNECT_REQUEST 8 ESTABLISHED 8 DISCONNECTED 8 TIMEWAIT_EXIT, at most 8 at once"
	else
		expect_line "$1: survivor's events" "$_sf" \
			"client: 8 connections, 8 ADDR_RESOLVED 8 ROUTE_RESOLVED 8 ESTABLISHED 8 DISCONNECTED 8 TIMEWAIT_EXIT, at most 8 in flight"
	fi
	expect_eq "$1: MAD counters after the kill" \
		"dreq_tx=8 dreq_rx=8 drep_tx=8 drep_rx=8 rej_tx=0 rej_rx=0 retransmits=0 timeouts=0 duplicates=0 drops=8" \
		"$(deltas "$_c0" "$(cm_line)" dreq_tx dreq_rx drep_tx drep_rx rej_tx rej_rx retransmits timeouts duplicates drops)"
	expect_eq "$1: descriptors" "$fd0" "$(fds)"
	expect_eq "$1: tables" "$EMPTY" "$(tables)"
}
killed kill_client client server
killed kill_server server client
echo "ok"
