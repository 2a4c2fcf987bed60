#!/bin/sh
# traffic_pyverbs_mw: rdma-core 44's tests.test_mr.MWTest on uroce0 through
# `uroce run`: type 1 windows bound with ibv_bind_mw and type 2 windows bound
# with IBV_WR_BIND_MW, RDMA WRITE traffic through their rkeys, and the
# Remote Access Error pyverbs expects after a type 1 unbind, a type 2
# LOCAL_INV, a SEND_WITH_INV from the peer and a dealloc; and ibv_alloc_mw
# of type 3 failing with EINVAL. Pass = exit 0, 7 tests run, exactly the 7
# named below passed, none skipped.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 7 tests.test_mr.MWTest
pyverbs_passed_exact "test_invalidate_mw_type1 (tests.test_mr.MWTest.test_invalidate_mw_type1)
test_mw_type1 (tests.test_mr.MWTest.test_mw_type1)
test_mw_type2 (tests.test_mr.MWTest.test_mw_type2)
test_mw_type2_invalidate_dealloc (tests.test_mr.MWTest.test_mw_type2_invalidate_dealloc)
test_mw_type2_invalidate_local (tests.test_mr.MWTest.test_mw_type2_invalidate_local)
test_mw_type2_invalidate_remote (tests.test_mr.MWTest.test_mw_type2_invalidate_remote)
Verify that trying to create a MW of a wrong type fails"
expect_eq "unittest result line (no skips)" "OK" "$(tail -n 1 "$T/py.log")"
