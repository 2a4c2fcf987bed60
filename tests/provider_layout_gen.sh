#!/bin/sh
# provider_layout_gen.sh - scripts/gen-layout-asserts makes a wrong layout fail the build.
#
# The configured family's table (LAYOUT_TSV) must compile against
# verbs_provider.h. For each case, a copy with one value of one row moved by
# a delta is turned into asserts and compiled: the compiler's error must name
# that row with the wrong value. Malformed rows must make the generator itself
# fail. Finally every shipped table's rows for the structs verbs_provider.h
# declares compile with that table's family selected (UROCE_LAYOUT_RDMA_CORE),
# so the declarations of all families are checked on any build; verbs_qp is
# left out there, as its size follows the installed verbs.h's ibv_qp_ex.
set -u
. "$top_builddir/tests/provider-env.sh"
tsv=$LAYOUT_TSV
gen="$top_srcdir/scripts/gen-layout-asserts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

printf '#include "config.h"\n#include <uroce/verbs_provider.h>\n#include "layout.h"\n' > "$tmp/t.c"
printf '#include <uroce/verbs_provider.h>\n#include "layout.h"\n' > "$tmp/family.c"

compile() { # compile TSV [SOURCE [CFLAGS]] -> 0 if the asserts hold; compiler output in $tmp/cc.log
	"$gen" "$1" > "$tmp/layout.h" 2> "$tmp/gen.log" || return 2
	$CC $CPPFLAGS ${3:-} -std=gnu11 -I"$tmp" -c "${2:-$tmp/t.c}" -o "$tmp/t.o" > "$tmp/cc.log" 2>&1
}

# The configured table holds for our declarations.
if compile "$tsv"; then
	n=$(grep -c _Static_assert "$tmp/layout.h")
	[ "$n" -ge 700 ] || { echo "FAIL: only $n asserts generated"; fails=$((fails + 1)); }
	echo "ok: $(basename "$tsv") compiles ($n asserts)"
else
	echo "FAIL: $(basename "$tsv") does not compile:"; cat "$tmp/gen.log" "$tmp/cc.log"
	fails=$((fails + 1))
fi

# name | struct | field | column (3 offset, 4 size) | delta; the error must
# name the moved value.
while IFS='|' read -r name st field col delta; do
	[ -n "$name" ] || continue
	LC_ALL=C awk -F '\t' -v OFS='\t' -v st="$st" -v f="$field" -v c="$col" -v d="$delta" '
		$1 == st && $2 == f { $c = $c + d; print $c > "/dev/stderr"; n++ } { print }
		END { exit n != 1 }' "$tsv" > "$tmp/bad.tsv" 2> "$tmp/value" ||
		{ echo "FAIL: $name: no single row $st.$field in $(basename "$tsv")"; fails=$((fails + 1)); continue; }
	v=$(cat "$tmp/value")
	if [ "$field" = __sizeof__ ]; then expect="sizeof(struct $st) != $v"
	elif [ "$col" = 3 ]; then expect="offsetof($st, $field) != $v"
	else expect="sizeof($st.$field) != $v"; fi
	if compile "$tmp/bad.tsv"; then
		echo "FAIL: $name: wrong row compiled"; fails=$((fails + 1))
	elif grep -qF "$expect" "$tmp/cc.log"; then
		echo "ok: $name rejected: $expect"
	else
		echo "FAIL: $name: expected '$expect' in:"; cat "$tmp/gen.log" "$tmp/cc.log"
		fails=$((fails + 1))
	fi
done <<'CASES'
verbs_qp.comp_mask one slot earlier (as up to 43)|verbs_qp|comp_mask|3|-8
verbs_qp one slot larger|verbs_qp|__sizeof__|4|8
verbs_context_ops one slot shorter|verbs_context_ops|__sizeof__|4|-8
slot reg_mr one later|verbs_context_ops|reg_mr|3|8
verbs_sysfs_dev.abi_ver field size|verbs_sysfs_dev|abi_ver|4|4
named union member|verbs_match_ent|u.driver_id|3|8
public ibv_context.async_fd|ibv_context|async_fd|3|-4
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

# Every family's private declarations, whatever verbs.h is installed.
private='^(list_node|verbs_match_ent|verbs_sysfs_dev|verbs_device_ops|verbs_device|verbs_xrcd|verbs_srq|verbs_mr|verbs_cq|verbs_flow_action|verbs_dm|verbs_counters|verbs_context_ops)$'
families=0
for t in "$top_srcdir"/provider/abi/rdma-core-v*-layout.tsv; do
	rel=$(basename "$t" | sed 's/^rdma-core-v\([0-9]*\)-layout\.tsv$/\1/')
	LC_ALL=C awk -F '\t' -v re="$private" '$1 ~ re' "$t" > "$tmp/private.tsv"
	rows=$(wc -l < "$tmp/private.tsv")
	if compile "$tmp/private.tsv" "$tmp/family.c" "-DUROCE_LAYOUT_RDMA_CORE=$rel -DUROCE_PABI_VERSION=0"; then
		echo "ok: family of rdma-core $rel: $rows private rows hold"
	else
		echo "FAIL: family of rdma-core $rel:"; cat "$tmp/gen.log" "$tmp/cc.log"; fails=$((fails + 1))
	fi
	slots=$(LC_ALL=C awk -F '\t' '$1 == "verbs_context_ops" && $2 != "__sizeof__"' "$tmp/private.tsv" | wc -l)
	[ "$slots" -ge 76 ] || { echo "FAIL: rdma-core $rel: only $slots verbs_context_ops slots checked"; fails=$((fails + 1)); }
	families=$((families + 1))
done
expect_families=$(LC_ALL=C awk -F '\t' '!/^#/ && $1 != "first" && NF == 4 { print $4 }' \
	"$top_srcdir/provider/abi/releases.tsv" | sort -u | wc -l)
[ "$families" -eq "$expect_families" ] ||
	{ echo "FAIL: $families tables shipped, releases.tsv names $expect_families"; fails=$((fails + 1)); }

[ "$fails" -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
