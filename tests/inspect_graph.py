#!/usr/bin/env python3
"""inspect_graph.py - `uroce inspect --timeline` and `--graph FILE.svg`, exact.

- The sample capture: the whole timeline, line for line (7 flows: the RC
  pair with its RNR NAK, resends and NAKs, UC and a CNP whose source QP is
  unknown, UD with its DETH SrcQP, IPv6, RoCEv1 between two QPs of one
  address); `--flow 4` alone.
- A lossy RC exchange (a SEND MIDDLE lost, a sequence NAK, the resend, an
  RNR NAK and its retry, a duplicate, a READ response sent again; built as
  in inspect_flow_stats.py): every resend marked, the timeline exact.
- The SVG of both: an XML parser reads it back; one <g class="pkt KIND">
  per packet with the frame, flow, kind and label we expect, the lifelines
  by name. Rendered by a real SVG renderer (rsvg-convert): a PNG of the
  SVG's size, and the pixels under an arrow have that arrow's colour.
- A packet with a corrupted ICRC: marked "ICRC BAD", drawn grey, and it
  does not raise its flow's highest PSN (the next packet is no resend).
- 20,001 packets: 20,000 arrows, the rest counted in the picture, on stdout
  and on stderr.
- Usage errors: --flow 0, --flow beyond the last flow, --flow alone,
  --timeline --json, an unwritable SVG path: exit 2.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import (SAMPLE, check, check_eq, finish, inspect, png_pixels, read_pcap,  # noqa: E402
                         write_pcap)
from inspect_lossy import write_lossy  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
tmp = tempfile.mkdtemp(prefix="inspect-graph.")

SAMPLE_TIMELINE = """\
flow 1: 192.168.0.1 qp 0x000011 <> 192.168.0.2 qp 0x000022: 29 packets in 320.000 us
        +0.000 us  frame 1       ->  RC_SEND_ONLY psn 1000 len 11 SE
       +10.000 us  frame 2       <-  RC_ACKNOWLEDGE psn 1000 ACK msn 1
       +20.000 us  frame 3       ->  RC_SEND_FIRST psn 1001 len 256
       +30.000 us  frame 4       ->  RC_SEND_MIDDLE psn 1002 len 256
       +40.000 us  frame 5       ->  RC_SEND_LAST_IMM psn 1003 len 100
       +50.000 us  frame 6       <-  RC_ACKNOWLEDGE psn 1003 ACK msn 2
       +60.000 us  frame 7       ->  RC_RDMA_WRITE_FIRST psn 1004 len 256
       +70.000 us  frame 8       ->  RC_RDMA_WRITE_LAST psn 1005 len 44
       +80.000 us  frame 9       ->  RC_RDMA_WRITE_ONLY_IMM psn 1006 len 8
       +90.000 us  frame 10      <-  RC_ACKNOWLEDGE psn 1006 ACK msn 4
      +100.000 us  frame 11      ->  RC_RDMA_READ_REQUEST psn 1007
      +110.000 us  frame 12      <-  RC_RDMA_READ_RESPONSE_FIRST psn 1007 len 256 ACK msn 5
      +120.000 us  frame 13      <-  RC_RDMA_READ_RESPONSE_MIDDLE psn 1008 len 256
      +130.000 us  frame 14      <-  RC_RDMA_READ_RESPONSE_LAST psn 1009 len 88 ACK msn 5
      +140.000 us  frame 15      ->  RC_COMPARE_SWAP psn 1010
      +150.000 us  frame 16      <-  RC_ATOMIC_ACKNOWLEDGE psn 1010 ACK msn 6
      +160.000 us  frame 17      ->  RC_FETCH_ADD psn 1011
      +170.000 us  frame 18      <-  RC_ATOMIC_ACKNOWLEDGE psn 1011 ACK msn 7
      +180.000 us  frame 19      ->  RC_RDMA_READ_REQUEST psn 1012
      +190.000 us  frame 20      <-  RC_RDMA_READ_RESPONSE_ONLY psn 1012 len 64 ACK msn 8
      +200.000 us  frame 21      ->  RC_SEND_ONLY_INVALIDATE psn 1013 len 3
      +210.000 us  frame 22      <-  RC_ACKNOWLEDGE psn 1013 RNR_NAK 0.01 ms msn 8
      +220.000 us  frame 23      ->  resend RC_SEND_ONLY_INVALIDATE psn 1013 len 3
      +230.000 us  frame 24      <-  RC_ACKNOWLEDGE psn 1013 ACK msn 9
      +240.000 us  frame 25      ->  RC_SEND_ONLY psn 1015 len 4
      +250.000 us  frame 26      <-  RC_ACKNOWLEDGE psn 1014 NAK PSN_SEQ_ERR msn 9
      +260.000 us  frame 27      ->  resend RC_RDMA_WRITE_ONLY psn 1014 len 16
      +270.000 us  frame 28      <-  RC_ACKNOWLEDGE psn 1014 NAK REM_ACCESS_ERR msn 9
      +320.000 us  frame 33      <-  CNP psn 0
