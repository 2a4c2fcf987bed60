#!/bin/sh
# traffic_faults: two devices (uroce0 on 127.0.0.1, uroce1 on 127.0.0.2),
# each injecting on what it sends 10% loss, 5% duplication, 10% reordering
# (held up to 2 ms) and 1% corruption, path MTU 1024 (tests/traffic_faults.c):
# - RC: 64 KiB SEND, RDMA WRITE and RDMA READ messages arrive byte-exact, in
#   order, exactly once; the goodput is printed;
# - UC and UD: messages are lost, none arrives damaged; UD, which has no
#   PSN, receives the duplicates;
# - the injectors' counters show every kind of fault happened, and every
#   corrupted copy was dropped by the receiver's ICRC check (bad_icrc equals
#   the corrupted copies sent in a corruption-only UD run, and equals the
#   datagrams lost there).
. "$top_srcdir/tests/lib.sh"
RC_COUNT=${UROCE_FAULT_RC_COUNT:-1200}
SPEC='loss=10% dup=5% reorder=10%:2ms corrupt=1%'
up --dev uroce0 --mtu 1024 --seed 11 --fault "$SPEC"
uroce up --dev uroce1 --addr 127.0.0.2 --port "$UROCE_PORT" --mtu 1024 --seed 12 --fault "$SPEC" >/dev/null ||
	fail "uroce up uroce1 on 127.0.0.2:$UROCE_PORT"

# counter NAME DEV DIR: one counter of a device's "fault DIR" status line.
counter() {
	uroce status --dev "$2" | sed -n "s/^fault $3 .* $1=\([0-9]*\).*/\1/p"
}

timeout "$(tmo 300)" "$UROCE" run -- "$top_builddir/tests/traffic_faults" rc "$RC_COUNT" >"$T/rc" 2>&1
rc=$?
cat "$T/rc"
expect_eq "rc exit status" 0 "$rc"
expect_eq "rc summary" "rc: $RC_COUNT messages of 65536 bytes ($((RC_COUNT / 3)) SEND, $((RC_COUNT / 3)) RDMA WRITE, $((RC_COUNT / 3)) RDMA READ): all completed once, in order, byte-exact" \
	"$(head -n 1 "$T/rc")"
for d in uroce0 uroce1; do
	uroce status --dev "$d" | grep -E '^(fault tx|rx_drops|udp) '
	for k in lost duplicated reordered corrupted; do
		v=$(counter $k $d tx)
		[ -n "$v" ] && [ "$v" -gt 0 ] || fail "$d: fault tx $k > 0" "> 0" "$v"
	done
done

for mode in uc ud; do
	timeout 120 "$UROCE" run -- "$top_builddir/tests/traffic_faults" $mode 2000 >"$T/$mode" 2>&1
	rc=$?
	cat "$T/$mode"
	expect_eq "$mode exit status" 0 "$rc"
done
# UD cannot tell a duplicate: the injector's copies show up at the receiver
udd=$(sed -n 's/^ud: .* (\([0-9]*\) distinct, \([0-9]*\) duplicates.*/\2/p' "$T/ud")
[ -n "$udd" ] && [ "$udd" -gt 0 ] || fail "UD duplicates delivered under dup=5%" "> 0" "$udd"
udl=$(sed -n 's/^ud: .* lost \([0-9]*\):.*/\1/p' "$T/ud")
[ -n "$udl" ] && [ "$udl" -gt 0 ] || fail "UD datagrams lost under loss=10%" "> 0" "$udl"

# Corruption alone: every corrupted packet uroce0 sends is one bad ICRC at uroce1.
uroce fault set uroce0 tx corrupt=5% >/dev/null || fail "uroce fault set uroce0 tx corrupt=5%"
uroce fault clear uroce1 >/dev/null || fail "uroce fault clear uroce1"
c0=$(counter corrupted uroce0 tx)
b0=$(uroce status --dev uroce1 | sed -n 's/^rx_drops .* bad_icrc=\([0-9]*\).*/\1/p')
timeout 120 "$UROCE" run -- "$top_builddir/tests/traffic_faults" ud 1000 >"$T/ud2" 2>&1 ||
	fail "ud with corruption only: $(cat "$T/ud2")"
cat "$T/ud2"
c1=$(counter corrupted uroce0 tx)
b1=$(uroce status --dev uroce1 | sed -n 's/^rx_drops .* bad_icrc=\([0-9]*\).*/\1/p')
bad=$(uroce status --dev uroce1 | sed -n 's/^rx_drops bad=\([0-9]*\).*/\1/p')
[ $((c1 - c0)) -gt 0 ] || fail "corrupted packets sent" "> 0" "$((c1 - c0))"
expect_eq "corrupted by uroce0 = ICRC errors at uroce1" "$((c1 - c0))" "$((b1 - b0))"
expect_eq "every bad packet at uroce1 was an ICRC error" "$b1" "$bad"
# and each of them is exactly one datagram that never arrived
expect_eq "datagrams lost = packets corrupted" "$((c1 - c0))" "$(sed -n 's/.* lost \([0-9]*\):.*/\1/p' "$T/ud2")"
echo "ok: $((c1 - c0)) corrupted, $((b1 - b0)) caught by the ICRC check"
