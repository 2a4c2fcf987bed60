#!/bin/sh
# fault_cli: the fault injector's command line. `uroce up --fault` and
# `--fault-rx` set it, `uroce fault set/show/clear` change it live, `uroce
# status` shows spec and counters per direction; bad specs are refused with
# a message naming the bad item (at `uroce up` and live) and leave the
# daemon as it was; `--loss P` still means loss=P% on transmit.
. "$top_srcdir/tests/lib.sh"
out=$(uroce up --dev uroce0 --port 4 --fault 'loss=5% bogus=1' 2>&1) && fail "uroce up with a bad --fault succeeded"
echo "$out"
case $out in *"bad fault item 'bogus=1'"*) echo "ok: bad --fault refused" ;; *) fail "message names the item" "bad fault item 'bogus=1'" "$out" ;; esac
up --dev uroce0 --fault 'loss=5% dup=5% reorder=10%:2ms corrupt=1%' --fault-rx 'delay=1ms:500us'
uroce fault show uroce0 >"$T/show" || fail "uroce fault show"
cat "$T/show"
expect_eq "tx spec" 'fault tx spec="loss=5% dup=5% reorder=10%:2ms corrupt=1%" packets=0' \
	"$(sed -n 's/^\(fault tx spec="[^"]*" packets=[0-9]*\).*/\1/p' "$T/show")"
expect_eq "rx spec" 'fault rx spec="delay=1ms:500us" packets=0' \
	"$(sed -n 's/^\(fault rx spec="[^"]*" packets=[0-9]*\).*/\1/p' "$T/show")"
uroce fault set uroce0 rx rate=1000pps burst=1%:20% >/dev/null || fail "uroce fault set rx (several words)"
uroce fault set uroce0 both 'loss=0.5%' >/dev/null || fail "uroce fault set both"
uroce fault show uroce0 >"$T/show2"
expect_eq "both directions set" 'loss=0.5%
loss=0.5%' "$(sed -n 's/^fault [tr]x spec="\([^"]*\)".*/\1/p' "$T/show2")"
out=$(uroce fault set uroce0 tx 'loss=200%' 2>&1) && fail "fault set loss=200% accepted"
case $out in *"bad fault item 'loss=200%'"*) echo "ok: live bad spec refused: $out" ;; *) fail "live message" "bad fault item 'loss=200%'" "$out" ;; esac
expect_eq "refused spec left tx as it was" 'loss=0.5%' \
	"$(uroce fault show uroce0 | sed -n 's/^fault tx spec="\([^"]*\)".*/\1/p')"
uroce fault clear uroce0 >/dev/null || fail "uroce fault clear"
expect_eq "cleared" 'none
none' "$(uroce fault show uroce0 | sed -n 's/^fault [tr]x spec="\([^"]*\)".*/\1/p')"
uroce fault set uroce0 sideways loss=1% >/dev/null 2>&1 && fail "bad direction word accepted as a spec"
# The injector counts on live traffic: 100% loss on rx drops every packet
# the device receives, counted in "lost".
uroce fault set uroce0 rx loss=100% >/dev/null || fail "set rx loss=100%"
timeout 60 "$UROCE" run -- "$top_builddir/tests/traffic_loss" 100 >"$T/ud" 2>&1
head -n 1 "$T/ud"
expect_eq "all 100 datagrams lost on receive" "sent 100 received 0 dropped 100" "$(head -n 1 "$T/ud")"
expect_eq "rx lost counter" 100 "$(uroce status --dev uroce0 | sed -n 's/^fault rx .* lost=\([0-9]*\).*/\1/p')"
uroce down --dev uroce0 >/dev/null
# --loss keeps its meaning: loss on transmit.
up --dev uroce0 --loss 2.5 --seed 3
expect_eq "--loss 2.5" 'loss=2.5%' "$(uroce fault show uroce0 | sed -n 's/^fault tx spec="\([^"]*\)".*/\1/p')"