flow 2: 192.168.0.1 qp ? port 57822 <> 192.168.0.2 qp 0x000066: 2 packets in 10.000 us
        +0.000 us  frame 29      ->  UC_SEND_ONLY psn 200 len 7
       +10.000 us  frame 30      ->  UC_RDMA_WRITE_ONLY psn 201 len 4
flow 3: 192.168.0.1 qp 0x000033 <> 192.168.0.2 qp 0x000044: 2 packets in 10.000 us
        +0.000 us  frame 31      ->  UD_SEND_ONLY psn 300 len 8
       +10.000 us  frame 32      ->  UD_SEND_ONLY_IMM psn 301 len 6 SE
flow 4: [fd00::1] qp 0x000123 <> [fd00::2] qp 0x000456: 4 packets in 30.000 us
        +0.000 us  frame 34      ->  RC_SEND_ONLY psn 77 len 11 SE
       +10.000 us  frame 35      <-  RC_ACKNOWLEDGE psn 77 ACK msn 1
       +20.000 us  frame 36      ->  RC_RDMA_WRITE_ONLY psn 78 len 8
       +30.000 us  frame 37      <-  RC_ACKNOWLEDGE psn 78 ACK msn 2
flow 5: 10.0.17.1 qp ? port 0 <> 10.0.18.1 qp 0x000118: 1 packets in 0.000 us
        +0.000 us  frame 38      ->  CNP psn 0
flow 6: ::ffff:15.0.0.2 qp 0x000109 <> ::ffff:15.0.0.2 qp 0x00010a: 2 packets in 10.000 us
        +0.000 us  frame 39      ->  RC_RDMA_WRITE_ONLY psn 10979516 len 5
       +10.000 us  frame 40      <-  RC_ACKNOWLEDGE psn 10979520 ACK msn 5
flow 7: 192.168.0.7 qp ? port 49152 <> 192.168.0.7 qp 0x0000d3: 1 packets in 0.000 us
        +0.000 us  frame 41      ->  UC_SEND_ONLY psn 13571856 len 18
"""
SUMMARY_LINE = ("summary: 41 packets, RoCEv2 39, RoCEv1 2, non-RoCE skipped 0, malformed 0, "
                "bad ICRC 0")


def timeline_of(out):
    """The timeline lines of inspect's stdout (before the summary)."""
    return "".join(l + "\n" for l in out.splitlines() if not l.startswith(("summary:", "opcodes:", "errors:")))


def parse_tl(text):
    """{frame: (direction, label)} of timeline text."""
    got = {}
    for l in text.splitlines():
        if l.startswith("  "):
            f = l.split()
            got[int(f[3])] = (f[4], " ".join(f[5:]))
    return got


def svg_packets(path):
    """(root, [(frame, flow, kind, title)] in drawing order) of an SVG file."""
    root = ET.parse(path).getroot()
    pk = []
    for g in root.iter(SVG + "g"):
        cls = g.get("class", "").split()
        if cls[:1] == ["pkt"]:
            pk.append((int(g.get("data-frame")), int(g.get("data-flow")), cls[1],
                       g.find(SVG + "title").text))
    return root, pk


def lifelines(root):
    out = []
    for g in root.iter(SVG + "g"):
        if g.get("class") == "lifeline":
            out.append(" ".join(t.text for t in g.findall(SVG + "text")))
    return out


