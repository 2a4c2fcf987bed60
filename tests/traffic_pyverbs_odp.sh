#!/bin/sh
# traffic_pyverbs_odp: rdma-core's tests.test_odp and
# tests.test_parent_domain on uroce0 through `uroce run`: RC, UD and SRQ
# traffic and RC WRITE / READ / atomics over ODP MRs (explicit and
# implicit), with synchronous and asynchronous prefetch of each advice;
# RC and UD traffic with QPs and CQs on parent domains, without, with
# default and with posix_memalign allocators. Pass = exit 0, each test's
# outcome as in tests/pyverbs/MAJOR/traffic_pyverbs_odp.tsv: all pass,
# XRC over ODP MRs included; the three huge-page tests pass there, and on
# a host without 2 MiB huge pages (not root: hugepages_want cannot add
# them) they must skip with pyverbs' reason for that.
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
# the three huge-page tests map 2 MiB pages: as root, make sure there are some
hugepages_want 16
hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [ ! -f "$hp" ]; then
	why="Huge pages of size 2M is not supported in this platform"
elif [ "$(cat "$hp")" = 0 ]; then
	why="There are no huge pages of size 2M allocated"
else
	why=
fi
PYVERBS_HOST_SKIPS=
if [ -n "$why" ]; then
	for t in tests.test_odp.OdpTestCase.test_odp_rc_huge_traffic \
		tests.test_odp.OdpTestCase.test_odp_rc_huge_user_addr_traffic \
		tests.test_parent_domain.ParentDomainTrafficTest.test_huge_page_traffic; do
		PYVERBS_HOST_SKIPS="$PYVERBS_HOST_SKIPS$t	$why
"
	done
fi
pyverbs_run 600 tests.test_odp tests.test_parent_domain
