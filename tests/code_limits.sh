#!/bin/sh
# code_limits: no source file (emu/ provider/ netstack/ include/ tools/) over
# 800 lines, no top-level function there over 120 lines
# (tests/code_limits.py). First the checker is shown to catch each limit,
# and to ignore braces in strings and comments, in a small tree of its own.
. "$top_srcdir/tests/lib.sh"
PY=${PYTHON3:-python3}
CHECK="$top_srcdir/tests/code_limits.py"

body() { # body N: a function of N lines, "{" to "}"
	echo 'static int f(int a,'
	echo '             int b)'
	echo '{'
	i=2
	while [ "$i" -lt $(($1 - 1)) ]; do echo '	a += b; /* } */'; i=$((i + 1)); done
	echo '	return a + "}{"[0];'
	echo '}'
}
mkdir -p "$T/tree/emu"
body 120 >"$T/tree/emu/a.c"
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "a 120-line function" "0: 1 files, 1 functions: within 800 lines per file, 120 per function" "$rc: $out"
body 121 >"$T/tree/emu/a.c"
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "a 121-line function" "1: emu/a.c:3: f() is 121 lines (limit 120)" "$rc: $out"
rm "$T/tree/emu/a.c"
i=0
while [ "$i" -lt 801 ]; do echo '/* line */'; i=$((i + 1)); done >"$T/tree/emu/b.h"
out=$("$PY" "$CHECK" "$T/tree"); rc=$?
expect_eq "an 801-line file" "1: emu/b.h: 801 lines (limit 800)" "$rc: $out"

out=$("$PY" "$CHECK" "$top_srcdir"); rc=$?
echo "$out"
expect_eq "the tree's limits" 0 "$rc"
echo "ok"
