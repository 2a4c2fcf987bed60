#!/bin/sh
# cm_daemon: the "daemon" case of tests/provider_ucma, which needs the
# daemon's connection manager (docs/rdma-cm.md): bind to uroce0's address
# with an option kept before it (replayed), rdma_cm_id bound to uroce0,
# port 1 and a source port; then listen, resolve, connect, accept,
# ESTABLISHED, DISCONNECTED inside one process and rdma_destroy_id's wait for
# events_reported.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
CK_RUN_CASE=daemon timeout 300 "$UROCE" run -- "$top_builddir/tests/provider_ucma" >"$T/ucma.out" 2>&1
rc=$?
cat "$T/ucma.out"
expect_eq "provider_ucma (case daemon) exit status" 0 "$rc"
expect_line "provider_ucma: both checks passed" "$T/ucma.out" "100%%: Checks: 2, Failures: 0, Errors: 0"
