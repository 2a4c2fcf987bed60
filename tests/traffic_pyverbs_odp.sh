#!/bin/sh
# traffic_pyverbs_odp: rdma-core 44's tests.test_odp and
# tests.test_parent_domain on uroce0 through `uroce run`: RC, UD and SRQ
# traffic and RC WRITE / READ / atomics over ODP MRs (explicit and
# implicit), with synchronous and asynchronous prefetch of each advice;
# RC and UD traffic with QPs and CQs on parent domains, without, with
# default and with posix_memalign allocators. Pass = exit 0, 23 tests run,
# exactly the tests named below passed, exactly the listed skips: XRC
# (uroce has none) and, on a host without 2 MiB huge pages, the three
# huge-page tests (with huge pages they must pass).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 600 23 tests.test_odp tests.test_parent_domain
passed="test_odp_async_prefetch_rc_traffic (tests.test_odp.OdpTestCase.test_odp_async_prefetch_rc_traffic)
test_odp_implicit_async_prefetch_rc_traffic (tests.test_odp.OdpTestCase.test_odp_implicit_async_prefetch_rc_traffic)
test_odp_implicit_rc_traffic (tests.test_odp.OdpTestCase.test_odp_implicit_rc_traffic)
test_odp_implicit_sync_prefetch_rc_traffic (tests.test_odp.OdpTestCase.test_odp_implicit_sync_prefetch_rc_traffic)
test_odp_prefetch_async_no_page_fault_rc_traffic (tests.test_odp.OdpTestCase.test_odp_prefetch_async_no_page_fault_rc_traffic)
test_odp_prefetch_sync_no_page_fault_rc_traffic (tests.test_odp.OdpTestCase.test_odp_prefetch_sync_no_page_fault_rc_traffic)
test_odp_rc_atomic_cmp_and_swp (tests.test_odp.OdpTestCase.test_odp_rc_atomic_cmp_and_swp)
test_odp_rc_atomic_fetch_and_add (tests.test_odp.OdpTestCase.test_odp_rc_atomic_fetch_and_add)
test_odp_rc_rdma_read (tests.test_odp.OdpTestCase.test_odp_rc_rdma_read)
test_odp_rc_rdma_write (tests.test_odp.OdpTestCase.test_odp_rc_rdma_write)
test_odp_rc_srq_traffic (tests.test_odp.OdpTestCase.test_odp_rc_srq_traffic)
test_odp_rc_traffic (tests.test_odp.OdpTestCase.test_odp_rc_traffic)
test_odp_sync_prefetch_rc_traffic (tests.test_odp.OdpTestCase.test_odp_sync_prefetch_rc_traffic)
test_odp_ud_traffic (tests.test_odp.OdpTestCase.test_odp_ud_traffic)
test_default_allocators_rc_traffic (tests.test_parent_domain.ParentDomainTrafficTest.test_default_allocators_rc_traffic)
test_mem_align_rc_traffic (tests.test_parent_domain.ParentDomainTrafficTest.test_mem_align_rc_traffic)
test_mem_align_srq_excq_rc_traffic (tests.test_parent_domain.ParentDomainTrafficTest.test_mem_align_srq_excq_rc_traffic)
test_mem_align_ud_traffic (tests.test_parent_domain.ParentDomainTrafficTest.test_mem_align_ud_traffic)
test_without_allocators_rc_traffic (tests.test_parent_domain.ParentDomainTrafficTest.test_without_allocators_rc_traffic)"
huge="test_odp_rc_huge_traffic (tests.test_odp.OdpTestCase.test_odp_rc_huge_traffic)
test_odp_rc_huge_user_addr_traffic (tests.test_odp.OdpTestCase.test_odp_rc_huge_user_addr_traffic)
test_huge_page_traffic (tests.test_parent_domain.ParentDomainTrafficTest.test_huge_page_traffic)"
hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [ ! -f "$hp" ]; then
	pyverbs_passed_exact "$passed"
	pyverbs_skips_exact "1 Create XRCD is not supported
3 Huge pages of size 2M is not supported in this platform"
elif [ "$(cat "$hp")" = 0 ]; then
	pyverbs_passed_exact "$passed"
	pyverbs_skips_exact "1 Create XRCD is not supported
3 There are no huge pages of size 2M allocated"
else
	pyverbs_passed_exact "$passed
$huge"
	pyverbs_skips_exact "1 Create XRCD is not supported"
fi
