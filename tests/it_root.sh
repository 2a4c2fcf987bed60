#!/bin/sh
# it_root: the checks that need root, in one test that reports SKIP (exit
# 77) when not root instead of passing without them:
#   - `uroce up` as root makes /dev/infiniband/uverbs_NAME -> /dev/null, and
#     with only `eval "$(uroce env)"` (no `uroce run`) ibv_devices finds the
#     device through it (this kernel has no RDMA netlink; docs/discovery.md);
#   - a run directory that belongs to another user is refused by `uroce up`,
#     `uroce run` and `uroce env`; root's own run directory is trusted by
#     another user's `uroce run`.
# The node is made for a device name no other test uses and removed at the
# end, with /dev/infiniband if this test made it: the host's /dev is left
# as it was.
. "$top_srcdir/tests/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (chown to another user, /dev/infiniband nodes)"
	exit 77
fi
dev=urocert
node=/dev/infiniband/uverbs_$dev
[ -d /dev/infiniband ] && had_dir=1 || had_dir=0
[ -e "$node" ] || [ -L "$node" ] && had_node=1 || had_node=0
cleanup_dev() {
	[ "$had_node" = 1 ] || rm -f "$node"
	[ "$had_dir" = 1 ] || rmdir /dev/infiniband 2>/dev/null
}
trap '_rc=$?; cleanup_dev; (exit $_rc); _lib_exit' EXIT

# The node, made by root's `uroce up`.
UROCE_NO_HOST_DEV=0 up --dev "$dev"
expect_eq "$node" /dev/null "$(readlink -f "$node")"
guid=$(uroce gid 127.0.0.1 "$UROCE_PORT" | sed -n 's/^node_guid //p' | tr -d :)
(eval "$(uroce env)" && ibv_devices) >"$T/envdevices" 2>&1
expect_eq "ibv_devices with uroce env exit" 0 $?
expect_line "ibv_devices with uroce env lists $dev" "$T/envdevices" "$(printf '    %-16s' "$dev")\t$guid"
uroce down --dev "$dev" >/dev/null || fail "uroce down"

# `uroce up` refuses a run directory of another user.
mkdir -m 755 "$T/rootdir" && chown nobody "$T/rootdir"
env UROCE_RUN_DIR="$T/rootdir" "$UROCE" up >"$T/out" 2>"$T/err"
expect_eq "up in another user's run directory: exit status" 1 $?
expect_eq "up in another user's run directory: message" \
	"uroce up: run directory $T/rootdir belongs to uid $(id -u nobody), not to you (set UROCE_RUN_DIR to a directory of yours)" \
	"$(cat "$T/err")"

# So do `uroce run` and `uroce env` (a planted /tmp/uroce-UID); root's is trusted.
mkdir -p "$UROCE_RUN_DIR" && chmod 755 "$UROCE_RUN_DIR"
chown nobody "$UROCE_RUN_DIR"
urun true 2>"$T/err"
expect_eq "uroce run with another user's run directory: exit" 1 $?
expect_eq "uroce run with another user's run directory: message" \
	"uroce run: run directory $UROCE_RUN_DIR belongs to uid $(id -u nobody) (nobody), not to you or root; refusing to trust its sysfs tree (unset UROCE_RUN_DIR or point it at a directory of yours, then 'uroce up')" "$(cat "$T/err")"
uroce env >/dev/null 2>"$T/err"
expect_eq "uroce env with another user's run directory: exit" 1 $?
expect_eq "uroce env with another user's run directory: message" \
	"uroce env: run directory $UROCE_RUN_DIR belongs to uid $(id -u nobody), not to you or root; refusing to trust its sysfs tree" "$(tail -n 1 "$T/err")"
chown 0 "$UROCE_RUN_DIR"
out=$(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- "$UROCE" run -- sh -c 'echo "$SYSFS_PATH"' 2>/dev/null)
expect_eq "uroce run as nobody with root's run directory" "$UROCE_RUN_DIR/sysfs" "$out"
