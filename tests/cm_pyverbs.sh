#!/bin/sh
# cm_pyverbs: rdma-core 44's tests.test_rdmacm on uroce0 through `uroce run`:
# pyverbs' CMID over librdmacm over the provider's interception and uroced's
# connection manager (docs/rdma-cm.md): synchronous and asynchronous RC
# connections with SEND, RDMA WRITE and READ traffic, a QP the test moves
# itself (rdma_init_qp_attr), UD over SIDR, a REJECT, and multicast joins
# with UD traffic to the group (rdma_join_multicast, _ex, and a leave;
# docs/rdma-cm.md "Multicast"). Pass = exit 0, 10 tests run, exactly the 10
# named below passed, no skip.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 10 tests.test_rdmacm
pyverbs_passed_exact "test_rdmacm_async_ex_leave_multicast_traffic (tests.test_rdmacm.CMTestCase.test_rdmacm_async_ex_leave_multicast_traffic)
test_rdmacm_async_ex_multicast_traffic (tests.test_rdmacm.CMTestCase.test_rdmacm_async_ex_multicast_traffic)
test_rdmacm_async_multicast_traffic (tests.test_rdmacm.CMTestCase.test_rdmacm_async_multicast_traffic)
test_rdmacm_async_read (tests.test_rdmacm.CMTestCase.test_rdmacm_async_read)
test_rdmacm_async_reject_traffic (tests.test_rdmacm.CMTestCase.test_rdmacm_async_reject_traffic)
test_rdmacm_async_traffic (tests.test_rdmacm.CMTestCase.test_rdmacm_async_traffic)
test_rdmacm_async_traffic_external_qp (tests.test_rdmacm.CMTestCase.test_rdmacm_async_traffic_external_qp)
test_rdmacm_async_udp_traffic (tests.test_rdmacm.CMTestCase.test_rdmacm_async_udp_traffic)
test_rdmacm_async_write (tests.test_rdmacm.CMTestCase.test_rdmacm_async_write)
test_rdmacm_sync_traffic (tests.test_rdmacm.CMTestCase.test_rdmacm_sync_traffic)"
expect_eq "skipped tests" 0 "$(grep -c "skipped '" "$T/py.log")"