# ---- the sample: timeline ----
rc, out, err = inspect(SAMPLE, "--timeline")
check_eq(rc, 0, "--timeline sample: exit status")
check_eq(timeline_of(out), SAMPLE_TIMELINE, "--timeline sample: the whole timeline")
check(SUMMARY_LINE in out, "--timeline sample: the summary follows")

rc, out, err = inspect(SAMPLE, "--timeline", "--flow", "4")
check_eq((rc, timeline_of(out)), (0, "".join(
    l + "\n" for l in SAMPLE_TIMELINE.splitlines()[36:41])), "--timeline --flow 4: that flow only")

# ---- the sample: SVG ----
svg = os.path.join(tmp, "sample.svg")
rc, out, err = inspect(SAMPLE, "--graph", svg)
check_eq((rc, out.splitlines()[0]), (0, "graph: %s: 41 packets drawn" % svg), "--graph sample: stdout")
root, pk = svg_packets(svg)
tl = parse_tl(SAMPLE_TIMELINE)
check_eq([p[0] for p in pk], list(range(1, 42)), "--graph sample: one arrow per packet, in time order")
check_eq({p[0]: p[3] for p in pk}, {f: "frame %d: %s" % (f, tl[f][1]) for f in tl},
         "--graph sample: each arrow's label")
flow_of = {}
fl = 0
for l in SAMPLE_TIMELINE.splitlines():
    if l.startswith("flow "):
        fl = int(l.split()[1].rstrip(":"))
    else:
        flow_of[int(l.split()[3])] = fl
check_eq({p[0]: p[1] for p in pk}, flow_of, "--graph sample: each arrow's flow")
kinds = {f: "req" for f in range(1, 42)}
kinds.update({f: "resp" for f in (2, 6, 10, 12, 13, 14, 16, 18, 20, 24, 35, 37, 40)})
kinds.update({22: "rnr", 23: "resend", 26: "nak", 27: "resend", 28: "nak", 33: "cnp", 38: "cnp"})
check_eq({p[0]: p[2] for p in pk}, kinds, "--graph sample: each arrow's kind")
check_eq(lifelines(root), [
    "192.168.0.1 qp 0x000011", "192.168.0.2 qp 0x000022", "192.168.0.1 qp ? port 57822",
    "192.168.0.2 qp 0x000066", "192.168.0.1 qp 0x000033", "192.168.0.2 qp 0x000044",
    "fd00::1 qp 0x000123", "fd00::2 qp 0x000456", "10.0.17.1 qp ? port 0", "10.0.18.1 qp 0x000118",
    "::ffff:15.0.0.2 qp 0x000109", "::ffff:15.0.0.2 qp 0x00010a", "192.168.0.7 qp ? port 49152",
    "192.168.0.7 qp 0x0000d3"], "--graph sample: the lifelines, in order of appearance")

# rendered by a real SVG renderer: the PNG has the SVG's size, and the
# middle of frame 22's arrow (RNR NAK) is orange, frame 26's (NAK) red.
rsvg = shutil.which("rsvg-convert")
if check(rsvg is not None, "rsvg-convert installed (librsvg2-bin, scripts/install-deps)"):
    png = os.path.join(tmp, "sample.png")
    p = subprocess.run([rsvg, "-o", png, svg], stderr=subprocess.PIPE)
    check_eq((p.returncode, p.stderr), (0, b""), "rsvg-convert renders the sample SVG")
    with open(png, "rb") as f:
        w, h = struct.unpack(">II", f.read(24)[16:24])
    check_eq((w, h), (int(root.get("width")), int(root.get("height"))), "PNG size = SVG size")

    def pixel(x, y):
        """The rendered pixel (x, y): a 40x20 window around it, rendered alone."""
        p = subprocess.run([rsvg, "--page-width", "40", "--page-height", "20", "--left=%d" % (20 - x),
                            "--top=%d" % (10 - y), "-o", png, svg], stderr=subprocess.PIPE)
        check_eq((p.returncode, p.stderr), (0, b""), "rsvg-convert renders the window at %d,%d" % (x, y))
        return png_pixels(png)[2][10][20]

    def line_of(frame):
        for g in root.iter(SVG + "g"):
            if g.get("data-frame") == str(frame):
                ln = g.find(SVG + "line")
                return int(ln.get("x1")), int(ln.get("x2")), int(ln.get("y1")), ln.get("stroke")
    for frame, colour in ((22, "#ef6c00"), (26, "#c62828"), (1, "#1f4e9c"), (23, "#8e24aa")):
        x1, x2, y, stroke = line_of(frame)
        check_eq(stroke, colour, "frame %d: stroke colour" % frame)
        want = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
        # a 1.5 px line centred on y covers the rows y-1 and y by 3/4 each
        x = (x1 + x2) // 2 + 7 if frame != 23 else min(x1, x2) + 2  # dashed: a dash's start
        got = pixel(x, y)
        print("frame %d pixel %r" % (frame, got))
        blend = tuple(round(0.75 * c + 0.25 * 255) for c in want)
        check(all(abs(a - b) <= 12 for a, b in zip(got, blend)),
              "frame %d: pixel (%d,%d) is %r, the arrow's colour blended 3/4 on white is %r"
              % (frame, x, y, got, blend))
    check_eq(pixel(w - 30, 30), (255, 255, 255), "background pixel is white")

