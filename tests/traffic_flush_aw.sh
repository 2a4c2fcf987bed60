#!/bin/sh
# traffic_flush_aw: tests/traffic_flush_aw (Check) inside `uroce run`:
# ATOMIC WRITE and FLUSH through ibv_wr_atomic_write / ibv_wr_flush (see
# traffic_flush_aw.c; FLUSH where the verbs.h has it, rdma-core >= 45),
# captured: `uroce inspect` decodes every request (2104 ATOMIC WRITEs; 200
# FLUSHes, 805 with ibv_wr_flush), every good one answered by an empty READ
# Response Only (2301; 2902), the error cases by their NAKs (3; 7), no
# packet malformed, no ICRC bad.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
expect_eq "capture start" "uroce0: capturing to $T/f.pcap" "$(uroce capture start uroce0 "$T/f.pcap" 2>&1)"
timeout 600 "$UROCE" run -- "$top_builddir/tests/traffic_flush_aw"
rc=$?
expect_eq "traffic_flush_aw exit status" 0 "$rc"
expect_eq "capture stop" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"
"$UROCE" inspect --port "$UROCE_PORT" "$T/f.pcap" >"$T/inspect.out" 2>&1
expect_eq "uroce inspect exit status" 0 "$?"
if grep -q '^#define HAVE_STRUCT_IBV_QP_EX_WR_FLUSH 1' "$top_builddir/config.h"; then
	flush=805 resp=2902 naks=7
else
	flush=200 resp=2301 naks=3
fi
expect_eq "ATOMIC WRITE requests" 2104 "$(grep -c ' RC_ATOMIC_WRITE dqpn .* reth .* len 8 payload 8 ' "$T/inspect.out")"
expect_eq "FLUSH requests" "$flush" "$(grep -c ' RC_FLUSH dqpn .* feth sel [01] plt [12] reth ' "$T/inspect.out")"
expect_eq "empty READ Response Only" "$resp" \
	"$(grep -c ' RC_RDMA_READ_RESPONSE_ONLY dqpn .* aeth ACK .* payload 0 ' "$T/inspect.out")"
expect_eq "NAKs" "$naks" "$(grep -c ' RC_ACKNOWLEDGE dqpn .* aeth NAK ' "$T/inspect.out")"
grep -Eq '^summary: [0-9]+ packets, RoCEv2 [0-9]+, RoCEv1 0, non-RoCE skipped 0, malformed 0, bad ICRC 0$' "$T/inspect.out" ||
	fail "inspect summary" "malformed 0, bad ICRC 0" "$(grep '^summary' "$T/inspect.out")"
