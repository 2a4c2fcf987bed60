#!/usr/bin/env python3
"""inspect_lua.py - the Wireshark ICRC plugin (tools/wireshark/uroce.lua) in
real tshark (`-X lua_script:`), table-driven, exact values:

- every RoCEv2 frame of tests/data/icrc.tsv and icrc-rxe.tsv (ConnectX CNP,
  kernel rxe, scapy, generated): roce.icrc.status "good", roce.icrc.computed
  and roce.icrc.wire equal to the listed ICRC;
- the same frames with a masked field changed (TOS, TTL, IP checksum, UDP
  checksum, BTH byte 4, IPv6 traffic class / flow label / hop limit): good;
- one bit flipped in the BTH, the payload or the ICRC: "bad", computed
  equal to the zlib oracle (docs/wire-format.md §2.1), expert "Bad ICRC",
  and roce.icrc.ip_id exactly when a brute force over the 65536 IDs finds
  one that fits;
- IPv4 frames with the ID rewritten: "bad", roce.icrc.ip_id = the ID sent
  (docs/icrc.md); with -o roce.any_ip_id:TRUE "good";
- the clean captures (sample, kernel rxe IPv4 and IPv6): every RoCEv2 frame
  good, `-Y 'roce.icrc.status == "bad"'` finds none;
- another UDP port only with -o roce.udp_port; a frame cut by the snapshot
  length, IPv4 options or an IPv4 fragment: no verdict;
- flow analysis on the sample: roce.analysis.retransmission,
  max_psn, nak, rnr_wait and rnr_nak_frame on exactly the frames and with
  the values of `uroce inspect --flows`;
- loaded from the per-user plugin directory without -X.
"""
import os
import shutil
import struct
import sys
import tempfile
import zlib

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import (ICRC_TSV, LINKTYPE_ETHERNET, SAMPLE, TOP_SRCDIR, check,  # noqa: E402
                         check_eq, finish, icrc_oracle, read_pcap, run, TSHARK_FLAGS, write_pcap)

PLUGIN = os.path.join(TOP_SRCDIR, "tools", "wireshark", "uroce.lua")
RXE_TSV = os.path.join(TOP_SRCDIR, "tests", "data", "icrc-rxe.tsv")
TSHARK = os.environ.get("TSHARK")
TMP = tempfile.mkdtemp(prefix="inspect_lua.")
FIELDS = ["roce.icrc.status", "roce.icrc.computed", "roce.icrc.wire", "roce.icrc.ip_id",
          "_ws.expert.message"]


def nobody_home(home):
    """HOME, with a copy of the plugin, readable by nobody (TMP traversable)."""
    os.makedirs(home, exist_ok=True)
    shutil.copy(PLUGIN, home)
    for d, _, files in os.walk(home):
        os.chown(d, 65534, 65534)
        for f in files:
            os.chown(os.path.join(d, f), 65534, 65534)
    os.chmod(TMP, 0o711)
    return home


def tshark(path, *extra, fields=FIELDS, plugin=True, home=None):
    """One dict per frame (frame.number first); exits on a tshark failure.

    Wireshark 4.4 (Debian 13) ignores -X lua_script and personal plugins for
    root (no system init.lua sets run_user_scripts_when_superuser): as root,
    tshark runs as nobody with HOME = HOME (default: one of its own holding a
    copy of the plugin) and the capture on its stdin, as lua_tshark in
    tests/lib.sh.
    """
    prefix, script, stdin = [], PLUGIN, None
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config")) if home else None
    if os.geteuid() == 0:
        home = nobody_home(home or os.path.join(TMP, "nobody"))
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                  "env", "HOME=" + home, "XDG_CONFIG_HOME=" + os.path.join(home, ".config")]
        script, stdin, path = os.path.join(home, "uroce.lua"), open(path, "rb"), "-"
    argv = prefix + [TSHARK, "-n", "-r", path] + (["-X", "lua_script:" + script] if plugin else [])
    argv += TSHARK_FLAGS + list(extra) + ["-T", "fields", "-E", "separator=|", "-E", "aggregator=;"]
    for f in ["frame.number"] + fields:
        argv += ["-e", f]
    rc, out, err = run(argv, env=env, stdin=stdin)
    if stdin:
        stdin.close()
    err = "\n".join(l for l in err.splitlines() if "Running as user" not in l)
    if rc != 0 or "Lua" in err or "rror" in err:
        print("FAIL: tshark exited %d: %s" % (rc, err))
        sys.exit(1)
    # a boolean field is 1 in Wireshark 4.0's -T fields, True in 4.4's
    boolean = {"True": "1", "False": "0"}
    rows = [dict(zip(["frame.number"] + fields, (boolean.get(v, v) for v in l.split("|"))))
            for l in out.splitlines()]
    for r in rows:   # the plugin's own expert items only
        if "_ws.expert.message" in r:
            r["_ws.expert.message"] = ";".join(m for m in r["_ws.expert.message"].split(";")
                                                if m.startswith(("Bad ICRC", "ICRC verifies")))
    return rows


