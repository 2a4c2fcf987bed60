#!/bin/sh
# scale_qps: one uroce0 daemon with SCALE_QPS RC QPs (default 512 in
# `make check`; `make check-scale` runs 16,384) connected in pairs, one
# 64-byte message on each, byte-exact (tests/scale_qps.c); the daemon's heap
# growth per idle QP must stay within 4096 bytes (docs/performance.md
# "Scale"), and the daemon log has at most 400 lines about QPs in any
# second (ULOG_OBJECT_PER_SEC). Then SCALE_OPENS processes (default 50; 1,000 in check-scale)
# open the device in turn (PD, CQ, QP, close): the daemon's descriptor
# count must be exactly what it was, its VmRSS may grow by at most 256 kB.
# Under ASan (UROCE_ASAN) the memory figures are printed, not bounded:
# ASan's allocator adds redzones and a quarantine to every allocation.
. "$top_srcdir/tests/lib.sh"
qps=${SCALE_QPS:-512}
opens=${SCALE_OPENS:-50}
up --dev uroce0 --mtu 1024 --max-qp-per-user "$qps"
dpid=$(cat "$UROCE_RUN_DIR/uroce0.pid")
bound=4096
[ -n "${UROCE_ASAN:-}" ] && bound=0
"$UROCE" run -- "$top_builddir/tests/scale_qps" qps "$qps" "$dpid" "$bound" >"$T/qps" 2>&1
rc=$?
cat "$T/qps"
expect_eq "scale_qps qps $qps exit status" 0 "$rc"
grep -Eqx "scale: $qps messages of 64 bytes, one per QP, byte-exact, in [0-9]+ ms" "$T/qps" ||
	fail "traffic line" "scale: $qps messages of 64 bytes, one per QP, byte-exact, in T ms" "$(grep messages "$T/qps")"
"$UROCE" status --dev uroce0 >"$T/status" 2>&1 || fail "uroce status after the QPs" 0 "$(cat "$T/status")"
# the lines about QPs made and moved are rate-limited (emu/log.h
# ULOG_OBJECT_PER_SEC, 200 a second from the first of each second): at
# most 400 in any second of the log's clock, however fast QPs come
busiest=$(grep -E ' client#[0-9]+ (created [A-Z_]+ qpn|qpn 0x[0-9a-f]+ [A-Z]+ -> )' "$UROCE_RUN_DIR/uroce0.log" |
	cut -c1-19 | uniq -c | sort -n | tail -n 1 | awk '{print $1 + 0}')
echo "ok: at most ${busiest:-0} lines about QPs in one second of the log"
[ "${busiest:-0}" -le 400 ] || fail "lines about QPs in one second of the daemon log" "<= 400" "$busiest"
"$UROCE" run -- "$top_builddir/tests/scale_qps" open "$opens" "$dpid" >"$T/open" 2>&1
rc=$?
cat "$T/open"
expect_eq "scale_qps open $opens exit status" 0 "$rc"
r0=$(sed -n 's/^scale: daemon VmRSS before \([0-9]*\) kB after [0-9]* kB$/\1/p' "$T/open")
r1=$(sed -n 's/^scale: daemon VmRSS before [0-9]* kB after \([0-9]*\) kB$/\1/p' "$T/open")
[ -n "$r0" ] && [ -n "$r1" ] || fail "VmRSS line" "scale: daemon VmRSS before N kB after N kB" "$(cat "$T/open")"
if [ -n "${UROCE_ASAN:-}" ]; then
	echo "ASan build: daemon VmRSS $r0 -> $r1 kB (not bounded)"
else
	[ $((r1 - r0)) -le 256 ] || fail "daemon VmRSS growth over $opens processes" "<= 256 kB" "$((r1 - r0)) kB"
	echo "ok: daemon VmRSS $r0 -> $r1 kB over $opens processes"
fi
echo "ok"