rc, out, err = inspect(SAMPLE, "--graph", svg, "--flow", "6")
root, pk = svg_packets(svg)
check_eq((rc, [(p[0], p[2]) for p in pk], lifelines(root)),
         (0, [(39, "req"), (40, "resp")], ["::ffff:15.0.0.2 qp 0x000109", "::ffff:15.0.0.2 qp 0x00010a"]),
         "--graph --flow 6: the RoCEv1 pair only, two QPs of one address")

# ---- a lossy RC exchange ----
lpath = os.path.join(tmp, "lossy.pcap")
write_lossy(lpath)
LOSSY = """\
flow 1: 192.168.0.1 qp 0x000011 <> 192.168.0.2 qp 0x000022: 18 packets in 31.000 us
        +0.000 us  frame 1       ->  RC_SEND_ONLY psn 100 len 40 SE
        +1.000 us  frame 2       <-  RC_ACKNOWLEDGE psn 100 ACK msn 1
        +2.000 us  frame 3       ->  RC_SEND_FIRST psn 101 len 256
        +4.000 us  frame 4       ->  RC_SEND_LAST psn 103 len 100
        +5.000 us  frame 5       <-  RC_ACKNOWLEDGE psn 102 NAK PSN_SEQ_ERR msn 1
        +6.000 us  frame 6       ->  resend RC_SEND_MIDDLE psn 102 len 256
        +7.000 us  frame 7       ->  resend RC_SEND_LAST psn 103 len 100
        +8.000 us  frame 8       <-  RC_ACKNOWLEDGE psn 103 ACK msn 2
        +9.000 us  frame 9       ->  RC_SEND_ONLY psn 104 len 20 SE
       +10.000 us  frame 10      <-  RC_ACKNOWLEDGE psn 104 RNR_NAK 0.01 ms msn 2
       +25.000 us  frame 11      ->  resend RC_SEND_ONLY psn 104 len 20 SE
       +25.001 us  frame 12      ->  resend RC_SEND_ONLY psn 104 len 20 SE
       +26.000 us  frame 13      <-  RC_ACKNOWLEDGE psn 104 ACK msn 3
       +27.000 us  frame 14      ->  RC_RDMA_READ_REQUEST psn 105
       +28.000 us  frame 15      <-  RC_RDMA_READ_RESPONSE_FIRST psn 105 len 256 ACK msn 4
       +29.000 us  frame 16      <-  RC_RDMA_READ_RESPONSE_MIDDLE psn 106 len 256
       +30.000 us  frame 17      <-  RC_RDMA_READ_RESPONSE_LAST psn 107 len 88 ACK msn 4
       +31.000 us  frame 18      <-  resend RC_RDMA_READ_RESPONSE_MIDDLE psn 106 len 256
"""
rc, out, err = inspect(lpath, "--timeline")
check_eq((rc, timeline_of(out)), (0, LOSSY), "--timeline lossy: exact")
lsvg = os.path.join(tmp, "lossy.svg")
rc, out, err = inspect(lpath, "--graph", lsvg)
root, pk = svg_packets(lsvg)
check_eq([(p[0], p[2]) for p in pk],
         [(1, "req"), (2, "resp"), (3, "req"), (4, "req"), (5, "nak"), (6, "resend"), (7, "resend"),
          (8, "resp"), (9, "req"), (10, "rnr"), (11, "resend"), (12, "resend"), (13, "resp"),
          (14, "req"), (15, "resp"), (16, "resp"), (17, "resp"), (18, "resend")],
         "--graph lossy: kinds, with the resends marked")
