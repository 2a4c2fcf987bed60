#!/bin/sh
# netstack_vectors_copy.sh - tests/data/icrc.tsv (the ICRC vectors the codec
# tests read) is a verbatim copy of the project's shared vectors
# (shared/vectors/icrc.tsv beside the main repository; a worktree finds it
# beside its common git directory). Without a shared copy there is nothing
# to compare: exit 77 (SKIP, reported as a skip, not a pass).
set -u
ours="$top_srcdir/tests/data/icrc.tsv"
[ -r "$ours" ] || { echo "FAIL: $ours missing"; exit 1; }
common=$(git -C "$top_srcdir" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
for shared in "$top_srcdir/../shared/vectors/icrc.tsv" \
	      ${common:+"$(dirname "$common")/../shared/vectors/icrc.tsv"}; do
	if [ -r "$shared" ]; then
		if cmp "$ours" "$shared"; then
			echo "ok: $ours == $shared ($(wc -l < "$ours") lines)"
			exit 0
		fi
		echo "FAIL: $ours differs from $shared"
		exit 1
	fi
done
echo "SKIP: no shared copy of icrc.tsv to compare with"
exit 77
