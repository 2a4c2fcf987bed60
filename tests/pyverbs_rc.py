"""pyverbs_rc: bring a pyverbs RC QP from RESET to RTS (tests only).

rc_connect(qp, gid, dqpn, rq_psn, sq_psn, access, rnr_retry=7): INIT with
port 1, P_Key index 0 and ACCESS; RTR with path MTU 1024, the GRH address
GID (sgid_index 0), DQPN and RQ_PSN, 4 responder resources, min_rnr_timer 1;
RTS with timeout 8, retry_cnt 3, RNR_RETRY, SQ_PSN, 4 outstanding READs.
Attribute masks as ibv_modify_qp(3) requires per transition.
"""
from pyverbs.qp import QPAttr
from pyverbs.addr import AHAttr, GlobalRoute
import pyverbs.enums as e


def rc_connect(qp, gid, dqpn, rq_psn, sq_psn, access, rnr_retry=7):
    a = QPAttr()
    a.qp_state, a.pkey_index, a.port_num, a.qp_access_flags = e.IBV_QPS_INIT, 0, 1, access
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
    a = QPAttr()
    a.qp_state, a.path_mtu, a.dest_qp_num, a.rq_psn = e.IBV_QPS_RTR, e.IBV_MTU_1024, dqpn, rq_psn
    a.max_dest_rd_atomic, a.min_rnr_timer = 4, 1
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=0), is_global=1, port_num=1)
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN |
              e.IBV_QP_RQ_PSN | e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
    a = QPAttr()
    a.qp_state, a.timeout, a.retry_cnt, a.rnr_retry = e.IBV_QPS_RTS, 8, 3, rnr_retry
    a.sq_psn, a.max_rd_atomic = sq_psn, 4
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
              e.IBV_QP_SQ_PSN | e.IBV_QP_MAX_QP_RD_ATOMIC)
