#!/bin/sh
# traffic_pyverbs_atomic: rdma-core's tests.test_atomic on uroce0
# through `uroce run`: CMP_AND_SWAP (equal and not equal) and FETCH_AND_ADD
# on RC with their exact values checked by pyverbs, and the five bad flows
# (QP or MR without REMOTE_ATOMIC, a misaligned remote address, lkey+1,
# rkey+1), each of which must end in an error completion. The two XRC
# variants pass (docs/xrc.md). Pass = exit 0,
# each test's outcome as in tests/pyverbs/MAJOR/traffic_pyverbs_atomic.tsv (MAJOR: the
# installed rdma-core's, 44 on Debian 12, 56 on Debian 13).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 tests.test_atomic