def load_tsv(path):
    rows = []
    for line in open(path):
        if line.startswith("#") or line.startswith("id\t") or not line.strip():
            continue
        ident, desc, icrc, frame = line.rstrip("\n").split("\t")
        rows.append((ident, desc, icrc, bytes.fromhex(frame)))
    return rows


def etype_off(frame):
    """(ethertype, offset of the network header) after any VLAN tags"""
    et, off = struct.unpack(">H", frame[12:14])[0], 14
    while et in (0x8100, 0x88A8):
        et, off = struct.unpack(">H", frame[off + 2:off + 4])[0], off + 4
    return et, off


def write(name, frames, snaplen=65535):
    path = os.path.join(TMP, name)
    write_pcap(path, LINKTYPE_ETHERNET, [(1, i, None, f) for i, f in enumerate(frames)],
               snaplen=snaplen)
    return path


def hx(v):
    return "0x%08x" % v


def ids_that_fit(frame):
    """Every IPv4 ID with which the frame's ICRC verifies (brute force over
    the oracle's masked bytes: the ID is bytes 4..5 of the IP header)."""
    _, off = etype_off(frame)
    wire = struct.unpack(">I", frame[-4:])[0]
    m = bytearray(frame[off:off + struct.unpack(">H", frame[off + 2:off + 4])[0]])
    m[1], m[8], m[10:12] = 0xFF, 0xFF, b"\xff\xff"
    m[26:28] = b"\xff\xff"
    m[32] = 0xFF
    pre = zlib.crc32(b"\xff" * 8 + bytes(m[:4]))
    post = bytes(m[6:-4])
    want = struct.unpack("<I", struct.pack(">I", wire))[0]
    return [i for i in range(65536) if zlib.crc32(post, zlib.crc32(struct.pack(">H", i), pre)) == want]

if not TSHARK:
    print("FAIL: $TSHARK is empty: configure did not find tshark (scripts/install-deps installs it)")
    sys.exit(1)

# -- the listed frames: good, exact values ---------------------------------
rows = [r for r in load_tsv(ICRC_TSV) + load_tsv(RXE_TSV) if etype_off(r[3])[0] != 0x8915]
check_eq(len(rows), 18, "RoCEv2 frames in icrc.tsv + icrc-rxe.tsv")
got = tshark(write("listed.pcap", [r[3] for r in rows]))
for (ident, _, icrc, frame), g in zip(rows, got):
    check_eq((g["roce.icrc.status"], g["roce.icrc.computed"], g["roce.icrc.wire"], g["roce.icrc.ip_id"],
              g["_ws.expert.message"]),
             ("good", "0x" + icrc, "0x" + icrc, "", ""), "listed frame %s" % ident)
check_eq(len(got), len(rows), "frames decoded")


# -- masked fields changed: still good -------------------------------------
def masked_variants(frame):
    et, off = etype_off(frame)
    out = []
    if et == 0x0800:
        for pos, val in ((1, 0xE3), (8, 1), (10, 0x12), (11, 0x34)):   # TOS, TTL, checksum
            b = bytearray(frame)
            b[off + pos] = val
            out.append(("ip byte %d" % pos, bytes(b)))
        udp = off + 20
    else:
        for pos, val in ((0, 0x6F), (1, 0x5A), (3, 0x77), (7, 3)):     # TC, flow label, hop limit
            b = bytearray(frame)
            b[off + pos] = val
            out.append(("ipv6 byte %d" % pos, bytes(b)))
        udp = off + 40
    for pos, val in ((6, 0xAB), (7, 0xCD), (12, 0xC0), (12, 0x3F)):   # UDP checksum, BTH byte 4
        b = bytearray(frame)
        b[udp + pos] = val
        out.append(("udp byte %d = 0x%02x" % (pos, val), bytes(b)))
    return out


