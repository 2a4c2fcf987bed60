#!/bin/sh
# traffic_pyverbs_qpex: rdma-core 44's tests.test_qpex on uroce0 through
# `uroce run`: the extended post-send API (ibv_wr_*) moving data on RC
# (SEND, SEND_WITH_IMM, RDMA WRITE(_WITH_IMM), READ, both atomics, zero
# lengths) and UD (SEND, SEND_WITH_IMM, zero size), and the bad flows
# (posting in RESET: EINVAL at wr_complete; full RQ; too many receive
# SGEs), and BIND_MW (its test names itself by its docstring). Skips:
# ATOMIC_WRITE (send_ops_flags refused with EOPNOTSUPP), XRC (no XRCD).
# Pass = exit 0, 20 tests run, exactly the 17 named below passed, exactly
# the listed skips. docs/clients.md §3.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 20 tests.test_qpex
pyverbs_passed_exact "Verify bind memory window operation using the new post_send API.
test_full_rq_bad_flow (tests.test_qpex.QpExTestCase.test_full_rq_bad_flow)
test_post_receive_qp_state_bad_flow (tests.test_qpex.QpExTestCase.test_post_receive_qp_state_bad_flow)
test_post_send_qp_state_bad_flow (tests.test_qpex.QpExTestCase.test_post_send_qp_state_bad_flow)
test_qp_ex_rc_atomic_cmp_swp (tests.test_qpex.QpExTestCase.test_qp_ex_rc_atomic_cmp_swp)
test_qp_ex_rc_atomic_fetch_add (tests.test_qpex.QpExTestCase.test_qp_ex_rc_atomic_fetch_add)
test_qp_ex_rc_rdma_read (tests.test_qpex.QpExTestCase.test_qp_ex_rc_rdma_read)
test_qp_ex_rc_rdma_read_zero_size (tests.test_qpex.QpExTestCase.test_qp_ex_rc_rdma_read_zero_size)
test_qp_ex_rc_rdma_write (tests.test_qpex.QpExTestCase.test_qp_ex_rc_rdma_write)
test_qp_ex_rc_rdma_write_imm (tests.test_qpex.QpExTestCase.test_qp_ex_rc_rdma_write_imm)
test_qp_ex_rc_rdma_write_zero_length (tests.test_qpex.QpExTestCase.test_qp_ex_rc_rdma_write_zero_length)
test_qp_ex_rc_send (tests.test_qpex.QpExTestCase.test_qp_ex_rc_send)
test_qp_ex_rc_send_imm (tests.test_qpex.QpExTestCase.test_qp_ex_rc_send_imm)
test_qp_ex_ud_send (tests.test_qpex.QpExTestCase.test_qp_ex_ud_send)
test_qp_ex_ud_send_imm (tests.test_qpex.QpExTestCase.test_qp_ex_ud_send_imm)
test_qp_ex_ud_zero_size (tests.test_qpex.QpExTestCase.test_qp_ex_ud_zero_size)
test_rq_with_larger_sgl_bad_flow (tests.test_qpex.QpExTestCase.test_rq_with_larger_sgl_bad_flow)"
pyverbs_skips_exact "2 Create XRCD is not supported
1 Extended QP is not supported on this device"
