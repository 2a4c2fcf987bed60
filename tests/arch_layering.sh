#!/bin/sh
# arch_layering: the #include graph of include/, netstack/, emu/, provider/
# and tools/ keeps the layering of docs/architecture.md (the engine in
# emu/xport includes neither emu/ctl nor emu/nic; netstack and the provider
# include nothing of the daemon) and has no include cycle
# (tests/arch_layering.py). First the checker is shown to catch a forbidden
# direction and a cycle in a small tree of its own.
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
echo "ok"
