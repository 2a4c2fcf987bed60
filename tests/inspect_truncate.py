#!/usr/bin/env python3
"""inspect_truncate.py - every frame of the sample capture cut at every
length, in one capture per framing, and `uroce inspect` on each:

- cut frames whose headers still say the full length (caplen == len): each
  gets the error the first unmet header names, worked out here from the
  header sizes (Ethernet 14; IPv4 20, IPv6 40, GRH 40): LINK_TRUNCATED
  inside the link header, IP_TRUNC / GRH_TRUNC inside the network header,
  IP_LEN / GRH_LEN after it (the length field exceeds what is there);
- the same cuts made by a snapshot length (caplen < len): every frame is
  CAPTURE_TRUNCATED, and the BTH (dqpn, psn) is shown exactly when the
  capture holds all of it;
- raw IP (LINKTYPE_RAW) cuts of the IP frames, as in the first case.
Exit status 1 for each file, and exact per-error counts in the summary.
"""
import collections
import json
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import (LINKTYPE_ETHERNET, LINKTYPE_RAW, SAMPLE, check_eq, finish,  # noqa: E402
                         inspect, read_pcap, write_pcap)

ETH = 14
NET = {b"\x08\x00": (2, 20, "IP"), b"\x86\xdd": (2, 40, "IP"), b"\x89\x15": (1, 40, "GRH")}
UDP, BTH = 8, 12


def json_objs(path):
    rc, out, err = inspect(path, "--json")
    return rc, [json.loads(line) for line in out.splitlines()], err


def expected(frame, n, link_hlen):
    """(version, error) of FRAME cut to N bytes, its headers unchanged."""
    if n < link_hlen:
        return 0, "LINK_TRUNCATED"
    version, hlen, kind = NET[frame[12:14]]
    return version, kind + ("_TRUNC" if n - link_hlen < hlen else "_LEN")


def check_file(what, path, want, bth_at=None):
    """WANT: [(version, error)] per frame; BTH_AT: per frame, the (dqpn, psn) expected or None."""
    rc, objs, err = json_objs(path)
    check_eq((rc, err), (1, ""), what + ": exit status and stderr")
    summary = objs.pop()["summary"]
    check_eq(len(objs), len(want), what + ": one object per frame")
    bad = [(o["frame"], o.get("version"), o.get("error"), w) for o, w in zip(objs, want)
           if (o.get("version"), o.get("error")) != w]
    check_eq(bad[:3], [], what + ": frames with another error than expected (first 3)")
    if bth_at is not None:
        got = [(o.get("destqp"), o.get("psn")) if "psn" in o else None for o in objs]
        wrong = [(i + 1, g, b) for i, (g, b) in enumerate(zip(got, bth_at)) if g != b]
        check_eq(wrong[:3], [], what + ": BTH shown exactly when captured (first 3 differences)")
    count = collections.Counter(e for _, e in want)
    check_eq((summary["packets"], summary["malformed"], summary["bad_icrc"]),
             (len(want), len(want), 0), what + ": summary counts")
    check_eq((summary["rocev2"], summary["rocev1"]),
             (sum(v == 2 for v, _ in want), sum(v == 1 for v, _ in want)), what + ": RoCE counts")
    check_eq(summary["errors"], dict(count), what + ": errors by name")
    check_eq(summary["opcodes"], {}, what + ": no fully decoded packet")


def main():
    tmp = tempfile.mkdtemp(prefix="inspect_truncate.")
    _, _, recs = read_pcap(SAMPLE)
    frames = [r[4] for r in recs]
    rc, full, _ = json_objs(SAMPLE)
    check_eq(rc, 0, "the sample decodes")

    cut, want = [], []
    for f in frames:
        for n in range(len(f)):
            cut.append((1, 0, None, f[:n]))
            want.append(expected(f, n, ETH))
    p = os.path.join(tmp, "cut.pcap")
    write_pcap(p, LINKTYPE_ETHERNET, cut)
    check_file("Ethernet, cut with the lengths unchanged", p, want)

    snap, want, bth = [], [], []
    for i, f in enumerate(frames):
        version, hlen, kind = NET[f[12:14]]
        l4 = hlen + (UDP if version == 2 else 0)
        for n in range(len(f)):
            snap.append((1, 0, len(f), f[:n]))
            want.append((0 if n < ETH else version, "CAPTURE_TRUNCATED"))
            bth.append((full[i]["destqp"], full[i]["psn"]) if n >= ETH + l4 + BTH else None)
    p = os.path.join(tmp, "snap.pcap")
    write_pcap(p, LINKTYPE_ETHERNET, snap)
    check_file("Ethernet, cut by the snapshot length", p, want, bth)

    raw, want = [], []
    for f in frames:
        if NET[f[12:14]][2] != "IP":
            continue
        ip = f[ETH:]
        for n in range(len(ip)):
            raw.append((1, 0, None, ip[:n]))
            want.append(expected(f, n + ETH, ETH) if n else (0, "LINK_TRUNCATED"))
    p = os.path.join(tmp, "raw.pcap")
    write_pcap(p, LINKTYPE_RAW, raw)
    check_file("raw IP, cut with the lengths unchanged", p, want)

    shutil.rmtree(tmp)
    finish("inspect_truncate")


if __name__ == "__main__":
    main()
