# tests/transport.mk: the transport engine's tests (Check), all in-process:
# two engines back to back through the real codec, simulated time.
TRANSPORT_TEST_SRCS = tests/transport_harness.c tests/transport_harness.h
TRANSPORT_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(IBVERBS_CFLAGS)
TRANSPORT_TEST_LDADD = emu/libxport.la netstack/libnetstack.la $(CHECK_MAIN_LIBS)

TRANSPORT_TESTS = tests/transport_units tests/transport_ops tests/transport_errors \
	tests/transport_psn_window \
	tests/transport_lossy tests/transport_reliability tests/transport_ud_robust \
	tests/transport_atomic tests/transport_prefetch tests/transport_dev_window \
	tests/transport_reorder
check_PROGRAMS += $(TRANSPORT_TESTS)
TESTS += $(TRANSPORT_TESTS)

tests_transport_prefetch_SOURCES = tests/transport_prefetch.c $(TRANSPORT_TEST_SRCS)
tests_transport_prefetch_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_prefetch_LDADD = $(TRANSPORT_TEST_LDADD)

tests_transport_dev_window_SOURCES = tests/transport_dev_window.c $(TRANSPORT_TEST_SRCS)
tests_transport_dev_window_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_dev_window_LDADD = $(TRANSPORT_TEST_LDADD)

tests_transport_reorder_SOURCES = tests/transport_reorder.c $(TRANSPORT_TEST_SRCS)
tests_transport_reorder_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_reorder_LDADD = $(TRANSPORT_TEST_LDADD)

tests_transport_ops_SOURCES = tests/transport_ops.c $(TRANSPORT_TEST_SRCS)
tests_transport_ops_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_ops_LDADD = $(TRANSPORT_TEST_LDADD)

tests_transport_errors_SOURCES = tests/transport_errors.c $(TRANSPORT_TEST_SRCS)
tests_transport_errors_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_errors_LDADD = $(TRANSPORT_TEST_LDADD)

tests_transport_lossy_SOURCES = tests/transport_lossy.c $(TRANSPORT_TEST_SRCS)
tests_transport_lossy_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_lossy_LDADD = $(TRANSPORT_TEST_LDADD)

tests_transport_reliability_SOURCES = tests/transport_reliability.c $(TRANSPORT_TEST_SRCS)
tests_transport_reliability_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_reliability_LDADD = $(TRANSPORT_TEST_LDADD)

tests_transport_ud_robust_SOURCES = tests/transport_ud_robust.c $(TRANSPORT_TEST_SRCS)
tests_transport_ud_robust_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_ud_robust_LDADD = $(TRANSPORT_TEST_LDADD)

tests_transport_units_SOURCES = tests/transport_units.c $(TRANSPORT_TEST_SRCS)
tests_transport_units_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_units_LDADD = $(TRANSPORT_TEST_LDADD)

tests_transport_psn_window_SOURCES = tests/transport_psn_window.c $(TRANSPORT_TEST_SRCS)
tests_transport_psn_window_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_psn_window_LDADD = $(TRANSPORT_TEST_LDADD)

tests_transport_atomic_SOURCES = tests/transport_atomic.c $(TRANSPORT_TEST_SRCS)
tests_transport_atomic_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_atomic_LDADD = $(TRANSPORT_TEST_LDADD)
