#!/bin/sh
# traffic_pyverbs_qpex: rdma-core's tests.test_qpex on uroce0 through
# `uroce run`: the extended post-send API (ibv_wr_*) moving data on RC
# (SEND, SEND_WITH_IMM, RDMA WRITE(_WITH_IMM), READ, both atomics, zero
# lengths) and UD (SEND, SEND_WITH_IMM, zero size), and the bad flows
# (posting in RESET: EINVAL at wr_complete; full RQ; too many receive
# SGEs), and BIND_MW (its test names itself by its docstring). Skips:
# none. XRC SEND and SEND_WITH_IMM pass (docs/xrc.md). ATOMIC_WRITE runs
# (and, with rdma-core >= 45, FLUSH).
# Pass = exit 0, each test's outcome as in tests/pyverbs/MAJOR/traffic_pyverbs_qpex.tsv (MAJOR: the
# installed rdma-core's, 44 on Debian 12, 56 on Debian 13).
# docs/clients.md §3.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 300 tests.test_qpex
