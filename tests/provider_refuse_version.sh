#!/bin/sh
# provider_refuse_version.sh - the provider refuses a libibverbs of another release.
#
# The real libibverbs.so.1.14.44.0 is copied under the file name of rdma-core
# 45 (libibverbs.so.1.14.45.0, soname link libibverbs.so.1) and put first on
# LD_LIBRARY_PATH. The provider must then print exactly one line naming the
# file and the release, and register nothing, so ibv_devices lists no uroce0.
# With the system library the same command lists uroce0 (the control case).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0

sys=$(ldd "$(command -v ibv_devices)" | sed -n 's/^[[:space:]]*libibverbs\.so\.1 => \([^ ]*\) .*/\1/p')
[ -n "$sys" ] || fail "libibverbs.so.1 not found in ldd ibv_devices"
sys=$(readlink -f "$sys")
expect_eq "system libibverbs" "libibverbs.so.1.14.44.0" "$(basename "$sys")"

urun ibv_devices >"$T/ok.out" 2>"$T/ok.err"
expect_eq "ibv_devices exit (system library)" 0 $?
grep -q '^[[:space:]]*uroce0[[:space:]]' "$T/ok.out" || fail "uroce0 listed with the system library" "uroce0" "$(cat "$T/ok.out")"
expect_eq "provider stderr with the system library" "" "$(cat "$T/ok.err")"

mkdir -p "$T/lib"
cp "$sys" "$T/lib/libibverbs.so.1.14.45.0"
ln -s libibverbs.so.1.14.45.0 "$T/lib/libibverbs.so.1"
chmod -R a+rX "$T/lib"
urun env LD_LIBRARY_PATH="$T/lib" ibv_devices >"$T/bad.out" 2>"$T/bad.err"
expect_eq "provider message" \
	"uroce: provider not registered: $T/lib/libibverbs.so.1.14.45.0 is rdma-core 45.0; this provider has the layout of rdma-core 44 only" \
	"$(cat "$T/bad.err")"
if grep -q 'uroce0' "$T/bad.out"; then
	fail "no uroce0 with a refused libibverbs" "(not listed)" "$(cat "$T/bad.out")"
fi
echo "ok: uroce0 not listed with rdma-core 45's file name"
