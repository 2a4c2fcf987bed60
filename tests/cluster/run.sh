#!/bin/sh
# run.sh: `make check-cluster` (docs/cluster.md): scripts/cluster with
# CLUSTER_N hosts (default 4), each a network namespace with its own uroced,
# on a bridge; every job below runs across all of them over uroce's
# two-device path:
#   1. MTU 1500: every host's uroce0 active, active_mtu 1024.
#   2. Open MPI over UCX (pml ucx, rc_verbs on uroce0), one rank per host:
#      tests/cluster_mpi 8192 words (64 KiB) x 200: allreduce, alltoall and
#      the ring of 64 KiB round trips, every word checked; every endpoint
#      lane on rc_verbs/uroce0:1; every host's UDP counters moved at least
#      the ring's bytes.
#   3. perftest all-to-all: ib_write_bw between every pair of hosts at once
#      (N (N - 1) / 2 pairs, 200 x 64 KiB each), each result line exact.
#   4. 1 % loss both ways on every host (the fault injector): the MPI job's
#      results exact again; every host's injector dropped packets.
#   5. A host's daemon SIGKILLed while the job runs: mpirun ends non-zero
#      within 180 s (nothing hangs), the victim's rank reporting its
#      device's fatal error; then the other hosts still run ib_write_bw
#      between them.
#   6. MTU 9000: active_mtu 4096 on every host; the MPI job exact.
# One line per check, "N passed, N failed"; exit 0 iff all passed, 77
# (SKIP) when not root or when mpicc/mpirun/perftest are missing.
set -u
: "${top_builddir:?run through make check-cluster (top_builddir unset)}"
: "${top_srcdir:?run through make check-cluster (top_srcdir unset)}"
N=${CLUSTER_N:-4}
skip() { echo "SKIP: cluster: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
for c in mpicc mpirun ib_write_bw ip; do
	command -v "$c" >/dev/null 2>&1 || skip "$c missing (scripts/install-deps installs it)"
done
export UROCE="$top_builddir/uroce" UROCE_CLUSTER=uroce-ck$$
CL="$top_srcdir/scripts/cluster"
T=$(mktemp -d /tmp/uroce-cluster.XXXXXX)
chmod 755 "$T"
cleanup() {
	"$CL" down >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pass=0 failed=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
no() { failed=$((failed + 1)); echo "FAIL: $*"; }
# check WHAT EXPECTED ACTUAL
check() {
	if [ "$2" = "$3" ]; then ok "$1: $3"; else no "$1"; echo "  expected: $2"; echo "  actual:   $3"; fi
}

mpicc -O2 -o "$T/cluster_mpi" "$top_srcdir/tests/cluster_mpi.c" || { no "mpicc tests/cluster_mpi.c"; exit 1; }
chmod 755 "$T/cluster_mpi"

# mtus: each host's active_mtu, space-separated
mtus() {
	_i=1 _o=
	while [ $_i -le "$N" ]; do
		_o="$_o$("$CL" exec $_i ibv_devinfo -d uroce0 | sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p') "
		_i=$((_i + 1))
	done
	echo "$_o"
}
# udp NAME I: counter NAME of host I's `udp` status line
udp() {
	"$CL" sh "$2" "$UROCE" status --dev uroce0 | sed -n "s/^udp .*\\b$1=\\([0-9]*\\).*/\\1/p"
}
# repeat WORD: WORD N times, space-separated with a trailing space
repeat() {
	_i=0 _o=
	while [ $_i -lt "$N" ]; do _o="$_o$1 "; _i=$((_i + 1)); done
	echo "$_o"
}
# mpi_job TAG WORDS ITERS SECONDS: the MPI job into $T/TAG.log; its status
mpi_job() {
	timeout 300 "$CL" mpirun -x UCX_LOG_LEVEL=info "$T/cluster_mpi" "$2" "$3" "$4" >"$T/$1.log" 2>&1
}
# mpi_checks TAG BYTES: the exact result lines of a finished job
mpi_checks() {
	for _l in "allreduce ok" "alltoall ok" "ring ok $2"; do
		if grep -qxF "$_l" "$T/$1.log"; then ok "$1: rank 0 printed '$_l'"
		else no "$1: rank 0 did not print '$_l'"; tail -20 "$T/$1.log"; fi
	done
	check "$1: UCX ERROR lines" "" "$(grep 'UCX  ERROR' "$T/$1.log" | head -3)"
}

echo "== cluster of $N hosts, MTU 1500"
"$CL" up "$N" || { no "scripts/cluster up $N"; exit 1; }
check "MTU 1500: active_mtu of every host" "$(repeat 1024)" "$(mtus)"

i=1
while [ $i -le "$N" ]; do eval "tx0_$i=\$(udp tx_bytes $i)"; i=$((i + 1)); done
mpi_job mpi 8192 200 0
check "MPI job exit status" 0 "$?"
mpi_checks mpi $((8192 * 8 * 200))
sed -n 's/^ring MB\/s /ring MB\/s (N='"$N"', MTU 1500): /p' "$T/mpi.log"
# Each rank logs its endpoint configurations: tag and RMA lanes to every
# peer on rc_verbs/uroce0:1, to itself UCX's self transport.
lanes=$(sed -n 's/.*ep_cfg\[[0-9]*\]: //p' "$T/mpi.log" | grep -o '[a-z_]*/[a-z0-9:]*' | sort -u | tr '\n' ' ')
check "MPI job: transports of all endpoint lanes" "rc_verbs/uroce0:1 self/memory0 " "$lanes"
i=1 short=
while [ $i -le "$N" ]; do
	eval "_d=\$((\$(udp tx_bytes $i) - tx0_$i))"
	[ "$_d" -ge $((8192 * 8 * 200)) ] || short="$short h$i:$_d"
	i=$((i + 1))
done
check "every host's uroce0 sent at least the ring's bytes over UDP" "" "$short"

echo "== perftest: ib_write_bw between every pair of hosts at once"
pairs=0 port=18600
i=1
while [ $i -le "$N" ]; do
	j=$((i + 1))
	while [ $j -le "$N" ]; do
		port=$((port + 1)) pairs=$((pairs + 1))
		timeout 240 "$CL" exec $j ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 200 -p $port \
			>"$T/bw.$i.$j.srv" 2>&1 &
		echo "$port" >"$T/bw.$i.$j.port"
		j=$((j + 1))
	done
	i=$((i + 1))
done
sleep 2
i=1
while [ $i -le "$N" ]; do
	j=$((i + 1))
	while [ $j -le "$N" ]; do
		timeout 240 "$CL" exec $i ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 200 \
			-p "$(cat "$T/bw.$i.$j.port")" 10.79.0.$j >"$T/bw.$i.$j.cli" 2>&1 &
		j=$((j + 1))
	done
	i=$((i + 1))
done
wait
good=0
for f in "$T"/bw.*.cli; do
	if grep -Eq '^ 65536 +200 ' "$f"; then good=$((good + 1)); else echo "---- $f"; tail -n 5 "$f"; fi
done
check "ib_write_bw pairs with the exact result line (65536 bytes x 200)" "$pairs" "$good"

echo "== 1 % loss both ways on every host"
"$CL" fault loss=1% || no "scripts/cluster fault loss=1%"
mpi_job lossy 8192 100 0
check "MPI job under loss: exit status" 0 "$?"
mpi_checks lossy $((8192 * 8 * 100))
i=1 nodrop=
while [ $i -le "$N" ]; do
	_d=$("$CL" sh $i "$UROCE" fault show uroce0 | sed -n 's/^fault tx .* lost=\([0-9]*\) .*/\1/p')
	[ "${_d:-0}" -gt 0 ] || nodrop="$nodrop h$i"
	i=$((i + 1))
done
check "hosts whose injector dropped no packet" "" "$nodrop"
"$CL" fault clear || no "scripts/cluster fault clear"

echo "== a host's daemon SIGKILLed while the job runs"
victim=$(((N + 1) / 2 + 1))
mpi_job_bg() {
	timeout 300 "$CL" mpirun -x UCX_LOG_LEVEL=warn -x UCX_RC_TIMEOUT=100ms -x UCX_RC_RETRY_COUNT=7 \
		-x UCX_KEEPALIVE_INTERVAL=1s "$T/cluster_mpi" 8192 20 120 >"$T/kill.log" 2>&1
	echo $? >"$T/kill.rc"
}
mpi_job_bg &
bg=$!
n=0
until grep -q '^ring ok' "$T/kill.log" 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 600 ] && kill -0 $bg 2>/dev/null || break
	sleep 0.2
done
start=$(date +%s)
"$CL" kill $victim
wait $bg
took=$(($(date +%s) - start))
rc=$(cat "$T/kill.rc")
if [ "$rc" != 0 ] && [ "$rc" != 124 ]; then ok "job with h$victim's daemon killed: mpirun exit status $rc (not 0, not a timeout)"
else no "job with h$victim's daemon killed: mpirun exit status $rc"; tail -20 "$T/kill.log"; fi
if [ "$took" -le 180 ]; then ok "the job ended ${took}s after the kill (<= 180 s)"
else no "the job ended ${took}s after the kill (> 180 s)"; fi
if grep -q 'soak ok' "$T/kill.log"; then no "the job finished its soak although a host died"; else ok "the job did not finish its soak"; fi
# UCX's log lines name their host: [hI:PID:thread]. The victim's rank sees
# its device die (DEVICE_FATAL: "local catastrophic error"); Open MPI then
# aborts the job, so the other ranks may be ended before they log anything.
ehosts=$(grep -E 'UCX +(ERROR|WARN)' "$T/kill.log" | sed -n 's/^\[[0-9.]*\] *\[\(h[0-9]*\):.*/\1/p' | sort -u | tr '\n' ' ')
echo "hosts with UCX errors or warnings: $ehosts"
case " $ehosts" in
*" h$victim "*) ok "h$victim's rank reported its device's error: $(grep -m1 "^\[[0-9.]*\] *\[h$victim:.*UCX *ERROR" "$T/kill.log" | sed 's/.*UCX *ERROR *//' | cut -c1-80)" ;;
*) no "h$victim's rank reported no UCX error"; tail -20 "$T/kill.log" ;;
esac
# the survivors: two other hosts (with 2 hosts, the one left talks to itself)
a=1 b=2
[ $b = $victim ] && b=3
[ $b -le "$N" ] || b=$a
timeout 120 "$CL" exec $b ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 200 -p 18700 >"$T/after.srv" 2>&1 &
sleep 1
timeout 120 "$CL" exec $a ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 200 -p 18700 10.79.0.$b >"$T/after.cli" 2>&1
wait
if grep -Eq '^ 65536 +200 ' "$T/after.cli"; then ok "after the kill, h$a and h$b: ib_write_bw 200 x 65536"
else no "after the kill, h$a and h$b: ib_write_bw"; tail -n 5 "$T/after.cli" "$T/after.srv"; fi

echo "== cluster of $N hosts, MTU 9000"
"$CL" down
"$CL" up "$N" --mtu 9000 || { no "scripts/cluster up $N --mtu 9000"; exit 1; }
check "MTU 9000: active_mtu of every host" "$(repeat 4096)" "$(mtus)"
mpi_job jumbo 8192 200 0
check "MPI job at MTU 9000: exit status" 0 "$?"
mpi_checks jumbo $((8192 * 8 * 200))
sed -n 's/^ring MB\/s /ring MB\/s (N='"$N"', MTU 9000): /p' "$T/jumbo.log"

echo "$pass passed, $failed failed (check-cluster, $N hosts)"
[ "$failed" = 0 ]
