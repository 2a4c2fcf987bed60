#!/bin/sh
# fault_replay: deterministic replay. uroce0 runs with --deterministic --seed
# 5 and faults on what it sends (5% loss, 5% duplication, 10% reordering up
# to 2 ms, 1% corruption), capturing to a pcap; tests/fault_replay (one
# process, two RC QPs in ping-pong, 1..4 packets per message) prints every
# CQE timestamp. Run twice on the same port: the two pcaps (timestamps
# included) and the two timestamp lists must be byte-identical (sha256);
# the faults must really have happened; the CQE timestamps are virtual
# (the clock started at 1 s and advanced 1 us per packet plus timer
# jumps); another seed gives another trace. The daemon reads its own
# datagrams only after polling (self_reads=0 in uroce status). Every packet
# leaves from the device's port (UDP source port = its port, tshark): a
# per-QP source port is bound only if no other socket of the host holds it.
. "$top_srcdir/tests/lib.sh"
: "${TSHARK:?tshark was not found by configure (Debian package tshark)}"
SPEC='loss=5% dup=5% reorder=10%:2ms corrupt=1%'
ITERS=150
port_chosen=

# replay NAME SEED: one daemon, one run, its pcap and timestamps in $T/NAME.*
replay() {
	if [ -z "$port_chosen" ]; then
		up --dev uroce0 --mtu 1024 --deterministic --seed "$2" --fault "$SPEC" --pcap "$T/$1.pcap" >/dev/null
	else
		uroce up --dev uroce0 --port "$UROCE_PORT" --mtu 1024 --deterministic --seed "$2" --fault "$SPEC" \
			--pcap "$T/$1.pcap" >/dev/null || fail "uroce up --deterministic on port $UROCE_PORT"
	fi
	port_chosen=$UROCE_PORT
	timeout 120 "$UROCE" run -- "$top_builddir/tests/fault_replay" "$ITERS" >"$T/$1.ts" 2>"$T/$1.err"
	_rc=$?
	cat "$T/$1.err"
	expect_eq "$1: fault_replay exit status" 0 "$_rc"
	uroce status --dev uroce0 >"$T/$1.status" || fail "uroce status"
	grep -E '^(fault tx|deterministic) ' "$T/$1.status"
	# datagrams to ourselves are read only after the poll, never right
	# after sending (that would depend on the kernel's softirq timing)
	expect_eq "$1: self_reads in deterministic mode" 0 \
		"$(sed -n 's/^loop turns=[0-9]* self_reads=\([0-9]*\) .*/\1/p' "$T/$1.status")"
	uroce down --dev uroce0 >/dev/null || fail "uroce down"
	expect_eq "$1: iterations" "$ITERS" "$(wc -l <"$T/$1.ts")"
}

replay a 5
replay b 5
replay c 6
for k in lost duplicated reordered corrupted; do
	v=$(sed -n "s/^fault tx .* $k=\([0-9]*\).*/\1/p" "$T/a.status")
	[ -n "$v" ] && [ "$v" -gt 0 ] || fail "seed 5: $k > 0" "> 0" "$v"
done
frames=$(sed -n 's/^capture on .* frames=\([0-9]*\)$/\1/p' "$T/a.status")
[ -n "$frames" ] && [ "$frames" -gt $((4 * ITERS)) ] || fail "frames captured" "> $((4 * ITERS))" "$frames"
# the source port does not depend on which ports other sockets of the
# host hold (a per-QP one, taken by another process, fell back to this one)
expect_eq "UDP source ports of the capture (deterministic mode)" "$UROCE_PORT" \
	"$("$TSHARK" -r "$T/a.pcap" -T fields -e udp.srcport | sort -u | tr '\n' ' ' | sed 's/ $//')"
expect_eq "same seed: identical pcaps (sha256)" "$(sha256sum <"$T/a.pcap")" "$(sha256sum <"$T/b.pcap")"
expect_eq "same seed: identical CQE timestamps (sha256)" "$(sha256sum <"$T/a.ts")" "$(sha256sum <"$T/b.ts")"
[ "$(sha256sum <"$T/a.pcap")" != "$(sha256sum <"$T/c.pcap")" ] ||
	fail "another seed, another trace" "different pcaps for seeds 5 and 6" "identical"
# Virtual time: the clock page starts at 1 s (1 GHz clock: cycles = ns); the
# first SEND's completion comes a few packets (1 us each) later, unless a
# timer jump came first.
first=$(awk 'NR == 1 { print $2 }' "$T/a.ts")
[ "$first" -gt 1000000000 ] && [ "$first" -lt 1100000000 ] ||
	fail "first CQE timestamp in virtual time" "1000000000 < ts < 1100000000" "$first"
# pcap timestamps are the virtual clock too: the first record's seconds field is 1.
sec=$(od -An -tu4 -j24 -N4 "$T/a.pcap" | tr -d ' ')
expect_eq "first pcap record's seconds (virtual time)" 1 "$sec"
echo "ok: $frames frames, seed 5 twice byte-identical ($(sha256sum <"$T/a.pcap" | cut -c1-16)), seed 6 different"
