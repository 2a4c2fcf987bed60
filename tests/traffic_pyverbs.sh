#!/bin/sh
# traffic_pyverbs: rdma-core's own python tests that move data, on
# uroce0 through `uroce run` (one process, two contexts, one thread: the
# daemon must make progress for the side nobody polls):
#   test_cq_events (RC, UD with a completion channel), test_cqex (RC, UD,
#   XRC), test_mr's traffic classes (MRTest rereg traffic, MWTest:
#   memory windows type 1 and 2 with traffic and invalidation,
#   DmaBufTestCase, DeviceMemoryTest; features uroce lacks skip with
#   EOPNOTSUPP), and test_mlx5_timestamp's generic real-time RC traffic
#   test.  (test_qp in v44 moves no data; it_pyverbs runs all of it.)
# Pass = exit 0, no FAIL/ERROR, unittest's OK line, and
# each test's outcome as in tests/pyverbs/MAJOR/traffic_pyverbs.tsv (MAJOR: the
# installed rdma-core's, 44 on Debian 12, 56 on Debian 13).
# docs/clients.md §3.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 \
	tests.test_cq_events tests.test_cqex \
	tests.test_mr.MRTest tests.test_mr.MWTest tests.test_mr.DmaBufTestCase tests.test_mr.DeviceMemoryTest \
	tests.test_mlx5_timestamp.TimeStampTest.test_timestamp_real_time_rc_traffic
