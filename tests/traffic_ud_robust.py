"""traffic_ud_robust.py: a UD QP survives an oversized datagram (live uroced).

Run by tests/traffic_ud_robust.sh inside `uroce run` (pyverbs):
  traffic_ud_robust.py
Two UD QPs on uroce0 (port MTU 4096). B posts two 1064-byte receive buffers
(40-byte GRH area + 1024, ibv_ud_pingpong's layout); A sends 2000 bytes, then
1000. Expected (docs/transport.md, UD receive): the first receive completes
with IBV_WC_LOC_LEN_ERR, B stays in RTS, the second arrives byte-exact.
Exit 0 if all pass, 1 with one line per failure.
"""
import sys, time
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.qp import QPCap, QPInitAttr, QPAttr, QP
from pyverbs.addr import AHAttr, GlobalRoute, AH
from pyverbs.wr import SGE, RecvWR, SendWR
import pyverbs.enums as e

QKEY = 0x11111111
ctx = Context(name='uroce0')
pd = PD(ctx)
gid = ctx.query_gid(1, 0)
failures = []


def check(name, expected, actual):
    ok = expected == actual
    print(f'{"ok  " if ok else "FAIL"} {name}: expected {expected!r}, got {actual!r}')
    if not ok:
        failures.append(name)


def ud_qp():
    cq = CQ(ctx, 16)
    cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap))
    a = QPAttr()
    a.qp_state, a.pkey_index, a.port_num, a.qkey = e.IBV_QPS_INIT, 0, 1, QKEY
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_QKEY)
    a = QPAttr()
    a.qp_state = e.IBV_QPS_RTR
    qp.modify(a, e.IBV_QP_STATE)
    a = QPAttr()
    a.qp_state, a.sq_psn = e.IBV_QPS_RTS, 0
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)
    return qp, cq


def poll(cq, n, secs=5.0):
    wcs, end = [], time.time() + secs
    while len(wcs) < n and time.time() < end:
        got, lst = cq.poll(n - len(wcs))
        wcs += lst[:got]
    return wcs


qa, ca = ud_qp()
qb, cb = ud_qp()
mra = MR(pd, 8192, e.IBV_ACCESS_LOCAL_WRITE)
mrb = MR(pd, 8192, e.IBV_ACCESS_LOCAL_WRITE)
payload = bytes((i * 7 + 1) & 0xFF for i in range(2000))
mra.write(payload, len(payload))
for i in range(2):
    qb.post_recv(RecvWR(wr_id=9 + i, num_sge=1,
                        sg=[SGE(mrb.buf + 4096 * i, 1064, mrb.lkey)]))
ah = AH(pd, attr=AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=0), is_global=1, port_num=1))
for wr_id, length in ((1, 2000), (2, 1000)):
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND, num_sge=1,
                sg=[SGE(mra.buf, length, mra.lkey)])
    wr.set_wr_ud(ah, qb.qp_num, QKEY)
    qa.post_send(wr)

sent = poll(ca, 2)
check('sender completions', [(1, e.IBV_WC_SUCCESS), (2, e.IBV_WC_SUCCESS)],
      [(w.wr_id, w.status) for w in sent])
got = poll(cb, 2)
check('receive completions', [(9, e.IBV_WC_LOC_LEN_ERR), (10, e.IBV_WC_SUCCESS)],
      [(w.wr_id, w.status) for w in got])
if len(got) == 2:
    check('second byte_len', 40 + 1000, got[1].byte_len)
check('second payload byte-exact', True, mrb.read(1000, 4096 + 40) == payload[:1000])
check('receiver state', e.IBV_QPS_RTS, qb.query(e.IBV_QP_STATE)[0].qp_state)
sys.exit(1 if failures else 0)
