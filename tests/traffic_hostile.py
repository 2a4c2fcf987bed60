"""traffic_hostile.py: hostile traffic through a live uroced.

Run by tests/traffic_hostile.sh inside `uroce run` (pyverbs 44 + scapy):
  traffic_hostile.py UDP_PORT
Forged RoCEv2 packets with a valid ICRC (scapy computes it) at the PSN the
QP expects, unsolicited responses, a duplicate-READ flood, junk datagrams;
then, through real verbs: RNR with rnr_retry 0, a registered buffer that
the application unmapped (receive into it, RDMA WRITE/READ it, send from
it) and a CQ overrun. Every case checks exact QP states, completion
statuses and async event types, and a fresh QP pair still carries a SEND
after each group. Exit 0 if all pass, 1 with one line per failure.
"""
import ctypes, signal, socket, struct, sys, time
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.qp import QPCap, QPInitAttr, QP
from pyverbs.wr import SGE, RecvWR, SendWR
import pyverbs.enums as e
from pyverbs_rc import rc_connect
from scapy.all import IP, UDP, Raw
from scapy.contrib.roce import BTH

PORT = int(sys.argv[1])
ctx = Context(name='uroce0')
pd = PD(ctx)
gid = ctx.query_gid(1, 0)
ACC = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
mra = MR(pd, 65536, ACC)
mrb = MR(pd, 65536, ACC)
failures = []
# opcodes (IBTA 9.2): RC SEND_FIRST 0, SEND_MIDDLE 1, SEND_LAST 2, SEND_ONLY 4,
# WRITE_FIRST 6, WRITE_ONLY 10, READ_REQUEST 12, READ_RESP_ONLY 16, ACK 17
A_PSN, B_PSN = 0x200, 0x100   # sq_psn of A (= B's expected PSN), of B


def check(name, expected, actual):
    if expected != actual:
        failures.append(f'{name}: expected {expected!r}, got {actual!r}')
        print(f'FAIL {name}: expected {expected!r}, got {actual!r}')
    else:
        print(f'ok   {name}: {actual!r}')


def mkqp(cqe=64):
    cq = CQ(ctx, cqe)
    cap = QPCap(max_send_wr=64, max_recv_wr=64, max_send_sge=1, max_recv_sge=1)
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)), cq


def connect(qp, dqpn, rq_psn, sq_psn, rnr_retry=7):
    rc_connect(qp, gid, dqpn, rq_psn, sq_psn, ACC, rnr_retry)


def pair(rnr_retry=7, cqe_b=64):
    qa, ca = mkqp()
    qb, cb = mkqp(cqe_b)
    connect(qa, qb.qp_num, B_PSN, A_PSN, rnr_retry)
    connect(qb, qa.qp_num, A_PSN, B_PSN)
    return qa, ca, qb, cb


def state(qp):
    return qp.query(e.IBV_QP_STATE)[0].qp_state


