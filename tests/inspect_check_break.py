#!/usr/bin/env python3
"""inspect_check_break.py - `uroce inspect --check` finds each transport rule
broken on purpose, and nothing else.

A clean capture (the shipped tests/data/sample.pcap, which must give 0
findings) is edited to break one rule per output file: a packet dropped
without a resend, opcodes out of order, a payload off the path MTU, an ACK
beyond the PSNs sent, a wrong MSN, a wrong pad, a bad ICRC, a NAK not
followed by a resend, a READ answered by the wrong number of responses, ...
Every edited packet gets correct IP/UDP lengths and a correct ICRC (the
independent zlib oracle of inspect_lib), so only the rule under test is
broken. For each output, --check must exit 1 with exactly one finding: the
expected rule id at the expected frame; --json must say the same.

With --capture FILE --port N [--min RULES] [--only RULE,...] the same edits run on a real
capture (tests/inspect_check_live.sh passes one made with ibv_rc_pingpong
and perftest over uroce): the edits that find their target packets there are
applied and asserted the same way.

Edits work on the bytes with the stdlib (inspect_lib); scapy is not needed.
"""
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import (SAMPLE, LINKTYPE_ETHERNET, LINKTYPE_RAW, check, check_eq, finish,  # noqa: E402
                         icrc_oracle, inspect, read_pcap, write_pcap)

# Extended headers after the BTH per opcode (IBA §9.2.1 Table 38; docs/wire-format.md §1.4).
RETH, AETH, ATOMIC, ATOMICACK, IMM, IETH, DETH = 16, 4, 28, 8, 4, 4, 8
HDRS = {
    0x00: [], 0x01: [], 0x02: [], 0x03: [IMM], 0x04: [], 0x05: [IMM],
    0x06: [RETH], 0x07: [], 0x08: [], 0x09: [IMM], 0x0A: [RETH], 0x0B: [RETH, IMM],
    0x0C: [RETH], 0x0D: [AETH], 0x0E: [], 0x0F: [AETH], 0x10: [AETH], 0x11: [AETH],
    0x12: [AETH, ATOMICACK], 0x13: [ATOMIC], 0x14: [ATOMIC], 0x16: [IETH], 0x17: [IETH],
    0x20: [], 0x21: [], 0x22: [], 0x23: [IMM], 0x24: [], 0x25: [IMM],
    0x26: [RETH], 0x27: [], 0x28: [], 0x29: [IMM], 0x2A: [RETH], 0x2B: [RETH, IMM],
    0x64: [DETH], 0x65: [DETH, IMM],
}
SEND_FIRST, SEND_MIDDLE, SEND_LAST_IMM, SEND_ONLY = 0x00, 0x01, 0x03, 0x04
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST = 0x06, 0x07, 0x08
READ_REQ, READ_FIRST, READ_MIDDLE, READ_LAST, READ_ONLY = 0x0C, 0x0D, 0x0E, 0x0F, 0x10
ACK, ATOMIC_ACK, CMP_SWAP, FETCH_ADD, SEND_ONLY_INV = 0x11, 0x12, 0x13, 0x14, 0x17


def is_req(op):
    """An RC/UC request opcode (not a response, not UD, not CNP)."""
    return op < 0x40 and (op & 0x1F) not in range(0x0D, 0x13)


