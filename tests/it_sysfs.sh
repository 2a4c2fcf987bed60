#!/bin/sh
# it_sysfs: `uroce up` writes exactly the sysfs tree of the run-directory
# contract, two devices share one tree, `uroce down` of one leaves the other
# untouched, and `uroce env` / `uroce status` report them.
. "$top_srcdir/tests/lib.sh"

up --dev uroce0
p0=$UROCE_PORT
C=$UROCE_RUN_DIR/sysfs/class
D=$C/infiniband/uroce0
guid=$(uroce gid 127.0.0.1 "$p0" | sed -n 's/^node_guid //p')
expect_eq "node_guid derived from 127.0.0.1 (abi.h uroce_node_guid)" "0200:7fff:fe00:0001" "$guid"

expect_eq "infiniband_verbs/abi_version" 6 "$(cat "$C/infiniband_verbs/abi_version")"
expect_eq "uverbs_uroce0/ibdev" uroce0 "$(cat "$C/infiniband_verbs/uverbs_uroce0/ibdev")"
expect_eq "uverbs_uroce0/dev: /dev/null's number" "$(printf '%d:%d' "0x$(stat -L -c %t /dev/null)" "0x$(stat -L -c %T /dev/null)")" "$(cat "$C/infiniband_verbs/uverbs_uroce0/dev")"
expect_eq "uverbs_uroce0/abi_version" 1 "$(cat "$C/infiniband_verbs/uverbs_uroce0/abi_version")"
expect_eq "node_type" "1: CA" "$(cat "$D/node_type")"
expect_eq "node_guid" "$guid" "$(cat "$D/node_guid")"
expect_eq "sys_image_guid" "$guid" "$(cat "$D/sys_image_guid")"
expect_eq "fw_ver" 0.1.0 "$(cat "$D/fw_ver")"
expect_eq "hca_type" uroce "$(cat "$D/hca_type")"
expect_eq "board_id" UROCE "$(cat "$D/board_id")"
expect_eq "uroce_socket" "$UROCE_RUN_DIR/uroce0.sock" "$(cat "$D/uroce_socket")"
[ -S "$UROCE_RUN_DIR/uroce0.sock" ] || fail "control socket" "a listening UNIX socket" "$(ls -l "$UROCE_RUN_DIR")"
expect_eq "gid files" "0 1 10 11 12 13 14 15 2 3 4 5 6 7 8 9" "$(ls "$D/ports/1/gids" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "GID 0" 0000:0000:0000:0000:0000:ffff:7f00:0001 "$(cat "$D/ports/1/gids/0")"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
	[ "$(cat "$D/ports/1/gids/$i")" = 0000:0000:0000:0000:0000:0000:0000:0000 ] ||
		fail "GID $i" "all zero" "$(cat "$D/ports/1/gids/$i")"
done
echo "ok: GIDs 1..15 all zero"
expect_eq "gid types" "16 x RoCE v2" "$(cat "$D"/ports/1/gid_attrs/types/* | sort | uniq -c | awk '{print $1 " x " $2 " " $3}')"
expect_eq "ndevs/0" lo "$(cat "$D/ports/1/gid_attrs/ndevs/0")"
expect_eq "device/net: the interface of the address" lo "$(ls "$D/device/net")"
[ -d "$D/device/net/lo" ] || fail "device/net/lo" "a directory" "$(ls -l "$D/device/net")"
expect_eq "class/misc/rdma_cm/abi_version (RDMA_USER_CM_ABI_VERSION)" 4 "$(cat "$C/misc/rdma_cm/abi_version")"
expect_eq "class/misc holds rdma_cm only" "rdma_cm rdma_cm/abi_version" "$(cd "$C/misc" && find . -mindepth 1 | sed "s|^\./||" | LC_ALL=C sort | tr "\n" " " | sed "s| $||")"
expect_eq "pkeys" "0:0xffff" "$(cd "$D/ports/1/pkeys" && for f in *; do printf '%s:%s' "$f" "$(cat "$f")"; done)"
pid=$(cat "$UROCE_RUN_DIR/uroce0.pid")
case $(cat "/proc/$pid/comm" 2>/dev/null) in *uroced*) echo "ok: uroce0.pid names live uroced $pid" ;;
*) fail "uroce0.pid" "a live uroced" "pid '$pid'" ;; esac

# Every file a kernel RDMA device has for what tools read, and nothing else.
P=$D/ports/1
expect_eq "files of the device directory" "$(tr -s ' \n' '  ' <<EOT
board_id device/device device/vendor fw_ver hca_type hw_rev node_desc node_guid node_type
ports/1/cap_mask ports/1/counters/VL15_dropped ports/1/counters/excessive_buffer_overrun_errors
ports/1/counters/link_downed ports/1/counters/link_error_recovery
ports/1/counters/local_link_integrity_errors ports/1/counters/multicast_rcv_packets
ports/1/counters/multicast_xmit_packets ports/1/counters/port_rcv_constraint_errors
ports/1/counters/port_rcv_data ports/1/counters/port_rcv_errors ports/1/counters/port_rcv_packets
ports/1/counters/port_rcv_remote_physical_errors ports/1/counters/port_rcv_switch_relay_errors
ports/1/counters/port_xmit_constraint_errors ports/1/counters/port_xmit_data
ports/1/counters/port_xmit_discards ports/1/counters/port_xmit_packets ports/1/counters/port_xmit_wait
ports/1/counters/symbol_error ports/1/counters/unicast_rcv_packets ports/1/counters/unicast_xmit_packets
ports/1/gid_attrs/ndevs/0 ports/1/hw_counters/duplicate_request ports/1/hw_counters/lifespan
ports/1/hw_counters/local_ack_timeout_err ports/1/hw_counters/packet_seq_err
ports/1/hw_counters/rnr_nak_retry_err ports/1/lid ports/1/lid_mask_count ports/1/link_layer
ports/1/phys_state ports/1/pkeys/0 ports/1/rate ports/1/sm_lid ports/1/sm_sl ports/1/state
sys_image_guid uroce_socket
EOT
)" "$(cd "$D" && find . -type f ! -path './ports/1/gids/*' ! -path './ports/1/gid_attrs/types/*' |
	sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' ')"
