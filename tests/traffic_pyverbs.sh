#!/bin/sh
# traffic_pyverbs: rdma-core 44's own python tests that move data, on
# uroce0 through `uroce run` (one process, two contexts, one thread: the
# daemon must make progress for the side nobody polls):
#   test_cq_events (RC, UD with a completion channel), test_cqex (RC, UD;
#   XRC skips), test_mr's traffic classes (MRTest rereg traffic, MWTest:
#   memory windows type 1 and 2 with traffic and invalidation,
#   DmaBufTestCase, DeviceMemoryTest (SEND and RDMA WRITE on DM MRs); features uroce lacks skip with
#   EOPNOTSUPP), and test_mlx5_timestamp's generic real-time RC traffic
#   test.  (test_qp in v44 moves no data; it_pyverbs runs all of it.)
# Pass = exit 0, the exact test count, no FAIL/ERROR, unittest's OK line,
# the 21 tests named below passed, the 3 skips exactly as listed.  docs/clients.md §3.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 24 \
	tests.test_cq_events tests.test_cqex \
	tests.test_mr.MRTest tests.test_mr.MWTest tests.test_mr.DmaBufTestCase tests.test_mr.DeviceMemoryTest \
	tests.test_mlx5_timestamp.TimeStampTest.test_timestamp_real_time_rc_traffic

# The tests that must have run and passed (uroce supports all of these);
# unittest -v names a test by its docstring's first line when it has one.
for t in 'test_cq_events_ud (tests.test_cq_events.CqEventsTestCase.test_cq_events_ud)' \
	'test_cq_events_rc (tests.test_cq_events.CqEventsTestCase.test_cq_events_rc)' \
	'test_ud_traffic_cq_ex (tests.test_cqex.CqExTestCase.test_ud_traffic_cq_ex)' \
	'test_rc_traffic_cq_ex (tests.test_cqex.CqExTestCase.test_rc_traffic_cq_ex)' \
	'Test ibv_create_cq_ex()' 'Test ibv_create_cq_ex() with wrong comp_vector / number of cqes' \
	'Verify that illegal flags combination fails as expected' 'Test real time timestamp on RC traffic.' \
	'test_mr_rereg_access (tests.test_mr.MRTest.test_mr_rereg_access)' \
	"Test that cover rereg MR's access with this flow:" "Test that cover rereg MR's PD with this flow:" \
	'test_mr_rereg_addr (tests.test_mr.MRTest.test_mr_rereg_addr)' \
	'test_mw_type1 (tests.test_mr.MWTest.test_mw_type1)' \
	'test_invalidate_mw_type1 (tests.test_mr.MWTest.test_invalidate_mw_type1)' \
	'test_mw_type2 (tests.test_mr.MWTest.test_mw_type2)' \
	'test_mw_type2_invalidate_local (tests.test_mr.MWTest.test_mw_type2_invalidate_local)' \
	'test_mw_type2_invalidate_remote (tests.test_mr.MWTest.test_mw_type2_invalidate_remote)' \
	'test_mw_type2_invalidate_dealloc (tests.test_mr.MWTest.test_mw_type2_invalidate_dealloc)' \
	'Verify that trying to create a MW of a wrong type fails' \
	'test_dm_traffic (tests.test_mr.DeviceMemoryTest.test_dm_traffic)' \
	'test_dm_remote_traffic (tests.test_mr.DeviceMemoryTest.test_dm_remote_traffic)'; do
	grep -qxF "$t ... ok" "$T/py.log" || fail "$t" "ok" "$(grep -F "$t ..." "$T/py.log")"
	echo "ok: $t passed"
done
expect_eq "tests passed" 21 "$(grep -c ' \.\.\. ok$' "$T/py.log")"

# Exactly these skips (features uroce answers with EOPNOTSUPP: XRC;
# dma-buf needs a GPU render node).
pyverbs_skips_exact "1 Create XRCD is not supported
2 dmabuf: no usable /dev/dri/renderD node"
