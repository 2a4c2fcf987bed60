#!/bin/sh
# traffic_pyverbs_share: rdma-core's tests.test_shared_pd and
# tests.test_device.SharedDMTest on uroce0 through `uroce run`: a context
# imported from a dup of another's cmd_fd (ibv_import_device), its PD and
# MR imported by handle, QPs and CQs of the imported context on the
# imported PD, RC RDMA WRITE traffic into and out of the imported MR, then
# unimport; a DM imported the same way reads what the original wrote.
# Pass = exit 0, each test's outcome as in
# tests/pyverbs/MAJOR/traffic_pyverbs_share.tsv. docs/provider.md "Shared
# contexts".
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
# test_device's DM tests pass a float to random.randrange (it_pyverbs.sh)
PYTHONWARNINGS=ignore::DeprecationWarning
export PYTHONWARNINGS
pyverbs_run 300 tests.test_shared_pd tests.test_device.SharedDMTest
