#!/bin/sh
# inspect_check_live: `uroce inspect --check` on uroce's own captures of real
# traffic (unmodified rdma-core pingpongs and perftest through `uroce run`,
# recorded by `uroce up --pcap`), MTU 1024:
# - clean: RC/UC/UD pingpong, RDMA READ, RDMA WRITE and atomics: exit 0,
#   0 findings, every packet checked, nothing retransmitted;
# - the clean capture edited to break one rule at a time
#   (tests/inspect_check_break.py --capture): each break found at its frame
#   with its rule and nothing else, at least 15 distinct rules;
# - lossy (--fault loss=5% dup=5% reorder=10%:2ms, seeded; tests/fault_replay
#   and perftest): exit 0, 0
#   findings, while retransmissions, out-of-order packets and PSN sequence
#   error NAKs are counted;
# - receiver not ready (ib_send_bw with one receive WQE): RNR NAKs, each
#   retried after its timer: 0 findings, as many RNR waits as RNR NAKs; one
#   NAK's timer raised to 655 ms is found as a too early retry;
# - corrupting (--fault corrupt=2%): the findings are exactly the corrupted
#   packets (as many as the daemon's corrupted counter; rule icrc, or
#   malformed when the flipped bit broke a header), nothing else: the resends
#   that repair them are legal.
. "$top_srcdir/tests/lib.sh"
INSPECT="$top_builddir/tools/inspect/uroce-inspect"
PY=${PYTHON:-python3}

# check_clean NAME PCAP: --check exits 0 with 0 findings; prints the counts line
check_clean() {
	"$INSPECT" --check --port "$UROCE_PORT" "$2" >"$T/$1.check" 2>&1
	_rc=$?
	grep '^frame ' "$T/$1.check" | head -20
	expect_eq "$1: --check exit status" 0 "$_rc"
	expect_eq "$1: findings" "" "$(grep '^frame ' "$T/$1.check")"
	_pk=$(sed -n 's/^summary: \([0-9]*\) packets, .*/\1/p' "$T/$1.check")
	_line=$(grep '^check: [0-9]* packets' "$T/$1.check")
	expect_eq "$1: every packet checked" "check: $_pk packets, $_pk checked" \
		"$(echo "$_line" | sed 's/^\(check: [0-9]* packets, [0-9]* checked\),.*/\1/')"
	echo "$_line"
	grep '^check: retransmitted' "$T/$1.check"
}

# atomics N: ib_atomic_bw, N FETCH_ADDs, as the perftest helper runs it but
# without its "BW average > 0" (8-byte operations print 0.00 MB/sec when
# the run is slow)
atomics() {
	_p=$(free_tcp_port)
	_b="$UROCE run -- ib_atomic_bw -d uroce0 -i 1 -x 0 -F -p $_p -n $1"
	pair 120 "$_p" "$_b" "$_b 127.0.0.1" || { cat "$T/srv.log" "$T/cli.log"; fail "ib_atomic_bw -n $1"; }
	expect_eq "ib_atomic_bw: failure markers" "" \
		"$(grep -E 'Completion with error|Poll send CQ error|Couldn|Failed to|Unable to' "$T/srv.log" "$T/cli.log")"
	expect_eq "ib_atomic_bw: #bytes #iterations" "8 $1" \
		"$(grep -E '^[[:space:]]*8[[:space:]]+[0-9]+[[:space:]]' "$T/cli.log" | awk '{print $1, $2}')"
}

# cstat NAME FIELD: a number of the "check: retransmitted ..." line
cstat() {
	sed -n "s/^check: .*$2 \([0-9]*\).*/\1/p" "$T/$1.check"
}

up --dev uroce0 --mtu 1024 --pcap "$T/clean.pcap"
pingpong rc ibv_rc_pingpong uroce0 3000 20 -n 20 -s 3000 -m 1024
pingpong uc ibv_uc_pingpong uroce0 3000 20 -n 20 -s 3000 -m 1024
pingpong ud ibv_ud_pingpong uroce0 512 20 -n 20 -s 512
perftest ib_read_bw bw 5000 50 -s 5000 -n 50
perftest ib_write_bw bw 3000 50 -s 3000 -n 50
atomics 50
uroce down --dev uroce0 >/dev/null || fail "uroce down"
check_clean clean "$T/clean.pcap"
expect_eq "clean: retransmitted packets" 0 "$(cstat clean retransmitted)"
expect_eq "clean: opcodes seen" "RC_SEND_FIRST RC_RDMA_WRITE_FIRST RC_RDMA_READ_RESPONSE_MIDDLE RC_FETCH_ADD UC_SEND_MIDDLE UD_SEND_ONLY" \
	"$(for o in RC_SEND_FIRST RC_RDMA_WRITE_FIRST RC_RDMA_READ_RESPONSE_MIDDLE RC_FETCH_ADD UC_SEND_MIDDLE UD_SEND_ONLY; do
		grep -q "^opcodes: .*$o [1-9]" "$T/clean.check" && printf '%s ' "$o"; done | sed 's/ $//')"

top_srcdir=$top_srcdir top_builddir=$top_builddir $PY "$top_srcdir/tests/inspect_check_break.py" \
	--capture "$T/clean.pcap" --port "$UROCE_PORT" --min 15 >"$T/break.out" 2>&1
