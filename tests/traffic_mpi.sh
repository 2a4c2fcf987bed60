#!/bin/sh
# traffic_mpi: Debian's Open MPI 4.1 (unmodified mpicc, mpirun) with
# `--mca pml ucx --mca osc ucx` on uroce0 through `uroce run`: two ranks on
# this host run tests/traffic_mpi.c (built here with mpicc): 1000 round
# trips of 64 KiB messages, every byte checked, then 20 fence epochs of
# MPI_Put and MPI_Accumulate(MPI_SUM) of 1024 int64 words from both ranks,
# exact final values. UCX selects uroce by UCX_NET_DEVICES=uroce0:1 and
# UCX_TLS=^sm (docs/clients.md §5: without excluding shared memory, two
# ranks of one host never touch the network). Asserted: mpirun exits 0,
# rank 0 prints "pingpong ok 131072000" and "rma ok 20", no UCX ERROR, both
# ranks' tag and RMA endpoint configurations are on rc_verbs/uroce0:1, and
# the device's `uroce status` UDP counters grew by at least the bytes moved.
# A second run leaves UCX_TLS unset (UCX's own transport choice, only
# UCX_NET_DEVICES=uroce0:1): the UCP workers must come up on uroce0 (the
# failure this test first caught: "Failed to create UCP worker" when the
# device had no SRQ) and the same program must give the same results; UCX
# may then carry the ranks' data through shared memory.
# Where the installed UCX has UCX_FENCE_MODE, both runs pass it as weak
# (ucx_setup in tests/lib.sh; MPI_Win_fence is ucp_worker_fence).
. "$top_srcdir/tests/lib.sh"

if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
	echo "SKIP: traffic_mpi: mpicc/mpirun missing (scripts/install-deps installs openmpi-bin libopenmpi-dev)"
	exit 77
fi
mpicc -O2 -o "$T/traffic_mpi" "$top_srcdir/tests/traffic_mpi.c" || fail "mpicc tests/traffic_mpi.c"

up --dev uroce0 --mtu 1024
ucx_setup
# An endpoint configuration to the peer rank, as UCX logs it: "ep_cfg[N]: "
# (UCX 1.13), "NAME intra-node cfg#N " (1.18; "self cfg#N" is the rank's own).
EPCFG='(ep_cfg\[[0-9]+\]:|-node cfg#[0-9]+) '

# udp_counter NAME: NAME=N from the device's `udp` status line.
udp_counter() {
	uroce status --dev uroce0 | sed -n "s/^udp .*\\b$1=\\([0-9]*\\).*/\\1/p"
}
rx0=$(udp_counter rx_bytes) tx0=$(udp_counter tx_bytes)

SIZE=65536 ITERS=1000 EPOCHS=20
timeout 240 "$UROCE" run -- mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 \
	--mca pml ucx --mca osc ucx \
	-x UCX_NET_DEVICES=uroce0:1 ${UCX_FENCE_MODE:+-x UCX_FENCE_MODE=$UCX_FENCE_MODE} -x UCX_TLS=^sm -x UCX_LOG_LEVEL=info \
	"$T/traffic_mpi" $SIZE $ITERS $EPOCHS >"$T/mpi.log" 2>&1
rc=$?
cat "$T/mpi.log"
expect_eq "mpirun exit status" 0 "$rc"
expect_eq "UCX ERROR lines" "" "$(grep 'UCX  ERROR' "$T/mpi.log")"
expect_line "ping-pong result" "$T/mpi.log" "pingpong ok $((SIZE * ITERS * 2))"
expect_line "one-sided result" "$T/mpi.log" "rma ok $EPOCHS"
# Each rank logs its endpoint configurations: to the peer, tag matching
# and RMA lanes on rc_verbs/uroce0:1; to itself, UCX's self transport.
_tag=$(grep -cE "$EPCFG"'tag\(rc_verbs/uroce0:1\)$' "$T/mpi.log")
expect_eq "tag endpoint configurations with rc_verbs/uroce0:1 (one per rank)" 2 "$_tag"
_rma=$(grep -cE "$EPCFG"'rma\(rc_verbs/uroce0:1\) +amo_am\(rc_verbs/uroce0:1\)$' "$T/mpi.log")
expect_eq "RMA endpoint configurations on rc_verbs/uroce0:1 (one per rank)" 2 "$_rma"
# (UCX 1.13 names the self transport's device memory0, 1.18 memory)
_tls=$(sed -nE 's/.*(ep_cfg\[[0-9]*\]:|cfg#[0-9]*) //p' "$T/mpi.log" | grep -o '[a-z_]*/[a-z0-9:]*' |
	sed 's,^self/memory0$,self/memory,' | sort -u | tr '\n' ' ')
expect_eq "transports of all endpoint lanes" "rc_verbs/uroce0:1 self/memory " "$_tls"

rx1=$(udp_counter rx_bytes) tx1=$(udp_counter tx_bytes)
# Each rank Puts and Accumulates 8 KiB to its peer per epoch (its own
# Accumulate goes through UCX's self transport).
moved=$((SIZE * ITERS * 2 + EPOCHS * 2 * 2 * 1024 * 8))
for d in rx tx; do
	eval "_g=\$((\$${d}1 - \$${d}0))"
	[ "$_g" -ge "$moved" ] || fail "uroce0 UDP ${d}_bytes growth" ">= $moved" "$_g"
	echo "ok: uroce0 UDP ${d}_bytes grew by $_g (>= $moved bytes of MPI data)"
done

# UCX's defaults: rc_verbs and ud_verbs are opened on uroce0 (with SRQ), and
# the MPI results are exact whatever lanes UCX picks between two local ranks.
timeout 240 "$UROCE" run -- mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 \
	--mca pml ucx --mca osc ucx \
	-x UCX_NET_DEVICES=uroce0:1 ${UCX_FENCE_MODE:+-x UCX_FENCE_MODE=$UCX_FENCE_MODE} -x UCX_LOG_LEVEL=info \
	"$T/traffic_mpi" $SIZE 100 4 >"$T/mpi_default.log" 2>&1
rc=$?
cat "$T/mpi_default.log"
expect_eq "mpirun exit status (UCX defaults)" 0 "$rc"
expect_eq "UCX ERROR lines (UCX defaults)" "" "$(grep 'UCX  ERROR' "$T/mpi_default.log")"
expect_line "ping-pong result (UCX defaults)" "$T/mpi_default.log" "pingpong ok $((SIZE * 100 * 2))"
expect_line "one-sided result (UCX defaults)" "$T/mpi_default.log" "rma ok 4"
# Each rank's endpoint to its peer keeps an rc_verbs/uroce0:1 lane among
# UCX's shared-memory ones, for tag matching and for RMA.
for _k in tag rma; do
	_ranks=$(grep -E "$EPCFG$_k\\(.*rc_verbs/uroce0:1" "$T/mpi_default.log" |
		sed -n "s/.*\\[[^:]*:\\([0-9]*\\) *:.*/\\1/p" | sort -u | wc -l)
	expect_eq "ranks with a $_k lane on rc_verbs/uroce0:1 (UCX defaults)" 2 "$_ranks"
done
