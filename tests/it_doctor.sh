#!/bin/sh
# it_doctor: `uroce doctor` reports what a bug report needs and names the
# problems it finds; `uroce run` names common mistakes with what to do.
#  - doctor on a healthy device: version, the rdma-core release and PABI the
#    provider was built for, libibverbs' release and its IBVERBS_PRIVATE_N,
#    the run directory, the device up with its daemon's device line, kernel,
#    namespaces, environment; "problems: none found", exit 0
#  - the daemon killed (SIGKILL): doctor says DOWN, lists the problem with
#    the commands to run, exit 1; `uroce run` warns with the same advice and
#    still runs the program (exit status = the program's)
#  - no device: `uroce run` says how to start one; a port set DOWN: it says
#    how to bring it up; a healthy device: it says nothing
#  - another user's run directory: `uroce run` refuses, naming the owner and
#    what to do
#  - kernel RDMA devices (faked in a namespace: mlx5_0, and one named uroce0):
#    `uroce run` names them and warns about the name; inside, the host's entry
#    and uroce's own device are at /sys/class/infiniband
#  - `uroce --version` = configure's PACKAGE_VERSION
. "$top_srcdir/tests/lib.sh"

version=$(sed -n 's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")
expect_eq "uroce --version" "uroce $version" "$(uroce --version)"
expect_eq "uroced --version" "uroced $version" "$("$top_builddir/emu/uroced" --version)"

urun true 2>"$T/run.err"
expect_eq "uroce run with no device: exit status of the program" 0 $?
expect_line "uroce run: no device" "$T/run.err" \
	"uroce run: note: no uroce device is up in $UROCE_RUN_DIR (start one with 'uroce up')"

up --dev uroce0
uroce doctor >"$T/doc" 2>&1
expect_eq "doctor exit on a healthy device" 0 $?
pabi=$(sed -n 's/^UROCE_PABI = //p' "$top_builddir/Makefile")
rel=$(sed -n 's/^UROCE_RDMA_CORE_VERSION = //p' "$top_builddir/Makefile")
expect_line "doctor: version" "$T/doc" "  version                $version"
expect_line "doctor: built for" "$T/doc" "  built for              rdma-core $rel, PABI $pabi"
expect_line "doctor: provider" "$T/doc" "  provider               $top_builddir/provider/.libs/liburoce-rdmav$pabi.so"
expect_line "doctor: provider ABI" "$T/doc" "  provider ABI           IBVERBS_PRIVATE_$pabi exported: the provider loads"
lib=$(readlink -f "$(ldconfig -p | sed -n 's/.*libibverbs\.so\.1 (\([^)]*\)) => //p' | head -n 1)")
expect_line "doctor: libibverbs" "$T/doc" "  library                $lib"
expect_line "doctor: run directory" "$T/doc" "  path                   $UROCE_RUN_DIR"
grep -q "^  uroce0                 up: uroced pid $(cat "$UROCE_RUN_DIR/uroce0.pid") " "$T/doc" ||
	{ cat "$T/doc"; fail "doctor: the device line"; }
echo "ok: doctor: uroce0 up with its daemon's pid"
expect_line "doctor: the daemon's own device line" "$T/doc" \
	"                         device uroce0 addr 127.0.0.1 port $UROCE_PORT mtu 4096 state PORT_ACTIVE"
expect_line "doctor: kernel" "$T/doc" "  release                $(uname -r) ($(uname -m))"
for s in uroce libibverbs "run directory" kernel namespaces environment "problems: none found"; do
	expect_line "doctor: section '$s'" "$T/doc" "$s"
done

uroce link set uroce0 down >/dev/null || fail "link set down"
urun true 2>"$T/run.err"
expect_line "uroce run: port DOWN" "$T/run.err" \
	"uroce run: warning: the port of uroce0 is DOWN (programs see PORT_DOWN and cannot send): 'uroce link set uroce0 up'"
uroce link set uroce0 up >/dev/null || fail "link set up"
urun true 2>"$T/run.err"
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	expect_eq "uroce run: nothing to say about a healthy device" "" "$(cat "$T/run.err")"
else
	echo "note: this host has kernel RDMA devices: uroce run's note about them is expected here"
fi

# Kernel RDMA devices, one named like the uroce device: a namespace whose
# /sys/class/infiniband holds mlx5_0 and uroce0 entries (links, as the kernel's).
bwrap --dev-bind / / --tmpfs /sys/class --dir /sys/class/infiniband \
	--symlink /sys/devices/virtual/net/lo /sys/class/infiniband/mlx5_0 \
	--symlink /sys/devices/virtual/net/lo /sys/class/infiniband/uroce0 \
	-- "$UROCE" run -- sh -c 'ls /sys/class/infiniband | tr "\n" " "; cat /sys/class/infiniband/uroce0/node_type' \
	>"$T/kdev.out" 2>"$T/kdev.err"
expect_eq "uroce run with kernel RDMA devices: exit" 0 $?
expect_line "uroce run: kernel RDMA devices" "$T/kdev.err" \
	"uroce run: note: this host has kernel RDMA devices ( mlx5_0 uroce0 ): inside 'uroce run' programs see only the uroce devices; run programs for the kernel devices outside it"
expect_line "uroce run: a kernel device with the same name" "$T/kdev.err" \
	"uroce run: warning: a kernel RDMA device is also named uroce0: outside 'uroce run' that name is the kernel's; give the uroce device another name (uroce up --dev NAME)"
expect_eq "inside: the host's mlx5_0 and uroce's own uroce0 at /sys/class/infiniband" "mlx5_0 uroce0 1: CA" "$(cat "$T/kdev.out")"

dpid=$(cat "$UROCE_RUN_DIR/uroce0.pid")
kill -KILL "$dpid"
# gone, or a zombie its reaper has not collected yet
n=0
while [ $n -lt 50 ] && [ -e "/proc/$dpid" ] && [ "$(sed 's/.*) \(.\).*/\1/' "/proc/$dpid/stat" 2>/dev/null)" != Z ]; do
	sleep 0.1; n=$((n + 1))
done
uroce doctor >"$T/doc" 2>&1
expect_eq "doctor exit with a dead daemon" 1 $?
expect_line "doctor: DOWN" "$T/doc" "  uroce0                 DOWN: the daemon is not running (log: $UROCE_RUN_DIR/uroce0.log)"
expect_line "doctor: the problem and what to do" "$T/doc" \
	"  - device uroce0 is not running: 'uroce down --dev uroce0' then 'uroce up --dev uroce0'; its log may say why"
urun sh -c 'exit 3' 2>"$T/run.err"
expect_eq "uroce run with a dead device: exit status of the program" 3 $?
expect_line "uroce run: dead daemon" "$T/run.err" \
	"uroce run: warning: device uroce0 is not running (its daemon is gone; log $UROCE_RUN_DIR/uroce0.log): 'uroce down --dev uroce0', then 'uroce up --dev uroce0'"
uroce down --dev uroce0 >/dev/null

# A run directory of another user (root's test: nobody owns it).
if [ "$(id -u)" = 0 ]; then
	mkdir -m 755 "$T/other"
	chown nobody "$T/other"
	UROCE_RUN_DIR=$T/other "$UROCE" run -- true 2>"$T/run.err"
	expect_eq "uroce run in another user's run directory" 1 $?
	expect_line "uroce run: another user's run directory" "$T/run.err" \
		"uroce run: run directory $T/other belongs to uid $(id -u nobody) (nobody), not to you or root; refusing to trust its sysfs tree (unset UROCE_RUN_DIR or point it at a directory of yours, then 'uroce up')"
fi
