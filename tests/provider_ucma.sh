#!/bin/sh
# provider_ucma: librdmacm over the provider's rdma_cm interception, with
# uroce0 up at 127.0.0.1 (docs/rdma-cm.md, "Provider"). Both load orders:
# tests/provider_ucma (linked to librdmacm: the provider's constructor
# patches it) and tests/provider_ucma_dlopen (librdmacm dlopen()ed RTLD_LOCAL
# after libibverbs loaded the provider, and before it). Only the "provider" case of
# tests/provider_ucma runs here; its "daemon" case needs the daemon's
# connection manager (tests/cm_daemon.sh).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
CK_RUN_CASE=provider timeout 300 "$UROCE" run -- "$top_builddir/tests/provider_ucma" >"$T/ucma.out" 2>&1
rc=$?
cat "$T/ucma.out"
expect_eq "provider_ucma (case provider) exit status" 0 "$rc"
expect_line "provider_ucma: all 10 checks passed" "$T/ucma.out" "100%%: Checks: 10, Failures: 0, Errors: 0"
CK_FORK=yes timeout 120 "$UROCE" run -- "$top_builddir/tests/provider_ucma_dlopen" >"$T/dl.out" 2>&1
rc=$?
cat "$T/dl.out"
expect_eq "provider_ucma_dlopen exit status" 0 "$rc"
expect_line "provider_ucma_dlopen: 2 checks passed" "$T/dl.out" "100%%: Checks: 2, Failures: 0, Errors: 0"
