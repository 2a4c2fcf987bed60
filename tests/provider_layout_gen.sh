#!/bin/sh
# provider_layout_gen.sh - scripts/gen-layout-asserts makes a wrong layout fail the build.
#
# For each case, a copy of provider/abi/rdma-core-v44-layout.tsv with one row
# changed is turned into asserts and compiled against verbs_provider.h; the
# exact table row must be named in the compiler's error. The unchanged table
# must compile, and malformed rows must make the generator itself fail.
set -u
. "$top_builddir/tests/provider-env.sh"
tsv="$top_srcdir/provider/abi/rdma-core-v44-layout.tsv"
gen="$top_srcdir/scripts/gen-layout-asserts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

printf '#include <uroce/verbs_provider.h>\n#include "layout.h"\n' > "$tmp/t.c"

compile() { # compile TSV -> 0 if the asserts hold; compiler output in $tmp/cc.log
	"$gen" "$1" > "$tmp/layout.h" 2> "$tmp/gen.log" || return 2
	$CC $CPPFLAGS -std=gnu11 -I"$tmp" -c "$tmp/t.c" -o "$tmp/t.o" > "$tmp/cc.log" 2>&1
}

# The shipped table holds for our declarations.
if compile "$tsv"; then
	n=$(grep -c _Static_assert "$tmp/layout.h")
	[ "$n" -ge 700 ] || { echo "FAIL: only $n asserts generated"; fails=$((fails + 1)); }
	echo "ok: shipped table compiles ($n asserts)"
else
	echo "FAIL: shipped table does not compile:"; cat "$tmp/gen.log" "$tmp/cc.log"
	fails=$((fails + 1))
fi

# name | sed program changing one row | text the error must contain
while IFS='|' read -r name prog expect; do
	[ -n "$name" ] || continue
	sed "$prog" "$tsv" > "$tmp/bad.tsv"
	if cmp -s "$tsv" "$tmp/bad.tsv"; then
		echo "FAIL: $name: the sed program changed nothing"; fails=$((fails + 1)); continue
	fi
	if compile "$tmp/bad.tsv"; then
		echo "FAIL: $name: wrong row compiled"; fails=$((fails + 1))
	elif grep -qF "$expect" "$tmp/cc.log"; then
		echo "ok: $name rejected: $expect"
	else
		echo "FAIL: $name: expected '$expect' in:"; cat "$tmp/gen.log" "$tmp/cc.log"
		fails=$((fails + 1))
	fi
done <<'CASES'
verbs_qp.comp_mask offset (v43 value)|s/^verbs_qp\tcomp_mask\t352\t4$/verbs_qp\tcomp_mask\t344\t4/|offsetof(verbs_qp, comp_mask) != 344
verbs_qp size (v45 value)|s/^verbs_qp\t__sizeof__\t0\t368$/verbs_qp\t__sizeof__\t0\t376/|sizeof(struct verbs_qp) != 376
verbs_context_ops size (v35 value)|s/^verbs_context_ops\t__sizeof__\t0\t608$/verbs_context_ops\t__sizeof__\t0\t600/|sizeof(struct verbs_context_ops) != 600
slot reg_mr one later|s/^verbs_context_ops\treg_mr\t\([0-9]*\)\t8$/verbs_context_ops\treg_mr\t600\t8/|offsetof(verbs_context_ops, reg_mr) != 600
verbs_sysfs_dev.abi_ver field size|s/^verbs_sysfs_dev\tabi_ver\t968\t4$/verbs_sysfs_dev\tabi_ver\t968\t8/|sizeof(verbs_sysfs_dev.abi_ver) != 8
named union member|s/^verbs_match_ent\tu.driver_id\t8\t8$/verbs_match_ent\tu.driver_id\t16\t8/|offsetof(verbs_match_ent, u.driver_id) != 16
public ibv_context.async_fd|s/^ibv_context\tasync_fd\t268\t4$/ibv_context\tasync_fd\t264\t4/|offsetof(ibv_context, async_fd) != 264
CASES

# Rows the generator must refuse (exit 1, message naming the line).
while IFS='|' read -r name row expect; do
	[ -n "$name" ] || continue
	{ cat "$tsv"; printf "$row\n"; } > "$tmp/bad.tsv"
	if "$gen" "$tmp/bad.tsv" > /dev/null 2> "$tmp/gen.log"; then
		echo "FAIL: $name: generator accepted it"; fails=$((fails + 1))
	elif grep -qF "$expect" "$tmp/gen.log"; then
		echo "ok: $name refused: $(cat "$tmp/gen.log")"
	else
		echo "FAIL: $name: expected '$expect', got: $(cat "$tmp/gen.log")"; fails=$((fails + 1))
	fi
done <<'CASES'
three columns|verbs_qp\tcomp_mask\t352|expected 4 tab-separated columns, got 3
non-numeric offset|verbs_qp\tcomp_mask\t0x160\t4|bad offset "0x160"
injected code in field|verbs_qp\tcomp_mask);int x;(\t352\t4|bad field name
sizeof row with offset|verbs_qp\t__sizeof__\t8\t368|__sizeof__ row with non-zero offset
CASES

[ "$fails" -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
