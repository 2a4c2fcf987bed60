#!/bin/sh
# it_security: a root `uroce up` daemon serving every local user
# (docs/security.md), attacked by user nobody:
#   - it runs as the service user uroce and its log is mode 0600;
#   - the setuid-exec attack (tests/sec_attack.c setuid): every attempt
#     fails with its exact errno, passwd keeps running untouched;
#   - quotas: nobody floods connections (EMFILE after 8) and PDs (ENOMEM
#     after 16) and holds them; another unprivileged user (daemon) still
#     runs ibv_rc_pingpong; status shows the limits and nobody's usage;
#   - forged RDMA WRITEs at root's QP: from a wrong source address (real
#     rkey, right PSN) dropped and counted (bad_src=1); from the right
#     address with a guessed rkey: not landed (the MR stays zero).
. "$top_srcdir/tests/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (a second user for the attacks)"; exit 77; }
# (with nobody's own HOME: scapy 2.6 stats ~/.config at import, and root's
# is closed to nobody)
as_nobody() {
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- env HOME=/nonexistent "$@"
}
up --dev uroce0 --max-clients-per-user 8 --max-pd-per-user 16
sock=$UROCE_RUN_DIR/uroce0.sock
pid=$(cat "$UROCE_RUN_DIR/uroce0.pid")
expect_eq "the daemon's user" uroce "$(ps -o user= -p "$pid")"
expect_eq "the log's mode" 600 "$(stat -c %a "$UROCE_RUN_DIR/uroce0.log")"

# The setuid attack.
as_nobody "$top_builddir/tests/sec_attack" setuid "$sock" >"$T/setuid.out" 2>&1
rc=$?
cat "$T/setuid.out"
expect_eq "setuid attack: every expectation met (exit)" 0 "$rc"
expect_eq "setuid attack: ok lines" 9 "$(grep -c '^ok: ' "$T/setuid.out")"

