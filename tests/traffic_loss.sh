#!/bin/sh
# traffic_loss: `uroce up --loss P --seed N` drops P% of the packets the
# daemon sends, reproducibly (tests/traffic_loss.c: COUNT UD datagrams, one
# packet each, no retransmission, so every loss is one missing message):
# - the number of drops D is within 5 standard deviations of the binomial
#   mean: |D - COUNT p| <= 5 sqrt(COUNT p (1 - p)) (a false failure about
#   once in 1.7 million runs; --loss 5 with COUNT 4000: 131..269, while a
#   rate ten times too small, ~20, or ten times too large, ~2000, fails);
# - the daemon's own counters agree exactly: tx_dropped D, tx_packets COUNT - D;
# - two daemons with the same seed drop exactly the same messages;
#   another seed drops different ones.
. "$top_srcdir/tests/lib.sh"
N=4000
P=5

# run_seed SEED NAME: one daemon, one run; output in $T/NAME, status in $T/NAME.status.
run_seed() {
	up --dev uroce0 --loss "$P" --seed "$1"
	timeout 300 "$UROCE" run -- "$top_builddir/tests/traffic_loss" "$N" >"$T/$2" 2>&1
	_rc=$?
	head -n 1 "$T/$2"
	expect_eq "traffic_loss (seed $1, $2) exit status" 0 "$_rc"
	uroce status --dev uroce0 >"$T/$2.status" 2>&1 || fail "uroce status: $(cat "$T/$2.status")"
	uroce down --dev uroce0 >/dev/null || fail "uroce down"
	_d=$(sed -n 's/^sent [0-9]* received [0-9]* dropped \([0-9]*\)$/\1/p' "$T/$2")
	[ -n "$_d" ] || fail "$2: summary line" "sent $N received R dropped D" "$(head -n 1 "$T/$2")"
	expect_eq "$2: daemon counters" "tx_packets=$((N - _d)) tx_dropped=$_d" \
		"$(sed -n 's/^udp .* \(tx_packets=[0-9]*\) .* \(tx_dropped=[0-9]*\)\b.*$/\1 \2/p' "$T/$2.status")"
	awk -v n="$N" -v p="$P" -v d="$_d" 'BEGIN {
		p /= 100; mu = n * p; sd = sqrt(n * p * (1 - p)); dev = d - mu; if (dev < 0) dev = -dev
		printf "%d drops of %d at %.1f%%: mean %.1f, 5 sd %.1f, |D - mean| %.1f\n", d, n, p * 100, mu, 5 * sd, dev
		exit !(dev <= 5 * sd) }' || fail "$2: drop count within 5 sd of the binomial mean"
}

run_seed 7 a
run_seed 7 b
run_seed 8 c
expect_eq "same seed, same drops" "$(grep '^drops:' "$T/a")" "$(grep '^drops:' "$T/b")"
[ "$(grep '^drops:' "$T/a")" != "$(grep '^drops:' "$T/c")" ] ||
	fail "another seed, other drops" "different drop lists for seeds 7 and 8" "identical"
echo "ok: seeds 7, 7, 8 dropped $(sed -n 's/.*dropped //p' "$T/a"), $(sed -n 's/.*dropped //p' "$T/b"), $(sed -n 's/.*dropped //p' "$T/c") messages; same seed, same list"
