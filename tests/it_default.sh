#!/bin/sh
# it_default: `uroce up` with no arguments gives uroce0 on 127.0.0.1, UDP
# port 4791, MTU 4096, and `uroce down` with none stops it.  Exit 77
# (automake SKIP) if something on this host already holds UDP 4791.
. "$top_srcdir/tests/lib.sh"
if ss -H -u -a -n 2>/dev/null | awk '{print $4}' | grep -Eq '^(127\.0\.0\.1|0\.0\.0\.0|\*|\[::\]):4791$'; then
	echo "SKIP: UDP port 4791 is in use on this host"
	exit 77
fi

uroce up >"$T/up.out" 2>&1
rc=$?
cat "$T/up.out"
if [ $rc -ne 0 ] && grep -q 'UDP port 4791 on 127.0.0.1 is already' "$T/up.out"; then
	echo "SKIP: UDP port 4791 was taken meanwhile (another test run?)"
	exit 77
fi
expect_eq "uroce up exit" 0 $rc
uroce status >"$T/status" 2>&1
expect_line "defaults" "$T/status" "device uroce0 addr 127.0.0.1 port 4791 mtu 4096 state PORT_ACTIVE"
expect_eq "sysfs gid files (default --gid-tbl-len)" 16 "$(ls "$UROCE_RUN_DIR/sysfs/class/infiniband/uroce0/ports/1/gids" | wc -l)"
urun ibv_devinfo -d uroce0 >"$T/devinfo" 2>&1
expect_eq "ibv_devinfo exit" 0 $?
expect_line "active_mtu" "$T/devinfo" "\t\t\tactive_mtu:\t\t4096 (5)"
pid=$(cat "$UROCE_RUN_DIR/uroce0.pid")
expect_eq "uroce down" "uroce0: down (uroced pid $pid stopped)" "$(uroce down)"
expect_eq "uroce status after down" "no devices in $UROCE_RUN_DIR (start one with: uroce up)" "$(uroce status)"
