#!/bin/sh
# it_link: `uroce link set uroce0 down|up` flaps port 1: unmodified
# ibv_devinfo shows PORT_DOWN (1), then PORT_ACTIVE (4) again, and the
# daemon's status line agrees.  (The async events themselves are checked by
# the provider's C test.)
. "$top_srcdir/tests/lib.sh"
up --dev uroce0

# state_is STATE_TEXT: ibv_devinfo's port-state line and the daemon's.
state_is() {
	urun ibv_devinfo -d uroce0 -i 1 >"$T/devinfo" 2>&1
	expect_eq "ibv_devinfo exit" 0 $?
	expect_line "ibv_devinfo port state" "$T/devinfo" "\t\t\tstate:\t\t\t$1"
	uroce status --dev uroce0 >"$T/status" 2>&1
	expect_line "daemon status" "$T/status" "device uroce0 addr 127.0.0.1 port $UROCE_PORT mtu 4096 state ${1% (*}"
}

state_is "PORT_ACTIVE (4)"
expect_eq "uroce link set uroce0 down" "uroce0: link down" "$(uroce link set uroce0 down 2>&1)"
state_is "PORT_DOWN (1)"
expect_eq "uroce link show uroce0" "device uroce0 addr 127.0.0.1 port $UROCE_PORT mtu 4096 state PORT_DOWN" \
	"$(uroce link show uroce0 2>&1)"
expect_eq "uroce link set uroce0 down (again)" "uroce0: link down" "$(uroce link set uroce0 down 2>&1)"
state_is "PORT_DOWN (1)"
expect_eq "uroce link set uroce0 up" "uroce0: link up" "$(uroce link set uroce0 up 2>&1)"
state_is "PORT_ACTIVE (4)"
