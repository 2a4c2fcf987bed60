"""sec_victim.py: the victim side of tests/it_security.sh (pyverbs, inside
`uroce run`, as root): an RC QP pair on uroce0 and a 64 KiB MR with remote
write access, zero-filled.

  sec_victim.py READY GO
Writes "QPN PSN VA RKEY" (decimal) of the receiving QP to READY, waits until
GO exists (the attacker is done), then prints and checks: the MR is still all
zero (no forged WRITE landed), and a real RDMA WRITE through the pair still
lands only if the QP was not moved to ERR by the attack (it is printed).
Exit 0 if the MR is untouched, 1 otherwise.
"""
import os, sys, time
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.qp import QPCap, QPInitAttr, QP
import pyverbs.enums as e
from pyverbs_rc import rc_connect

ACC = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
A_PSN, B_PSN = 0x200, 0x100
ctx = Context(name='uroce0')
pd = PD(ctx)
gid = ctx.query_gid(1, 0)
mrb = MR(pd, 65536, ACC)
mrb.write(bytes(65536), 65536)


def mkqp():
    cq = CQ(ctx, 16)
    cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))


def connect(qp, dqpn, rq_psn, sq_psn):
    rc_connect(qp, gid, dqpn, rq_psn, sq_psn, ACC)


qa, qb = mkqp(), mkqp()
connect(qa, qb.qp_num, B_PSN, A_PSN)
connect(qb, qa.qp_num, A_PSN, B_PSN)
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write(f'{qb.qp_num} {A_PSN} {mrb.buf} {mrb.rkey}\n')
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
end = time.time() + 60
while not os.path.exists(sys.argv[2]) and time.time() < end:
    time.sleep(0.05)
time.sleep(0.3)  # the last forged datagrams are processed
data = mrb.read(65536, 0)
st = qb.query(e.IBV_QP_STATE)[0].qp_state
print(f'receiving QP state after the attack: {st}')
if data != bytes(65536):
    off = next(i for i, b in enumerate(data) if b)
    print(f'FAIL: the MR was written at offset {off}: {data[off:off + 32]!r}')
    sys.exit(1)
print('ok: the MR is still all zero')
