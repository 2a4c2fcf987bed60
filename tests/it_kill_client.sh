#!/bin/sh
# it_kill_client: a client killed with SIGKILL while it holds objects (a
# pyverbs program with a PD, an MR, a CQ, an RC QP and an AH) leaves the
# daemon running, and the daemon frees all of them: `uroce status` totals
# go back to 0 and a new client works.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
dpid=$(cat "$UROCE_RUN_DIR/uroce0.pid")

cat >"$T/hold.py" <<'PY'
# Create one object of each kind on uroce0, report, then wait to be killed.
import os, sys, time
import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.mr import MR
from pyverbs.cq import CQ
from pyverbs.qp import QPCap, QPInitAttr, QP
from pyverbs.addr import AHAttr, GlobalRoute, AH

ctx = Context(name='uroce0')
pd = PD(ctx)
mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
cq = CQ(ctx, 16)
qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                       cap=QPCap(max_send_wr=4, max_recv_wr=4)))
gr = GlobalRoute(dgid=ctx.query_gid(1, 0), sgid_index=0)
ah = AH(pd, attr=AHAttr(gr=gr, is_global=1, port_num=1))
with open(sys.argv[1], 'w') as f:
    f.write('%d\n' % os.getpid())
time.sleep(300)
PY
urun /usr/bin/python3 "$T/hold.py" "$T/ready" >"$T/hold.log" 2>&1 &
n=0
while [ ! -s "$T/ready" ] && [ $n -lt 300 ]; do
	kill -0 $! 2>/dev/null || break
	sleep 0.1
	n=$((n + 1))
done
[ -s "$T/ready" ] || fail "pyverbs client holding objects" "ready" "$(cat "$T/hold.log")"
cpid=$(cat "$T/ready")

uroce status --dev uroce0 >"$T/status" 2>&1
expect_line "objects held by the client" "$T/status" "totals clients=1 pd=1 mr=1 cq=1 qp=1 ah=1"

kill -KILL "$cpid"
wait 2>/dev/null
# The daemon sees the control socket close; wait for its clean-up.
n=0
while [ $n -lt 100 ]; do
	uroce status --dev uroce0 >"$T/status" 2>&1
	grep -qx 'totals clients=0 pd=0 mr=0 cq=0 qp=0 ah=0' "$T/status" && break
	sleep 0.1
	n=$((n + 1))
done
expect_line "objects after SIGKILL" "$T/status" "totals clients=0 pd=0 mr=0 cq=0 qp=0 ah=0"
expect_eq "daemon still the same process" "$dpid" "$(cat "$UROCE_RUN_DIR/uroce0.pid")"
case $(cat "/proc/$dpid/comm" 2>/dev/null) in *uroced*) echo "ok: uroced $dpid alive" ;;
*) fail "daemon alive after the client's SIGKILL" "uroced $dpid" "gone" ;; esac

urun ibv_devinfo -d uroce0 >"$T/devinfo" 2>&1
expect_eq "a new client works: ibv_devinfo exit" 0 $?
