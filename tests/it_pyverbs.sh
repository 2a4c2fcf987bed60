#!/bin/sh
# it_pyverbs: rdma-core 44's own python tests (Debian's python3-pyverbs
# ships them, gzipped) pass on uroce0 through `uroce run`: test_device,
# test_pd, test_addr, test_cq, test_qp (no data moves there) and the tests
# of test_mr that move no data.  Pass = exit 0, no FAIL/ERROR, unittest's
# "OK" line, and every skip reason in the allow-list below (features uroce
# answers with EOPNOTSUPP, or hardware this machine lacks).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
pyverbs_run 900 72 \
	tests.test_device tests.test_pd tests.test_addr tests.test_cq tests.test_qp \
	tests.test_mr.MRTest.test_reg_mr_bad_flags tests.test_mr.MWTest.test_reg_mw_wrong_type \
	tests.test_mr.DeviceMemoryAPITest tests.test_mr.DmaBufMRTest

# Every skip reason must be one of these (EOPNOTSUPP-style, or no GPU).
allowed='^Create QP type [0-9]+ is not supported$
^Create Raw Packet QP (with|without)( extended)? attrs is not supported$
^To Create RAW QP must be done by root on Ethernet link layer$
^Operation not supported \(.*\)$
^Resize CQ is not supported$
^Device memory is not supported$
^Create memory window of type 3 is not supported$
^Reg dma-buf MR is not supported by the RDMA driver$
^Device /dev/dri/renderD[0-9]+ is not present$
^Lack of permission to access /dev/dri/renderD[0-9]+$
^Allocating dmabuf is not supported by /dev/dri/renderD[0-9]+$
^Some object imports are not supported$'
pyverbs_skips_allowed "$allowed"
