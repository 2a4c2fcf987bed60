# tests/daemon.mk: tests of uroced's control plane (docs/daemon.md).

# Unit tests (Check) of the pieces, linked against the daemon's own objects.
DAEMON_UNIT_TESTS = tests/daemon_qp_state tests/daemon_keys tests/daemon_cq_ring tests/daemon_clock \
	tests/daemon_cqe_writer tests/daemon_mem_access tests/daemon_wqe_reader \
	tests/daemon_mem_wb tests/daemon_loopback tests/daemon_cpu_quota
check_PROGRAMS += $(DAEMON_UNIT_TESTS)
TESTS += $(DAEMON_UNIT_TESTS)
DAEMON_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(IBVERBS_CFLAGS)
DAEMON_TEST_LDADD = emu/liburoced.la $(CHECK_MAIN_LIBS) $(LIBEV_LIBS)
tests_daemon_qp_state_SOURCES = tests/daemon_qp_state.c
tests_daemon_qp_state_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_daemon_qp_state_LDADD = $(DAEMON_TEST_LDADD)
tests_daemon_keys_SOURCES = tests/daemon_keys.c
tests_daemon_keys_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_daemon_keys_LDADD = $(DAEMON_TEST_LDADD)
tests_daemon_cq_ring_SOURCES = tests/daemon_cq_ring.c
tests_daemon_cq_ring_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_daemon_cq_ring_LDADD = $(DAEMON_TEST_LDADD)
tests_daemon_cpu_quota_SOURCES = tests/daemon_cpu_quota.c
tests_daemon_cpu_quota_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_daemon_cpu_quota_LDADD = $(DAEMON_TEST_LDADD)
tests_daemon_clock_SOURCES = tests/daemon_clock.c
tests_daemon_clock_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_daemon_clock_LDADD = $(DAEMON_TEST_LDADD)
tests_daemon_cqe_writer_SOURCES = tests/daemon_cqe_writer.c
tests_daemon_cqe_writer_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_daemon_cqe_writer_LDADD = $(DAEMON_TEST_LDADD)
tests_daemon_mem_access_SOURCES = tests/daemon_mem_access.c
tests_daemon_mem_access_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_daemon_mem_access_LDADD = $(DAEMON_TEST_LDADD)
tests_daemon_mem_wb_SOURCES = tests/daemon_mem_wb.c
tests_daemon_mem_wb_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_daemon_mem_wb_LDADD = $(DAEMON_TEST_LDADD)
tests_daemon_loopback_SOURCES = tests/daemon_loopback.c
tests_daemon_loopback_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_daemon_loopback_LDADD = $(DAEMON_TEST_LDADD)
tests_daemon_wqe_reader_SOURCES = tests/daemon_wqe_reader.c
tests_daemon_wqe_reader_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_daemon_wqe_reader_LDADD = $(DAEMON_TEST_LDADD)

# Clients of a real uroced started by each script on a private socket.
check_PROGRAMS += tests/hostile_client tests/daemon_churn tests/daemon_datapath tests/sec_attack
tests_sec_attack_SOURCES = tests/sec_attack.c tests/daemon_proto.c tests/daemon_proto.h
tests_sec_attack_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
tests_daemon_datapath_SOURCES = tests/daemon_datapath.c tests/daemon_proto.c tests/daemon_proto.h tests/soft_check.h
tests_daemon_datapath_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
tests_daemon_datapath_LDADD = netstack/libnetstack.la
tests_hostile_client_SOURCES = tests/hostile_client.c tests/daemon_proto.c tests/daemon_proto.h
tests_hostile_client_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
tests_daemon_churn_SOURCES = tests/daemon_churn.c tests/daemon_proto.c tests/daemon_proto.h
tests_daemon_churn_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
TESTS += tests/daemon_hostile.sh tests/daemon_cleanup.sh tests/daemon_admin.sh tests/daemon_datapath.sh
EXTRA_DIST += tests/daemon_lib.sh tests/daemon_hostile.sh tests/daemon_cleanup.sh tests/daemon_admin.sh \
	tests/daemon_datapath.sh

# The layering of docs/architecture.md: #include graph of the sources.
TESTS += tests/arch_layering.sh
EXTRA_DIST += tests/arch_layering.sh tests/arch_layering.py tests/arch_calls.py
