#!/bin/sh
# uroced's data path end to end without the provider (tests/daemon_datapath.c):
# SEND, RDMA WRITE with immediate, RDMA READ, a remote access error and a
# flush between two contexts over real UDP; the capture then holds the
# packets and `uroce inspect` finds every ICRC good and consecutive PSNs;
# MRs of a process are unreachable after it execs.
# Then 10000 messages over a link with 5% seeded loss.
. "$top_srcdir/tests/daemon_lib.sh"

start_uroced --mtu 1024 --pcap "$D/dp.pcap"
"$top_builddir/tests/daemon_datapath" "$SOCK" || fail "data path"
kill -0 "$PID" 2>/dev/null || fail "uroced died"
# An MR does not follow its process through execve (a setuid program could
# be next): RDMA WRITE/READ at it afterwards fail with a remote access error.
"$top_builddir/tests/daemon_datapath" "$SOCK" exec || fail "MR access after execve"
st=$("$UROCED" --admin "$SOCK" status)
echo "$st" | grep -q "^udp rx_packets=[1-9][0-9]* rx_bytes=[0-9]* tx_packets=[1-9][0-9]* " || fail "no traffic counted: $st"
"$UROCED" --admin "$SOCK" capture stop || fail "capture stop"
INSPECT="$top_builddir/tools/inspect/uroce-inspect"
if [ -x "$INSPECT" ]; then
	PORT=$(sed -n 's/.*udp port \([0-9]*\) .*/\1/p' "$D/log" | head -1)
	"$INSPECT" --flows --port "$PORT" "$D/dp.pcap" > "$D/inspect.out" 2>&1 ||
		fail "uroce inspect: $(tail -5 "$D/inspect.out")"
	cat "$D/inspect.out" | tail -12
	grep -q "^summary: \([0-9]*\) packets, RoCEv2 \1, RoCEv1 0, non-RoCE skipped 0, malformed 0, bad ICRC 0" "$D/inspect.out" ||
		fail "capture: not every packet is a good RoCEv2 packet: $(grep summary "$D/inspect.out")"
	# each packet once (self traffic is not recorded twice), requests in
	# PSN order without gaps or repeats
	grep -q "^flow .* requests: packets [0-9]*, psn 256\.\.[0-9]*, gaps 0, repeats 0\$" "$D/inspect.out" ||
		fail "capture: request flow not consecutive: $(grep '^flow' "$D/inspect.out")"
else
	fail "uroce inspect not built ($INSPECT)"
fi

# Lossy link: the daemon drops 5% of the packets it sends (seeded); 10000
# RC messages of mixed sizes still arrive in order, byte-exact, each
# completed exactly once.
stop_uroced
start_uroced --mtu 1024 --loss 5 --seed 7
"$top_builddir/tests/daemon_datapath" "$SOCK" lossy 10000 || fail "lossy link"
st=$("$UROCED" --admin "$SOCK" status | grep '^udp ')
echo "$st"
dropped=$(echo "$st" | sed -n 's/.*tx_dropped=\([0-9]*\).*/\1/p')
[ "${dropped:-0}" -gt 0 ] || fail "--loss 5 dropped nothing: $st"

# Hostile network input at live QPs: the daemon survives and still carries
# traffic.
stop_uroced
start_uroced --mtu 1024
"$top_builddir/tests/daemon_datapath" "$SOCK" netfuzz 20000 || fail "network fuzz"
kill -0 "$PID" 2>/dev/null || fail "uroced died of the network fuzz"
[ "$(totals)" = "totals clients=0 pd=0 mr=0 cq=0 qp=0 ah=0" ] || fail "totals after the network fuzz: $(totals)"
