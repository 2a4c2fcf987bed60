#!/bin/sh
# traffic_fairness: while uroce0 streams the response of one 256 MiB RDMA
# READ (65,536 packets at path MTU 4096; tests/traffic_fairness.c), another
# client of the same daemon - `uroce status`, a control request - is still
# answered: at least 3 answers arrive during the READ, and the slowest one
# takes less than half the READ's duration (a daemon that sent the whole
# response in one burst would answer only after it). The READ arrives
# byte-exact. Latencies and the READ time are printed.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0 --mtu 4096
"$UROCE" run -- "$top_builddir/tests/traffic_fairness" 256 >"$T/out" 2>&1 &
pid=$!
i=0
while ! grep -q '^reading' "$T/out" 2>/dev/null; do
	kill -0 $pid 2>/dev/null || break
	i=$((i + 1))
	[ $i -lt 6000 ] || fail "READ posted within 60 s" "reading" "$(cat "$T/out")"
	sleep 0.01
done
: >"$T/lat"
while kill -0 $pid 2>/dev/null; do
	t0=$(date +%s%N)
	"$UROCE" status --dev uroce0 >"$T/status" 2>&1 || fail "uroce status during the READ" 0 "$(cat "$T/status")"
	t1=$(date +%s%N)
	kill -0 $pid 2>/dev/null && echo $(((t1 - t0) / 1000000)) >>"$T/lat"
done
wait $pid
rc=$?
cat "$T/out"
expect_eq "traffic_fairness exit status" 0 "$rc"
read_ms=$(sed -n 's/^read [0-9]* bytes in \([0-9]*\) ms, byte-exact$/\1/p' "$T/out")
[ -n "$read_ms" ] || fail "READ summary line" "read 268435456 bytes in T ms, byte-exact" "$(cat "$T/out")"
n=$(wc -l <"$T/lat")
max=$(sort -n "$T/lat" | tail -1)
med=$(sort -n "$T/lat" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
echo "uroce status during the READ: $n answers, median $med ms, max $max ms; READ $read_ms ms"
[ "$n" -ge 3 ] || fail "status answers during the READ" ">= 3" "$n"
[ $((max * 2)) -lt "$read_ms" ] || fail "slowest status answer under half the READ time" "< $((read_ms / 2)) ms" "$max ms"
echo "ok"
