"""poll_window_junk.py: datagrams that fail uroced's receive checks.

Run by tests/traffic_poll_window.sh: poll_window_junk.py UDP_PORT N
Sends N datagrams of each of three kinds to 127.0.0.1:UDP_PORT, in turn:
64 random bytes (malformed, their last 4 bytes no ICRC: rx_drops bad and
bad_icrc; drawn from a fixed seed, as over IPv4 the receiver accepts an
ICRC computed with any of the 65,536 IP IDs, so one random datagram in
about 65,536 carries a valid ICRC by chance, and these do not), a RoCEv2 SEND_ONLY with a valid ICRC to QPN 0xabcdef (the
daemon has no QPs yet: no_qp), and the same packet with its last byte
flipped (bad, bad_icrc).
Prints the number sent.
"""
import random, socket, sys
from scapy.all import IP, UDP, Raw
from scapy.contrib.roce import BTH

port, n = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(4791)
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(('127.0.0.1', 0))
# opcode 4: RC SEND_ONLY (IBTA 9.2); the ICRC covers the IP and UDP headers
pkt = (IP(src='127.0.0.1', dst='127.0.0.1', flags='DF', id=0) /
       UDP(sport=sock.getsockname()[1], dport=port) /
       BTH(opcode=4, dqpn=0xabcdef, psn=0, ackreq=1) / Raw(b'x' * 16))
good = bytes(pkt)[28:]  # BTH .. ICRC, as the UDP socket carries it
bad = good[:-1] + bytes([good[-1] ^ 1])
sent = 0
for _ in range(n):
    for b in (rng.randbytes(64), good, bad):
        sock.sendto(b, ('127.0.0.1', port))
        sent += 1
print(sent)
