#!/bin/sh
# it_devices: unmodified ibv_devices and ibv_devinfo -v (ibverbs-utils) find
# uroce0 through `uroce run`: its node GUID, port 1 PORT_ACTIVE on Ethernet,
# GID[0] ::ffff:127.0.0.1 of type RoCE v2, a completion timestamp mask and
# an HCA core clock.  (Through `eval "$(uroce env)"` alone, which needs the
# root-made /dev node: tests/it_root.sh.)
. "$top_srcdir/tests/lib.sh"

up --dev uroce0
guid=$(uroce gid 127.0.0.1 "$UROCE_PORT" | sed -n 's/^node_guid //p' | tr -d :)

urun ibv_devices >"$T/devices" 2>&1
expect_eq "ibv_devices exit" 0 $?
expect_line "ibv_devices lists uroce0 with its node GUID" "$T/devices" "$(printf '    %-16s' uroce0)\t$guid"
expect_eq "ibv_devices device count" 1 "$(grep -c '	[0-9a-f]\{16\}$' "$T/devices")"

urun ibv_devinfo -v -d uroce0 >"$T/devinfo" 2>&1
expect_eq "ibv_devinfo -v exit" 0 $?
devinfo_ok uroce0 127.0.0.1 "$UROCE_PORT" "$T/devinfo"
expect_line "active_mtu" "$T/devinfo" "\t\t\tactive_mtu:\t\t4096 (5)"
expect_line "transport" "$T/devinfo" "\ttransport:\t\t\tInfiniBand (0)"

urun ibv_devinfo -d nosuchdev >"$T/nodev" 2>&1
expect_eq "ibv_devinfo -d nosuchdev exit" 255 $?