class Pkt:
    """One RoCEv2 record of a capture: link header, IP, UDP, BTH, ETHs, payload, ICRC."""

    def __init__(self, rec, linktype, port):
        self.rec = rec
        self.ts = rec[:2]
        b = rec[4]
        self.link = b[:14] if linktype == LINKTYPE_ETHERNET else b""
        ip = b[len(self.link):]
        self.roce = False
        if not ip:
            return
        ver = ip[0] >> 4
        if ver == 4 and ip[9] == 17:
            iplen, ihl = struct.unpack(">H", ip[2:4])[0], (ip[0] & 15) * 4
        elif ver == 6 and ip[6] == 17:
            iplen, ihl = 40 + struct.unpack(">H", ip[4:6])[0], 40
        else:
            return
        ip = ip[:iplen]
        if struct.unpack(">H", ip[ihl + 2:ihl + 4])[0] != port:
            return
        self.roce = True
        self.ver, self.iphdr, self.udphdr = ver, bytearray(ip[:ihl]), bytearray(ip[ihl:ihl + 8])
        tr = ip[ihl + 8:]
        self.bth = bytearray(tr[:12])
        n = 12 + sum(HDRS.get(self.bth[0], []))
        self.eth = bytearray(tr[12:n])
        body = tr[n:-4]
        pad = (self.bth[1] >> 4) & 3
        self.payload = bytearray(body[:len(body) - pad])
        self.icrc = tr[-4:]

    # BTH fields
    op = property(lambda s: s.bth[0])
    psn = property(lambda s: struct.unpack(">I", s.bth[8:12])[0] & 0xFFFFFF)
    dqpn = property(lambda s: struct.unpack(">I", s.bth[4:8])[0] & 0xFFFFFF)
    # both directions of a QP pair share the UDP source port (docs/wire-format.md §1.7)
    sport = property(lambda s: struct.unpack(">H", s.udphdr[0:2])[0])

    def set_psn(self, psn):
        self.bth[9:12] = struct.pack(">I", psn)[1:]

    def set_op(self, op):
        self.bth[0] = op

    def frame(self, pad=None, good_icrc=True):
        """The record's bytes, lengths and ICRC recomputed (pad: PadCnt to write)."""
        if pad is None:
            pad = (-len(self.payload)) & 3
        self.bth[1] = (self.bth[1] & 0xCF) | (pad << 4)
        body = bytes(self.payload) + b"\0" * ((-len(self.payload)) & 3)
        tr = bytes(self.bth) + bytes(self.eth) + body + b"\0\0\0\0"
        udp = bytearray(self.udphdr)
        udp[4:6] = struct.pack(">H", 8 + len(tr))
        iph = bytearray(self.iphdr)
        if self.ver == 4:
            iph[2:4] = struct.pack(">H", len(iph) + 8 + len(tr))
            iph[10:12] = b"\0\0"
            s = sum(struct.unpack(">10H", bytes(iph)))
            while s >> 16:
                s = (s & 0xFFFF) + (s >> 16)
            iph[10:12] = struct.pack(">H", ~s & 0xFFFF)
        else:
            iph[4:6] = struct.pack(">H", 8 + len(tr))
        ip = bytes(iph) + bytes(udp) + tr
        eth = self.link or (b"\0" * 12 + (b"\x08\x00" if self.ver == 4 else b"\x86\xdd"))
        crc = icrc_oracle(eth + ip)
        if not good_icrc:
            crc ^= 0x01000000
        ip = ip[:-4] + struct.pack(">I", crc)
        return self.link + ip


class Capture:
    def __init__(self, path, port):
        self.linktype, self.nsec, recs = read_pcap(path)
        self.port = port
        self.pkts = [Pkt(r, self.linktype, port) for r in recs]

    def find(self, cond, start=0):
        """0-based index of the first RoCE packet from START that satisfies COND, or None."""
        for i in range(start, len(self.pkts)):
            p = self.pkts[i]
            if p.roce and cond(i, p):
                return i
        return None

    def write(self, path, edits, drop=(), insert=()):
        """Write with EDITS {index: bytes}, DROP {indices}, INSERT [(before index, bytes)]."""
        recs, ins = [], dict()
        for at, b in insert:
            ins.setdefault(at, []).append(b)
        for i, p in enumerate(self.pkts):
            for b in ins.get(i, []):
                recs.append((p.ts[0], p.ts[1], None, b))
            if i in drop:
                continue
            recs.append((p.ts[0], p.ts[1], None, edits.get(i, p.rec[4])))
        write_pcap(path, self.linktype, recs, nsec=self.nsec)


def frame_after(idx, drop=(), insert=()):
    """1-based frame number that packet IDX has once DROP and INSERT are applied."""
    return idx + 1 - sum(1 for d in drop if d < idx) + sum(1 for at, _ in insert if at <= idx)


