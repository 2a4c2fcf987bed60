#!/bin/sh
# arch_layering: the #include graph of include/, netstack/, emu/, provider/
# and tools/ keeps the layering of docs/architecture.md (the engine in
# emu/xport includes neither emu/ctl nor emu/nic; netstack and the provider
# include nothing of the daemon) and has no include cycle
# (tests/arch_layering.py), and the daemon library's file-level call graph
# has no cycle (tests/arch_calls.py, from nm of the built objects). First
# each checker is shown to catch a forbidden direction or a cycle in a small
# tree of its own.
. "$top_srcdir/tests/lib.sh"
PY=${PYTHON3:-python3}
CHECK="$top_srcdir/tests/arch_layering.py"

mk() { mkdir -p "$(dirname "$T/tree/$1")"; printf '%s\n' "$2" >"$T/tree/$1"; }
mk include/uroce/abi.h '/* contract */'
mk netstack/a.h '#include "uroce/abi.h"'
mk emu/xport/xport.h '#include "netstack/a.h"'
mk emu/ctl/objects.h '#include "emu/xport/xport.h"'
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "clean tree" "0: 4 files, 3 includes: layering holds, no include cycle" "$rc: $out"

mk emu/xport/req.c '#include "emu/ctl/objects.h"'
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "engine including the control plane" \
	"1: emu/xport/req.c (xport) includes emu/ctl/objects.h (daemon): not allowed" "$rc: $out"
rm "$T/tree/emu/xport/req.c"

mk netstack/b.h '#include "netstack/a.h"'
mk netstack/a.h '#include "netstack/b.h"'
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "include cycle" "1: include cycle: netstack/a.h -> netstack/b.h -> netstack/a.h" "$rc: $out"

out=$("$PY" "$CHECK" "$top_srcdir"); rc=$?
echo "$out"
expect_eq "the tree's layering" 0 "$rc"
CALLS="$top_srcdir/tests/arch_calls.py"
CC_=${CC:-cc}
mkobj() { # mkobj NAME SOURCE: $T/b/emu/ctl/.libs/liburoced_la-NAME.o
	mkdir -p "$T/b/emu/ctl/.libs"
	printf '%s\n' "$2" >"$T/b/$1.c"
	"$CC_" -c -o "$T/b/emu/ctl/.libs/liburoced_la-$1.o" "$T/b/$1.c" || fail "cc $1.c"
}
mkobj a 'int b(void); int a(void) { return b(); }'
mkobj b 'int b(void) { return 1; }'
out=$("$PY" "$CALLS" "$T/b"); rc=$?
expect_eq "acyclic calls" "0: 2 files, 1 calls between files: no call cycle" "$rc: $out"
mkobj b 'int a(void); int b(void) { return a(); }'
out=$("$PY" "$CALLS" "$T/b"); rc=$?
expect_eq "call cycle" "1: call cycle: emu/ctl/a.c -> emu/ctl/b.c -> emu/ctl/a.c" "$rc: $out"

out=$("$PY" "$CALLS" "$top_builddir"); rc=$?
echo "$out"
expect_eq "the daemon's call graph" 0 "$rc"
echo "ok"
