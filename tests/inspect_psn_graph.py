#!/usr/bin/env python3
"""inspect_psn_graph.py - `uroce inspect --psn-graph` and `--latency-svg`, exact.

- A lossy RC exchange (tests/inspect_lossy.py: a SEND MIDDLE
  lost before the capture, a sequence NAK, the late packet and a resend,
  an RNR NAK and its retry 15 us later, a duplicate, a READ with a
  response sent again): every point of --json's columns where we put it,
  the resends by cause, the RNR wait, the ACK line, the y range = the PSN
  range of --flows; the resend marks of the SVG (data-n summed) = the
  retransmitted count of --flows; the SVG read back by an XML parser with
  the element counts we expect, and rendered by rsvg-convert. The latency
  histogram: its bins hold exactly the four latencies --flows takes its
  percentiles from, in the bins an independent computation gives.
- The kernel rxe captures and the sample: one panel per RC/UC request
  flow, its y range and resend count equal to --flows; --flow N keeps
  flow N only; the histogram's counts sum to the messages of --flows.
- A generated 100,000-packet capture whose PSNs wrap past 2^24, with
  sequence-NAK, RNR and timeout resends at known places: the counts by
  cause exact, the y range unwrapped, the SVG under 2 MB.
- Timestamps that go back (an RNR retry stamped before its NAK): no RNR
  wait drawn, as --flows counts none; the SVG still parses.
- Usage errors: --flow without a drawing option, an unwritable path.

With --capture FILE --port N only the comparison with --flows runs, on a
real capture (tests/inspect_psn_graph_live.sh).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import (SAMPLE, TOP_SRCDIR, check, check_eq, finish, inspect, png_pixels,  # noqa: E402
                         write_pcap)
from inspect_lossy import P, aeth, cap, make, write_lossy  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
tmp = tempfile.mkdtemp(prefix="inspect-psn-graph.")
RETX = ("retx_seq", "retx_rnr", "retx_timeout")



PORT_ARGS = []     # --port N of a real capture


def run_json(path, *args):
    rc, out, err = inspect(path, "--json", *(PORT_ARGS + list(args)))
    objs = [json.loads(line) for line in out.splitlines()]
    return rc, objs, err


def flows_of(path):
    """--flows --json: the flow objects."""
    rc, objs, err = run_json(path, "--flows", "--summary")
    check_eq(rc, 0, "%s: --flows exit status" % path)
    return [o["flow"] for o in objs if "flow" in o]


def svg_root(path, what):
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as e:
        check(False, "%s: the SVG parses as XML: %s" % (what, e))
        return ET.Element("svg")


def groups(root, cls):
    return [g for g in root.iter() if g.get("class") == cls]


def marks_n(panel, series):
    """data-n summed over the marks of SERIES in PANEL."""
    return sum(int(r.get("data-n")) for g in panel.iter(SVG + "g") if g.get("class") == "s-" + series
               for r in g.findall(SVG + "rect"))


def render(svg, what):
    rsvg = shutil.which("rsvg-convert")
    if not check(rsvg is not None, "rsvg-convert installed (librsvg2-bin, scripts/install-deps)"):
        return
    p = subprocess.run([rsvg, "-o", svg + ".png", svg], stderr=subprocess.PIPE)
    check_eq((p.returncode, p.stderr), (0, b""), "%s: rsvg-convert renders it" % what)


def edges():
    """Lower bin edges of latency_hist.h, computed here: round(10^(k/10)) ns."""
    return [int(10 ** (k / 10) + 0.5) for k in range(191)]


def bin_of(v):
    if v == 0:
        return (0, 1)
    e = edges()
    k = max(i for i in range(len(e)) if e[i] <= v)
    return (e[k], e[k + 1])


# ---- against --flows: any capture ------------------------------------------


def compare(path, what, flow=None):
    """Panels of PATH (or of --flow FLOW) against --flows; returns the panels."""
    fl = flows_of(path)
    out_svg = os.path.join(tmp, os.path.basename(path) + ".svg")
    args = ["--psn-graph", out_svg, "--latency-svg", out_svg + ".lat.svg"]
    if flow:
        args += ["--flow", str(flow)]
    rc, objs, err = run_json(path, *args)
    check_eq((rc, err), (0, ""), "%s: exit status, stderr" % what)
    pg = [o["psn_graph"] for o in objs if "psn_graph" in o]
    lh = [o["latency_histogram"] for o in objs if "latency_histogram" in o]
    by_name = {}
    for f in fl:
        name = "%s %s > %s dqpn 0x%06x" % (
            "RoCEv%d" % f["version"],
            ("[%s]:%d" % (f["src"], f["sport"]) if ":" in f["src"] else "%s:%d" % (f["src"], f["sport"]))
            if f["version"] == 2 else f["src"],
            ("[%s]:%d" % (f["dst"], f["dport"]) if ":" in f["dst"] else "%s:%d" % (f["dst"], f["dport"]))
            if f["version"] == 2 else f["dst"], f["destqp"])
        by_name.setdefault(name, []).append(f)
    msgs = 0
    for g in pg:
        req = [f for f in by_name.get(g["name"], []) if f["kind"] == "requests"]
        if not check_eq(len(req), 1, "%s: panel %s is a request flow of --flows" % (what, g["name"])):
            continue
        req = req[0]
        msgs += req["stats"]["messages"]
        check_eq(sum(g["counts"][k] for k in RETX), req["stats"]["retransmitted"],
                 "%s: %s resends = --flows" % (what, g["name"]))
        check_eq(len(g["rnr_waits"]), req["stats"]["rnr_waits"], "%s: %s RNR waits = --flows" % (what, g["name"]))
        check_eq((g["psn_first"], g["counts"]["req"] + g["counts"]["dup"] + sum(g["counts"][k] for k in RETX)),
                 (req["first_psn"], req["packets"]), "%s: %s first PSN and packets" % (what, g["name"]))
        check(g["psn_min"] <= req["first_psn"] and g["psn_max"] >= req["max_psn"],
              "%s: %s y range %d..%d holds the request PSNs %d..%d" % (
                  what, g["name"], g["psn_min"], g["psn_max"], req["first_psn"], req["max_psn"]))
        for k, v in g["series"].items():
            check_eq(sum(c[3] for c in v), g["counts"][k], "%s: series %s sums to its count" % (what, k))
    check_eq(sum(b["count"] for b in lh[0]["bins"]) if lh else -1, msgs,
             "%s: histogram sums to the messages of --flows" % what)
    if not flow:
        check_eq(sum(g["counts"]["read_retx"] for g in pg),
                 sum(f["stats"]["retransmitted"] for f in fl if f["kind"] == "responses"),
                 "%s: READ responses again = --flows retransmitted of the response flows" % what)
        check_eq(sum(g["counts"]["read_dup"] + g["counts"]["dup"] for g in pg),
                 sum(f["stats"]["duplicates"] for f in fl), "%s: duplicates = --flows duplicates" % what)
    root = svg_root(out_svg, what)
    check_eq(sorted(int(p.get("data-flow")) for p in groups(root, "panel")), sorted(g["flow"] for g in pg),
             "%s: one SVG panel per request flow" % what)
    return pg



# --capture FILE --port N: only this, on a real capture (inspect_psn_graph_live.sh)
if len(sys.argv) == 5 and sys.argv[1] == "--capture" and sys.argv[3] == "--port":
    PORT_ARGS[:] = ["--port", sys.argv[4]]
    pg = compare(sys.argv[2], "capture")
    retx = sum(sum(g["counts"][k] for k in RETX) for g in pg)
    check(retx > 0, "capture: resends drawn: %d" % retx)
    for g in pg:
        print("flow %d %s: %s" % (g["flow"], g["name"], " ".join("%s %d" % kv for kv in g["counts"].items())))
    render(os.path.join(tmp, os.path.basename(sys.argv[2]) + ".svg"), "capture SVG")
    render(os.path.join(tmp, os.path.basename(sys.argv[2]) + ".svg.lat.svg"), "capture latency SVG")
    shutil.rmtree(tmp)
    finish("inspect_psn_graph --capture")

# ---- the lossy exchange ----------------------------------------------------

path = os.path.join(tmp, "lossy.pcap")
write_lossy(path)
svg, lsvg = os.path.join(tmp, "lossy.svg"), os.path.join(tmp, "lossy-latency.svg")
fl = flows_of(path)

rc, out, err = inspect(path, "--psn-graph", svg, "--latency-svg", lsvg)
check_eq((rc, err), (0, ""), "lossy: exit status and stderr")
check_eq(out.splitlines()[:2], ["psn-graph: %s: 1 flows drawn" % svg, "latency-svg: %s: 4 messages" % lsvg],
         "lossy: what was written")

rc, objs, err = run_json(path, "--psn-graph", svg, "--latency-svg", lsvg)
check_eq(rc, 0, "lossy --json: exit status")
pg = [o["psn_graph"] for o in objs if "psn_graph" in o]
lh = [o["latency_histogram"] for o in objs if "latency_histogram" in o]
check_eq((len(pg), len(lh), list(objs[-1])), (1, 1, ["summary"]), "lossy --json: objects")
g = pg[0]
# 1000 columns over 31001 ns: column of t = t * 1000 // 31001
col = lambda t: t * 1000 // 31001  # noqa: E731
check_eq((g["flow"], g["name"], g["first_frame"], g["t0_ns"], g["span_ns"], g["columns"]),
         (1, "RoCEv2 192.168.0.1:49730 > 192.168.0.2:4791 dqpn 0x000022", 1, 1000000000, 31000, 1000),
         "lossy: the panel")
check_eq(g["counts"], {"req": 6, "msg_end": 4, "retx_seq": 1, "retx_rnr": 1, "retx_timeout": 0, "dup": 1,
                       "read_resp": 3, "read_retx": 1, "read_dup": 0, "ack": 7, "nak_seq": 1, "nak_rnr": 1, "nak_fatal": 0},
         "lossy: points per series")
req_flow, resp_flow = fl[0], fl[1]
check_eq(sum(g["counts"][k] for k in RETX), req_flow["stats"]["retransmitted"],
         "lossy: resends = --flows retransmitted (request flow)")
check_eq(g["counts"]["read_retx"], resp_flow["stats"]["retransmitted"],
         "lossy: READ responses again = --flows retransmitted (response flow)")
check_eq(g["counts"]["dup"], req_flow["stats"]["duplicates"], "lossy: duplicates = --flows")
check_eq((g["psn_first"], g["psn_min"], g["psn_max"]),
         (req_flow["first_psn"], min(req_flow["first_psn"], resp_flow["first_psn"]),
          max(req_flow["max_psn"], resp_flow["max_psn"])), "lossy: y range = the PSN range of --flows")
check_eq(g["rnr_waits"], [[10000, 25000]], "lossy: the RNR wait, NAK to retry")
check_eq(g["rnr_bands"], [[col(10000), col(25000), 1]], "lossy: the RNR wait's columns")
S = g["series"]
check_eq(S["req"], [[col(t), p, p, 1] for t, p in ((0, 100), (2000, 101), (4000, 103), (6000, 102),
                                                     (9000, 104), (27000, 105))], "lossy: requests")
check_eq(S["msg_end"], [[col(t), p, p, 1] for t, p in ((0, 100), (4000, 103), (9000, 104), (27000, 105))],
         "lossy: message ends")
check_eq((S["retx_seq"], S["retx_rnr"], S["retx_timeout"], S["dup"]),
         ([[col(7000), 103, 103, 1]], [[col(25000), 104, 104, 1]], [], [[col(25001), 104, 104, 1]]),
         "lossy: resends by cause, the duplicate")
check_eq((S["read_resp"], S["read_retx"]),
         ([[col(28000), 105, 105, 1], [col(29000), 106, 106, 1], [col(30000), 107, 107, 1]],
          [[col(31000), 106, 106, 1]]), "lossy: READ responses")
check_eq(S["ack"], [[col(t), p, p, 1] for t, p in ((1000, 100), (5000, 101), (8000, 103), (26000, 104),
                                                     (28000, 105), (29000, 106), (30000, 107))],
         "lossy: the ACK line (a NAK acknowledges the PSN before its own)")
check_eq((S["nak_seq"], S["nak_rnr"], S["nak_fatal"]),
         ([[col(5000), 102, 102, 1]], [[col(10000), 104, 104, 1]], []), "lossy: NAKs")
for k, v in S.items():
    check_eq(sum(c[3] for c in v), g["counts"][k], "lossy: series %s sums to its count" % k)

# the SVG read back
root = svg_root(svg, "lossy")
panels = groups(root, "panel")
check_eq([p.get("data-flow") for p in panels], ["1"], "lossy SVG: one panel, flow 1")
check_eq(len(groups(root, "legend-item")), 14, "lossy SVG: 13 series and the RNR wait in the legend")
if panels:
    pn = panels[0]
    check_eq(sum(marks_n(pn, k) for k in RETX), req_flow["stats"]["retransmitted"],
             "lossy SVG: resend marks = --flows retransmitted")
    for k in ("retx_seq", "retx_rnr", "retx_timeout", "dup", "read_retx", "read_dup", "nak_seq", "nak_rnr",
              "nak_fatal"):
        check_eq(marks_n(pn, k), g["counts"][k], "lossy SVG: %s marks" % k)
    rnr = [r for r in pn.iter(SVG + "rect") if r.get("class") == "rnr-wait"]
    check_eq([r.get("data-n") for r in rnr], ["1"], "lossy SVG: one RNR wait band")
    paths = {p.get("class"): p.get("d") for p in pn.iter(SVG + "path") if p.get("class")}
    check_eq(sorted(paths), ["s-ack", "s-msg_end", "s-read_resp", "s-req"], "lossy SVG: the paths")
    check_eq(paths.get("s-req", "").count("M"), len(S["req"]), "lossy SVG: one request bar per column")
    check_eq(paths.get("s-read_resp", "").count("M"), len(S["read_resp"]), "lossy SVG: READ response bars")
    check_eq(paths.get("s-ack", "").count("V"), len(S["ack"]) - 1, "lossy SVG: the ACK line's steps")
    texts = [t.text for t in root.iter(SVG + "text")]
    check("time since the flow's first packet (\u00b5s)" in texts, "lossy SVG: the time axis in us: %s" % texts)
    check(all(str(v) in texts for v in range(100, 108)), "lossy SVG: PSN ticks 100..107")
with open(svg, "rb") as f:
    body = f.read()
check(b"<script" not in body and b"href" not in body, "lossy SVG: no script, no external reference")
render(svg, "lossy SVG")


def pixel(svg, x, y):
    """RGB of pixel (X, Y) of SVG as rsvg-convert renders it (a 3x3 window around it)."""
    png = svg + ".px.png"
    p = subprocess.run([shutil.which("rsvg-convert") or "rsvg-convert", "--page-width", "3", "--page-height", "3",
                        "--left=%d" % (1 - x), "--top=%d" % (1 - y), "-o", png, svg], stderr=subprocess.PIPE)
    check_eq((p.returncode, p.stderr), (0, b""), "rsvg-convert renders the window at %d,%d" % (x, y))
    return png_pixels(png)[2][1][1]


if shutil.which("rsvg-convert") and panels:
    # the centre of each resend mark has its series' colour; the RNR band its own
    for k, rgb in (("retx_seq", (0xd6, 0x27, 0x28)), ("retx_rnr", (0xef, 0x6c, 0x00))):
        for g_ in panels[0].iter(SVG + "g"):
            if g_.get("class") == "s-" + k:
                for r in g_.findall(SVG + "rect"):
                    x = float(r.get("x")) + float(r.get("width")) / 2
                    y = float(r.get("y")) + float(r.get("height")) / 2
                    check_eq(pixel(svg, int(x), int(y)), rgb, "lossy PNG: the %s mark at %d,%d" % (k, x, y))
    band = [r for r in panels[0].iter(SVG + "rect") if r.get("class") == "rnr-wait"][0]
    bx, by = float(band.get("x")) + float(band.get("width")) / 2, float(band.get("y")) + 20
    got = pixel(svg, int(bx), int(by))
    check(all(abs(a - b) <= 2 for a, b in zip(got, (255, 224, 179))),
          "lossy PNG: the RNR band (#ffcc80 at 0.6 over white) at %d,%d: %r" % (bx, by, got))

# the latency histogram: the four latencies of --flows (1, 6, 17 and 3 us)
h = lh[0]
check_eq((h["flows"], h["messages"], h["min_ns"], h["max_ns"], h["bins_per_decade"]),
         (1, req_flow["stats"]["messages"], 1000, 17000, 10), "lossy: histogram head")
check_eq(sum(b["count"] for b in h["bins"]), req_flow["stats"]["messages"], "lossy: histogram sums to messages")
full = [(b["lo_ns"], b["hi_ns"]) for b in h["bins"] if b["count"]]
check_eq(sorted(full), sorted(bin_of(v) for v in (1000, 6000, 17000, 3000)), "lossy: the bins of the latencies")
check_eq([(b["lo_ns"], b["hi_ns"]) for b in h["bins"]][:3], [(1000, 1259), (1259, 1585), (1585, 1995)],
         "lossy: bins are log-scaled, 10 per decade")
lroot = svg_root(lsvg, "latency")
bars = [r for r in lroot.iter(SVG + "rect") if r.get("class") == "bin"]
check_eq(sorted((int(r.get("data-lo")), int(r.get("data-hi")), int(r.get("data-n"))) for r in bars),
         sorted((lo, hi, 1) for lo, hi in full), "latency SVG: one bar per bin with messages")
render(lsvg, "latency SVG")

# ---- kernel rxe captures and the sample ------------------------------------

for name in ("rxe-ipv4.pcap", "rxe-ipv6.pcap"):
    pg = compare(os.path.join(TOP_SRCDIR, "tests", "data", name), name)
    check(len(pg) >= 2, "%s: request flows drawn: %d" % (name, len(pg)))
# rxe-ipv4: the 5-packet RC SEND of 4097 bytes at MTU 1024 (QP 0x12)
pg = compare(os.path.join(TOP_SRCDIR, "tests", "data", "rxe-ipv4.pcap"), "rxe-ipv4 --flow 2", flow=2)
check_eq([(g["flow"], g["psn_min"], g["psn_max"], g["counts"]["req"], g["counts"]["msg_end"]) for g in pg],
         [(2, 3046002, 3046006, 5, 1)], "rxe-ipv4 --flow 2: one panel, its PSNs and message end")
pg = compare(SAMPLE, "sample")
check_eq([g["flow"] for g in pg], [1, 2, 4, 6, 7], "sample: RC/UC request flows (UD has no PSN order)")
pg = compare(SAMPLE, "sample --flow 1", flow=1)
check_eq([(g["flow"], g["counts"]["retx_rnr"], g["counts"]["nak_rnr"], g["counts"]["nak_seq"],
           g["counts"]["nak_fatal"], g["rnr_waits"]) for g in pg],
         [(1, 1, 1, 1, 1, [[210000, 220000]])], "sample --flow 1: the RNR retry, the NAKs")

# ---- 100,000 packets, PSNs across 2^24 --------------------------------------

N = 100000
START = (1 << 24) - 30000
SEQ_AT, RNR_AT, TMO_AT = set(range(5000, 90000, 10000)), {12345, 54321}, {33333, 77777}
frames, t, i, msn = [], 0, 0, 0
req_tmpl = type(P[0])(P[0].rec, cap.linktype, cap.port)    # SEND ONLY A > B
ack_tmpl = type(P[0])(P[1].rec, cap.linktype, cap.port)    # ACK B > A
req_tmpl.payload[:] = b"x" * 64


def req(k):
    global t
    req_tmpl.set_psn((START + k) & 0xFFFFFF)
    frames.append((t, req_tmpl.frame()))
    t += 1000


def resp(k, syn, m):
    global t
    ack_tmpl.set_psn((START + k) & 0xFFFFFF)
    ack_tmpl.eth[:] = aeth(syn, m)
    frames.append((t, ack_tmpl.frame()))
    t += 1000


want = {"retx_seq": 0, "retx_rnr": 0, "retx_timeout": 0}
while len(frames) < N:
    req(i)
    if i in SEQ_AT:            # i lost after the capture point: NAK at i, go back to i
        req(i + 1)
        resp(i, 0x60, msn)
        req(i)
        req(i + 1)
        want["retx_seq"] += 2
        i += 1
    elif i in RNR_AT:          # RNR NAK, the retry 200 us later
        resp(i, 0x21, msn)
        t += 200000
        req(i)
        want["retx_rnr"] += 1
    elif i in TMO_AT:          # no answer: the same three again after a timeout
        req(i + 1)
        req(i + 2)
        t += 500000
        for k in (i, i + 1, i + 2):
            req(k)
        want["retx_timeout"] += 3
        i += 2
    i += 1
    msn = i
    if i % 16 == 0:
        resp(i - 1, 0x1F, msn)
big = os.path.join(tmp, "big.pcap")
write_pcap(big, cap.linktype, [(t // 1000000000, t % 1000000000, None, f) for t, f in frames])
bsvg = os.path.join(tmp, "big.svg")
fl = flows_of(big)
rc, objs, err = run_json(big, "--psn-graph", bsvg, "--latency-svg", bsvg + ".lat.svg")
check_eq((rc, err), (0, ""), "100k: exit status, stderr")
pg = [o["psn_graph"] for o in objs if "psn_graph" in o]
lh = [o["latency_histogram"] for o in objs if "latency_histogram" in o]
if check_eq(len(pg), 1, "100k: one request flow"):
    g = pg[0]
    check_eq({k: g["counts"][k] for k in want}, want, "100k: resends by cause")
    check_eq(sum(g["counts"][k] for k in RETX), fl[0]["stats"]["retransmitted"], "100k: resends = --flows")
    check_eq((g["psn_first"], g["psn_min"], g["psn_max"]), (START, START, START + i - 1),
             "100k: y range unwrapped across 2^24")
    check(START + i - 1 > (1 << 24), "100k: the PSNs wrap (%d)" % (START + i - 1))
    check_eq(g["counts"]["nak_seq"] + g["counts"]["nak_rnr"], len(SEQ_AT) + len(RNR_AT), "100k: NAKs")
    check_eq(len(g["rnr_waits"]), len(RNR_AT), "100k: RNR waits")
    check(len(g["series"]["req"]) <= 1000, "100k: at most one request bar per column")
    root = svg_root(bsvg, "100k")
    pn = groups(root, "panel")
    check_eq(sum(marks_n(pn[0], k) for k in RETX) if pn else -1, fl[0]["stats"]["retransmitted"],
             "100k SVG: resend marks = --flows retransmitted")
check_eq(sum(b["count"] for b in lh[0]["bins"]) if lh else -1, fl[0]["stats"]["messages"],
         "100k: histogram sums to the messages of --flows")
size = os.path.getsize(bsvg)
check(size < 2000000, "100k: SVG of %d bytes, under 2 MB" % size)
render(bsvg, "100k SVG")

# ---- timestamps that go back: a retry stamped before its RNR NAK -------------

back = os.path.join(tmp, "back.pcap")
write_pcap(back, cap.linktype, [(1, t, None, f) for t, f in (
    (9000, make(1, 104, 20)), (10000, make(2, 104, eth=aeth(0x21, 2))), (5000, make(1, 104, 20)),
    (26000, make(2, 104, eth=aeth(0x1F, 3))))])
rc, objs, err = run_json(back, "--psn-graph", os.path.join(tmp, "back.svg"))
pg = [o["psn_graph"] for o in objs if "psn_graph" in o]
check_eq((rc, [(g["rnr_waits"], g["rnr_bands"], g["counts"]["retx_rnr"], g["span_ns"]) for g in pg]),
         (0, [([], [], 1, 17000)]), "back in time: the retry drawn, no RNR wait (as --flows), span to the last")
check_eq(flows_of(back)[0]["stats"]["rnr_waits"], 0, "back in time: --flows counts no RNR wait")
svg_root(os.path.join(tmp, "back.svg"), "back in time")

# ---- usage -------------------------------------------------------------------

rc, out, err = inspect(path, "--flow", "1")
check_eq(rc, 2, "--flow alone: exit 2")
check("--psn-graph" in err, "--flow alone: the message names --psn-graph: %s" % err)
rc, out, err = inspect(path, "--psn-graph", os.path.join(tmp, "no", "such", "dir.svg"))
check_eq(rc, 2, "unwritable --psn-graph: exit 2")
rc, out, err = inspect(path, "--latency-svg", os.path.join(tmp, "no", "such", "dir.svg"))
check_eq(rc, 2, "unwritable --latency-svg: exit 2")
rc, out, err = inspect(path, "--psn-graph", svg, "--flow", "9")
check_eq(rc, 2, "--flow beyond the last flow: exit 2")
rc, out, err = inspect(path, "--help")
check("--psn-graph OUT.svg" in out and "--latency-svg OUT.svg" in out, "--help names both options")

shutil.rmtree(tmp)
finish("inspect_psn_graph")
