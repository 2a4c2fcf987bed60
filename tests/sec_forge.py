"""sec_forge.py: forged RoCEv2 packets over plain UDP (scapy computes the
ICRC), sent by tests/it_security.sh as an unprivileged user at a QP of
another user.

  sec_forge.py PORT QPN PSN VA RKEY
1. from 127.0.0.2 (not the QP's remote address 127.0.0.1): an RDMA WRITE
   ONLY of 32 bytes with the QP's real rkey at the PSN it expects;
2. from 127.0.0.1 (the right address): WRITE ONLY at the expected PSN with a
   guessed rkey: the first key the daemon used to hand out
   (index 1, variant 1*0x9d+0x5a = 0x1f7), or that key with the low bit
   flipped if it happens to be the real one.
Prints what it sent.
"""
import socket, struct, sys
from scapy.all import IP, UDP, Raw
from scapy.contrib.roce import BTH

port, qpn, psn, va, rkey = (int(x) for x in sys.argv[1:6])
WRITE_ONLY = 10
payload = b'PWNED-BY-UID-%05d' % 65534 + b'!' * 14


def send(src, key):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    body = struct.pack('>QII', va, key, len(payload)) + payload
    pkt = (IP(src=src, dst='127.0.0.1', flags='DF', id=0) /
           UDP(sport=s.getsockname()[1], dport=port) /
           BTH(opcode=WRITE_ONLY, dqpn=qpn, psn=psn, ackreq=1) / Raw(body))
    s.sendto(bytes(pkt)[28:], ('127.0.0.1', port))
    s.close()


send('127.0.0.2', rkey)
print(f'sent: WRITE ONLY from 127.0.0.2 to qpn {qpn:#x} psn {psn:#x} with the real rkey {rkey:#x}')
guess = 1 << 8 | (1 * 0x9d + 0x5a) & 0xff
if guess == rkey:
    guess ^= 1
send('127.0.0.1', guess)
print(f'sent: WRITE ONLY from 127.0.0.1 to qpn {qpn:#x} psn {psn:#x} with a guessed rkey {guess:#x}')
