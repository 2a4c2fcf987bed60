#!/bin/sh
# A client killed with SIGKILL while holding objects is cleaned up (the daemon
# stays up, totals go back to 0; async events it never read are logged once,
# counted at disconnect), and 1000 connect/create/destroy/close cycles
# leak nothing: totals 0 and the daemon's VmRSS flat within the bound stated
# in tests/daemon_churn.c. A daemon out of descriptors (connection flood
# beyond its limit) survives and serves again once they are closed.
. "$top_srcdir/tests/daemon_lib.sh"
CHURN="$top_builddir/tests/daemon_churn"

start_uroced
mkfifo "$D/ready"
"$CHURN" "$SOCK" hold > "$D/ready" &
HOLDER=$!
read -r line < "$D/ready" || fail "holder did not start"
[ "$line" = ready ] || fail "holder said '$line'"
t=$(totals)
[ "$t" = "totals clients=1 pd=1 mr=2 cq=2 qp=2 ah=1" ] || fail "while holding: $t"
"$UROCED" --admin "$SOCK" status | grep -q "^client id=[0-9]* pid=$HOLDER uid=$(id -u) comm=daemon_churn pd=1 mr=2 cq=2 qp=2 ah=1\$" ||
	fail "status does not list the holder: $("$UROCED" --admin "$SOCK" status)"
n=$("$UROCED" --admin "$SOCK" status | grep -c "^  qp qpn=0x[0-9a-f]* type=\(RC\|UD\) state=RESET dest_qpn=0x0 sq_psn=0x0 rq_psn=0x0 path_mtu=0 tx_pkts=0 rx_pkts=0 retransmits=0 timeouts=0 timeout_copies=0 rnr_naks_rx=0 seq_naks_rx=0 dup_requests=0 read_restarts=0 dropped=0\$")
[ "$n" = 2 ] || fail "status does not list the holder's 2 QPs: $("$UROCED" --admin "$SOCK" status)"
echo "holder pid $HOLDER: $t"
# The holder never reads its async_fd: 300 link flaps (600 port events)
# overflow its socket. One log line for the first lost event, the total at
# disconnect (lost + delivered = 600).
for i in $(seq 300); do
	"$UROCED" --admin "$SOCK" link down && "$UROCED" --admin "$SOCK" link up || fail "link flap $i"
done
n=$(grep -c "client#[0-9]*: async event [0-9]* lost" "$D/log")
[ "$n" = 1 ] || fail "lost async events logged $n times, want once"
kill -KILL "$HOLDER"
wait "$HOLDER" 2>/dev/null
i=0
while t=$(totals) && [ "$t" != "totals clients=0 pd=0 mr=0 cq=0 qp=0 ah=0" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "objects of the killed client not freed: $t"
	sleep 0.1
done
kill -0 "$PID" 2>/dev/null || fail "uroced died with its client"
echo "after SIGKILL: $t"
grep -q "client#[0-9]* pid $HOLDER (daemon_churn) gone; freed qp=2 ah=1 mr=2 cq=2 pd=1" "$D/log" ||
	fail "log does not record the cleanup"
lost=$(sed -n 's/.*client#[0-9]*: \([0-9]*\) async events lost (its async socket was full), \([0-9]*\) delivered$/\1 \2/p' "$D/log")
set -- $lost
[ $# -eq 2 ] && [ "$1" -gt 0 ] && [ $(($1 + $2)) -eq 600 ] || fail "lost-event count at disconnect: '$lost'"
echo "async events of the holder: $1 lost, $2 delivered, 1 loss line"

"$CHURN" "$SOCK" cycles 1000 || fail "churn cycles"
kill -0 "$PID" 2>/dev/null || fail "uroced died during the cycles"

# descriptor exhaustion: a second daemon limited to 24 descriptors
stop_uroced
(ulimit -n 24 && exec "$UROCED" --dev uroce0 --addr 127.0.0.1 --port 0 --sock "$SOCK" \
	--log "$D/log2" --pidfile "$D/pid" --daemonize) || fail "limited uroced did not start"
PID=$(cat "$D/pid")
"$CHURN" "$SOCK" flood 64 || fail "flood"
kill -0 "$PID" 2>/dev/null || fail "uroced died of the connection flood"
grep -q "not accepting for 100 ms" "$D/log2" || fail "the flood did not exhaust the daemon's descriptors"
[ "$(totals)" = "totals clients=0 pd=0 mr=0 cq=0 qp=0 ah=0" ] || fail "status after the flood"
echo "connection flood beyond the descriptor limit survived"
