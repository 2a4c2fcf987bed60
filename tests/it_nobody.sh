#!/bin/sh
# it_nobody: an unprivileged user (nobody) with no root-made /dev node runs
# everything: `uroce up` (cannot create /dev/infiniband/uverbs_uroce_nobody), then
# `uroce run` provides the node inside a user+mount namespace (bubblewrap),
# where unmodified ibv_devices and ibv_devinfo -v see the device exactly as
# root does, both on a host with a /dev/infiniband (tmpfs over it) and on
# one without (a minimal private /dev).  Outside `uroce run` the same
# environment sees nothing.
# Run as a non-root user, the test runs as that user instead.
TEST_USER=nobody
. "$top_srcdir/tests/lib.sh"
dev=uroce_nobody # a name no other test uses: its /dev node must not exist
node=/dev/infiniband/uverbs_$dev

if [ "$(id -u)" = 0 ]; then
	# The host has /dev/infiniband (as after any root `uroce up`), so the
	# first checks take the tmpfs-over-/dev/infiniband path ...
	mkdir -p /dev/infiniband
	# ... and no node for this name (remove one an earlier root run made).
	if [ -L "$node" ] && [ "$(readlink "$node")" = /dev/null ]; then rm -f "$node"; fi
	if ! as_user test -x "$UROCE" -a -r "$top_srcdir/scripts/uroce-up" -a -r "$top_srcdir/scripts/uroce-lib.sh" \
		-a -x "$top_builddir/tools/uroce-launch" -a -x "$top_builddir/emu/uroced" \
		-a -r "$(echo "$top_builddir"/provider/.libs/liburoce-rdmav*.so)"; then
		# The build tree is not readable by nobody (e.g. under /root):
		# copy what the commands need into $T, laid out like a build
		# tree (the dispatcher looks for Makefile and config.status
		# beside it).
		tree=$T/tree
		mkdir -p "$tree/scripts" "$tree/tools" "$tree/emu" "$tree/provider/.libs"
		cp "$top_builddir/uroce" "$tree/uroce" && : >"$tree/Makefile" && : >"$tree/config.status" &&
			cp "$top_builddir/tools/uroce-launch" "$top_builddir/tools/uroce-gid" "$tree/tools/" &&
			cp "$top_srcdir/scripts/uroce-"* "$tree/scripts/" &&
			cp "$top_builddir/emu/uroced" "$tree/emu/" &&
			cp "$top_builddir"/provider/.libs/liburoce-rdmav*.so "$tree/provider/.libs/" ||
			fail "copying the commands for nobody to $tree"
		rm -f "$tree/scripts/"*.c
		chmod -R a+rX "$tree"
		UROCE=$tree/uroce
		echo "note: build tree not readable by nobody; using a copy in $tree"
	fi
fi
[ ! -e "$node" ] || fail "$node must not exist for this test" "missing" "$(ls -l "$node")"
if [ "$(id -u)" = 0 ]; then want_uid=$(id -u nobody); else want_uid=$(id -u); fi
expect_eq "test user" "$want_uid" "$(as_user id -u)"

up --dev "$dev"
expect_line "uroce up says the node is missing" "$T/up.out" \
	"$dev: $node missing: 'uroce run' provides it in a user+mount namespace"
owner=$(stat -c %U "$UROCE_RUN_DIR/$dev.pid")
expect_eq "daemon's pid file owner" "$(as_user id -un)" "$owner"
guid=$(uroce gid 127.0.0.1 "$UROCE_PORT" | sed -n 's/^node_guid //p' | tr -d :)

urun sh -c 'id -u; ls -l /dev/infiniband/' >"$T/ns" 2>&1
expect_eq "uid inside uroce run" "$(as_user id -u)" "$(head -n 1 "$T/ns")"
grep -q "uverbs_$dev -> /dev/null" "$T/ns" || fail "node inside uroce run" "uverbs_$dev -> /dev/null" "$(cat "$T/ns")"
echo "ok: $node -> /dev/null inside uroce run"

urun ibv_devices >"$T/devices" 2>&1
expect_eq "ibv_devices exit" 0 $?
expect_line "ibv_devices lists $dev" "$T/devices" "$(printf '    %-16s' "$dev")\t$guid"
urun ibv_devinfo -v -d "$dev" >"$T/devinfo" 2>&1
expect_eq "ibv_devinfo -v exit" 0 $?
devinfo_ok "$dev" 127.0.0.1 "$UROCE_PORT" "$T/devinfo"

# A host without /dev/infiniband at all (here: root's bwrap with a minimal
# /dev around the test user): uroce run then builds a private /dev.
if [ "$(id -u)" = 0 ]; then
	bwrap --dev-bind / / --dev /dev -- setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- \
		sh -c 'test ! -e /dev/infiniband && echo "no /dev/infiniband"; "$1" run -- ibv_devices' sh "$UROCE" \
		>"$T/nodevib" 2>&1
	expect_eq "ibv_devices without a host /dev/infiniband: exit" 0 $?
	expect_line "host without /dev/infiniband" "$T/nodevib" "no /dev/infiniband"
	expect_line "ibv_devices lists $dev there too" "$T/nodevib" "$(printf '    %-16s' "$dev")\t$guid"
fi

# The same environment without uroce run: no /dev node, no device.
(eval "$(uroce env 2>/dev/null)" && as_user ibv_devices) >"$T/plain" 2>&1
if grep -q "$dev" "$T/plain"; then fail "ibv_devices outside uroce run" "no $dev" "$(cat "$T/plain")"; fi
echo "ok: outside uroce run $dev is not visible"
[ ! -e "$node" ] || fail "$node after the test" "still missing on the host" "$(ls -l "$node")"
echo "ok: host /dev untouched"

uroce status --dev "$dev" >"$T/status" 2>&1
expect_eq "status exit" 0 $?
expect_line "no objects left" "$T/status" "totals clients=0 pd=0 mr=0 cq=0 qp=0 ah=0"
