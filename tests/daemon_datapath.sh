#!/bin/sh
# uroced's data path end to end without the provider (tests/daemon_datapath.c):
# SEND, RDMA WRITE with immediate, RDMA READ, a remote access error and a
# flush between two contexts over real UDP; the capture then holds the
# packets and `uroce inspect` finds exactly the 37 packets expected, every
# ICRC good, each flow with its exact packet count and PSN range;
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
	# Exactly these packets: the RC QP's SEND 3000 (3 packets), WRITE
	# with immediate 10000 (10), READ 5000 (1 request, PSNs for its 5
	# responses) and the WRITE with a bad rkey (1) = PSNs 256..274; its
	# answers: 2 ACKs, 5 READ responses, the NAK; the UC QP's SEND 2500
	# and WRITE 3000 (3 + 3); the UD SEND (1); the execve test's two RC
	# pairs (WRITE 4 packets + its NAK, READ request + its NAK; the
	# WRITE's NAK names its last packet, PSN 259: the payloads are written
	# behind and their failure is found where the message would be
	# acknowledged, docs/transport.md "Write-behind"). Flows
	# by destination QPN (a fresh daemon numbers QPs from 0x11); each
	# packet once, requests in PSN order without gaps or repeats.
	want="summary: 37 packets, RoCEv2 37, RoCEv1 0, non-RoCE skipped 0, malformed 0, bad ICRC 0"
	got=$(grep '^summary: ' "$D/inspect.out")
	[ "$got" = "$want" ] || fail "capture summary: expected '$want', got '$got'"
	want="dqpn 0x000011 responses: packets 8, psn 258..274, gaps 1, repeats 0
dqpn 0x000012 requests: packets 15, psn 256..274, gaps 0, repeats 0
dqpn 0x000014 requests: packets 6, psn 1792..1797, gaps 0, repeats 0
dqpn 0x000018 requests: packets 1, psn 1280..1280, gaps 0, repeats 0
dqpn 0x000019 requests: packets 4, psn 256..259, gaps 0, repeats 0
dqpn 0x00001a requests: packets 1, psn 256..256, gaps 0, repeats 0
dqpn 0x00001b responses: packets 1, psn 259..259, gaps 0, repeats 0
dqpn 0x00001c responses: packets 1, psn 256..256, gaps 0, repeats 0"
	got=$(sed -n 's/^flow RoCEv2 [^ ]* > [^ ]* //p' "$D/inspect.out" | sort)
	[ "$got" = "$want" ] || fail "capture flows: expected
$want
got
$got"
	echo "ok: $(grep -c '^flow ' "$D/inspect.out") flows, 37 packets, each as expected"
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
