# tests/netstack.mk: unit tests of the RoCEv2 codec (Check) and its fuzz harness.
NETSTACK_TEST_LDADD = netstack/libnetstack.la $(CHECK_LIBS)
NETSTACK_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
NETSTACK_TEST_UTIL = tests/netstack_testutil.c tests/netstack_testutil.h

NETSTACK_TESTS = tests/netstack_icrc tests/netstack_roundtrip tests/netstack_malformed \
	tests/netstack_psn
check_PROGRAMS += $(NETSTACK_TESTS)
TESTS += $(NETSTACK_TESTS)

tests_netstack_icrc_SOURCES = tests/netstack_icrc.c $(NETSTACK_TEST_UTIL)
tests_netstack_icrc_CFLAGS = $(NETSTACK_TEST_CFLAGS)
tests_netstack_icrc_LDADD = $(NETSTACK_TEST_LDADD)

tests_netstack_roundtrip_SOURCES = tests/netstack_roundtrip.c
tests_netstack_roundtrip_CFLAGS = $(NETSTACK_TEST_CFLAGS)
tests_netstack_roundtrip_LDADD = $(NETSTACK_TEST_LDADD)

tests_netstack_malformed_SOURCES = tests/netstack_malformed.c
tests_netstack_malformed_CFLAGS = $(NETSTACK_TEST_CFLAGS)
tests_netstack_malformed_LDADD = $(NETSTACK_TEST_LDADD)

tests_netstack_psn_SOURCES = tests/netstack_psn.c
tests_netstack_psn_CFLAGS = $(NETSTACK_TEST_CFLAGS)
tests_netstack_psn_LDADD = $(NETSTACK_TEST_LDADD)

dist_check_DATA += tests/data/icrc.tsv
