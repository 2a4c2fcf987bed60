#!/usr/bin/env python3
"""inspect_errors.py - `uroce inspect` on crafted captures, table-driven:

- a corrupted ICRC -> exit 1, that frame marked BAD with the expected and
  the wire value, every other line unchanged;
- truncated / broken packets -> exit 1 with the named error on that frame;
- the same packets framed as pcapng, Linux cooked SLL and SLL2, 802.1Q and
  802.1ad+802.1Q VLAN, raw IP, microsecond pcap -> the same decode;
- non-RoCE frames and --port -> skipped and counted;
- not a pcap, missing file, bad usage, unsupported link type, a file cut in
  the middle of a record -> exit 2 with a clear message.
Every case asserts exact lines or exact JSON fields.
"""
import json
import os
import shutil
import struct
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import (INSPECT, LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL,  # noqa: E402
                         LINKTYPE_LINUX_SLL2, LINKTYPE_RAW, SAMPLE, check, check_eq, finish,
                         icrc_oracle, inspect, read_pcap, run, write_pcap)

TMP = tempfile.mkdtemp(prefix="inspect_errors.")
LINKTYPE, NSEC, RECS = read_pcap(SAMPLE)
FRAMES = [r[4] for r in RECS]


def path(name):
    return os.path.join(TMP, name)


def records(frames, origlens=None):
    return [(1767225600, i * 10000, origlens[i] if origlens else None, f)
            for i, f in enumerate(frames)]


