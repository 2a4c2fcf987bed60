#!/bin/sh
# it_pyverbs: rdma-core's own python tests (Debian's python3-pyverbs
# ships them, gzipped) pass on uroce0 through `uroce run`: test_device,
# test_pd, test_addr, test_cq, test_qp (no data moves there; raw packet QPs
# included, docs/raw-packet.md) and the tests
# of test_mr that move no data.  Pass = exit 0, no FAIL/ERROR, unittest's
# "OK" line, and each test's outcome as in tests/pyverbs/MAJOR/it_pyverbs.tsv (MAJOR: the
# installed rdma-core's, 44 on Debian 12, 56 on Debian 13): the
# skips are features uroce answers with EOPNOTSUPP, or hardware this machine
# lacks.
. "$top_srcdir/tests/lib.sh"
# test_device's DM tests pass a float to random.randrange: Python 3.11's
# DeprecationWarning on stderr would split their "name ... ok" lines.
PYTHONWARNINGS=ignore::DeprecationWarning
export PYTHONWARNINGS
up --dev uroce0
pyverbs_run 900 \
	tests.test_device tests.test_pd tests.test_addr tests.test_cq tests.test_qp \
	tests.test_mr.MRTest.test_reg_mr_bad_flags tests.test_mr.MWTest.test_reg_mw_wrong_type \
	tests.test_mr.DeviceMemoryAPITest tests.test_mr.DmaBufMRTest