# the time column: microseconds since the first packet drawn
times = [t.text for t in root.iter(SVG + "text") if t.get("x") == "10" and t.text and t.text[0].isdigit()]
check_eq(times[:4] + times[-2:], ["0.000", "1.000", "2.000", "4.000", "30.000", "31.000"],
         "--graph lossy: time column")
if rsvg:
    p = subprocess.run([rsvg, "-o", os.path.join(tmp, "lossy.png"), lsvg], stderr=subprocess.PIPE)
    check_eq((p.returncode, p.stderr), (0, b""), "rsvg-convert renders the lossy SVG")

# ---- a corrupted ICRC ----
lt, ns, recs = read_pcap(SAMPLE)
bad = bytearray(recs[2][4])
bad[-10] ^= 0x01  # a payload byte of frame 3 (SEND FIRST psn 1001)
recs[2] = recs[2][:4] + (bytes(bad),)
bpath = os.path.join(tmp, "bad.pcap")
write_pcap(bpath, lt, [(r[0], r[1], None, r[4]) for r in recs], nsec=ns)
rc, out, err = inspect(bpath, "--timeline", "--flow", "1")
got = parse_tl(timeline_of(out))
check_eq((rc, got[3], got[4]), (1, ("->", "RC_SEND_FIRST psn 1001 len 256 ICRC BAD"),
                                ("->", "RC_SEND_MIDDLE psn 1002 len 256")),
         "bad ICRC: marked, exit 1; it does not make the next packet a resend")
rc, out, err = inspect(bpath, "--graph", svg, "--flow", "1")
root, pk = svg_packets(svg)
check_eq([p[2] for p in pk if p[0] in (3, 4)], ["bad", "req"], "bad ICRC: drawn as bad")

# ---- more packets than one picture takes ----
many = [(i // 1000000, (i % 1000000) * 1000, None, recs[0][4]) for i in range(20001)]
mpath = os.path.join(tmp, "many.pcap")
write_pcap(mpath, lt, many)
msvg = os.path.join(tmp, "many.svg")
rc, out, err = inspect(mpath, "--graph", msvg)
check_eq((rc, out.splitlines()[0]), (0, "graph: %s: 20000 packets drawn, 1 not" % msvg),
         "20001 packets: stdout")
check("1 packets not drawn (at most 20000 are); choose a flow with --flow" in err, "20001 packets: stderr: " + err)
root, pk = svg_packets(msvg)
check_eq((len(pk), pk[-1][0], pk[-1][2], pk[1][2]), (20000, 20000, "resend", "resend"),
         "20001 packets: 20000 arrows, frames 1..20000, the repeats are resends")
check(any(t.text and t.text.startswith("1 more packets not drawn") for t in root.iter(SVG + "text")),
      "20001 packets: the SVG says what it left out")

# ---- usage errors ----
for args, msg in ((["--timeline", "--flow", "0"], "bad --flow '0'"),
                  (["--timeline", "--flow", "8"], "no flow 8 (the capture has 7)"),
                  (["--timeline", "--flow", "x"], "bad --flow 'x'"),
                  (["--flow", "1"], "--flow needs --graph or --timeline"),
                  (["--timeline", "--json"], "--timeline has no JSON form"),
                  (["--graph", os.path.join(tmp, "no", "such", "dir.svg")], "No such file or directory")):
    rc, out, err = inspect(SAMPLE, *args)
    check_eq(rc, 2, "%s: exit 2" % args)
    check(msg in err, "%s: stderr names the error (%r): %r" % (args, msg, err))

shutil.rmtree(tmp)
finish("inspect_graph")