expect_eq "device/vendor, device/device" "0x02c0de 0x0001" "$(cat "$D/device/vendor") $(cat "$D/device/device")"
expect_eq "hw_rev node_desc" "1 uroce" "$(cat "$D/hw_rev") $(cat "$D/node_desc")"
expect_eq "port 1 state phys_state" "4: ACTIVE|5: LinkUp" "$(cat "$P/state")|$(cat "$P/phys_state")"
expect_eq "port 1 rate" "100 Gb/sec (4X EDR)" "$(cat "$P/rate")"
expect_eq "port 1 lid sm_lid sm_sl lid_mask_count cap_mask link_layer" "0x0 0x0 0 0 0x00000000 Ethernet" \
	"$(cat "$P/lid") $(cat "$P/sm_lid") $(cat "$P/sm_sl") $(cat "$P/lid_mask_count") $(cat "$P/cap_mask") $(cat "$P/link_layer")"
# the same identity as ibv_query_device / ibv_query_port report
urun ibv_devinfo -v -d uroce0 >"$T/devinfo" 2>&1 || { cat "$T/devinfo"; fail "ibv_devinfo -v"; }
expect_eq "ibv_devinfo fw_ver = sysfs fw_ver" "$(cat "$D/fw_ver")" "$(sed -n 's/^[[:space:]]*fw_ver:[[:space:]]*//p' "$T/devinfo")"
expect_eq "ibv_devinfo vendor_id = device/vendor (numerically)" "$(($(cat "$D/device/vendor")))" "$(($(sed -n 's/^[[:space:]]*vendor_id:[[:space:]]*//p' "$T/devinfo")))"
expect_eq "ibv_devinfo vendor_part_id = device/device" "$(($(cat "$D/device/device")))" "$(sed -n 's/^[[:space:]]*vendor_part_id:[[:space:]]*//p' "$T/devinfo")"
expect_eq "ibv_devinfo hw_ver = hw_rev" "0x$(cat "$D/hw_rev")" "$(sed -n 's/^[[:space:]]*hw_ver:[[:space:]]*//p' "$T/devinfo")"

# uroce env
expect_eq "uroce env" "export SYSFS_PATH='$UROCE_RUN_DIR/sysfs'; export RDMAV_DRIVERS='$top_builddir/provider/.libs/liburoce'" \
	"$(uroce env 2>/dev/null)"

# A second device with a shorter GID table, in the same tree.
mtime0=$(stat -c %Y.%y "$D")
up --dev uroce1 --mtu 1024 --gid-tbl-len 4
p1=$UROCE_PORT
expect_eq "uroce1 gid files" "0 1 2 3" "$(ls "$C/infiniband/uroce1/ports/1/gids" | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "devices in infiniband_verbs" "abi_version uverbs_uroce0 uverbs_uroce1" "$(ls "$C/infiniband_verbs" | tr '\n' ' ' | sed 's/ $//')"

uroce status >"$T/status" 2>&1
expect_eq "uroce status exit" 0 $?
expect_line "status uroce0 device line" "$T/status" "device uroce0 addr 127.0.0.1 port $p0 mtu 4096 state PORT_ACTIVE"
expect_line "status uroce1 device line" "$T/status" "device uroce1 addr 127.0.0.1 port $p1 mtu 1024 state PORT_ACTIVE"
expect_eq "status totals lines" "2" "$(grep -c '^totals clients=0 pd=0 mr=0 cq=0 qp=0 ah=0$' "$T/status")"

out=$(uroce down --dev uroce1)
case $out in "uroce1: down (uroced pid "*" stopped)") echo "ok: $out" ;;
*) fail "uroce down --dev uroce1" "uroce1: down (uroced pid N stopped)" "$out" ;; esac
[ ! -e "$C/infiniband/uroce1" ] && [ ! -e "$C/infiniband_verbs/uverbs_uroce1" ] && [ ! -e "$UROCE_RUN_DIR/uroce1.pid" ] ||
	fail "uroce1 leftovers" "none" "$(ls -R "$C" "$UROCE_RUN_DIR" | head -20)"
expect_eq "uroce0 directory untouched (mtime)" "$mtime0" "$(stat -c %Y.%y "$D")"
expect_eq "uroce0 still up" "$pid" "$(cat "$UROCE_RUN_DIR/uroce0.pid")"
expect_eq "uroce down --dev uroce1 again" "uroce1: not up" "$(uroce down --dev uroce1)"
