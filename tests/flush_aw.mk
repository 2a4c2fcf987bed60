# tests/flush_aw.mk: IBTA 1.5 ATOMIC WRITE and FLUSH (docs/transport.md,
# "ATOMIC WRITE and FLUSH"): the engine's test, in-process.
check_PROGRAMS += tests/transport_flush_aw
TESTS += tests/transport_flush_aw
tests_transport_flush_aw_SOURCES = tests/transport_flush_aw.c $(TRANSPORT_TEST_SRCS)
tests_transport_flush_aw_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_flush_aw_LDADD = $(TRANSPORT_TEST_LDADD)