def poll(cq, n=1, secs=10):
    out, end = [], time.time() + secs
    while len(out) < n and time.time() < end:
        out += cq.poll(n - len(out))[1]
    return [(w.wr_id, w.status) for w in out]


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def async_event(secs=5):
    """The next async event's type (acked), or None after SECS. pyverbs
    blocks in read(2) holding the GIL, so no Python thread could time it
    out; SIGALRM interrupts the read instead (Python installs its handlers
    without SA_RESTART: read fails with EINTR and the handler raises)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(secs)
    try:
        ev = ctx.get_async_event()
        signal.alarm(0)
        t = ev.event_type
        ev.ack()
        return t
    except _Timeout:
        return None
    except Exception as ex:   # pyverbs turns EINTR into its own error
        signal.alarm(0)
        print(f'async event: {ex}', flush=True)
        return None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def send(qp, wr_id, addr, lkey, n=100, opcode=e.IBV_WR_SEND, raddr=0, rkey=0):
    w = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1, sg=[SGE(addr, n, lkey)],
               send_flags=e.IBV_SEND_SIGNALED)
    if opcode != e.IBV_WR_SEND:
        w.set_wr_rdma(rkey, raddr)
    qp.post_send(w)


def still_serving(tag):
    qa, ca, qb, cb = pair()
    mra.write(bytes(range(100)), 100)
    qb.post_recv(RecvWR(wr_id=7, num_sge=1, sg=[SGE(mrb.buf, 4096, mrb.lkey)]))
    send(qa, 8, mra.buf, mra.lkey)
    check(f'{tag}: fresh pair SEND', ([(8, 0)], [(7, 0)], bytes(range(100))),
          (poll(ca), poll(cb), mrb.read(100, 0)))


sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(('127.0.0.1', 0))


def inject(op, dqpn, psn, body, bad_icrc=False, cut=None):
    pkt = (IP(src='127.0.0.1', dst='127.0.0.1', flags='DF', id=0) /
           UDP(sport=sock.getsockname()[1], dport=PORT) /
           BTH(opcode=op, dqpn=dqpn, psn=psn, ackreq=1) / Raw(body))
    b = bytes(pkt)[28:]          # BTH .. ICRC, as the UDP socket carries it
    if bad_icrc:
        b = b[:-1] + bytes([b[-1] ^ 1])
    if cut is not None:
        b = b[:cut]
    sock.sendto(b, ('127.0.0.1', PORT))


def reth(va, rkey, n):
    return struct.pack('>QII', va, rkey, n)



# 0. The event timeout works while pyverbs blocks: with no event pending,
#    async_event returns None after its 1 s, not never.
t0 = time.monotonic()
check('no async event pending: async_event(1)', None, async_event(1))
check('async_event(1) returned within 3 s', True, time.monotonic() - t0 < 3)

# 1. Forged requests at the PSN the responder expects: the responder NAKs,
#    moves to ERR and raises the async event of the error class.
rows = [
    # name, opcode, body, expected B state, expected async event
    # DMA length over 2^31 (max message size) or not the ONLY packet's
    # payload: invalid request (IBTA 9.7.5.1.1), not an access error
    ('WRITE_ONLY, DMA length 0xfffffff0, 16 bytes payload', 10,
     lambda: reth(mrb.buf, mrb.rkey, 0xFFFFFFF0) + b'X' * 16, e.IBV_QPS_ERR, e.IBV_EVENT_QP_REQ_ERR),
    ('READ_REQUEST, DMA length 0xfffffff0', 12,
     lambda: reth(mrb.buf, mrb.rkey, 0xFFFFFFF0), e.IBV_QPS_ERR, e.IBV_EVENT_QP_REQ_ERR),
    ('WRITE_ONLY, 16 bytes ending 8 past the MR', 10,
     lambda: reth(mrb.buf + 65536 - 8, mrb.rkey, 16) + b'X' * 16, e.IBV_QPS_ERR, e.IBV_EVENT_QP_ACCESS_ERR),
    ('READ_REQUEST, 8 bytes past the MR', 12,
     lambda: reth(mrb.buf, mrb.rkey, 65536 + 8), e.IBV_QPS_ERR, e.IBV_EVENT_QP_ACCESS_ERR),
    ('READ_REQUEST, va + length wraps 2^64', 12,
     lambda: reth(0xFFFFFFFFFFFFF000, mrb.rkey, 0x2000), e.IBV_QPS_ERR, e.IBV_EVENT_QP_ACCESS_ERR),
    ('SEND_MIDDLE without SEND_FIRST', 1, lambda: b'm' * 1024, e.IBV_QPS_ERR, e.IBV_EVENT_QP_REQ_ERR),
]
for name, op, body, st, ev in rows:
    qa, ca, qb, cb = pair()
    inject(op, qb.qp_num, A_PSN, body())
    check(f'{name}: async event', ev, async_event())
    check(f'{name}: responder state', st, state(qb))

# 2. Junk the daemon must drop without touching the QP: truncated
#    datagrams, a bad ICRC, QPNs that do not exist.
qa, ca, qb, cb = pair()
for cut in (0, 1, 5, 11, 12, 15, 16):
    inject(4, qb.qp_num, A_PSN, b'a' * 8, cut=cut)
inject(4, qb.qp_num, A_PSN, b'a' * 8, bad_icrc=True)
for qpn in (0xFFFFFF, 0, 1, 0x123456):
    inject(4, qpn, A_PSN, b'a' * 8)
time.sleep(0.3)
check('junk datagrams: responder state', e.IBV_QPS_RTS, state(qb))
qb.post_recv(RecvWR(wr_id=1, num_sge=1, sg=[SGE(mrb.buf, 4096, mrb.lkey)]))
send(qa, 2, mra.buf, mra.lkey)
check('junk datagrams: the pair still carries a SEND', ([(2, 0)], [(1, 0)]), (poll(ca), poll(cb)))

# 3. Unsolicited responses at the requester: READ response, ACK far ahead,
#    NAK sequence error with nothing outstanding -> dropped, QP stays RTS.
qa, ca, qb, cb = pair()
inject(16, qa.qp_num, A_PSN, struct.pack('>I', 0x1f000000) + b'R' * 64)
inject(17, qa.qp_num, 0x800000, struct.pack('>I', 0x1f000005))
inject(17, qa.qp_num, A_PSN, struct.pack('>I', 0x60000005))
time.sleep(0.3)
check('unsolicited READ response / ACK / NAK: requester state', e.IBV_QPS_RTS, state(qa))
qb.post_recv(RecvWR(wr_id=3, num_sge=1, sg=[SGE(mrb.buf, 4096, mrb.lkey)]))
send(qa, 4, mra.buf, mra.lkey)
check('unsolicited responses: the pair still carries a SEND', ([(4, 0)], [(3, 0)]), (poll(ca), poll(cb)))

# 4. One 64 KiB READ request then 300 duplicates of it (each replayed, C9-...
#    9.7.5.1.3.2): the responder stays RTS and the daemon keeps serving.
qa, ca, qb, cb = pair()
for i in range(301):
    inject(12, qb.qp_num, A_PSN, reth(mrb.buf, mrb.rkey, 65536))
time.sleep(1)
check('READ + 300 duplicates: responder state', e.IBV_QPS_RTS, state(qb))
still_serving('after the duplicate-READ flood')

# 5. RNR with rnr_retry 0 through verbs: no receive posted.
qa, ca, qb, cb = pair(rnr_retry=0)
send(qa, 9, mra.buf, mra.lkey)
check('RNR, rnr_retry 0: completion', [(9, e.IBV_WC_RNR_RETRY_EXC_ERR)], poll(ca))
check('RNR, rnr_retry 0: requester state', e.IBV_QPS_ERR, state(qa))

# 6. A registered buffer the application unmapped: the daemon's read or write through the client's /proc/self/mem descriptor fails.
libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
addr = libc.mmap(None, 65536, 3, 0x22, -1, 0)   # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
mrf = MR(pd, 65536, ACC, address=addr)
check('munmap of the registered buffer', 0, libc.munmap(addr, 65536))
qa, ca, qb, cb = pair()
qb.post_recv(RecvWR(wr_id=11, num_sge=1, sg=[SGE(addr, 4096, mrf.lkey)]))
send(qa, 12, mra.buf, mra.lkey)
check('SEND into an unmapped receive buffer: requester, responder',
      ([(12, e.IBV_WC_REM_OP_ERR)], [(11, e.IBV_WC_LOC_PROT_ERR)]), (poll(ca), poll(cb)))
check('SEND into an unmapped receive buffer: responder async event', e.IBV_EVENT_QP_FATAL, async_event())
for name, opcode, wr_id in (('RDMA WRITE into', e.IBV_WR_RDMA_WRITE, 13), ('RDMA READ from', e.IBV_WR_RDMA_READ, 14)):
    qa, ca, qb, cb = pair()
    send(qa, wr_id, mra.buf, mra.lkey, opcode=opcode, raddr=addr, rkey=mrf.rkey)
    check(f'{name} an unmapped MR: completion', [(wr_id, e.IBV_WC_REM_ACCESS_ERR)], poll(ca))
    check(f'{name} an unmapped MR: responder async event', e.IBV_EVENT_QP_ACCESS_ERR, async_event())
qa, ca, qb, cb = pair()
qb.post_recv(RecvWR(wr_id=15, num_sge=1, sg=[SGE(mrb.buf, 4096, mrb.lkey)]))
send(qa, 16, addr, mrf.lkey)
check('SEND from an unmapped buffer: completion', [(16, e.IBV_WC_LOC_PROT_ERR)], poll(ca))
check('SEND from an unmapped buffer: requester state', e.IBV_QPS_ERR, state(qa))
check('SEND from an unmapped buffer: responder state', e.IBV_QPS_RTS, state(qb))
still_serving('after the unmapped buffers')

# 7. CQ overrun through verbs: more receive completions than the CQ holds.
qa, ca, qb, cb = pair(cqe_b=1)
n = cb.cqe + 2
for i in range(n):
    qb.post_recv(RecvWR(wr_id=100 + i, num_sge=1, sg=[SGE(mrb.buf, 64, mrb.lkey)]))
for i in range(n):
    send(qa, 200 + i, mra.buf, mra.lkey, n=8)
check('CQ overrun: sends complete', [(200 + i, 0) for i in range(n)], poll(ca, n))
# The next event must be CQ_ERR: a QP_FATAL from the unmapped-buffer SEND
# above (an error the CQE already reports) would come first.
check('CQ overrun: async event', e.IBV_EVENT_CQ_ERR, async_event())
still_serving('after the CQ overrun')

print(f'{len(failures)} failure(s)')
sys.exit(1 if failures else 0)
