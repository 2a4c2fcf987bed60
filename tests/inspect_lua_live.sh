#!/bin/sh
# inspect_lua_live: the Wireshark ICRC plugin (tools/wireshark/uroce.lua) in
# real tshark on uroce's own captures of real traffic, MTU 1024:
# - clean: ibv_rc_pingpong 64 KiB x 50 (3,200 SEND packets and their ACKs):
#   every RoCE packet that `uroce inspect` finds is "good" in the plugin,
#   `-Y 'roce.icrc.status == "bad"'` finds nothing;
# - corrupting (--fault corrupt=2%, seeded; tests/fault_replay and
#   ib_write_bw -s 65536): `-Y 'roce.icrc.status == "bad"'` gives exactly
#   the frames `uroce inspect` does not call ok (bad ICRC, or malformed when
#   the flipped bit broke a header), as many as the daemon's corrupted
#   counter; every other RoCE frame is "good"; the computed ICRC of each bad
#   frame equals inspect's expected ICRC where inspect decoded it;
# - lossy (--fault loss=5% dup=5% reorder=10%:2ms, seeded): the plugin's
#   roce.analysis.retransmission frames are as many as the repeats of
#   `uroce inspect --flows` (the same rule), its NAKs by code as many as
#   inspect's, and there are some of each.
. "$top_srcdir/tests/lib.sh"
INSPECT="$top_builddir/tools/inspect/uroce-inspect"
PY=${PYTHON3:-python3}
[ -n "${TSHARK:-}" ] || fail "\$TSHARK is empty: configure did not find tshark (scripts/install-deps installs it)"

# ts PCAP FILTER FIELD...: the plugin's fields of the frames FILTER selects
ts() {
	_pcap=$1 _flt=$2
	shift 2
	_args=
	for _f in "$@"; do _args="$_args -e $_f"; done
	# shellcheck disable=SC2086
	lua_tshark "$_pcap" -o "roce.udp_port:$UROCE_PORT" \
		-Y "$_flt" -T fields -E separator=' ' $_args >"$T/tshark.out" 2>"$T/tshark.err" ||
		{ cat "$T/tshark.err"; fail "tshark -Y '$_flt' on $_pcap"; }
	if grep -q 'Lua' "$T/tshark.err"; then cat "$T/tshark.err"; fail "Lua error in tshark"; fi
	# a boolean field is 1 in Wireshark 4.0's -T fields, True in 4.4's
	sed -e 's/\<True\>/1/g' -e 's/\<False\>/0/g' "$T/tshark.out"
}

# inspect_verdicts PCAP: "frame status" for every RoCE packet inspect finds
inspect_verdicts() {
	"$INSPECT" --json --port "$UROCE_PORT" "$1" >"$T/inspect.json"
	$PY -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if "frame" in o:
        print(o["frame"], o["status"], o.get("icrc_expected", "-"))
' "$T/inspect.json"
}

up --dev uroce0 --mtu 1024 --pcap "$T/clean.pcap"
pingpong rc ibv_rc_pingpong uroce0 65536 50 -n 50 -s 65536 -m 1024 >"$T/pp.log" ||
	{ cat "$T/pp.log"; fail "ibv_rc_pingpong"; }
uroce down --dev uroce0 >/dev/null || fail "uroce down"
inspect_verdicts "$T/clean.pcap" >"$T/clean.inspect"
n=$(grep -c . "$T/clean.inspect")
[ "$n" -ge 6500 ] || fail "clean: RoCE packets in the capture" ">= 6500" "$n"
expect_eq "clean: inspect's verdicts" "$n ok" "$(awk '{print $2}' "$T/clean.inspect" | sort | uniq -c | awk '{print $1, $2}')"
expect_eq "clean: -Y bad" "" "$(ts "$T/clean.pcap" 'roce.icrc.status == "bad"' frame.number)"
expect_eq "clean: -Y good = inspect's RoCE frames" "$(awk '{print $1}' "$T/clean.inspect")" \
	"$(ts "$T/clean.pcap" 'roce.icrc.status == "good"' frame.number)"
echo "ok: clean: $n packets good"

up --dev uroce0 --mtu 1024 --seed 7 --fault 'corrupt=2%' --pcap "$T/corrupt.pcap"
timeout "$(tmo 120)" "$UROCE" run -- "$top_builddir/tests/fault_replay" 150 >"$T/replay.out" 2>&1 ||
	{ tail -5 "$T/replay.out"; fail "fault_replay under corruption"; }