def breaks(cap):
    """Yield (name, rule, frame, edits, drop, insert) for each break that finds its packets."""
    P = cap.pkts
    req = lambda op: (lambda i, p: p.op == op)  # noqa: E731

    def clone(i):
        return Pkt(P[i].rec, cap.linktype, cap.port)

    # a SEND_MIDDLE and what follows it in its flow
    m = cap.find(req(SEND_MIDDLE))
    if m is not None:
        dq = P[m].dqpn
        nxt = cap.find(lambda i, p: p.dqpn == dq and is_req(p.op) and p.psn == (P[m].psn + 1) & 0xFFFFFF, m + 1)
        if nxt is not None:
            yield "drop a SEND MIDDLE, no resend", "psn.gap", frame_after(nxt, drop={m}), {}, {m}, []
        q = clone(m)
        q.set_op(SEND_FIRST)
        yield "SEND MIDDLE turned FIRST", "opcode.sequence", m + 1, {m: q.frame()}, (), []
        q = clone(m)
        q.set_op(WRITE_MIDDLE)
        yield "SEND MIDDLE turned WRITE MIDDLE", "opcode.mixed", m + 1, {m: q.frame()}, (), []
        q = clone(m)
        del q.payload[-4:]
        yield "SEND MIDDLE 4 bytes short of the PMTU", "payload.pmtu", m + 1, {m: q.frame()}, (), []
    f = cap.find(req(SEND_FIRST))
    if f is not None:
        # not the flow's first packet: a capture may begin inside a message
        f = cap.find(lambda i, p: p.op == SEND_FIRST and p.sport == P[f].sport and p.dqpn == P[f].dqpn, f + 1)
    if f is not None:
        q = clone(f)
        q.set_op(SEND_MIDDLE)
        yield "SEND FIRST turned MIDDLE", "opcode.sequence", f + 1, {f: q.frame()}, (), []
    last = cap.find(lambda i, p: p.op in (0x02, SEND_LAST_IMM))
    if last is not None:
        q = clone(last)
        q.payload[:] = b""
        yield "SEND LAST with no payload", "payload.last_empty", last + 1, {last: q.frame()}, (), []
    # an ONLY larger than the PMTU learned before it
    pm = cap.find(lambda i, p: p.op in (SEND_FIRST, SEND_MIDDLE))
    if pm is not None:
        mtu = len(P[pm].payload)
        o = cap.find(lambda i, p: p.op == SEND_ONLY and len(p.payload) <= mtu, pm + 1)
        if o is None:
            o = cap.find(lambda i, p: p.op == SEND_ONLY and p.dqpn == P[pm].dqpn)
        if o is not None and o > pm:
            q = clone(o)
            q.payload[:] = bytes(mtu + 4)
            yield "SEND ONLY 4 bytes over the PMTU", "payload.mtu", o + 1, {o: q.frame()}, (), []
    # WRITE: RETH length and pad
    wl = cap.find(req(WRITE_LAST))
    if wl is not None:
        wf = max(i for i in range(wl) if P[i].roce and P[i].op == WRITE_FIRST and P[i].dqpn == P[wl].dqpn)
        q = clone(wf)
        q.eth[12:16] = struct.pack(">I", struct.unpack(">I", q.eth[12:16])[0] + 4)
        yield "WRITE FIRST's RETH length 4 too long", "reth.length", wl + 1, {wf: q.frame()}, (), []
        q = clone(wl)
        if len(q.payload) % 4 == 0 and len(q.payload) >= 4:
            body = len(q.payload)
            del q.payload[-3:]
            # PadCnt 3 over the same bytes: 3 bytes fewer in the message
            yield "WRITE LAST with PadCnt 3", "reth.length", wl + 1, {wl: pad_frame(q, 3, body)}, (), []
    # READ responses
    rm = cap.find(req(READ_MIDDLE))
    if rm is not None:
        rl = cap.find(lambda i, p: p.op == READ_LAST and p.dqpn == P[rm].dqpn, rm + 1)
        edits = {}
        for i in range(rm + 1, rl + 1):
            if P[i].roce and P[i].dqpn == P[rm].dqpn and P[i].op in (READ_MIDDLE, READ_LAST):
                q = clone(i)
                q.set_psn((q.psn - 1) & 0xFFFFFF)
                edits[i] = q.frame()
        yield "a READ MIDDLE response dropped, the rest renumbered", "read.response_count", \
            frame_after(rl, drop={rm}), edits, {rm}, []
        q = clone(rl)
        if len(q.payload) % 4 == 0 and len(q.payload) >= 4:
            body = len(q.payload)
            del q.payload[-3:]
            yield "READ LAST response with PadCnt 3", "read.response_length", rl + 1, \
                {rl: pad_frame(q, 3, body)}, (), []
    rf = cap.find(req(READ_FIRST))
    if rf is not None:
        q = clone(rf)
        q.eth[0] = 0x60     # NAK PSN sequence error
        yield "READ FIRST response with a NAK AETH", "read.response_aeth", rf + 1, {rf: q.frame()}, (), []
    ro = cap.find(req(READ_ONLY))
    if ro is not None:
        s = cap.find(lambda i, p: p.op == SEND_ONLY and p.sport == P[ro].sport and p.dqpn != P[ro].dqpn)
        if s is not None and s < ro:
            q = clone(ro)
            q.set_psn(P[s].psn)
            yield "READ ONLY response at a SEND's PSN", "read.response_psn", ro + 1, {ro: q.frame()}, (), []
    # ACKs
    # the second ACK of a flow (the first sets the MSN baseline)
    a0 = cap.find(lambda i, p: p.op == ACK and p.eth[0] < 0x20)
    a = None if a0 is None else \
        cap.find(lambda i, p: p.op == ACK and p.eth[0] < 0x20 and p.sport == P[a0].sport
                 and p.dqpn == P[a0].dqpn and p.psn != P[a0].psn, a0 + 1)
    if a is not None:
        # its requests: same UDP port, sent to the other QP
        sent = max(P[i].psn for i in range(a) if P[i].roce and is_req(P[i].op) and P[i].sport == P[a].sport
                   and P[i].dqpn != P[a].dqpn)
        q = clone(a)
        q.set_psn((sent + 100) & 0xFFFFFF)
        yield "ACK 100 PSNs beyond the last request sent", "ack.unsent_psn", a + 1, {a: q.frame()}, (), []
        q = clone(a)
        q.eth[3] = (q.eth[3] + 1) & 0xFF
        yield "ACK with MSN one too high", "ack.msn", a + 1, {a: q.frame()}, (), []
        q = clone(a)
        q.eth[0] = 0x40
        yield "ACK with a reserved AETH syndrome", "aeth.reserved", a + 1, {a: q.frame()}, (), []
        q = clone(a)
        yield "ACK with a bad ICRC", "icrc", a + 1, {a: q.frame(good_icrc=False)}, (), []
        q = clone(a)
        q.bth[1] = (q.bth[1] & 0xF0) | 1     # TVer 1
        yield "ACK with TVer 1", "malformed", a + 1, {a: q.frame()}, (), []
    # atomics
    aa = cap.find(req(ATOMIC_ACK))
    if aa is not None:
        q = clone(aa)
        q.set_op(ACK)
        q.eth[:] = q.eth[:4]
        yield "ATOMIC ACK sent as a plain ACK", "atomic.plain_ack", aa + 1, {aa: q.frame()}, (), []
        # a SEND of the request flow the ATOMIC ACK answers: that of the last
        # atomic request before it at its PSN (same destination QPN and UDP
        # port, the flow's key in --check), not any SEND on the ACK's port
        # (clients that set a flow label send every QP pair from one port)
        r = max((i for i in range(aa) if P[i].roce and P[i].op in (CMP_SWAP, FETCH_ADD)
                 and P[i].psn == P[aa].psn), default=None)
        s = None if r is None else \
            cap.find(lambda i, p: p.op in (SEND_ONLY, 0x02, SEND_LAST_IMM) and p.dqpn == P[r].dqpn
                     and p.sport == P[r].sport)
        if s is not None and s < aa:
            q = clone(aa)
            q.set_psn(P[s].psn)
            yield "ATOMIC ACK at a SEND's PSN", "atomic.ack_psn", aa + 1, {aa: q.frame()}, (), []
    # RNR NAK and its retry
    rn = cap.find(lambda i, p: p.op == ACK and (p.eth[0] & 0x60) == 0x20)
    if rn is not None:
        rt = cap.find(lambda i, p: is_req(p.op) and p.psn == P[rn].psn and p.sport == P[rn].sport, rn + 1)
        q = clone(rn)
        q.eth[0] = 0x20 | 0    # timer 0: 655.36 ms, the longest
        yield "RNR NAK asking for 655.36 ms, retried sooner", "rnr.early_retry", rt + 1, {rn: q.frame()}, (), []
        # the retry and the ACK that answered it
        ack = cap.find(lambda i, p: p.op == ACK and p.psn == P[rn].psn and p.sport == P[rn].sport, rt + 1)
        yield "RNR NAK never retried", "rnr.no_retry", rn + 1, {}, {rt, ack}, []
        q = clone(rt)
        if P[rt].op == SEND_ONLY_INV:
            q.set_op(SEND_ONLY)
            q.eth[:] = b""
        else:
            q.payload[:] = q.payload + b"\0\0\0\0"
        yield "RNR retry resent as another packet", "retransmit.changed", rt + 1, {rt: q.frame()}, (), []
    # PSN sequence error NAK, its resend replaced by a new request
    sn = cap.find(lambda i, p: p.op == ACK and p.eth[0] == 0x60)
    if sn is not None:
        rs = cap.find(lambda i, p: is_req(p.op) and p.psn == P[sn].psn and p.sport == P[sn].sport, sn + 1)
        o = cap.find(lambda i, p: p.op == SEND_ONLY and p.dqpn == P[rs].dqpn)
        if rs is not None and o is not None:
            top = max(P[i].psn for i in range(sn) if P[i].roce and P[i].dqpn == P[rs].dqpn)
            q = clone(o)
            q.set_psn((top + 1) & 0xFFFFFF)
            drop = {i for i in range(rs, len(P)) if P[i].roce and P[i].dqpn in (P[rs].dqpn, P[sn].dqpn)}
            yield "PSN sequence error NAK followed by a new request, no resend", "nak.no_resend", sn + 1, \
                {}, drop, [(rs, q.frame())]


