# tests/cm_fabric.mk: libfabric's verbs provider over uroce (docs/rdma-cm.md
# "libfabric"): fi_pingpong -e msg and "verbs;ofi_rxm" -e rdm, data
# checked, on one device and across two, in a network namespace (root).
TESTS += tests/cm_fabric.sh
EXTRA_DIST += tests/cm_fabric.sh
