"""traffic_forged_read.py: a forged RDMA READ request over plain UDP (scapy
computes the ICRC), sent by tests/traffic_forged_read.sh from a process that
owns no QP.

  traffic_forged_read.py PORT QPN PSN VA RKEY LEN COUNT [INTERVAL]
Sends COUNT copies of one READ REQUEST (IBTA 9.4.3: BTH opcode 12 + RETH
VA/R_Key/DMA length LEN, 32 bytes after the UDP header with the ICRC) from
127.0.0.1 to QP QPN at PSN PSN, INTERVAL seconds apart (0.2 by default):
the first is new, the others are duplicates of it (IBTA 9.7.5.1.3). Prints
one line per packet sent.
"""
import socket, struct, sys, time
from scapy.all import IP, UDP, Raw
from scapy.contrib.roce import BTH

port, qpn, psn, va, rkey, length, count = (int(x) for x in sys.argv[1:8])
interval = float(sys.argv[8]) if len(sys.argv) > 8 else 0.2
READ_REQUEST = 12
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('127.0.0.1', 0))
pkt = (IP(src='127.0.0.1', dst='127.0.0.1', flags='DF', id=0) /
       UDP(sport=s.getsockname()[1], dport=port) /
       BTH(opcode=READ_REQUEST, dqpn=qpn, psn=psn, ackreq=1) /
       Raw(struct.pack('>QII', va, rkey, length)))
b = bytes(pkt)[28:]          # BTH .. ICRC, as the UDP socket carries it
for i in range(count):
    if i:
        time.sleep(interval)
    s.sendto(b, ('127.0.0.1', port))
    print(f'sent {len(b)}-byte READ REQUEST {i + 1}/{count}: qpn {qpn:#x} psn {psn} '
          f'va {va:#x} rkey {rkey:#x} len {length}', flush=True)
