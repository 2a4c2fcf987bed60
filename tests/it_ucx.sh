#!/bin/sh
# it_ucx: UCX (ucx_info -d, Debian's ucx-utils) under `uroce run` lists
# uroce0 and reads its GID attributes from /sys/class/infiniband, where
# `uroce run`'s namespace shows the device tree: at log level DIAG there is
# no "failed to read" (without that view, UROCE_NO_SYS_VIEW=1, UCX says
# "failed to read /sys/class/infiniband/uroce0/ports/1/gid_attrs/ndevs/0",
# which this test checks too, so it cannot pass by not looking).
. "$top_srcdir/tests/lib.sh"
command -v ucx_info >/dev/null 2>&1 || fail "ucx_info not installed (scripts/install-deps installs ucx-utils)"
command -v bwrap >/dev/null 2>&1 || fail "bwrap not installed (scripts/install-deps)"

up --dev uroce0
UCX_LOG_LEVEL=diag urun ucx_info -d >"$T/ucx.out" 2>&1 || { cat "$T/ucx.out"; fail "ucx_info -d"; }
expect_line "UCX memory domain uroce0" "$T/ucx.out" "# Memory domain: uroce0"
expect_line "UCX ud_verbs transport" "$T/ucx.out" "#      Transport: ud_verbs"
expect_line "UCX device uroce0:1" "$T/ucx.out" "#         Device: uroce0:1"
if grep -n 'failed to read\|WARN' "$T/ucx.out"; then
	fail "ucx_info -d under uroce run: a sysfs read failed or a warning (lines above)"
fi
echo "ok: no 'failed to read' and no warning at UCX_LOG_LEVEL=diag"
urun sh -c 'cat /sys/class/infiniband/uroce0/ports/1/gid_attrs/ndevs/0 /sys/class/infiniband/uroce0/ports/1/gid_attrs/types/0 /sys/class/infiniband/uroce0/ports/1/counters/port_xmit_packets' >"$T/view" 2>&1
expect_eq "the tree at /sys/class/infiniband inside uroce run" "lo
RoCE v2
$(cat "$UROCE_RUN_DIR/sysfs/class/infiniband/uroce0/ports/1/counters/port_xmit_packets")" "$(cat "$T/view")"
urun sh -c 'ls /sys/class/net' >"$T/net" 2>&1
expect_eq "host classes stay visible (/sys/class/net)" "$(ls /sys/class/net)" "$(cat "$T/net")"

# The control: without the view, UCX's read fails (the message this test watches for).
UROCE_NO_SYS_VIEW=1 UCX_LOG_LEVEL=diag urun ucx_info -d >"$T/ucx.noview" 2>&1
grep -q 'failed to read /sys/class/infiniband/uroce0/ports/1/gid_attrs/ndevs/0' "$T/ucx.noview" ||
	{ cat "$T/ucx.noview"; fail "control: UROCE_NO_SYS_VIEW=1 should make UCX fail to read ndevs/0"; }
echo "ok: control: without the view UCX fails to read gid_attrs/ndevs/0"