perftest ib_write_bw bw 65536 200 -s 65536 -n 200 >"$T/bw.log" || { cat "$T/bw.log"; fail "ib_write_bw"; }
corrupted=$(uroce status --dev uroce0 | sed -n 's/^fault tx .* corrupted=\([0-9]*\) .*/\1/p')
uroce down --dev uroce0 >/dev/null || fail "uroce down"
[ -n "$corrupted" ] && [ "$corrupted" -gt 0 ] || fail "corrupt: packets corrupted" "> 0" "$corrupted"
inspect_verdicts "$T/corrupt.pcap" >"$T/corrupt.inspect"
ts "$T/corrupt.pcap" 'roce.icrc.status == "bad"' frame.number roce.icrc.computed >"$T/bad.lua"
ts "$T/corrupt.pcap" 'roce.icrc.status' frame.number roce.icrc.status >"$T/all.lua"
expect_eq "corrupt: -Y bad = the frames inspect does not call ok" \
	"$(awk '$2 != "ok" {print $1}' "$T/corrupt.inspect")" "$(awk '{print $1}' "$T/bad.lua")"
expect_eq "corrupt: bad frames = the daemon's corrupted packets" "$corrupted" "$(grep -c . "$T/bad.lua")"
expect_eq "corrupt: -T fields -e roce.icrc.status: good = the frames inspect calls ok, bad = the others" \
	"$(awk '{print $1, ($2 == "ok" ? "good" : "bad")}' "$T/corrupt.inspect")" "$(cat "$T/all.lua")"
# inspect's expected ICRC (JSON "0x%08x", wire order) where it decoded the packet
expect_eq "corrupt: computed ICRC = inspect's expected ICRC" \
	"$(awk '$2 == "bad_icrc" {print $1, $3}' "$T/corrupt.inspect")" \
	"$(awk 'NR == FNR { if ($2 == "bad_icrc") want[$1] = 1; next } ($1 in want) {print $1, $2}' \
		"$T/corrupt.inspect" "$T/bad.lua")"
echo "ok: corrupt: $corrupted corrupted packets, each bad in the plugin; $(grep -c ' good$' "$T/all.lua") good"

up --dev uroce0 --mtu 1024 --seed 11 --fault 'loss=5% dup=5% reorder=10%:2ms' --pcap "$T/lossy.pcap"
timeout "$(tmo 120)" "$UROCE" run -- "$top_builddir/tests/fault_replay" 150 >"$T/replay.out" 2>&1 ||
	{ tail -5 "$T/replay.out"; fail "fault_replay under loss"; }
perftest ib_write_bw bw 65536 20 -s 65536 -n 20 >"$T/bw.log" || { cat "$T/bw.log"; fail "ib_write_bw"; }
uroce down --dev uroce0 >/dev/null || fail "uroce down"
"$INSPECT" --flows --json --port "$UROCE_PORT" "$T/lossy.pcap" >"$T/lossy.json"
want=$($PY -c '
import json, sys
fl = [json.loads(l)["flow"] for l in open(sys.argv[1]) if l.startswith("{\"flow\"")]
naks = {}
for f in fl:
    for k, n in f["stats"]["naks"].items():
        naks[k] = naks.get(k, 0) + n
print(sum(f["repeats"] for f in fl), " ".join("%s=%d" % (k, naks[k]) for k in sorted(naks) if naks[k]))
' "$T/lossy.json")
ts "$T/lossy.pcap" 'roce.analysis.retransmission || roce.analysis.nak' frame.number \
	roce.analysis.retransmission roce.analysis.nak >"$T/lossy.lua"
rt=$(awk '$2 == 1' "$T/lossy.lua" | grep -c .)
naks=$(awk '{ if ($2 == 1) print $3; else print $2 }' "$T/lossy.lua" | grep . | sort | uniq -c |
	awk '{printf "%s%s=%d", s, $2, $1; s=" "}')
expect_eq "lossy: retransmissions and NAKs = inspect --flows" "$want" "$rt $naks"
[ "$rt" -gt 0 ] || fail "lossy: retransmissions" "> 0" "$rt"
[ -n "$naks" ] || fail "lossy: NAKs" "some" "none"
echo "ok: lossy: $rt retransmissions, NAKs $naks"
