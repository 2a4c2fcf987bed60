#!/bin/sh
# provider_refuse_version.sh - the provider refuses a libibverbs of another release.
#
# The libibverbs that ibv_devices loads (the system one, or a release's own
# under scripts/test-rdma-core) must be of the configured layout family
# (config.h UROCE_RDMA_CORE_FIRST..LAST); with it ibv_devices lists uroce0
# (the control case), and the loader's trace shows that it and
# liburoce-rdmav<PABI>.so (config.h UROCE_PABI_VERSION) were loaded. The same file is then copied under the name of the
# release just before and just after the family (libibverbs.so.1.A.R.0, soname
# link libibverbs.so.1) and put first on LD_LIBRARY_PATH: the provider must
# print exactly one line naming the file and the release, and register
# nothing, so ibv_devices lists no uroce0.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0

def() { sed -n "s/^#define $1 \([0-9]*\)$/\1/p" "$top_builddir/config.h"; }
first=$(def UROCE_RDMA_CORE_FIRST)
last=$(def UROCE_RDMA_CORE_LAST)
[ -n "$first" ] && [ -n "$last" ] || fail "UROCE_RDMA_CORE_FIRST/LAST in config.h"
if [ "$first" = "$last" ]; then built="rdma-core $first only"; else built="rdma-core $first to $last"; fi

lib=$(ldd "$(command -v ibv_devices)" | sed -n 's/^[[:space:]]*libibverbs\.so\.1 => \([^ ]*\) .*/\1/p')
[ -n "$lib" ] || fail "libibverbs.so.1 not found in ldd ibv_devices"
lib=$(readlink -f "$lib")
abi=$(basename "$lib" | sed -n 's/^libibverbs\.so\.1\.\([0-9]*\)\.\([0-9]*\)\.[0-9]*$/\1/p')
rel=$(basename "$lib" | sed -n 's/^libibverbs\.so\.1\.\([0-9]*\)\.\([0-9]*\)\.[0-9]*$/\2/p')
[ -n "$rel" ] || fail "release in the name of $lib" "libibverbs.so.1.A.R.M" "$(basename "$lib")"
[ "$rel" -ge "$first" ] && [ "$rel" -le "$last" ] ||
	fail "the loaded libibverbs is of the configured family" "$first..$last" "$rel ($lib)"
echo "ok: $lib is rdma-core $rel, in the configured family $first..$last"

urun ibv_devices >"$T/ok.out" 2>"$T/ok.err"
expect_eq "ibv_devices exit (rdma-core $rel)" 0 $?
grep -q '^[[:space:]]*uroce0[[:space:]]' "$T/ok.out" || fail "uroce0 listed with rdma-core $rel" "uroce0" "$(cat "$T/ok.out")"
expect_eq "provider stderr with rdma-core $rel" "" "$(cat "$T/ok.err")"
# The dynamic loader's record: this libibverbs loaded liburoce-rdmav<PABI>.so.
pabi=$(def UROCE_PABI_VERSION)
urun env LD_DEBUG=libs LD_DEBUG_OUTPUT="$T/ld" ibv_devices >/dev/null 2>&1
init=$(cat "$T"/ld.* | sed -n 's/^[[:space:]]*[0-9]*:[[:space:]]*calling init: //p' |
	while read -r f; do readlink -f "$f"; done)
for want in "$lib" "$top_builddir/provider/.libs/liburoce-rdmav$pabi.so"; do
	printf '%s\n' "$init" | grep -qxF "$want" || fail "loader called the init of $want" "$want" "$init"
	echo "ok: loaded $want"
done

for other in $((first - 1)) $((last + 1)); do
	dir=$T/lib$other
	name=libibverbs.so.1.$abi.$other.0
	mkdir -p "$dir"
	cp "$lib" "$dir/$name"
	ln -s "$name" "$dir/libibverbs.so.1"
	chmod -R a+rX "$dir"
	urun env LD_LIBRARY_PATH="$dir" ibv_devices >"$T/bad.out" 2>"$T/bad.err"
	expect_eq "provider message for rdma-core $other" \
		"uroce: provider not registered: $dir/$name is rdma-core $other.0; this provider is built for $built (configure --with-rdma-core-version)" \
		"$(cat "$T/bad.err")"
	if grep -q 'uroce0' "$T/bad.out"; then
		fail "no uroce0 with a refused libibverbs" "(not listed)" "$(cat "$T/bad.out")"
	fi
	echo "ok: uroce0 not listed with rdma-core $other's file name"
done