def pad_frame(q, pad, body):
    """Q's frame with PadCnt PAD over BODY payload+pad bytes (the payload shortened by PAD)."""
    assert len(q.payload) + pad == body
    return q.frame(pad=pad)


def run_check(path, args):
    rc, out, err = inspect(path, "--check", *args)
    lines = [l for l in out.splitlines() if l.startswith("frame ")]
    return rc, lines, out, err


def main():
    argv = sys.argv[1:]
    path, port, extra, min_breaks, only = SAMPLE, 4791, ["--mtu", "256"], 20, None
    if argv and argv[0] == "--capture":
        # --capture FILE --port N [--min RULES] [--only RULE,...]
        opts = dict(zip(argv[0::2], argv[1::2]))
        path, port = opts["--capture"], int(opts["--port"])
        extra, min_breaks = ["--port", str(port)], int(opts.get("--min", "1"))
        only = opts["--only"].split(",") if "--only" in opts else None
    cap = Capture(path, port)
    rc, lines, out, err = run_check(path, extra)
    check_eq((rc, lines), (0, []), "clean capture %s: exit 0, no finding" % path)
    if path == SAMPLE:
        # the real captures shipped with the tests: kernel rxe over IPv4 and IPv6
        for name in ("rxe-ipv4.pcap", "rxe-ipv6.pcap"):
            rc, lines, out, err = run_check(os.path.join(os.path.dirname(SAMPLE), name), [])
            check_eq((rc, lines), (0, []), "%s: exit 0, no finding" % name)
    tmp = tempfile.mkdtemp(prefix="inspect-check-break.")
    rules = set()
    n = 0
    for name, rule, frame, edits, drop, insert in breaks(cap):
        if only is not None and rule not in only:
            continue
        n += 1
        out_path = os.path.join(tmp, "break%02d.pcap" % n)
        cap.write(out_path, edits, drop, insert)
        rc, lines, out, err = run_check(out_path, extra)
        got = [l.split(" (IBA")[0] for l in lines]
        if check_eq((rc, got), (1, ["frame %d: %s" % (frame, rule)]), "%s: exit 1, one finding" % name):
            rules.add(rule)
            print("ok: %s -> %s" % (name, lines[0]))
        else:
            print(out)
        rc, out, err = inspect(out_path, "--check", "--json", *extra)
        objs = [json.loads(l) for l in out.splitlines()]
        fs = [o for o in objs if "rule" in o]
        check(len(fs) == 1 and fs[0]["frame"] == frame and fs[0]["rule"] == rule and fs[0]["section"]
              and fs[0]["flow"].startswith("RoCE") and fs[0]["message"], "%s: --json finding %r" % (name, fs))
        chk = [o["check"] for o in objs if "check" in o]
        check(len(chk) == 1 and chk[0]["findings"] == 1 and chk[0]["rules"] == {rule: 1},
              "%s: --json check object %r" % (name, chk))
        os.unlink(out_path)
    os.rmdir(tmp)
    print("%d breaks, %d distinct rules found: %s" % (n, len(rules), " ".join(sorted(rules))))
    check(len(rules) >= min_breaks, "at least %d distinct rules found, got %d" % (min_breaks, len(rules)))
    finish("inspect_check_break")


if __name__ == "__main__":
    main()
