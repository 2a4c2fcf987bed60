#!/usr/bin/env python3
"""inspect_tshark.py - the netstack writes a pcap of every opcode (IPv4 and
IPv6, many QPNs and PSNs); real tshark decodes it with the expected opcode,
dest QPN and PSN per packet and no malformed packet; `uroce inspect --json`
agrees with tshark field for field, and its ICRC with tshark's
infiniband.invariant.crc (the wire bytes) and with an independent zlib oracle.
The same agreement is checked on the shipped sample capture.
"""
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True     # keep the source tree clean (and read-only safe)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import (GEN, SAMPLE, TSHARK_IGNORED_EXPERT, check, check_eq, finish,  # noqa: E402
                         icrc_oracle, inspect, read_pcap, run, tshark_fields)

# Every opcode of docs/wire-format.md §1.4 that the codec speaks: RC 0x00-0x14,
# 0x16, 0x17, 0x1C, 0x1D; UC 0x20-0x2B; UD 0x64, 0x65; CNP 0x81; XRC 0xA0-0xB4,
# 0xB6, 0xB7 (docs/xrc.md).
EXPECTED_OPCODES = sorted(list(range(0x00, 0x15)) + [0x16, 0x17, 0x1C, 0x1D] +
                          list(range(0x20, 0x2C)) + [0x64, 0x65, 0x81] +
                          list(range(0xA0, 0xB5)) + [0xB6, 0xB7])

# XRC: tshark 4.0 names the opcodes but decodes nothing after the BTH (a
# request's XRCETH and the rest are vendor data, infiniband.vendor, whose
# first 4 bytes are checked against inspect's xrc_srqn): BTH fields only.
XRC_REQUESTS = set(range(0xA0, 0xAD)) | {0xB3, 0xB4, 0xB6, 0xB7}
XRC_ALL = set(range(0xA0, 0xB5)) | {0xB6, 0xB7}

# What tshark 4.0 does not decode (docs/wire-format.md §3 items 3 and 4): FLUSH and
# ATOMIC_WRITE are "Unknown OpCode", a CNP's bytes are vendor data.  For these
# only the BTH fields are compared.
TSHARK_BTH_ONLY = {0x1C, 0x1D, 0x81} | XRC_ALL

# tshark field -> (function of the inspect JSON object, parser of tshark's text).
def _hex(s):
    return int(s, 16)


def _dec(s):
    return int(s, 10)


def _flag(s):
    # A boolean field: tshark 4.0 prints 1 / 0, 4.4 (Debian 13) True / False.
    return {"True": 1, "False": 0}[s] if s in ("True", "False") else int(s, 10)


def _get(*path):
    def f(o):
        for p in path:
            if not isinstance(o, dict) or p not in o:
                return None
            o = o[p]
        return o
    return f


def _va(o):
    return _get("reth", "va")(o) if "reth" in o else _get("atomiceth", "va")(o)


def _rkey(o):
    return _get("reth", "r_key")(o) if "reth" in o else _get("atomiceth", "r_key")(o)


BTH_FIELDS = {
    "infiniband.bth.opcode": (_get("opcode"), _dec),
    "infiniband.bth.destqp": (_get("destqp"), _hex),
    "infiniband.bth.psn": (_get("psn"), _dec),
    "infiniband.bth.se": (lambda o: int(o.get("se", False)), _flag),
    "infiniband.bth.m": (lambda o: int(o.get("m", False)), _flag),
    "infiniband.bth.a": (lambda o: int(o.get("a", False)), _flag),
    "infiniband.bth.padcnt": (_get("padcnt"), _dec),
    "infiniband.bth.tver": (_get("tver"), _dec),
    "infiniband.bth.p_key": (_get("p_key"), _dec),
}
ETH_FIELDS = {
    "infiniband.reth.va": (_va, _hex),
    "infiniband.reth.r_key": (_rkey, _hex),
    "infiniband.reth.dmalen": (_get("reth", "dmalen"), _dec),
    "infiniband.aeth.syndrome": (_get("aeth", "syndrome"), _dec),
    "infiniband.aeth.msn": (_get("aeth", "msn"), _dec),
    "infiniband.deth.q_key": (_get("deth", "q_key"), _hex),
    "infiniband.deth.srcqp": (_get("deth", "srcqp"), _hex),
    "infiniband.immdt": (_get("immdt"), _hex),
    "infiniband.ieth": (_get("ieth"), _hex),
    "infiniband.atomiceth.swapdt": (_get("atomiceth", "swapdt"), _dec),
    "infiniband.atomiceth.cmpdt": (_get("atomiceth", "cmpdt"), _dec),
    "infiniband.atomicacketh.origremdt": (_get("atomicacketh", "origremdt"), _dec),
    "infiniband.invariant.crc": (lambda o: int(o["icrc"], 16) if "icrc" in o else None, _hex),
}
OTHER_FIELDS = ["_ws.malformed", "_ws.expert.message", "infiniband.vendor"]


