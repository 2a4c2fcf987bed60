#!/bin/sh
# provider_match.sh - the provider claims only devices that carry uroce_socket.
#
# Next to a real uroce0 (`uroce up`), a second device uroce9 is published in
# the same sysfs tree with everything libibverbs needs but without the
# uroce_socket file. Its name matches the provider's table
# (rdma_device:*Nuroce*), so only match_device can refuse it: ibv_devices
# must list uroce0 and not uroce9, and libibverbs (IBV_SHOW_WARNINGS=1) must
# report that no driver took uroce9 - proof that it saw the device.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0

sys=$UROCE_RUN_DIR/sysfs/class
mkdir -p "$sys/infiniband/uroce9/ports/1/gids" "$sys/infiniband_verbs/uverbs_uroce9"
echo "1: CA" >"$sys/infiniband/uroce9/node_type"
echo 0000:0000:0000:0000:0000:ffff:7f00:0001 >"$sys/infiniband/uroce9/ports/1/gids/0"
echo uroce9 >"$sys/infiniband_verbs/uverbs_uroce9/ibdev"
echo 0:0 >"$sys/infiniband_verbs/uverbs_uroce9/dev"
echo 1 >"$sys/infiniband_verbs/uverbs_uroce9/abi_version"
chmod -R a+rX "$sys"

urun env IBV_SHOW_WARNINGS=1 ibv_devices >"$T/out" 2>"$T/err"
expect_eq "ibv_devices exit" 0 $?
grep -q '^[[:space:]]*uroce0[[:space:]]' "$T/out" || fail "uroce0 listed" "uroce0" "$(cat "$T/out")"
if grep -q 'uroce9' "$T/out"; then
	fail "uroce9 (no uroce_socket) not listed" "(absent)" "$(cat "$T/out")"
fi
echo "ok: uroce0 listed, uroce9 not"
grep -qx "libibverbs: Warning: no userspace device-specific driver found for uroce9" "$T/err" ||
	fail "libibverbs saw uroce9 and found no driver for it" \
		"libibverbs: Warning: no userspace device-specific driver found for uroce9" "$(cat "$T/err")"
echo "ok: libibverbs found no driver for uroce9"
rm -rf "$sys/infiniband_verbs/uverbs_uroce9" "$sys/infiniband/uroce9"
