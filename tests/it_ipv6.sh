#!/bin/sh
# it_ipv6: a device on the IPv6 loopback (uroce up --addr ::1): GID[0] is
# the address itself, of type RoCE v2, in sysfs and in ibv_devinfo -v, and
# the node GUID is abi.h's EUI-64 of the address's last 4 bytes; and RC and
# UD traffic between two processes goes through the daemon over IPv6
# (ibv_rc_pingpong 4 KiB x 200 at MTU 1024 and ibv_ud_pingpong 1 KiB x 200,
# -c: payload checked), counted on the daemon's IPv6 UDP port.
# Exit 77 (automake SKIP) if this host has no ::1 (IPv6 disabled).
. "$top_srcdir/tests/lib.sh"
if ! ip -6 -o addr show dev lo 2>/dev/null | grep -q ' ::1/128 '; then
	echo "SKIP: no IPv6 loopback address ::1 on lo"
	exit 77
fi

up --dev uroce3 --addr ::1
expect_line "uroce up names [::1]:port" "$T/up.out" \
	"uroce3: uroced pid $(cat "$UROCE_RUN_DIR/uroce3.pid") on [::1]:$UROCE_PORT mtu 4096, socket $UROCE_RUN_DIR/uroce3.sock, log $UROCE_RUN_DIR/uroce3.log"
D=$UROCE_RUN_DIR/sysfs/class/infiniband/uroce3
expect_eq "sysfs GID 0" 0000:0000:0000:0000:0000:0000:0000:0001 "$(cat "$D/ports/1/gids/0")"
expect_eq "sysfs node_guid" 0200:00ff:fe00:0001 "$(cat "$D/node_guid")"
expect_eq "sysfs ndevs/0" lo "$(cat "$D/ports/1/gid_attrs/ndevs/0")"

urun ibv_devinfo -v -d uroce3 >"$T/devinfo" 2>&1
expect_eq "ibv_devinfo -v exit" 0 $?
expect_line "GID[0]" "$T/devinfo" "\t\t\tGID[  0]:\t\t::1, RoCE v2"
expect_line "node_guid" "$T/devinfo" "\tnode_guid:\t\t\t0200:00ff:fe00:0001"
expect_line "port state" "$T/devinfo" "\t\t\tstate:\t\t\tPORT_ACTIVE (4)"
uroce status --dev uroce3 >"$T/status" 2>&1
expect_line "daemon status" "$T/status" "device uroce3 addr ::1 port $UROCE_PORT mtu 4096 state PORT_ACTIVE"

# RC and UD traffic, two processes each, through the daemon on [::1].
pingpong rc6 ibv_rc_pingpong uroce3 4096 200 -n 200 -s 4096 -m 1024 -c
pingpong ud6 ibv_ud_pingpong uroce3 1024 200 -n 200 -s 1024 -c
uroce status --dev uroce3 >"$T/status" 2>&1
udp=$(grep '^udp ' "$T/status")
echo "$udp"
rx=$(echo "$udp" | sed -n 's/^udp rx_packets=\([0-9]*\) .*/\1/p')
# at least the 2 x 200 UD SENDs and 2 x 200 x 4 RC packets of 1 KiB
[ -n "$rx" ] && [ "$rx" -ge 2000 ] || fail "packets received on [::1]:$UROCE_PORT" ">= 2000" "$udp"
echo "ok: $rx packets received on [::1]:$UROCE_PORT"
