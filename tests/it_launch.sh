#!/bin/sh
# it_launch: `uroce run` sets the environment, passes the exit status, raises
# RLIMIT_MEMLOCK, and its seccomp launcher really hides a netlink protocol.
# The filter is proven on NETLINK_ROUTE (0), which `ip` needs; the default
# NETLINK_RDMA one in it_launch_netlink.sh (a SKIP on kernels without RDMA
# netlink); the rows that need root in it_root.sh.
. "$top_srcdir/tests/lib.sh"
launch=$top_builddir/tools/uroce-launch

out=$(urun sh -c 'echo "$SYSFS_PATH|$RDMAV_DRIVERS"' 2>/dev/null)
expect_eq "uroce run environment" "$UROCE_RUN_DIR/sysfs|$top_builddir/provider/.libs/liburoce" "$out"

out=$(RDMAV_DRIVERS=/opt/x/libother urun sh -c 'echo "$RDMAV_DRIVERS"' 2>/dev/null)
expect_eq "uroce run keeps the caller's RDMAV_DRIVERS after ours" "$top_builddir/provider/.libs/liburoce:/opt/x/libother" "$out"

urun sh -c 'exit 7' 2>/dev/null
expect_eq "uroce run exit status" 7 $?

# Start with a soft limit below libibverbs' 32 KiB warning threshold.
out=$(ulimit -S -l 16 && urun sh -c 'ulimit -S -l' 2>/dev/null)
expect_eq "RLIMIT_MEMLOCK soft limit 16 KiB raised to the hard limit" "$(ulimit -H -l)" "$out"

# Without a filter for it, NETLINK_ROUTE works ...
"$launch" -- ip -o link show lo >"$T/plain.out" 2>&1
expect_eq "ip link without --hide-netlink 0: exit" 0 $?
# ... with it, socket(AF_NETLINK, *, 0) fails with EPROTONOSUPPORT.
"$launch" --hide-netlink 0 -- ip -o link show lo >"$T/hidden.out" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "ip link with NETLINK_ROUTE hidden" "exit != 0" "exit 0: $(cat "$T/hidden.out")"
expect_eq "ip's error with NETLINK_ROUTE hidden" "Cannot open netlink socket: Protocol not supported" "$(cat "$T/hidden.out")"
# The default filter (NETLINK_RDMA, 20: tests/it_launch_netlink.sh) leaves
# NETLINK_ROUTE alone.
"$launch" -- /usr/bin/python3 -c '
import socket
socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close()
print("route ok")' >"$T/py.out" 2>&1
expect_eq "default filter: NETLINK_ROUTE" "route ok" "$(cat "$T/py.out")"

# Usage errors.
"$launch" --hide-netlink 99 -- true 2>"$T/err"
expect_eq "bad protocol exit" 2 $?
expect_eq "bad protocol message" "uroce-launch: --hide-netlink needs a protocol 0..31 (at most 8)" "$(cat "$T/err")"
"$launch" -- /nonexistent/cmd 2>"$T/err"
expect_eq "missing command exit" 127 $?
expect_eq "missing command message" "uroce-launch: /nonexistent/cmd: No such file or directory" "$(cat "$T/err")"
urun 2>"$T/err"
expect_eq "uroce run without a command: exit" 1 $?
expect_eq "uroce run without a command: message" "uroce run: no command given (usage: uroce run [--] CMD [ARGS...])" "$(cat "$T/err")"

# A run directory other users can write to is not trusted.
mkdir -p "$UROCE_RUN_DIR" && chmod 777 "$UROCE_RUN_DIR"
urun true 2>"$T/err"
expect_eq "uroce run with a world-writable run directory: exit" 1 $?
expect_eq "uroce run with a world-writable run directory: message" \
	"uroce run: run directory $UROCE_RUN_DIR is writable by other users; refusing to trust its sysfs tree (chmod go-w it, or use a directory of yours)" "$(cat "$T/err")"
uroce env >/dev/null 2>"$T/err"
expect_eq "uroce env with a world-writable run directory: exit" 1 $?
expect_eq "uroce env with a world-writable run directory: message" \
	"uroce env: run directory $UROCE_RUN_DIR is writable by other users; refusing to trust its sysfs tree" "$(tail -n 1 "$T/err")"
chmod 755 "$UROCE_RUN_DIR"

