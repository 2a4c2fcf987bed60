#!/bin/sh
# it_rdma_shim: under `uroce run`, iproute2's `rdma link` and `rdma dev`
# answer for the uroce devices (scripts/shims/rdma), in iproute2's formats,
# although RDMA netlink is hidden there.  rdma-core 56's pyverbs finds a
# RoCE port's netdev with `rdma link show -j` (tests/base.py get_net_name);
# the same call is made here.  Two devices: uroce0 on 127.0.0.1 (lo) and
# uroce1 on 127.0.0.2; uroce1's port set DOWN.  Other rdma commands go to
# the real tool, which cannot open RDMA netlink under the filter.
. "$top_srcdir/tests/lib.sh"
command -v rdma >/dev/null 2>&1 || fail "iproute2's rdma not found (Debian package iproute2)"
up
p0=$UROCE_PORT
uroce up --dev uroce1 --addr 127.0.0.2 --port "$p0" >"$T/up1.out" 2>&1 || { cat "$T/up1.out"; fail "uroce up uroce1"; }
uroce link set uroce1 down >/dev/null || fail "uroce link set uroce1 down"
lo_index=$(cat /sys/class/net/lo/ifindex)

expect_eq "rdma link show -j" \
	"[{\"ifindex\":0,\"ifname\":\"uroce0\",\"port\":1,\"state\":\"ACTIVE\",\"physical_state\":\"LINK_UP\",\"netdev\":\"lo\",\"netdev_index\":$lo_index},{\"ifindex\":1,\"ifname\":\"uroce1\",\"port\":1,\"state\":\"DOWN\",\"physical_state\":\"DISABLED\",\"netdev\":\"lo\",\"netdev_index\":$lo_index}]" \
	"$(urun rdma link show -j)"
expect_eq "rdma link (text)" \
	"link uroce0/1 state ACTIVE physical_state LINK_UP netdev lo |link uroce1/1 state DOWN physical_state DISABLED netdev lo " \
	"$(urun rdma link | tr '\n' '|' | sed 's/|$//')"
expect_eq "rdma -d link show uroce0/1" \
	"link uroce0/1 state ACTIVE physical_state LINK_UP netdev lo netdev_index $lo_index " \
	"$(urun rdma -d link show uroce0/1)"
guid=$(cat "$UROCE_RUN_DIR/sysfs/class/infiniband/uroce0/node_guid")
fw=$(cat "$UROCE_RUN_DIR/sysfs/class/infiniband/uroce0/fw_ver")
expect_eq "rdma dev show uroce0" \
	"0: uroce0: node_type ca fw $fw node_guid $guid sys_image_guid $guid " \
	"$(urun rdma dev show uroce0)"

# The sysfs values behind uroce1's line (a port set DOWN is "3: Disabled").
expect_eq "uroce1 ports/1/state" "1: DOWN" "$(cat "$UROCE_RUN_DIR/sysfs/class/infiniband/uroce1/ports/1/state")"
expect_eq "uroce1 ports/1/phys_state" "3: Disabled" "$(cat "$UROCE_RUN_DIR/sysfs/class/infiniband/uroce1/ports/1/phys_state")"

# pyverbs 56's lookup, verbatim in its logic: the netdev of (dev, port).
got=$(urun python3 -c '
import json, subprocess
rows = json.loads(subprocess.check_output(["rdma", "link", "show", "-j"]).decode())
print(",".join(r["netdev"] for r in rows if r["ifname"] == "uroce1" and r["port"] == 1))')
expect_eq "pyverbs 56 get_net_name(uroce1, 1)" lo "$got"

# Unknown device or port: iproute2's message and status.
for bad in uroce7 uroce0/2; do
	urun rdma link show "$bad" >"$T/bad.out" 2>&1
	rc=$?
	expect_eq "rdma link show $bad: status" 1 "$rc"
	# (uroce run's own warning about uroce1's DOWN port is not rdma's)
	expect_eq "rdma link show $bad: message" "Wrong device name" "$(grep -v '^uroce run: ' "$T/bad.out")"
done

# Anything else is the real rdma's, which cannot open RDMA netlink here.
urun rdma resource show >"$T/res.out" 2>&1
rc=$?
[ "$rc" -ne 0 ] || fail "rdma resource show under uroce run succeeded (RDMA netlink should be hidden)"
grep -q "NETLINK_RDMA" "$T/res.out" || fail "rdma resource show: the real tool's message" "Failed to open NETLINK_RDMA socket" "$(cat "$T/res.out")"
echo "ok: rdma resource show -> the real rdma (status $rc)"
