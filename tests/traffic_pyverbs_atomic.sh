#!/bin/sh
# traffic_pyverbs_atomic: rdma-core 44's tests.test_atomic on uroce0
# through `uroce run`: CMP_AND_SWAP (equal and not equal) and FETCH_AND_ADD
# on RC with their exact values checked by pyverbs, and the five bad flows
# (QP or MR without REMOTE_ATOMIC, a misaligned remote address, lkey+1,
# rkey+1), each of which must end in an error completion. The two XRC
# variants skip (uroce has no XRC). Pass = exit 0, 9 tests run, exactly
# the 7 named below passed, exactly the listed skips.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 9 tests.test_atomic
pyverbs_passed_exact "test_atomic_cmp_and_swap (tests.test_atomic.AtomicTest.test_atomic_cmp_and_swap)
test_atomic_fetch_and_add (tests.test_atomic.AtomicTest.test_atomic_fetch_and_add)
test_atomic_invalid_lkey (tests.test_atomic.AtomicTest.test_atomic_invalid_lkey)
test_atomic_invalid_mr_access (tests.test_atomic.AtomicTest.test_atomic_invalid_mr_access)
test_atomic_invalid_qp_access (tests.test_atomic.AtomicTest.test_atomic_invalid_qp_access)
test_atomic_invalid_rkey (tests.test_atomic.AtomicTest.test_atomic_invalid_rkey)
test_atomic_non_aligned_addr (tests.test_atomic.AtomicTest.test_atomic_non_aligned_addr)"
pyverbs_skips_exact "2 Create XRCD is not supported"