_rc=$?
grep -E '^(ok|FAIL|[0-9]+ breaks)' "$T/break.out" | cut -c1-160
expect_eq "breaks of the real capture" 0 "$_rc"

# Under faults the ping-pong is tests/fault_replay (two RC QPs in one
# process): ibv_rc_pingpong's last SEND fails once its ACK is lost, since the
# peer has exited by the time of the resend.
up --dev uroce0 --mtu 1024 --seed 7 --fault 'loss=5% dup=5% reorder=10%:2ms' --pcap "$T/lossy.pcap"
timeout "$(tmo 120)" "$UROCE" run -- "$top_builddir/tests/fault_replay" 150 >"$T/replay.out" 2>&1 ||
	{ tail -5 "$T/replay.out"; fail "fault_replay under loss"; }
perftest ib_read_bw bw 5000 200 -s 5000 -n 200
perftest ib_write_bw bw 3000 200 -s 3000 -n 200
atomics 200
uroce status --dev uroce0 | grep '^fault tx'
uroce down --dev uroce0 >/dev/null || fail "uroce down"
check_clean lossy "$T/lossy.pcap"
for k in retransmitted out-of-order sequence; do
	v=$(cstat lossy "$k")
	[ -n "$v" ] && [ "$v" -gt 0 ] || fail "lossy: $k counted" "> 0" "$v"
done

# Receiver not ready: ib_send_bw with one receive WQE against 128 SENDs in
# flight draws RNR NAKs when the receiver falls behind (not always: how far
# behind is timing); traffic_srq's empty_srq case always does (a SEND held
# 300 ms by an empty SRQ). Every retry waits at least the NAK's timer.
up --dev uroce0 --mtu 1024 --pcap "$T/rnr.pcap"
perftest ib_send_bw bw 64 2000 -s 64 -n 2000 -r 1 -t 128
CK_RUN_CASE=empty_srq timeout "$(tmo 120)" "$UROCE" run -- "$top_builddir/tests/traffic_srq" \
	>"$T/empty_srq.out" 2>&1 || { tail -5 "$T/empty_srq.out"; fail "traffic_srq empty_srq (RNR waits)"; }
uroce down --dev uroce0 >/dev/null || fail "uroce down"
check_clean rnr "$T/rnr.pcap"
"$INSPECT" --flows --json --summary --port "$UROCE_PORT" "$T/rnr.pcap" >"$T/rnr.json"
got=$($PY -c '
import json, sys
fl = [json.loads(l)["flow"] for l in open(sys.argv[1]) if l.startswith("{\"flow\"")]
waits = sum(f["stats"]["rnr_waits"] for f in fl if f["kind"] == "requests")
naks = sum(f["stats"]["naks"]["RNR"] for f in fl if f["kind"] == "responses")
print(naks > 0, waits == naks, naks == int(sys.argv[2]))
' "$T/rnr.json" "$(cstat rnr RNR)")
expect_eq "rnr: RNR NAKs sent, each retried once after its wait (--flows)" "True True True" "$got"
top_srcdir=$top_srcdir top_builddir=$top_builddir $PY "$top_srcdir/tests/inspect_check_break.py" \
	--capture "$T/rnr.pcap" --port "$UROCE_PORT" --only rnr.early_retry >"$T/break.out" 2>&1
_rc=$?
grep -E '^(ok|FAIL|[0-9]+ breaks)' "$T/break.out" | cut -c1-160
expect_eq "rnr: a retry sooner than its NAK's timer is found" 0 "$_rc"

up --dev uroce0 --mtu 1024 --seed 7 --fault 'corrupt=2%' --pcap "$T/corrupt.pcap"
timeout "$(tmo 120)" "$UROCE" run -- "$top_builddir/tests/fault_replay" 150 >"$T/replay.out" 2>&1 ||
	{ tail -5 "$T/replay.out"; fail "fault_replay under corruption"; }
perftest ib_read_bw bw 5000 100 -s 5000 -n 100
corrupted=$(uroce status --dev uroce0 | sed -n 's/^fault tx .* corrupted=\([0-9]*\) .*/\1/p')
uroce down --dev uroce0 >/dev/null || fail "uroce down"
[ -n "$corrupted" ] && [ "$corrupted" -gt 0 ] || fail "corrupt: packets corrupted" "> 0" "$corrupted"
"$INSPECT" --check --json --port "$UROCE_PORT" "$T/corrupt.pcap" >"$T/corrupt.json"
expect_eq "corrupt: --check exit status" 1 $?
got=$($PY -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
fs = [o for o in objs if "rule" in o]
chk = [o["check"] for o in objs if "check" in o][0]
# a flipped bit in a header makes the packet malformed before its ICRC is read
print(len(fs), chk["findings"], sum(chk["rules"].get(r, 0) for r in ("icrc", "malformed")),
      set(chk["rules"]) <= {"icrc", "malformed"}, chk["rules"].get("icrc", 0) > 0)
' "$T/corrupt.json")
expect_eq "corrupt: findings = the corrupted packets, rules icrc or malformed only" \
	"$corrupted $corrupted $corrupted True True" "$got"
echo "ok: clean, breaks, lossy ($(cstat lossy retransmitted) retransmitted), $corrupted corrupted found"