def first(v):
    return v.split(";")[0]


def compare(path, label):
    """tshark vs inspect on every frame of PATH; returns the inspect objects."""
    rc, out, err = inspect(path, "--json")
    check_eq(rc, 0, "%s: inspect --json exit status (stderr %r)" % (label, err))
    objs = [json.loads(line) for line in out.splitlines()]
    summary = objs.pop()["summary"]
    rows = tshark_fields(path, list(BTH_FIELDS) + list(ETH_FIELDS) + OTHER_FIELDS)
    check_eq(len(rows), summary["packets"], "%s: frames seen by tshark and inspect" % label)
    check_eq(len(objs), summary["roce"], "%s: one JSON object per RoCE frame" % label)
    _, _, recs = read_pcap(path)
    by_frame = {o["frame"]: o for o in objs}
    for row in rows:
        n = int(row["frame.number"])
        where = "%s frame %d" % (label, n)
        check_eq(row["_ws.malformed"], "", where + ": tshark _ws.malformed")
        experts = [e for e in row["_ws.expert.message"].split(";") if e]
        check(all(e == TSHARK_IGNORED_EXPERT for e in experts),
              where + ": tshark expert info %r" % experts)
        o = by_frame.get(n)
        if not check(o is not None, where + ": inspect printed no object"):
            continue
        check_eq(o["status"], "ok", where + ": inspect status")
        for f, (get, parse) in BTH_FIELDS.items():
            check_eq(get(o), parse(first(row[f])), where + ": " + f)
        if o["opcode"] in XRC_REQUESTS:
            v = row["infiniband.vendor"].replace(":", "")
            check_eq(o["xrceth"]["xrc_srqn"], int(v[2:8], 16) if v[:2] == "00" else None,
                     where + ": XRCETH in tshark's vendor bytes")
        for f, (get, parse) in ETH_FIELDS.items():
            mine = get(o)
            theirs = parse(first(row[f])) if row[f] else None
            if theirs is None and o["opcode"] in TSHARK_BTH_ONLY:
                continue    # tshark does not decode it; inspect may
            check_eq(mine, theirs, where + ": " + f)
        # The ICRC: ours must match the wire bytes and an independent oracle.
        oracle = icrc_oracle(recs[n - 1][4])
        check_eq(int(o["icrc_expected"], 16), oracle, where + ": icrc_expected vs zlib oracle")
        check_eq(int(o["icrc"], 16), oracle, where + ": wire icrc vs zlib oracle")
        check_eq(o["icrc_ok"], True, where + ": icrc_ok")
    check_eq(summary["malformed"], 0, label + ": summary malformed")
    check_eq(summary["bad_icrc"], 0, label + ": summary bad_icrc")
    return objs


def main():
    tmp = tempfile.mkdtemp(prefix="inspect_tshark.")
    path = os.path.join(tmp, "opcodes.pcap")
    rc, out, err = run([GEN, "opcodes", path])
    if not check_eq(rc, 0, "gen_pcap opcodes exit status (stderr %r)" % err):
        finish("inspect_tshark")
    manifest = [tuple(int(x) for x in line.split("\t")) for line in out.splitlines()]
    half = len(manifest) // 2
    check_eq(sorted(m[1] for m in manifest[:half]), EXPECTED_OPCODES, "IPv4 half: every opcode once")
    check_eq(sorted(m[1] for m in manifest[half:]), EXPECTED_OPCODES, "IPv6 half: every opcode once")
    check(len({m[2] for m in manifest}) == len(manifest), "every packet has its own dest QPN")
    psns = [m[3] for m in manifest if m[1] != 0x81]     # a CNP's PSN is always 0
    check(len(set(psns)) == len(psns), "every packet but the CNPs has its own PSN")

    # tshark against what the netstack was asked to write.
    rows = tshark_fields(path, ["infiniband.bth.opcode", "infiniband.bth.destqp",
                                "infiniband.bth.psn", "ip.version", "ipv6.version", "_ws.malformed"])
    check_eq(len(rows), len(manifest), "tshark frame count")
    for row, (frame, opcode, dqpn, psn) in zip(rows, manifest):
        where = "opcodes frame %d" % frame
        check_eq(int(row["frame.number"]), frame, where + ": frame number")
        check_eq(int(row["infiniband.bth.opcode"]), opcode, where + ": tshark opcode")
        check_eq(int(row["infiniband.bth.destqp"], 16), dqpn, where + ": tshark destqp")
        check_eq(int(row["infiniband.bth.psn"]), psn, where + ": tshark psn")
        check_eq(row["ipv6.version"] if frame > half else row["ip.version"],
                 "6" if frame > half else "4", where + ": IP version")
        check_eq(row["_ws.malformed"], "", where + ": tshark _ws.malformed")

    objs = compare(path, "opcodes")
    check_eq(len(objs), len(manifest), "opcodes: inspect objects")
    compare(SAMPLE, "sample")
    finish("inspect_tshark")


if __name__ == "__main__":
    main()
