#!/bin/sh
# cm_pyverbs: rdma-core's tests.test_rdmacm on uroce0 through `uroce run`:
# pyverbs' CMID over librdmacm over the provider's interception and uroced's
# connection manager (docs/rdma-cm.md): synchronous and asynchronous RC
# connections with SEND, RDMA WRITE and READ traffic, a QP the test moves
# itself (rdma_init_qp_attr), UD over SIDR, a REJECT, and multicast joins
# with UD traffic to the group (rdma_join_multicast, _ex, and a leave;
# docs/rdma-cm.md "Multicast"). Pass =
# exit 0, each test's outcome as in tests/pyverbs/MAJOR/cm_pyverbs.tsv (MAJOR: the
# installed rdma-core's, 44 on Debian 12, 56 on Debian 13).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 tests.test_rdmacm
