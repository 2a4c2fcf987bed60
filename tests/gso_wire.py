#!/usr/bin/env python3
"""gso_wire.py: what one sender put on the wire, from a pcap of Ethernet
frames (tcpdump on a veth), for tests/it_gso.sh.

  gso_wire.py ids PCAP SRC      IPv4 IDs of the RoCEv2 datagrams from SRC:
      prints "packets N id0 Z idnext C other O": Z with ID 0, C whose ID is
      the previous datagram's plus one (the later segments of one
      UDP_SEGMENT send, docs/gso.md), O any other ID.
  gso_wire.py data PCAP SRC     the RoCE content of SRC's data packets, one
      line per packet in PSN order (a retransmitted PSN once): the PSN
      relative to the first, the opcode, BTH byte 5 (SE, M, pad, TVer), the
      payload length and its SHA-256 - what must not change with GSO.
      ICRC, IP ID, QPN and the first PSN are left out.
"""
import hashlib
import struct
import sys

ROCE_PORT = 4791
OP_ACK = 0x11


def datagrams(path, src):
    """(ip id, UDP payload) of each IPv4 UDP datagram to ROCE_PORT from SRC."""
    with open(path, 'rb') as f:
        data = f.read()
    magic = struct.unpack_from('<I', data, 0)[0]
    if magic not in (0xa1b2c3d4, 0xa1b23c4d):
        sys.exit('%s: not a little-endian pcap' % path)
    linktype = struct.unpack_from('<I', data, 20)[0]
    if linktype != 1:
        sys.exit('%s: link type %d, expected Ethernet (1)' % (path, linktype))
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack_from('<I', data, off + 8)[0]
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(frame) < 14 + 28 or frame[12:14] != b'\x08\x00':
            continue
        ip = frame[14:]
        ihl = (ip[0] & 15) * 4
        if ip[9] != 17:
            continue
        saddr = '.'.join(str(b) for b in ip[12:16])
        tot = struct.unpack_from('>H', ip, 2)[0]
        ident = struct.unpack_from('>H', ip, 4)[0]
        dport = struct.unpack_from('>H', ip, ihl + 2)[0]
        if saddr != src or dport != ROCE_PORT:
            continue
        yield ident, ip[ihl + 8:tot]


def cmd_ids(path, src):
    n = id0 = nxt = other = 0
    prev = None
    for ident, _ in datagrams(path, src):
        n += 1
        if ident == 0:
            id0 += 1
        elif prev is not None and ident == (prev + 1) & 0xffff:
            nxt += 1
        else:
            other += 1
        prev = ident
    print('packets %d id0 %d idnext %d other %d' % (n, id0, nxt, other))


def cmd_data(path, src):
    first = None
    seen = {}
    for _, p in datagrams(path, src):
        if len(p) < 16 or p[0] == OP_ACK:
            continue
        psn = struct.unpack_from('>I', p, 8)[0] & 0xffffff
        if first is None:
            first = psn
        rel = (psn - first) & 0xffffff
        if rel in seen:
            continue
        payload = p[12:-4]
        seen[rel] = '%d 0x%02x 0x%02x %d %s' % (rel, p[0], p[1], len(payload),
                                               hashlib.sha256(payload).hexdigest())
    for rel in sorted(seen):
        print(seen[rel])


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ('ids', 'data'):
        sys.exit('usage: gso_wire.py ids|data PCAP SRC')
    (cmd_ids if sys.argv[1] == 'ids' else cmd_data)(sys.argv[2], sys.argv[3])


if __name__ == '__main__':
    main()
