#!/usr/bin/env python3
"""raw_vxlan_forge.py HOST PORT VNI MTU: forged and malformed VXLAN datagrams
to a uroce device's segment socket (docs/raw-packet.md, "What is dropped"):
  3 shorter than the 8-byte VXLAN header plus a 14-byte Ethernet header
    (0, 7 and 21 bytes),
  2 without the I flag (flags 0x00 and 0x80, RFC 7348 section 5),
  1 with another VNI (VNI + 1),
  1 larger than the port's MTU allows (8 + 14 + MTU + 5 bytes).
Each must be dropped and counted; the daemon carries on."""
import socket
import sys

host, port, vni, mtu = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
eth = bytes.fromhex("0200 7f00 0002 0200 7f00 0001 88b5") + bytes(46)


def vxlan(flags, v):
    return bytes([flags, 0, 0, 0, (v >> 16) & 0xFF, (v >> 8) & 0xFF, v & 0xFF, 0])


s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for d in (b"", vxlan(0x08, vni)[:7], vxlan(0x08, vni) + eth[:13],
          vxlan(0x00, vni) + eth, vxlan(0x80, vni) + eth,
          vxlan(0x08, (vni + 1) & 0xFFFFFF) + eth,
          vxlan(0x08, vni) + eth[:14] + bytes(mtu + 5)):
    s.sendto(d, (host, port))
print("sent 7 forged VXLAN datagrams to %s:%d" % (host, port))