cases = [(ident, what, f) for ident, _, _, fr in rows for what, f in masked_variants(fr)]
got = tshark(write("masked.pcap", [c[2] for c in cases]))
check_eq(len(got), len(cases), "masked variants decoded")
for (ident, what, f), g in zip(cases, got):
    want = hx(icrc_oracle(f))
    check_eq((g["roce.icrc.status"], g["roce.icrc.computed"]), ("good", want),
             "%s with %s changed (masked)" % (ident, what))

# -- one bit flipped: bad, the exact computed value, ID fit as brute force --
cases = []
for ident, _, _, fr in rows:
    et, off = etype_off(fr)
    udp = off + (20 if et == 0x0800 else 40)
    ip_len = (struct.unpack(">H", fr[off + 2:off + 4])[0] if et == 0x0800
              else 40 + struct.unpack(">H", fr[off + 4:off + 6])[0])
    end = off + ip_len
    for pos, bitno in ((udp + 8, 0), (udp + 8 + 7, 3), (udp + 20, 7), (end - 5, 1), (end - 1, 6)):
        b = bytearray(fr)
        b[pos] ^= 1 << bitno
        cases.append((ident, pos - udp, bytes(b)))
got = tshark(write("flipped.pcap", [c[2] for c in cases]))
check_eq(len(got), len(cases), "flipped frames decoded")
fits_seen = 0
for (ident, pos, f), g in zip(cases, got):
    comp = icrc_oracle(f)
    wire = struct.unpack(">I", f[-4:])[0]
    fits = ids_that_fit(f) if etype_off(f)[0] == 0x0800 else []
    fits_seen += len(fits)
    want_id = "0x%04x" % fits[0] if len(fits) == 1 else ""
    msgs = ["Bad ICRC: computed %s, packet carries %s" % (hx(comp), hx(wire))]
    if want_id:
        msgs.insert(0, "ICRC verifies with IPv4 ID %s, the header carries 0x%04x"
                    % (want_id, struct.unpack(">H", f[etype_off(f)[1] + 4:etype_off(f)[1] + 6])[0]))
    check(len(fits) <= 1, "%s: at most one ID fits a packet (%r)" % (ident, fits))
    check_eq((g["roce.icrc.status"], g["roce.icrc.computed"], g["roce.icrc.wire"], g["roce.icrc.ip_id"],
              g["_ws.expert.message"]),
             ("bad", hx(comp), hx(wire), want_id, ";".join(msgs)),
             "%s with a bit flipped at UDP byte %d" % (ident, pos))
print("flipped: %d frames, %d with an IPv4 ID that fits" % (len(cases), fits_seen))

# -- the IPv4 ID rewritten: the sent ID recovered --------------------------
cases = []
for ident, _, _, fr in rows:
    et, off = etype_off(fr)
    if et != 0x0800:
        continue
    sent = struct.unpack(">H", fr[off + 4:off + 6])[0]
    for new in (0, sent ^ 0x8001, 0xFFFF):
        if new == sent:
            continue
        b = bytearray(fr)
        b[off + 4:off + 6] = struct.pack(">H", new)
        cases.append((ident, sent, new, bytes(b)))
check_eq(len(cases), 48, "IPv4 frames with a rewritten ID")
path = write("id.pcap", [c[3] for c in cases])
got = tshark(path)
for (ident, sent, new, f), g in zip(cases, got):
    comp, wire = icrc_oracle(f), struct.unpack(">I", f[-4:])[0]
    check_eq((g["roce.icrc.status"], g["roce.icrc.computed"], g["roce.icrc.ip_id"], g["_ws.expert.message"]),
             ("bad", hx(comp), "0x%04x" % sent,
              "ICRC verifies with IPv4 ID 0x%04x, the header carries 0x%04x;"
              "Bad ICRC: computed %s, packet carries %s" % (sent, new, hx(comp), hx(wire))),
             "%s sent with ID 0x%04x, rewritten to 0x%04x" % (ident, sent, new))
got = tshark(path, "-o", "roce.any_ip_id:TRUE")
check_eq([(g["roce.icrc.status"], g["roce.icrc.ip_id"]) for g in got],
         [("good", "0x%04x" % c[1]) for c in cases], "rewritten IDs with roce.any_ip_id")

# -- clean captures: all good; the display filter finds no bad one ----------
for name, n in (("sample.pcap", 39), ("rxe-ipv4.pcap", 9), ("rxe-ipv6.pcap", 5)):
    p = os.path.join(TOP_SRCDIR, "tests", "data", name)
    got = tshark(p)
    check_eq(sum(g["roce.icrc.status"] == "good" for g in got), n, "%s: good verdicts" % name)
    check_eq([g["frame.number"] for g in got if g["roce.icrc.status"] not in ("good", "")], [],
             "%s: frames not good" % name)
    check_eq(tshark(p, "-Y", 'roce.icrc.status == "bad"'), [], "%s: -Y bad" % name)
    check_eq(len(tshark(p, "-Y", 'roce.icrc.status == "good"')), n, "%s: -Y good" % name)
