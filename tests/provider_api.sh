#!/bin/sh
# provider_api.sh - runs the provider's public-API C test (tests/provider_api)
# against a private uroced: `uroce up --mtu 1024 --gid-tbl-len 16
# --clock-khz 156250 --clock-bits 48` on a free
# port in a private run directory (tests/lib.sh), then the test program
# through `uroce run` (as an unmodified verbs application would run).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0 --mtu 1024 --gid-tbl-len 16 --clock-khz 156250 --clock-bits 48
UROCE_TEST_DEV=uroce0
UROCE_TEST_GIDS=16
UROCE_TEST_CLOCK_KHZ=156250
UROCE_TEST_CLOCK_MASK=0xffffffffffff
UROCE_TEST_LINK="$UROCE link set uroce0"
export UROCE_TEST_DEV UROCE_TEST_GIDS UROCE_TEST_LINK UROCE_TEST_CLOCK_KHZ UROCE_TEST_CLOCK_MASK
CK_RUN_CASE=api urun "$top_builddir/tests/provider_api" || fail "provider_api (case api)"

# Without /proc the GOT hooks cannot be installed: channels fail cleanly.
# Under make check-asan (UROCE_ASAN) LeakSanitizer needs /proc, so it is off
# for this run; the sanitizer runtime reads its options from
# /proc/self/environ, not from environ, so that one file is put into the
# empty /proc, holding only the sanitizer options.
asan_proc=
if [ -n "${UROCE_ASAN:-}" ]; then
	printf 'ASAN_OPTIONS=%s:detect_leaks=0\0UBSAN_OPTIONS=%s\0' "${ASAN_OPTIONS:-}" "${UBSAN_OPTIONS:-}" >"$T/environ"
	asan_proc="--dir /proc/self --ro-bind $T/environ /proc/self/environ"
fi
# shellcheck disable=SC2086 # asan_proc: bwrap arguments, no spaces in $T
CK_RUN_CASE=nohooks urun bwrap --dev-bind / / --tmpfs /proc $asan_proc -- "$top_builddir/tests/provider_api" \
	>"$T/nohooks.out" 2>&1 || { cat "$T/nohooks.out"; fail "provider_api (case nohooks)"; }
cat "$T/nohooks.out"
expect_eq "the reason, said once" 1 "$(grep -c '^uroce: completion channels are unavailable (ibv_create_comp_channel fails with EBADF): cannot patch the GOT of /.*libibverbs\.so\.1: No such file or directory$' "$T/nohooks.out")"

# A process in its own PID namespace: refused, and told why.
urun bwrap --dev-bind / / --unshare-pid -- ibv_devinfo -d uroce0 >"$T/pidns.out" 2>&1
expect_eq "ibv_devinfo in another PID namespace: exit (Failed to open device)" 1 $?
expect_line "ibv_devinfo in another PID namespace: reason" "$T/pidns.out" \
	"uroce: uroce0: HELLO to the daemon at $UROCE_RUN_DIR/uroce0.sock failed: Operation not permitted (the daemon sees this process under another pid: a PID namespace other than uroced's is not supported)"

# The daemon's end, seen by a client holding objects: a clean shutdown
# (IBV_EVENT_DEVICE_FATAL), then, on a new daemon, SIGKILL.
UROCE_TEST_SHUTDOWN="$UROCE down --dev uroce0"
export UROCE_TEST_SHUTDOWN
CK_RUN_CASE=shutdown urun "$top_builddir/tests/provider_api" || fail "provider_api (case shutdown)"
up --dev uroce0
UROCE_TEST_KILL="kill -KILL \$(cat '$UROCE_RUN_DIR/uroce0.pid')"
export UROCE_TEST_KILL
CK_RUN_CASE=killed urun "$top_builddir/tests/provider_api" || fail "provider_api (case killed)"
