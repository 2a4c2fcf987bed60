#!/bin/sh
# traffic_xrc_clients: rdma-core's ibv_xsrq_pingpong (XRC send and receive
# QPs, one XRC SRQ per side, each side's domain opened from a file) between
# two processes on uroce0 through `uroce run`, 250 iterations at MTU 1024:
# both sides exit 0 and print "success" (every message came back exact), no
# failure marker. The run is captured: every XRC request carries an XRCETH
# naming one of the two SRQNs the sides printed, the same per frame in
# `uroce inspect --json` and in the bytes tshark shows after the BTH
# (tshark 4.0 names the XRC opcodes but leaves the XRCETH undecoded, as
# "Unknown/Vendor Specific Data") and in tools/wireshark/uroce.lua's
# roce.xrceth.xrcsrq; no frame malformed, every ICRC good;
# `uroce inspect --check` finds nothing and pairs every XRC response.
# Source: docs/xrc.md.
. "$top_srcdir/tests/lib.sh"
: "${TSHARK:?tshark was not found by configure (Debian package tshark)}"
up --dev uroce0

expect_eq "capture start" "uroce0: capturing to $T/x.pcap" "$(uroce capture start uroce0 "$T/x.pcap" 2>&1)"
_p=$(free_tcp_port)
_b="$UROCE run -- ibv_xsrq_pingpong -d uroce0 -i 1 -g 0 -p $_p"
pair 120 "$_p" "$_b -m 1024 -n 250" "$_b -m 1024 -n 250 127.0.0.1"
_rc=$?
expect_eq "capture stop" "uroce0: capture stopped" "$(uroce capture stop uroce0 2>&1)"
for _side in srv cli; do
	echo "---- xsrq $_side"
	cat "$T/$_side.log"
done
[ $_rc -eq 0 ] || fail "ibv_xsrq_pingpong: both sides exit 0"
for _side in srv cli; do
	expect_eq "xsrq $_side: result line" "success" "$(tail -n 1 "$T/$_side.log")"
	expect_eq "xsrq $_side: failure markers" "" \
		"$(grep -Ei 'fail|couldn|error' "$T/$_side.log")"
done
# the SRQNs the two sides printed ("local: ... SRQN 000001, GID ...")
srqns=$(sed -n 's/.*local:.*SRQN \([0-9a-f]*\),.*/\1/p' "$T/srv.log" "$T/cli.log" | sort | tr '\n' ' ')

"$TSHARK" -r "$T/x.pcap" -o "infiniband.rroce.port:$UROCE_PORT" -T fields -E separator='|' \
	-e frame.number -e infiniband.bth.opcode -e infiniband.vendor -e _ws.malformed \
	>"$T/tshark.out" 2>"$T/tshark.err" || fail "tshark: $(cat "$T/tshark.err")"
lua_tshark "$T/x.pcap" -o "roce.udp_port:$UROCE_PORT" \
	-T fields -E separator='|' -e frame.number -e roce.xrceth.xrcsrq -e roce.icrc.status \
	>"$T/lua.out" 2>"$T/lua.err" || fail "tshark with uroce.lua: $(cat "$T/lua.err")"
"$UROCE" inspect --json --port "$UROCE_PORT" "$T/x.pcap" >"$T/inspect.json" 2>&1
expect_eq "uroce inspect exit status" 0 "$?"
python3 - "$T/tshark.out" "$T/inspect.json" "$srqns" "$T/lua.out" <<'PY' || fail "XRCETH in the capture"
import json, sys
tshark, inspect, srqns = sys.argv[1], sys.argv[2], set(int(s, 16) for s in sys.argv[3].split())
lua = {}
for line in open(sys.argv[4]):
    num, srqn, status = line.rstrip("\n").split("|")
    assert status == "good", "uroce.lua: frame %s ICRC %r" % (num, status)
    if srqn:
        lua[int(num)] = int(srqn, 16)
requests = set(range(0xA0, 0xAD)) | {0xB3, 0xB4, 0xB6, 0xB7}
ts = {}
for line in open(tshark):
    num, op, vendor, malformed = line.rstrip("\n").split("|")
    assert not malformed, "tshark: frame %s malformed" % num
    if op and int(op) in requests:
        assert vendor[:2] == "00", "frame %s: XRCETH reserved byte %s" % (num, vendor[:2])
        ts[int(num)] = int(vendor[2:8], 16)
ins = {}
for line in open(inspect):
    o = json.loads(line)
    if "frame" not in o:
        continue
    assert o["icrc_ok"], "frame %d: ICRC" % o["frame"]
    if o["opcode"] in requests:
        ins[o["frame"]] = o["xrceth"]["xrc_srqn"]
    else:
        assert "xrceth" not in o, "frame %d: XRCETH in a response" % o["frame"]
assert len(ts) > 1000, "XRC requests seen by tshark: %d" % len(ts)
assert ts == ins, "tshark and uroce inspect disagree"
assert lua == ins, "uroce.lua's roce.xrceth.xrcsrq and uroce inspect disagree"
assert set(ts.values()) == srqns, "SRQNs %s, printed %s" % (set(ts.values()), srqns)
print("ok: %d XRC requests, XRCETH SRQNs %s in tshark, uroce.lua and uroce inspect" %
      (len(ts), sorted(srqns)))
PY
# the transport rules, XRC checked as RC: no finding, every ACK paired
"$UROCE" inspect --check --port "$UROCE_PORT" "$T/x.pcap" >"$T/check.out" 2>&1
expect_eq "uroce inspect --check exit status" 0 "$?"
grep -q '^check: [0-9]* packets, [0-9]* checked, [0-9]* flows, findings 0$' "$T/check.out" ||
	fail "inspect --check findings" "findings 0" "$(grep '^check:' "$T/check.out")"
grep -q 'unpaired responses 0$' "$T/check.out" ||
	fail "inspect --check pairs every XRC response" "unpaired responses 0" "$(grep 'unpaired' "$T/check.out")"
echo "ok: xsrq"
