#!/bin/sh
# run.sh: uroce's container image (system/container/Containerfile) built
# from a clean tree of HEAD on a Debian base that debootstrap made (no
# registry needed: scripts/test-fresh --root-only, imported), then run with
# podman three ways (docs/container.md, "Privileges"):
#   A. the image's non-root user, no capability added, no user namespace,
#      /dev/null given as /dev/infiniband/uverbs_uroce0 with --device:
#      uroce up, ibv_devinfo, ibv_rc_pingpong (1000 iterations: exact byte
#      and iteration lines), rping -C 10 -V through librdmacm;
#   B. the same user without --device: `uroce run` stops and says why;
#   C. root in the container (the runtime's default capabilities), no
#      --device: uroce up makes the node, ibv_rc_pingpong passes.
# One line per check, "N passed, N failed"; exit 0 iff all passed, 77 (SKIP)
# when not root or when podman cannot run a container on this host.
#
# Environment: CONTAINER_RELEASE (bookworm or trixie; default bookworm),
# CONTAINER_KEEP=1 (keep the images).
set -u
top=$(CDPATH= cd "$(dirname "$0")/../.." && pwd -P)
release=${CONTAINER_RELEASE:-bookworm}
skip() { echo "SKIP: container: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (podman's image store, debootstrap)"
command -v podman >/dev/null 2>&1 || skip "podman not installed (Debian package podman; scripts/install-deps --container)"
git -C "$top" rev-parse HEAD >/dev/null 2>&1 || skip "$top is not a git tree (the image is built from a clean tree of HEAD)"

T=$(mktemp -d /tmp/uroce-container.XXXXXX)
tag=localhost/uroce-test:$release-$$
base=localhost/uroce-base:$release
cleanup() {
	[ "${CONTAINER_KEEP:-0}" = 1 ] || podman rmi -f "$tag" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pass=0 failed=0
result() { # result OK|FAIL WHAT [DETAIL]
	if [ "$1" = OK ]; then
		pass=$((pass + 1))
		echo "PASS: $2"
	else
		failed=$((failed + 1))
		echo "FAIL: $2${3:+ ($3)}"
	fi
}

tarball=$("$top/scripts/test-fresh" "$release" --root-only | tail -n 1)
[ -s "$tarball" ] || skip "no $release root tarball from scripts/test-fresh --root-only"
podman image exists "$base" 2>/dev/null ||
	podman import "$tarball" "$base" >/dev/null || skip "podman import $tarball failed"

# Some hosts need other runtime settings: cgroups in hybrid mode (crun
# refuses them; runc with cgroupfs copes) and a hard RLIMIT_NOFILE below
# the runtime's default. The first that runs a container is used.
PODMAN=podman RUNOPTS=
if ! podman run --rm --network none "$base" true >"$T/probe.out" 2>&1; then
	PODMAN="podman --runtime runc --cgroup-manager cgroupfs"
	RUNOPTS="--ulimit nofile=1024:1024 --ulimit nproc=4096:4096"
	# shellcheck disable=SC2086
	$PODMAN run --rm --network none $RUNOPTS "$base" true >>"$T/probe.out" 2>&1 ||
		skip "podman cannot run a container here: $(tail -n 2 "$T/probe.out" | tr '\n' ' ')"
	echo "container: default runtime refused ($(head -n 1 "$T/probe.out")); using: $PODMAN $RUNOPTS"
fi

mkdir "$T/ctx"
git -C "$top" archive --format=tar HEAD | tar -x -C "$T/ctx"
t0=$(date +%s)
# shellcheck disable=SC2086
if $PODMAN build --network host $RUNOPTS --build-arg BASE="$base" \
	-f "$T/ctx/system/container/Containerfile" -t "$tag" "$T/ctx" >"$T/build.log" 2>&1; then
	result OK "image builds from HEAD on $release ($(($(date +%s) - t0)) s)"
else
	tail -n 30 "$T/build.log"
	result FAIL "image builds from HEAD on $release"
	echo "$pass passed, $failed failed"
	exit 1
fi
size=$(podman image inspect --format '{{.Size}}' "$tag")
echo "container: image $tag, $((size / 1048576)) MiB"
# shellcheck disable=SC2086
if $PODMAN run --rm --network none $RUNOPTS "$tag" sh -c '! command -v gcc && ! ls /usr/include/infiniband/verbs.h' >/dev/null 2>&1; then
	result OK "runtime stage has no compiler and no -dev headers"
else
	result FAIL "runtime stage has no compiler and no -dev headers"
fi

# The pingpong in one container: server in the background, client after.
pp='uroce up >up.log 2>&1 || { cat up.log; exit 1; }
uroce run -- ibv_devinfo -d uroce0 >devinfo.log 2>&1 || { cat devinfo.log; exit 1; }
grep -q "PORT_ACTIVE" devinfo.log || { cat devinfo.log; exit 1; }
uroce run -- ibv_rc_pingpong -d uroce0 -g 0 -n 1000 -p 18515 >srv.log 2>&1 &
sleep 1
uroce run -- ibv_rc_pingpong -d uroce0 -g 0 -n 1000 -p 18515 127.0.0.1 >cli.log 2>&1
c=$?
wait $!
s=$?
echo "rc server=$s client=$c"
grep -h "bytes in\|iters in" srv.log cli.log'
expect_pp() { # expect_pp WHAT OUTFILE
	if grep -qx "rc server=0 client=0" "$2" &&
		[ "$(grep -c '^8192000 bytes in ' "$2")" = 2 ] && [ "$(grep -c '^1000 iters in ' "$2")" = 2 ]; then
		result OK "$1"
	else
		result FAIL "$1" "$(tr '\n' ' ' <"$2" | cut -c1-400)"
	fi
}

# A: non-root, nothing added but the /dev/null alias.
# shellcheck disable=SC2086
$PODMAN run --rm --network none $RUNOPTS --device /dev/null:/dev/infiniband/uverbs_uroce0 "$tag" \
	sh -c "$pp" >"$T/a.out" 2>&1
expect_pp "A: uid 1000, no capability, --device /dev/null alias: ibv_rc_pingpong 1000 iterations (8192000 bytes each way)" "$T/a.out"
rp='uroce up >/dev/null 2>&1 || exit 1
uroce run -- rping -s -a 127.0.0.1 -C 10 -V -v >srv.log 2>&1 &
sleep 1
uroce run -- rping -c -a 127.0.0.1 -C 10 -V -v >cli.log 2>&1
c=$?
wait $!
echo "rc server=$? client=$c"
echo "server pings $(grep -c "^server ping data: rdma-ping-" srv.log) client pings $(grep -c "^ping data: rdma-ping-" cli.log)"'
# shellcheck disable=SC2086
$PODMAN run --rm --network none $RUNOPTS --device /dev/null:/dev/infiniband/uverbs_uroce0 "$tag" \
	sh -c "$rp" >"$T/a2.out" 2>&1
if grep -qx "rc server=0 client=0" "$T/a2.out" && grep -qx "server pings 10 client pings 10" "$T/a2.out"; then
	result OK "A: rping -C 10 -V through librdmacm, 10 pings each side"
else
	result FAIL "A: rping -C 10 -V through librdmacm" "$(tr '\n' ' ' <"$T/a2.out" | cut -c1-400)"
fi

# B: non-root without the alias: no node, no bubblewrap in the image.
# shellcheck disable=SC2086
$PODMAN run --rm --network none $RUNOPTS "$tag" \
	sh -c 'uroce up >/dev/null 2>&1 || exit 9; uroce run -- ibv_devinfo -d uroce0; echo "rc=$?"' >"$T/b.out" 2>&1
if grep -qx "rc=1" "$T/b.out" && grep -q "/dev/infiniband/{uverbs_uroce0} missing and bubblewrap (bwrap) is not installed" "$T/b.out"; then
	result OK "B: uid 1000 without the alias: uroce run exits 1 naming the missing node and bubblewrap"
else
	result FAIL "B: uroce run without the alias says why" "$(tr '\n' ' ' <"$T/b.out" | cut -c1-400)"
fi

# C: root in the container, the runtime's default capabilities.
# shellcheck disable=SC2086
$PODMAN run --rm --network none $RUNOPTS --user 0 "$tag" sh -c "$pp" >"$T/c.out" 2>&1
expect_pp "C: root in the container, default capabilities, no --device: ibv_rc_pingpong 1000 iterations" "$T/c.out"

echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
