#!/bin/sh
# provider_tsv_copy.sh - the shipped layout tables are verbatim copies of the shared ones.
#
# provider/abi/rdma-core-vNN-layout.tsv are copied from the project's shared
# ABI facts (shared/abi/ beside the repository; a worktree finds it beside its
# common git directory) so a fresh clone builds.
# When that directory exists each must be byte-identical to its original.
# When it does not (a clone elsewhere, a tarball) there is nothing to compare:
# exit 77 (SKIP), which the harness reports as a skip, not a pass.
set -u
shared=
common=$(git -C "$top_srcdir" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || :)
for d in "$top_srcdir/../shared/abi" ${common:+"$(dirname "$common")/../shared/abi"}; do
	[ -r "$d/rdma-core-v44-layout.tsv" ] && { shared=$d; break; }
done
if [ -z "$shared" ]; then
	echo "SKIP: no shared copy of the layout tables to compare with"
	exit 77
fi
fails=0 n=0
for ours in "$top_srcdir"/provider/abi/rdma-core-v*-layout.tsv; do
	n=$((n + 1))
	if cmp "$ours" "$shared/${ours##*/}"; then
		echo "ok: ${ours##*/} == $shared/${ours##*/} ($(wc -l < "$ours") lines)"
	else
		echo "FAIL: $ours differs from $shared/${ours##*/}"
		fails=$((fails + 1))
	fi
done
[ "$n" -eq 6 ] || { echo "FAIL: expected the 6 family tables, found $n"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ]