def save(name, frames, linktype=LINKTYPE_ETHERNET, origlens=None, nsec=True):
    p = path(name)
    recs = records(frames, origlens)
    if not nsec:
        recs = [(s, frac // 1000, o, f) for s, frac, o, f in recs]
    write_pcap(p, linktype, recs, nsec=nsec)
    return p


def text_lines(p, *args):
    rc, out, err = inspect(p, *args)
    return rc, out.splitlines(), err


def json_objs(p, *args):
    rc, out, err = inspect(p, "--json", *args)
    objs = [json.loads(line) for line in out.splitlines()]
    return rc, objs, err


def ipv4_fix(f, cut):
    """Cut an untagged Ethernet/IPv4 frame to CUT bytes and make its IP and
    UDP lengths and IP header checksum agree: a well-formed IP packet whose
    RoCE part is short."""
    f = bytearray(f[:cut])
    ip = 14
    struct.pack_into(">H", f, ip + 2, len(f) - ip)
    struct.pack_into(">H", f, ip + 20 + 4, len(f) - ip - 20)
    struct.pack_into(">H", f, ip + 10, 0)
    s = sum(struct.unpack(">10H", bytes(f[ip:ip + 20])))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    struct.pack_into(">H", f, ip + 10, ~s & 0xFFFF)
    return bytes(f)


def wire_hex(b):
    return b.hex()


# ---------------------------------------------------------------- baseline
rc, BASE, err = text_lines(SAMPLE)
check_eq(rc, 0, "sample: exit status")
BASE_SUMMARY = BASE[-3:]
BASE_LINES = BASE[:-3]
rc, BASE_JSON, _ = json_objs(SAMPLE)
check_eq(rc, 0, "sample --json: exit status")
check_eq(len(BASE_LINES), len(FRAMES), "sample: one line per frame")


def expect_lines(lines, changes, summary, what):
    """LINES must equal the sample's lines with CHANGES {frame: line} applied,
    followed by exactly SUMMARY (3 lines)."""
    want = [changes.get(i + 1, line) for i, line in enumerate(BASE_LINES)]
    want = [w for w in want if w is not None]
    check_eq(len(lines), len(want) + 3, what + ": number of lines")
    for i, (got, exp) in enumerate(zip(lines, want)):
        check_eq(got, exp, "%s: line %d" % (what, i + 1))
    check_eq(lines[-3:], summary, what + ": summary")


# -------------------------------------------------------- corrupted ICRC
f = bytearray(FRAMES[0])
good = icrc_oracle(bytes(f))
f[-1] ^= 0x01
p = save("bad_icrc.pcap", [bytes(f)] + FRAMES[1:])
rc, lines, err = text_lines(p)
check_eq(rc, 1, "bad ICRC: exit status")
check_eq(err, "", "bad ICRC: stderr")
expect_lines(lines, {1: "1 RoCEv2 192.168.0.1:49730 > 192.168.0.2:4791 RC_SEND_ONLY dqpn 0x000022 "
                        "psn 1000 payload 11 pad 1 flags SE,A ICRC BAD(expected %08x, got %s)"
                        % (good, wire_hex(bytes(f[-4:])))},
             ["summary: 41 packets, RoCEv2 39, RoCEv1 2, non-RoCE skipped 0, malformed 0, bad ICRC 1",
              BASE_SUMMARY[1], "errors: none"], "bad ICRC")
check_eq(BASE_LINES[0][-8:], " ICRC ok", "sample frame 1 is good before the flip")
rc, objs, _ = json_objs(p)
check_eq((objs[0]["status"], objs[0]["icrc_ok"], objs[0]["icrc"], objs[0]["icrc_expected"]),
         ("bad_icrc", False, "0x" + wire_hex(bytes(f[-4:])), "0x%08x" % good), "bad ICRC: JSON fields")
check_eq(objs[-1]["summary"]["bad_icrc"], 1, "bad ICRC: JSON summary")

# ICRC flip in a RoCEv1 frame (sample frame 39, real Mellanox capture).
f = bytearray(FRAMES[38])
f[-4] ^= 0x80
p = save("bad_icrc_v1.pcap", FRAMES[:38] + [bytes(f)] + FRAMES[39:])
rc, objs, _ = json_objs(p)
check_eq(rc, 1, "bad RoCEv1 ICRC: exit status")
check_eq((objs[38]["frame"], objs[38]["version"], objs[38]["status"], objs[38]["icrc"],
          objs[38]["icrc_expected"]), (39, 1, "bad_icrc", "0x63d856bb", "0xe3d856bb"),
         "bad RoCEv1 ICRC: frame 39")

# ------------------------------------------------------ malformed packets
# (name, frames, origlens, frame number, expected text line, error name)
W1 = FRAMES[6]     # RC_RDMA_WRITE_FIRST with RETH (frame 7)
S3 = FRAMES[2]     # RC_SEND_FIRST, 256 bytes (frame 3)
unknown_op = bytearray(FRAMES[0])
unknown_op[14 + 20 + 8] = 0x1F        # a reserved RC opcode
bad_tver = bytearray(FRAMES[0])
bad_tver[14 + 20 + 8 + 1] |= 0x01     # TVer 1
MALFORMED = [
    ("truncated in the RETH", ipv4_fix(W1, 14 + 20 + 8 + 12 + 8), None, 7,
     "7 RoCEv2 192.168.0.1:49730 > 192.168.0.2:4791 RC_RDMA_WRITE_FIRST dqpn 0x000022 psn 1004 "
     "MALFORMED TRUNC_RETH: truncated in the RETH", "TRUNC_RETH"),
    # A headers-only capture (tcpdump -s 100): the BTH is shown, nothing after it.
    ("cut by the snapshot length", S3[:100], len(S3), 3,
     "3 RoCEv2 192.168.0.1:49730 > 192.168.0.2:4791 RC_SEND_FIRST dqpn 0x000022 psn 1001 "
     "MALFORMED CAPTURE_TRUNCATED: packet cut short by the capture's snapshot length (caplen < len)",
     "CAPTURE_TRUNCATED"),
    ("cut by the snapshot length inside the BTH", S3[:14 + 20 + 8 + 11], len(S3), 3,
     "3 RoCEv2 192.168.0.1:49730 > 192.168.0.2:4791 MALFORMED CAPTURE_TRUNCATED: "
     "packet cut short by the capture's snapshot length (caplen < len)", "CAPTURE_TRUNCATED"),
    ("RoCEv1 cut by the snapshot length", FRAMES[38][:14 + 40 + 12], len(FRAMES[38]), 39,
     "39 RoCEv1 ::ffff:15.0.0.2 > ::ffff:15.0.0.2 RC_RDMA_WRITE_ONLY dqpn 0x00010a psn 10979516 "
     "MALFORMED CAPTURE_TRUNCATED: packet cut short by the capture's snapshot length (caplen < len)",
     "CAPTURE_TRUNCATED"),
    ("reserved opcode", bytes(unknown_op), None, 1,
     "1 RoCEv2 192.168.0.1:49730 > 192.168.0.2:4791 UNKNOWN dqpn 0x000022 psn 1000 "
     "MALFORMED OPCODE_UNKNOWN: reserved or vendor-specific opcode", "OPCODE_UNKNOWN"),
    ("transport version 1", bytes(bad_tver), None, 1,
     "1 RoCEv2 192.168.0.1:49730 > 192.168.0.2:4791 RC_SEND_ONLY dqpn 0x000022 psn 1000 "
     "MALFORMED TVER: BTH transport version is not 0", "TVER"),
    ("Ethernet header cut", FRAMES[0][:10], None, 1,
     "1 - MALFORMED LINK_TRUNCATED: frame shorter than its link-layer header",
     "LINK_TRUNCATED"),
    ("Ethernet header cut by the snapshot length", FRAMES[0][:10], len(FRAMES[0]), 1,
     "1 - MALFORMED CAPTURE_TRUNCATED: packet cut short by the capture's snapshot length (caplen < len)",
     "CAPTURE_TRUNCATED"),
]
for name, bad, origlen, n, line, errname in MALFORMED:
    frames = list(FRAMES)
    frames[n - 1] = bad
    origlens = [len(x) for x in frames]
    if origlen is not None:
        origlens[n - 1] = origlen
    p = save("malformed.pcap", frames, origlens=origlens)
    rc, lines, err = text_lines(p)
    check_eq(rc, 1, name + ": exit status")
    v2 = 38 if line.startswith("%d - " % n) else 39     # unclassifiable: in no RoCE count
    expect_lines(lines, {n: line},
                 ["summary: 41 packets, RoCEv2 %d, RoCEv1 2, non-RoCE skipped 0, malformed 1, "
                  "bad ICRC 0" % v2, lines[-2], "errors: %s 1" % errname], name)
    rc, objs, _ = json_objs(p)
    o = objs[n - 1]
    check_eq((o["frame"], o["status"], o["error"]), (n, "malformed", errname), name + ": JSON fields")
    check_eq(objs[-1]["summary"]["errors"], {errname: 1}, name + ": JSON summary errors")
    # The opcode counts lose exactly the malformed frame's opcode.
    want = dict(BASE_JSON[-1]["summary"]["opcodes"])
    op = BASE_JSON[n - 1]["opcode_name"]
    want[op] -= 1
    if not want[op]:
        del want[op]
    check_eq(objs[-1]["summary"]["opcodes"], want, name + ": JSON summary opcodes")
    # JSON carries the BTH exactly when the text line does.
    keys = ("destqp", "psn")
    check_eq(tuple(o.get(k) for k in keys),
             tuple(BASE_JSON[n - 1][k] for k in keys) if " psn " in line else (None, None),
             name + ": JSON BTH fields")

# ------------------------------------------------- framing variants
V1 = {38, 39}      # 0-based indexes of the RoCEv1 frames (no IP: not in raw-IP files)


def eth_parts(f):
    return f[0:6], f[6:12], struct.unpack(">H", f[12:14])[0], f[14:]


def to_sll(f):
    dst, src, etype, rest = eth_parts(f)
    return struct.pack(">HHH", 0, 1, 6) + src + b"\0\0" + struct.pack(">H", etype) + rest


def to_sll2(f):
    dst, src, etype, rest = eth_parts(f)
    return struct.pack(">HHIHBB", etype, 0, 1, 1, 0, 6) + src + b"\0\0" + rest


def to_vlan(f, tags):
    dst, src, etype, rest = eth_parts(f)
    out = dst + src
    for tpid, vid in tags:
        out += struct.pack(">HH", tpid, vid)
    return out + struct.pack(">H", etype) + rest


def strip(o):
    return {k: v for k, v in o.items() if k not in ("vlan", "frame", "time")}


def same_decode(p, what, keep=None, vlan=None):
    rc, objs, err = json_objs(p)
    check_eq(rc, 0, what + ": exit status (stderr %r)" % err)
    base = [o for i, o in enumerate(BASE_JSON[:-1]) if keep is None or i in keep]
    got = objs[:-1]
    check_eq(len(got), len(base), what + ": number of packets")
    for g, b in zip(got, base):
        check_eq(strip(g), strip(b), "%s: frame %s" % (what, b["frame"]))
        check_eq(g.get("vlan"), vlan, "%s: frame %s vlan" % (what, b["frame"]))
    return objs


same_decode(save("sll.pcap", [to_sll(f) for f in FRAMES], LINKTYPE_LINUX_SLL), "Linux cooked SLL")
same_decode(save("sll2.pcap", [to_sll2(f) for f in FRAMES], LINKTYPE_LINUX_SLL2), "Linux cooked SLL2")
same_decode(save("vlan.pcap", [to_vlan(f, [(0x8100, 100)]) for f in FRAMES]), "802.1Q VLAN", vlan=[100])
same_decode(save("qinq.pcap", [to_vlan(f, [(0x88A8, 200), (0x8100, 100)]) for f in FRAMES]),
            "802.1ad+802.1Q", vlan=[200, 100])
same_decode(save("usec.pcap", FRAMES, nsec=False), "microsecond pcap")
raw = [f[14:] for i, f in enumerate(FRAMES) if i not in V1]
objs = same_decode(save("raw.pcap", raw, LINKTYPE_RAW), "raw IP", keep=set(range(len(FRAMES))) - V1)
check_eq(objs[-1]["summary"]["rocev1"], 0, "raw IP: no RoCEv1")
# LINKTYPE_IPV4 (228) and LINKTYPE_IPV6 (229): one IP version per file.
is_v6 = [f[12:14] == b"\x86\xdd" for f in FRAMES]
v4_idx = {i for i in range(len(FRAMES)) if i not in V1 and not is_v6[i]}
v6_idx = {i for i in range(len(FRAMES)) if is_v6[i]}
check_eq((len(v4_idx), len(v6_idx)), (35, 4), "sample: IPv4 and IPv6 frames")
same_decode(save("ipv4.pcap", [FRAMES[i][14:] for i in sorted(v4_idx)], 228), "LINKTYPE_IPV4", keep=v4_idx)
same_decode(save("ipv6.pcap", [FRAMES[i][14:] for i in sorted(v6_idx)], 229), "LINKTYPE_IPV6", keep=v6_idx)
# BSD loopback (DLT_NULL): 4-byte address family in the writer's byte order.
same_decode(save("null.pcap", [struct.pack("<I", 30 if is_v6[i] else 2) + FRAMES[i][14:]
                               for i in sorted(v4_idx | v6_idx)], 0), "BSD loopback", keep=v4_idx | v6_idx)

# VLAN text lines: the sample's lines with the tag after the version.
rc, lines, _ = text_lines(path("vlan.pcap"))
check_eq(lines[0], BASE_LINES[0].replace(" RoCEv2 ", " RoCEv2 vlan 100 ", 1), "802.1Q: text line 1")
check_eq(lines[38], BASE_LINES[38].replace(" RoCEv1 ", " RoCEv1 vlan 100 ", 1), "802.1Q: text line 39")

# pcapng, written by Wireshark's own editcap (next to $TSHARK).
editcap = os.path.join(os.path.dirname(os.environ.get("TSHARK") or "/usr/bin/tshark"), "editcap")
if check(os.access(editcap, os.X_OK), "editcap found at %s (package wireshark-common)" % editcap):
    p = path("sample.pcapng")
    rc, _, err = run([editcap, "-F", "pcapng", SAMPLE, p])
    check_eq(rc, 0, "editcap -F pcapng (stderr %r)" % err)
    with open(p, "rb") as fp:
        check_eq(fp.read(4), b"\x0a\x0d\x0d\x0a", "pcapng section header block")
    objs = same_decode(p, "pcapng")
    check_eq([o["time"] for o in objs[:-1]], [o["time"] for o in BASE_JSON[:-1]],
             "pcapng: nanosecond timestamps kept")
    rc, lines, _ = text_lines(p)
    check_eq(lines, BASE, "pcapng: text output identical")

# Ethertype IPv6 over an IPv4 packet whose bytes pass for UDP to 4791 at the
# IPv6 offsets: the version nibble decides nothing alone, the frame is IP_VERSION.
v4in6 = bytearray(FRAMES[0])
v4in6[12:14] = b"\x86\xdd"
v4in6[14 + 6] = 17                                     # IPv6 next header = UDP
struct.pack_into(">H", v4in6, 14 + 40 + 2, 4791)       # IPv6 UDP destination port
rc, objs, _ = json_objs(save("v4in6.pcap", [bytes(v4in6)]))
check_eq((rc, objs[0]["status"], objs[0]["error"]), (1, "malformed", "IP_VERSION"),
         "Ethertype IPv6 carrying IPv4: IP_VERSION")

# A fraction field of 1e9 or more (a broken writer) carries into the seconds.
p = path("bigfrac.pcap")
write_pcap(p, LINKTYPE_ETHERNET, [(7, 2000000001, None, FRAMES[0])], nsec=True)
rc, objs, _ = json_objs(p)
check_eq((rc, objs[0]["time"]), (0, "9.000000001"), "ns fraction 2000000001: time")
write_pcap(p, LINKTYPE_ETHERNET, [(7, 1500000, None, FRAMES[0])], nsec=False)
rc, objs, _ = json_objs(p)
check_eq((rc, objs[0]["time"]), (0, "8.500000000"), "us fraction 1500000: time")

# ------------------------------------------------ non-RoCE and --port
udp53 = bytearray(FRAMES[0])
struct.pack_into(">H", udp53, 14 + 20 + 2, 53)          # UDP to port 53
tcp = bytearray(FRAMES[0])
tcp[14 + 9] = 6                                         # protocol TCP
arp = bytes(FRAMES[0][:12]) + b"\x08\x06" + bytes(28)   # an ARP frame
frag = bytearray(FRAMES[0])
struct.pack_into(">H", frag, 14 + 6, 0x0010)            # a later IPv4 fragment
p = save("mixed.pcap", [bytes(udp53), bytes(tcp), arp, bytes(frag)] + FRAMES)
rc, lines, _ = text_lines(p)
check_eq(rc, 0, "non-RoCE frames: exit status")
check_eq(lines[-3], "summary: 45 packets, RoCEv2 39, RoCEv1 2, non-RoCE skipped 4, malformed 0, bad ICRC 0",
         "non-RoCE frames: summary")
check_eq(len(lines), 41 + 3, "non-RoCE frames: no line for skipped frames")
check_eq(lines[0], BASE_LINES[0].replace("1 ", "5 ", 1), "non-RoCE frames: frame numbers count them")

# IPv6 extension headers: UDP to the RoCE port behind them is reported
# (tshark decodes it as RoCE), never skipped silently; other ports, and later
# fragments (no UDP header), are skipped.
V6 = next(f for f in FRAMES if f[12:14] == b"\x86\xdd")     # frame 34


def v6_ext(f, chain):
    """F with extension headers CHAIN [(next-header value, body)] before its UDP header."""
    ip = bytearray(f[14:54])
    exts, nh = b"", [t for t, _ in chain] + [17]
    for i, (_, body) in enumerate(chain):
        exts += bytes([nh[i + 1]]) + body
    ip[6] = nh[0]
    struct.pack_into(">H", ip, 4, len(exts) + len(f) - 54)
    return f[:14] + bytes(ip) + exts + f[54:]


HBH = (0, bytes([0, 1, 4, 0, 0, 0, 0]))                       # hop-by-hop, PadN: 8 bytes
DST = (60, bytes([1, 1, 12]) + bytes(12))                      # destination options: 16 bytes
FRAG0 = (44, bytes([0, 0, 1, 0, 0, 0, 7]))                    # fragment, offset 0, M set
FRAG1 = (44, bytes([0, 0, 8, 0, 0, 0, 7]))                    # fragment, offset 8 bytes
EXT_LINE = ("1 RoCEv2 [fd00::1]:60881 > [fd00::2]:4791 MALFORMED IPV6_EXTHDR: "
            "IPv6 extension headers before UDP (RoCEv2 uses none; not decoded)")
for chain, what in (([HBH], "hop-by-hop"), ([HBH, DST], "hop-by-hop + destination options"),
                    ([FRAG0], "first fragment")):
    rc, lines, _ = text_lines(save("v6ext.pcap", [v6_ext(V6, chain)]))
    check_eq((rc, lines[0], lines[-1]), (1, EXT_LINE, "errors: IPV6_EXTHDR 1"), "IPv6 " + what)
v6_53 = bytearray(v6_ext(V6, [HBH]))
struct.pack_into(">H", v6_53, 14 + 48 + 2, 53)
for frame, what in ((bytes(v6_53), "hop-by-hop, UDP port 53"), (v6_ext(V6, [FRAG1]), "later fragment"),
                    (v6_ext(V6, [HBH])[:14 + 40 + 4], "extension header cut short")):
    rc, lines, _ = text_lines(save("v6ext.pcap", [frame]))
    check_eq((rc, lines[0]), (0, "summary: 1 packets, RoCEv2 0, RoCEv1 0, non-RoCE skipped 1, malformed 0, "
                                 "bad ICRC 0"), "IPv6 " + what + ": skipped")

rc, lines, _ = text_lines(SAMPLE, "--port", "4792")
check_eq(rc, 0, "--port 4792: exit status")
check_eq(lines[-3], "summary: 41 packets, RoCEv2 0, RoCEv1 2, non-RoCE skipped 39, malformed 0, bad ICRC 0",
         "--port 4792: only RoCEv1 decoded")
p = save("port53.pcap", [bytes(udp53)])
rc, objs, _ = json_objs(p, "--port", "53")
check_eq((rc, objs[0]["dport"], objs[0]["status"]), (1, 53, "bad_icrc"),
         "--port 53: decoded as RoCEv2; the ICRC covers the port, so it is BAD")

# ------------------------------------------------------------- --flows
def with_psn(f, psn):
    """Frame F (untagged IPv4) with another PSN and a correct ICRC."""
    f = bytearray(f)
    bth = 14 + 20 + 8
    f[bth + 9:bth + 12] = psn.to_bytes(3, "big")
    f[-4:] = struct.pack(">I", icrc_oracle(bytes(f)))
    return bytes(f)


# Across the 2^24 wrap; 2 skips 1 (a gap), then 1 comes late (a repeat).
psns = [0xFFFFFE, 0xFFFFFF, 0x000000, 0x000002, 0x000001]
p = save("flows.pcap", [with_psn(FRAMES[0], x) for x in psns] + [FRAMES[1]])
rc, lines, _ = text_lines(p, "--flows")
check_eq(rc, 0, "--flows: exit status (every ICRC rewritten correctly)")
# each flow line is followed by its statistics line (tests/inspect_flow_stats.py checks those)
check_eq(lines[len(psns) + 1:len(psns) + 5:2], [
    "flow RoCEv2 192.168.0.1:49730 > 192.168.0.2:4791 dqpn 0x000022 requests: packets 5, "
    "psn 16777214..2, gaps 1, repeats 1",
    "flow RoCEv2 192.168.0.2:49730 > 192.168.0.1:4791 dqpn 0x000011 responses: packets 1, "
    "psn 1000..1000, gaps 0, repeats 0"], "--flows: text lines across the PSN wrap")
check_eq([l[:16] for l in lines[len(psns) + 2:len(psns) + 6:2]], ["  stats: goodput"] * 2,
         "--flows: a statistics line after each flow line")
check_eq(lines[len(psns) + 5][:17], "summary: 6 packet", "--flows: the summary follows the flows")
rc, objs, _ = json_objs(p, "--flows", "--summary")
check_eq(sorted(objs[0]["flow"].pop("stats")), sorted([
    "goodput_bytes", "duration_ns", "goodput_bps", "retransmitted", "retransmitted_bytes", "duplicates",
    "out_of_order", "naks", "rnr_waits", "rnr_wait_ns", "messages", "latency_p50_ns", "latency_p99_ns",
    "latency_max_ns"]), "--flows --json: the statistics object")
check_eq(objs[0], {"flow": {"version": 2, "src": "192.168.0.1", "dst": "192.168.0.2", "sport": 49730,
                            "dport": 4791, "destqp": 0x22, "kind": "requests", "packets": 5,
                            "first_psn": 0xFFFFFE, "max_psn": 2, "gaps": 1, "repeats": 1}},
         "--flows --json: the request flow")
check_eq((len(objs), list(objs[2])), (3, ["summary"]), "--flows --summary --json: 2 flows, then the summary")

# Many flows (the table grows many times): 3000 QPs, two rounds of PSNs.
# Each flow counts exactly its own packets, in order of first appearance.
def with_qpn_psn(f, qpn, psn):
    f = bytearray(f)
    bth = 14 + 20 + 8
    f[bth + 5:bth + 8] = qpn.to_bytes(3, "big")
    f[bth + 9:bth + 12] = psn.to_bytes(3, "big")
    f[-4:] = struct.pack(">I", icrc_oracle(bytes(f)))
    return bytes(f)


NQP = 3000
p = save("manyflows.pcap", [with_qpn_psn(FRAMES[0], q, 100 + r) for r in range(2) for q in range(NQP)])
rc, objs, _ = json_objs(p, "--flows", "--summary")
flows = [o["flow"] for o in objs[:-1]]
check_eq((rc, len(flows)), (0, NQP), "--flows: 3000 flows")
check_eq([f["destqp"] for f in flows], list(range(NQP)), "--flows: order of first appearance")
check_eq({(f["packets"], f["first_psn"], f["max_psn"], f["gaps"], f["repeats"]) for f in flows},
         {(2, 100, 101, 0, 0)}, "--flows: every flow has its two packets")

# ------------------------------------------------------------- exit 2
notpcap = path("notes.txt")
with open(notpcap, "w") as fp:
    fp.write("this is not a capture file\n")
empty = save("empty.pcap", [])
wifi = save("wifi.pcap", FRAMES[:1], linktype=105)
cut = path("cut.pcap")
with open(SAMPLE, "rb") as src, open(cut, "wb") as dst:
    dst.write(src.read()[:24 + 2 * 16 + len(FRAMES[0]) + len(FRAMES[1]) + 20])
USAGE = [
    # (argv after the program, exit status, stderr must start with, stdout lines)
    ([notpcap], 2, "uroce inspect: %s: " % notpcap, 0),
    ([path("missing.pcap")], 2, "uroce inspect: %s: " % path("missing.pcap"), 0),
    ([], 2, "uroce inspect: no capture file given", 0),
    ([SAMPLE, SAMPLE], 2, "uroce inspect: more than one file given", 0),
    (["--port", "0", SAMPLE], 2, "uroce inspect: bad --port '0' (want 1..65535)", 0),
    (["--port", "70000", SAMPLE], 2, "uroce inspect: bad --port '70000' (want 1..65535)", 0),
    (["--port", " 4791", SAMPLE], 2, "uroce inspect: bad --port ' 4791' (want 1..65535)", 0),
    (["--port", "+4791", SAMPLE], 2, "uroce inspect: bad --port '+4791' (want 1..65535)", 0),
    (["--port", "-18446744073709551615", SAMPLE], 2,
     "uroce inspect: bad --port '-18446744073709551615' (want 1..65535)", 0),
    (["--frobnicate", SAMPLE], 2, "", 0),
    (["--check", "--mtu", "1000", SAMPLE], 2,
     "uroce inspect: bad --mtu '1000' (want 256, 512, 1024, 2048 or 4096)", 0),
    (["--check", "--mtu", "+1024", SAMPLE], 2,
     "uroce inspect: bad --mtu '+1024' (want 256, 512, 1024, 2048 or 4096)", 0),
    (["--mtu", "1024", SAMPLE], 2, "uroce inspect: --mtu needs --check", 0),
    ([wifi], 2, "uroce inspect: %s: link type 105 (IEEE802_11) is not supported" % wifi, 0),
    ([cut], 2, "uroce inspect: %s: after frame 2: truncated dump file" % cut, 2 + 3),
    ([empty], 0, "", 3),
]
for argv, status, err_prefix, nlines in USAGE:
    rc, out, err = run([INSPECT] + argv)
    what = "inspect %s" % " ".join(os.path.basename(a) for a in argv)
    check_eq(rc, status, what + ": exit status")
    check(err.startswith(err_prefix) and (status == 0) == (err == ""),
          "%s: stderr %r should start with %r" % (what, err, err_prefix))
    check_eq(len(out.splitlines()), nlines, what + ": stdout lines")
# The file's name is said once, with the system's reason.
rc, _, err = run([INSPECT, path("missing.pcap")])
check_eq(err, "uroce inspect: %s: No such file or directory\n" % path("missing.pcap"),
         "missing file: exact message")
rc, out, _ = run([INSPECT, empty])
check_eq(out.splitlines(), ["summary: 0 packets, RoCEv2 0, RoCEv1 0, non-RoCE skipped 0, malformed 0, bad ICRC 0",
                            "opcodes: none", "errors: none"], "empty capture: summary")
rc, out, _ = run([INSPECT, "--help"])
check_eq((rc, out.splitlines()[0:2]), (0, ["usage: uroce inspect [--json] [--summary] [--flows] [--check [--mtu N]] [--port N]",
                                        "                     [--graph OUT.svg | --timeline] [--flow N] [--follow] FILE.pcap"]),
         "--help")
# --summary: only the summary, same exit status
rc, out, _ = run([INSPECT, "--summary", SAMPLE])
check_eq((rc, out.splitlines()), (0, BASE_SUMMARY), "--summary on the sample")
rc, out, _ = run([INSPECT, "--summary", path("bad_icrc.pcap")])
check_eq((rc, out.splitlines()[0]), (1, "summary: 41 packets, RoCEv2 39, RoCEv1 2, non-RoCE skipped 0, "
                                         "malformed 0, bad ICRC 1"), "--summary on a bad ICRC")
with open(SAMPLE, "rb") as stdin:
    rc, out, _ = run([INSPECT, "--summary", "-"], stdin=stdin)
check_eq((rc, out.splitlines()), (0, BASE_SUMMARY), "'-' reads the capture from stdin")
rc, out, _ = run([INSPECT, "--summary", "--json", SAMPLE])
check_eq((rc, list(json.loads(out)), out.count("\n")), (0, ["summary"], 1), "--summary --json: one object")

shutil.rmtree(TMP)
finish("inspect_errors")
