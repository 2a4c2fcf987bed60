# tests/integration.mk: filled in by the piece it names.

# Integration tests: real libibverbs clients, pyverbs and the
# uroce command, each test in its own run directory on its own UDP port
# (tests/lib.sh).  They run through the automake parallel harness.
IT_TESTS = tests/it_launch.sh tests/it_cli.sh tests/it_sysfs.sh tests/it_devices.sh \
	tests/it_nobody.sh tests/it_two_devices.sh tests/it_link.sh tests/it_kill_client.sh tests/it_pyverbs.sh \
	tests/it_capture.sh tests/it_down.sh tests/it_harness.sh tests/it_ipv6.sh \
	tests/it_default.sh tests/it_tmpfiles.sh tests/it_mtu.sh tests/it_wire.sh tests/it_security.sh \
	tests/it_root.sh tests/it_launch_netlink.sh tests/it_demo.sh tests/it_install.sh \
	tests/it_counters.sh tests/it_ucx.sh tests/it_doctor.sh tests/it_cm_daemon.sh tests/it_ci_recipe.sh \
	tests/it_rdma_shim.sh
IT_TESTS += tests/it_capture_stream.sh
TESTS += $(IT_TESTS)
EXTRA_DIST += $(IT_TESTS) tests/sec_victim.py tests/sec_forge.py tests/cm_daemon.py tests/cm_tshark.py
dist_check_DATA += tests/lib.sh