# Quotas: nobody takes its 8 connections and 16 PDs and holds them.
mkfifo "$T/hold"
as_nobody "$top_builddir/tests/sec_attack" flood "$sock" 40 100 <"$T/hold" >"$T/flood.out" 2>&1 &
flood=$!
exec 8>"$T/hold"
n=0
while [ "$(grep -c '^pds=' "$T/flood.out")" = 0 ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
cat "$T/flood.out"
expect_line "nobody's connections stop at the quota with EMFILE" "$T/flood.out" "conns=8 errno=EMFILE"
expect_line "nobody's PDs stop at the quota with ENOMEM" "$T/flood.out" "pds=16 errno=ENOMEM"
"$UROCE" status >"$T/status" 2>&1
expect_line "status: the limits" "$T/status" \
	"quota per_uid clients=8 pd=16 cq=1024 qp=1024 mr=16384 ah=16384 srq=256 fd_limit=$(grep -o 'fd_limit=[0-9]*' "$T/status" | cut -d= -f2) fd_reserve=64"
expect_line "status: nobody's usage" "$T/status" "uid $(id -u nobody) clients=8 pd=16 cq=0 qp=0 mr=0 ah=0 srq=0"
p=$((20000 + $(rand16) % 40000))
as_daemon="setpriv --reuid=daemon --regid=$(id -g daemon) --clear-groups --"
pair 60 "$p" "$as_daemon $UROCE run -- ibv_rc_pingpong -d uroce0 -g 0 -n 20 -p $p" \
	"$as_daemon $UROCE run -- ibv_rc_pingpong -d uroce0 -g 0 -n 20 -p $p 127.0.0.1" ||
	{ cat "$T/srv.log" "$T/cli.log"; fail "user daemon's ibv_rc_pingpong while nobody holds its quota"; }
grep -q "^20 iters in" "$T/cli.log" || fail "user daemon's ibv_rc_pingpong: 20 iterations" "20 iters in ..." "$(cat "$T/cli.log")"
echo "ok: user daemon's ibv_rc_pingpong runs while nobody holds its whole quota"
exec 8>&-
wait $flood

# Forged WRITEs at root's QP.
"$UROCE" run -- /usr/bin/python3 "$top_srcdir/tests/sec_victim.py" "$T/ready" "$T/go" >"$T/victim.out" 2>&1 &
victim=$!
n=0
while [ ! -s "$T/ready" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
[ -s "$T/ready" ] || { cat "$T/victim.out"; fail "the victim's QP pair did not come up"; }
read -r qpn psn va rkey <"$T/ready"
# shellcheck disable=SC2086
as_nobody /usr/bin/python3 "$top_srcdir/tests/sec_forge.py" "$UROCE_PORT" $qpn $psn $va $rkey >"$T/forge.out" 2>&1
cat "$T/forge.out"
: >"$T/go"
wait $victim
rc=$?
cat "$T/victim.out"
expect_eq "the victim's MR after the forged WRITEs (exit)" 0 "$rc"
"$UROCE" status >"$T/status2" 2>&1
grep '^rx_drops' "$T/status2"
expect_eq "packets from the wrong source address counted" 1 \
	"$(sed -n 's/^rx_drops .*bad_src=\([0-9]*\) .*$/\1/p' "$T/status2")"
grep -q "for a connected QP with another remote address: dropped" "$UROCE_RUN_DIR/uroce0.log" ||
	fail "the drop is logged"
echo "ok: the drop is logged"

# A second device whose daemon has only 200 descriptors, so that floods
# reach its limits quickly (ulimit applies to everything this test starts
# from here on).
ulimit -n 200
dev1_up() {
	_t=0
	while [ $_t -lt 10 ]; do
		P1=$((20000 + $(rand16) % 40000))
		"$UROCE" up --dev uroce1 --port "$P1" --max-clients-per-user 1000 >"$T/up1.out" 2>&1 && return 0
		_t=$((_t + 1))
	done
	cat "$T/up1.out"
	fail "uroce up --dev uroce1"
}
dev1_up
sock1=$UROCE_RUN_DIR/uroce1.sock

# Log flooding: 3000 refused requests, then one more a second later: the
# log has one "refused" line per second, and the lines plus the suppressed
# counts they report add up to every refused request.
as_nobody "$top_builddir/tests/sec_attack" spam "$sock1" 3000 >"$T/spam.out" 2>&1
expect_line "3000 refused requests" "$T/spam.out" "refused=3000"
sleep 1.2
as_nobody "$top_builddir/tests/sec_attack" spam "$sock1" 1 >"$T/spam1.out" 2>&1
expect_line "1 refused request" "$T/spam1.out" "refused=1"
lines=$(grep -c 'QUERY_PORT refused: Protocol error' "$UROCE_RUN_DIR/uroce1.log")
supp=$(sed -n 's/.*QUERY_PORT refused: Protocol error (\([0-9]*\) similar messages suppressed)$/\1/p' \
	"$UROCE_RUN_DIR/uroce1.log" | awk '{ s += $1 } END { print s + 0 }')
echo "refused lines in the log: $lines, suppressed: $supp"
[ "$lines" -ge 2 ] && [ "$lines" -le 4 ] || fail "refused lines for 3001 requests in about 2 s" "2..4" "$lines"
expect_eq "logged + suppressed refusals" 3001 $((lines + supp))

# Descriptor budget: nobody, with a connection quota above what 200
# descriptors allow, is stopped by the budget; root still gets
# `uroce status` and opens the device.
mkfifo "$T/hold1"
as_nobody "$top_builddir/tests/sec_attack" flood "$sock1" 1000 0 <"$T/hold1" >"$T/flood1.out" 2>&1 &
flood1=$!
exec 9>"$T/hold1"
n=0
while [ "$(grep -c '^pds=' "$T/flood1.out")" = 0 ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
cat "$T/flood1.out"
conns=$(sed -n 's/^conns=\([0-9]*\) .*/\1/p' "$T/flood1.out")
[ -n "$conns" ] && [ "$conns" -ge 10 ] && [ "$conns" -lt 40 ] ||
	fail "nobody's contexts under a 200-descriptor daemon (5 descriptors each, 64 reserved)" "10..39" "$conns"
"$UROCE" status --dev uroce1 >"$T/status1" 2>&1
expect_eq "root's uroce status while nobody holds the budget (exit)" 0 $?
expect_line "status counts nobody's contexts" "$T/status1" "uid $(id -u nobody) clients=$conns pd=0 cq=0 qp=0 mr=0 ah=0 srq=0"
"$UROCE" run -- ibv_devinfo -d uroce1 >"$T/devinfo1" 2>&1
expect_eq "root's ibv_devinfo while nobody holds the budget (exit)" 0 $?
exec 9>&-
wait $flood1
