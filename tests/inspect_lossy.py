"""Frames built from tests/data/sample.pcap for the inspect tests, and the
lossy RC exchange three of them draw and count.

make(TMPL, PSN, ...) copies sample frame TMPL (1-based) with a new PSN, and
optionally payload length, opcode and extended transport header bytes; the
ICRC is recomputed (inspect_check_break.Capture). LOSSY is one requester and
responder: a SEND ONLY; a three-packet SEND whose MIDDLE is lost (NAK PSN
sequence error, go-back-N resend); an RNR NAK and two resends; a READ whose
MIDDLE response comes twice. (time in ns, frame) pairs, 18 frames.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspect_lib import SAMPLE, write_pcap  # noqa: E402
from inspect_check_break import Capture  # noqa: E402

cap = Capture(SAMPLE, 4791)
P = cap.pkts
SEND_LAST = 0x02


def make(tmpl, psn, payload=None, op=None, eth=None):
    """Frame from sample frame TMPL (1-based) with PSN, payload bytes, opcode, ETH bytes."""
    q = type(P[0])(P[tmpl - 1].rec, cap.linktype, cap.port)
    if op is not None:
        q.set_op(op)
    q.set_psn(psn)
    if payload is not None:
        q.payload[:] = bytes((i * 7) & 0xFF for i in range(payload))
    if eth is not None:
        q.eth[:] = eth
    return q.frame()


def aeth(syn, msn):
    """AETH (IBTA 9.3.5): syndrome byte, 24-bit MSN."""
    return bytes([syn]) + (msn & 0xFFFFFF).to_bytes(3, "big")


def reth(tmpl, length):
    """Sample frame TMPL's RETH with its DMA length replaced."""
    e = bytearray(P[tmpl - 1].eth)
    e[12:16] = length.to_bytes(4, "big")
    return bytes(e)


LOSSY = [
    (0, make(1, 100, 40)),
    (1000, make(2, 100, eth=aeth(0x1F, 1))),
    (2000, make(3, 101, 256)),
    (4000, make(5, 103, 100, op=SEND_LAST, eth=b"")),
    (5000, make(2, 102, eth=aeth(0x60, 1))),
    (6000, make(4, 102, 256)),
    (7000, make(5, 103, 100, op=SEND_LAST, eth=b"")),
    (8000, make(2, 103, eth=aeth(0x1F, 2))),
    (9000, make(1, 104, 20)),
    (10000, make(2, 104, eth=aeth(0x21, 2))),
    (25000, make(1, 104, 20)),
    (25001, make(1, 104, 20)),
    (26000, make(2, 104, eth=aeth(0x1F, 3))),
    (27000, make(11, 105, eth=reth(11, 600))),
    (28000, make(12, 105, 256, eth=aeth(0x1F, 4))),
    (29000, make(13, 106, 256)),
    (30000, make(14, 107, 88, eth=aeth(0x1F, 4))),
    (31000, make(13, 106, 256)),
]


def write_lossy(path):
    """LOSSY as a pcap file at PATH (second 1 of the epoch, ns resolution)."""
    write_pcap(path, cap.linktype, [(1, t, None, f) for t, f in LOSSY])
