#!/bin/sh
# arch_layering: the #include graph of include/, netstack/, emu/, provider/
# and tools/ keeps the layering of docs/architecture.md (ctl -> nic ->
# objects -> xport: the object model in emu/obj includes neither the NIC nor
# the control plane, the NIC not the control plane, the engine in emu/xport
# nothing of the daemon; netstack and the provider include nothing of the
# daemon) and has no include cycle (tests/arch_layering.py), and the daemon
# library's file-level call graph has no cycle and no call up the layers
# (tests/arch_calls.py, from nm of the built objects). First each checker
# is shown to catch a forbidden direction or a cycle in a small tree of its
# own.
. "$top_srcdir/tests/lib.sh"
PY=${PYTHON3:-python3}
CHECK="$top_srcdir/tests/arch_layering.py"

mk() { mkdir -p "$(dirname "$T/tree/$1")"; printf '%s\n' "$2" >"$T/tree/$1"; }
mk include/uroce/abi.h '/* contract */'
mk netstack/a.h '#include "uroce/abi.h"'
mk emu/xport/xport.h '#include "netstack/a.h"'
mk emu/obj/objects.h '#include "emu/xport/xport.h"'
mk emu/nic/doorbell.c '#include "emu/obj/objects.h"'
mk emu/ctl/ops.h '#include "emu/obj/objects.h"'
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "clean tree" "0: 6 files, 5 includes: layering holds, no include cycle" "$rc: $out"

mk emu/xport/req.c '#include "emu/obj/objects.h"'
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "engine including the object model" \
	"1: emu/xport/req.c (xport) includes emu/obj/objects.h (objects): not allowed" "$rc: $out"
rm "$T/tree/emu/xport/req.c"

mk emu/eth/rss.c '#include "emu/ctl/ops.h"'
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "NIC including the control plane" \
	"1: emu/eth/rss.c (nic) includes emu/ctl/ops.h (ctl): not allowed" "$rc: $out"
rm "$T/tree/emu/eth/rss.c"

mk emu/obj/timer.h '#include "emu/nic/doorbell.c"'
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "object model including the NIC" \
	"1: emu/obj/timer.h (objects) includes emu/nic/doorbell.c (nic): not allowed" "$rc: $out"
rm "$T/tree/emu/obj/timer.h"

mk netstack/b.h '#include "netstack/a.h"'
mk netstack/a.h '#include "netstack/b.h"'
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "include cycle" "1: include cycle: netstack/a.h -> netstack/b.h -> netstack/a.h" "$rc: $out"

out=$("$PY" "$CHECK" "$top_srcdir"); rc=$?
echo "$out"
expect_eq "the tree's layering" 0 "$rc"
CALLS="$top_srcdir/tests/arch_calls.py"
CC_=${CC:-cc}
mkobj() { # mkobj DIR NAME SOURCE: $T/b/emu/DIR/.libs/liburoced_la-NAME.o
	mkdir -p "$T/b/emu/$1/.libs"
	printf '%s\n' "$3" >"$T/b/$2.c"
	"$CC_" -c -o "$T/b/emu/$1/.libs/liburoced_la-$2.o" "$T/b/$2.c" || fail "cc $2.c"
}
mkobj ctl a 'int b(void); int a(void) { return b(); }'
mkobj nic b 'int b(void) { return 1; }'
out=$("$PY" "$CALLS" "$T/b"); rc=$?
expect_eq "acyclic calls" "0: 2 files, 1 calls between files: no call cycle, none up the layers" "$rc: $out"
mkobj nic b 'int a(void); int b(void) { return a(); }'
out=$("$PY" "$CALLS" "$T/b"); rc=$?
expect_eq "call cycle" "1: call cycle: emu/ctl/a.c -> emu/nic/b.c -> emu/ctl/a.c
call up: emu/nic/b.c (nic) -> emu/ctl/a.c (ctl)" "$rc: $out"
mkobj ctl a 'int a(void) { return 2; }'
out=$("$PY" "$CALLS" "$T/b"); rc=$?
expect_eq "call up the layers" "1: call up: emu/nic/b.c (nic) -> emu/ctl/a.c (ctl)" "$rc: $out"

out=$("$PY" "$CALLS" "$top_builddir"); rc=$?
echo "$out"
expect_eq "the daemon's call graph" 0 "$rc"
echo "ok"
