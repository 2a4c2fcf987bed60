#!/bin/sh
# provider_tsv_copy.sh - the shipped layout table is a verbatim copy of the shared one.
#
# provider/abi/rdma-core-v44-layout.tsv is copied from the project's shared
# ABI facts (../shared/abi/ next to the repository) so a fresh clone builds.
# When that directory exists the two must be byte-identical. When it does not
# (a clone elsewhere, a tarball) there is nothing to compare: exit 77 (SKIP),
# which the harness reports as a skip, not a pass.
set -u
ours="$top_srcdir/provider/abi/rdma-core-v44-layout.tsv"
for shared in "$top_srcdir/../shared/abi/rdma-core-v44-layout.tsv" \
	      /work/shared/abi/rdma-core-v44-layout.tsv; do
	if [ -r "$shared" ]; then
		if cmp "$ours" "$shared"; then
			echo "ok: $ours == $shared ($(wc -l < "$ours") lines)"
			exit 0
		fi
		echo "FAIL: $ours differs from $shared"
		exit 1
	fi
done
echo "SKIP: no shared copy of rdma-core-v44-layout.tsv to compare with"
exit 77