# sample frames 39 and 40 are RoCEv1 (no UDP): no verdict
got = tshark(SAMPLE)
check_eq([g["frame.number"] for g in got if g["roce.icrc.status"] == ""], ["39", "40"],
         "sample: frames without a verdict (RoCEv1)")
v2 = [f for f in (r[4] for r in read_pcap(SAMPLE)[2]) if etype_off(f)[0] != 0x8915]
check_eq([g["roce.icrc.computed"] for g in got if g["roce.icrc.status"] == "good"],
         [hx(icrc_oracle(f)) for f in v2], "sample: computed = the zlib oracle")

# -- flow analysis on the sample: the values of `uroce inspect --flows` ---
# (requests: repeats 2, RNR waits 1 total 10000 ns; responses: repeats 2,
# NAKs PSN_SEQ_ERR 1, REM_ACCESS_ERR 1, RNR 1)
got = tshark(SAMPLE, "-Y", "roce.analysis.retransmission || roce.analysis.nak || roce.analysis.rnr_wait",
             fields=["roce.analysis.retransmission", "roce.analysis.max_psn", "roce.analysis.nak",
                     "roce.analysis.rnr_wait", "roce.analysis.rnr_nak_frame"])
check_eq([tuple(g.values()) for g in got],
         [("22", "", "", "RNR", "", ""),
          ("23", "1", "1013", "", "0.000010000", "22"),
          ("24", "1", "1013", "", "", ""),
          ("26", "", "", "PSN_SEQ_ERR", "", ""),
          ("27", "1", "1015", "", "", ""),
          ("28", "1", "1014", "REM_ACCESS_ERR", "", "")], "sample: roce.analysis fields")
rc, out, _ = run([os.path.join(os.environ.get("top_builddir", "."), "tools", "inspect", "uroce-inspect"),
                  "--flows", SAMPLE])
check_eq(sum(int(l.split("repeats ")[1]) for l in out.splitlines() if l.startswith("flow ")), 4,
         "sample: inspect --flows repeats (the same rule)")

# -- other port; frames that get no verdict --------------------------------
g01 = [r[3] for r in rows if r[0] == "G01"][0]
et, off = etype_off(g01)
b = bytearray(g01)
b[off + 22:off + 24] = struct.pack(">H", 4792)
moved = bytes(b)   # the UDP port is in the ICRC: the oracle gives its new value
path = write("port.pcap", [moved])
check_eq([g["roce.icrc.status"] for g in tshark(path)], [""], "UDP 4792 without the preference")
check_eq([(g["roce.icrc.status"], g["roce.icrc.computed"]) for g in tshark(path, "-o", "roce.udp_port:4792")],
         [("bad", hx(icrc_oracle(moved)))], "UDP 4792 with roce.udp_port:4792")
cut = write("cut.pcap", [g01], snaplen=len(g01) - 3)
with open(cut, "r+b") as f:   # caplen < origlen: the last 3 ICRC bytes not captured
    data = bytearray(f.read())
    struct.pack_into("<I", data, 24 + 8, len(g01) - 3)
    f.seek(0)
    f.write(data[:24 + 16 + len(g01) - 3])
    f.truncate()
frag = bytearray(g01)
frag[off + 6] |= 0x20    # MF
check_eq([g["roce.icrc.status"] for g in tshark(cut)], [""], "frame cut by the snapshot length")
check_eq([g["roce.icrc.status"] for g in tshark(write("frag.pcap", [bytes(frag)]))], [""],
         "IPv4 first fragment (MF)")

# -- loaded from the per-user plugin directory, without -X -----------------
home = os.path.join(TMP, "home")
pdir = os.path.join(home, ".local", "lib", "wireshark", "plugins")
os.makedirs(pdir)
shutil.copy(PLUGIN, pdir)
got = tshark(os.path.join(TOP_SRCDIR, "tests", "data", "rxe-ipv4.pcap"), plugin=False, home=home,
             fields=["roce.icrc.status"])
check_eq([g["roce.icrc.status"] for g in got], ["good"] * 9, "plugin from ~/.local/lib/wireshark/plugins")

shutil.rmtree(TMP)
finish("inspect_lua")
