# tests/flush_aw.mk: IBTA 1.5 ATOMIC WRITE and FLUSH (docs/transport.md,
# "ATOMIC WRITE and FLUSH"): the engine's test, in-process.
check_PROGRAMS += tests/transport_flush_aw
TESTS += tests/transport_flush_aw
tests_transport_flush_aw_SOURCES = tests/transport_flush_aw.c $(TRANSPORT_TEST_SRCS)
tests_transport_flush_aw_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_flush_aw_LDADD = $(TRANSPORT_TEST_LDADD)

# Through libibverbs and a running daemon (also run by scripts/test-rdma-core).
check_PROGRAMS += tests/traffic_flush_aw
TESTS += tests/traffic_flush_aw.sh
EXTRA_DIST += tests/traffic_flush_aw.sh
tests_traffic_flush_aw_SOURCES = tests/traffic_flush_aw.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_flush_aw_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(IBVERBS_CFLAGS)
tests_traffic_flush_aw_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_flush_aw_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
