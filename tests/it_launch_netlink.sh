#!/bin/sh
# it_launch_netlink: uroce-launch's default seccomp filter hides RDMA
# netlink (NETLINK_RDMA, 20), so that libibverbs reads the sysfs tree of
# `uroce run`. Observable only on a kernel that has RDMA netlink: there,
# socket(AF_NETLINK, SOCK_RAW, 20) opens without the launcher and fails
# with EPROTONOSUPPORT under it. On a kernel without it the call fails
# either way, so this test reports SKIP (exit 77); it_launch proves the
# filter mechanism on NETLINK_ROUTE instead.
. "$top_srcdir/tests/lib.sh"
launch=$top_builddir/tools/uroce-launch
probe='
import errno, socket
try:
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 20).close()
    print("open")
except OSError as e:
    print(errno.errorcode[e.errno])'
plain=$(/usr/bin/python3 -c "$probe" 2>&1)
if [ "$plain" != open ]; then
	echo "SKIP: this kernel has no RDMA netlink (socket(AF_NETLINK, SOCK_RAW, 20) without the filter: $plain)"
	exit 77
fi
expect_eq "NETLINK_RDMA under uroce-launch's default filter" EPROTONOSUPPORT \
	"$("$launch" -- /usr/bin/python3 -c "$probe" 2>&1)"
