#!/bin/sh
# it_pyverbs: rdma-core 44's own python tests (Debian's python3-pyverbs
# ships them, gzipped) pass on uroce0 through `uroce run`: test_device,
# test_pd, test_addr, test_cq, test_qp (no data moves there; raw packet QPs
# included, docs/raw-packet.md) and the tests
# of test_mr that move no data.  Pass = exit 0, no FAIL/ERROR, unittest's
# "OK" line, and every skip reason in the allow-list below (features uroce
# answers with EOPNOTSUPP, or hardware this machine lacks).
. "$top_srcdir/tests/lib.sh"
up --dev uroce0
# test_device's DM tests pass a float to random.randrange: Python 3.11's
# DeprecationWarning on stderr would split their "name ... ok" lines.
PYTHONWARNINGS=ignore::DeprecationWarning
export PYTHONWARNINGS
pyverbs_run 900 72 \
	tests.test_device tests.test_pd tests.test_addr tests.test_cq tests.test_qp \
	tests.test_mr.MRTest.test_reg_mr_bad_flags tests.test_mr.MWTest.test_reg_mw_wrong_type \
	tests.test_mr.DeviceMemoryAPITest tests.test_mr.DmaBufMRTest

# Exactly these tests pass (RC, UC and UD QP creation and modification
# among them: one that starts failing or skipping fails this test).
pyverbs_passed_exact "Verify that it's possible to get IB devices list.
Test ibv_open_device()
Test phys_port_cnt_ex
Test ibv_query_device()
Test ibv_query_device_ex()
Test ibv_query_gid()
Test ibv_query_gid_ex()
Test ibv_query_gid_ex() with an empty index
Test ibv_query_gid_table()
Test ibv_query_gid_table() with too small a buffer
Test ibv_query_pkey()
Test ibv_query_port
Verify that querying non-existing ports fails as expected
Test ibv_alloc_pd()
Test ibv_dealloc_pd()
Test bad flow cases in destruction of a PD object
Test multiple creations and destructions of a PD object
Test ibv_create_ah.
Verify that AH can't be created without GRH in RoCE
Test ibv_destroy_ah.
test_create_cq (tests.test_cq.CQAPITest.test_create_cq)
Test ibv_create_cq() with wrong comp_vector / number of cqes
test_create_cq_with_comp_channel (tests.test_cq.CQAPITest.test_create_cq_with_comp_channel)
Test resize CQ, start with specific value and then increase and decrease
Queries an RAW Packet QP after creation. Verifies that its properties
Test RAW Packet QP creation via ibv_create_qp with a QPAttr object
Test RAW Packet QP creation via ibv_create_qp without a QPAttr object
Test Raw Packet QP creation via ibv_create_qp_ex with a QPAttr object
Test Raw Packet QP creation via ibv_create_qp_ex without a QPAttr object
Test Raw Packet QP creation via ibv_create_qp_ex with a QPAttr object with illegal max_recv_sge.
Test Raw Packet QP creation via ibv_create_qp_ex with a QPAttr object with illegal max_recv_wr.
Test Raw Packet QP creation via ibv_create_qp_ex with a QPAttr object with illegal max_send_sge.
Test Raw Packet QP creation via ibv_create_qp_ex with a QPAttr object with illegal max_send_wr.
Test RC QP creation via ibv_create_qp_ex without a QPAttr object
Test RC QP creation via ibv_create_qp_ex with a QPAttr object provided.
Test RC QP creation via ibv_create_qp without a QPAttr object provided.
Test RC QP creation via ibv_create_qp with a QPAttr object provided.
Test UC QP creation via ibv_create_qp_ex without a QPAttr object
Test UC QP creation via ibv_create_qp_ex with a QPAttr object provided.
Test UC QP creation via ibv_create_qp without a QPAttr object provided.
Test UC QP creation via ibv_create_qp with a QPAttr object provided.
Test UD QP creation via ibv_create_qp_ex without a QPAttr object
Test UD QP creation via ibv_create_qp_ex with a QPAttr object provided.
Test UD QP creation via ibv_create_qp without a QPAttr object provided.
Test UD QP creation via ibv_create_qp with a QPAttr object provided.
test_modify_ud_qp (tests.test_qp.QPTest.test_modify_ud_qp)
Queries an UD QP data in order after moving it to RTS state.
Queries an RC QP after creation. Verifies that its properties are as
Queries an UC QP after creation. Verifies that its properties are as
Queries an UD QP after creation. Verifies that its properties are as
Verify that illegal flags combination fails as expected
Verify that trying to create a MW of a wrong type fails
test ibv_alloc_dm()
test ibv_free_dm()
test ibv_alloc_dm() with an illegal size and comp mask
Test calling ibv_free_dm() twice
Test writing to the device memory
Test writing to the device memory with bad offset and length
Test reading from the device memory
Several processes try to allocate device memory simultaneously.
test_create_dm_mr (tests.test_mr.DeviceMemoryAPITest.test_create_dm_mr)
Test multiple types of bad access to the Device Memory. Device memory
Test bad Device Memory registration when trying to register bigger DMMR"

# Exactly these skips: features uroce answers with EOPNOTSUPP (importing a
# context and its DM through a duplicated cmd_fd, ibv_import_device(3)),
# and dma-buf, which needs a GPU render node.
pyverbs_skips_exact "1 Some object imports are not supported
8 dmabuf: no usable /dev/dri/renderD node"
