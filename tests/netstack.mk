# tests/netstack.mk: unit tests of the RoCEv2 codec (Check) and its fuzz harness.
NETSTACK_TEST_LDADD = netstack/libnetstack.la $(CHECK_MAIN_LIBS)
NETSTACK_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
NETSTACK_TEST_UTIL = tests/netstack_testutil.c tests/netstack_testutil.h

NETSTACK_TESTS = tests/netstack_icrc tests/netstack_icrc_id tests/netstack_roundtrip \
	tests/netstack_malformed tests/netstack_psn tests/netstack_cm_mad
check_PROGRAMS += $(NETSTACK_TESTS)
TESTS += $(NETSTACK_TESTS) tests/netstack_vectors_copy.sh
EXTRA_DIST += tests/netstack_vectors_copy.sh

tests_netstack_icrc_SOURCES = tests/netstack_icrc.c $(NETSTACK_TEST_UTIL)
tests_netstack_icrc_CFLAGS = $(NETSTACK_TEST_CFLAGS)
tests_netstack_icrc_LDADD = $(NETSTACK_TEST_LDADD)

tests_netstack_icrc_id_SOURCES = tests/netstack_icrc_id.c $(NETSTACK_TEST_UTIL)
tests_netstack_icrc_id_CFLAGS = $(NETSTACK_TEST_CFLAGS)
tests_netstack_icrc_id_LDADD = $(NETSTACK_TEST_LDADD)

tests_netstack_roundtrip_SOURCES = tests/netstack_roundtrip.c
tests_netstack_roundtrip_CFLAGS = $(NETSTACK_TEST_CFLAGS)
tests_netstack_roundtrip_LDADD = $(NETSTACK_TEST_LDADD)

tests_netstack_malformed_SOURCES = tests/netstack_malformed.c
tests_netstack_malformed_CFLAGS = $(NETSTACK_TEST_CFLAGS)
tests_netstack_malformed_LDADD = $(NETSTACK_TEST_LDADD)

tests_netstack_cm_mad_SOURCES = tests/netstack_cm_mad.c
tests_netstack_cm_mad_CFLAGS = $(NETSTACK_TEST_CFLAGS)
tests_netstack_cm_mad_LDADD = $(NETSTACK_TEST_LDADD)

tests_netstack_psn_SOURCES = tests/netstack_psn.c
tests_netstack_psn_CFLAGS = $(NETSTACK_TEST_CFLAGS)
tests_netstack_psn_LDADD = $(NETSTACK_TEST_LDADD)

dist_check_DATA += tests/data/icrc.tsv tests/data/icrc-rxe.tsv

# The same unit tests under valgrind memcheck (out-of-bounds reads, leaks).
TESTS += tests/netstack_valgrind.sh
EXTRA_DIST += tests/netstack_valgrind.sh

# libFuzzer harness: the netstack sources compiled directly with $(FUZZ_CC)
# and ASan/UBSan (not the gcc-built .la).  `make check` runs it for 5 s from
# the committed seed corpus; `make fuzz FUZZ_SECONDS=600` runs it longer.
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-std=gnu11 -D_GNU_SOURCE -I$(top_srcdir)/include -I$(top_srcdir) -I$(top_builddir)
FUZZ_PARSE_SRCS = $(addprefix $(srcdir)/,$(NETSTACK_SRCS) tests/fuzz_parse.c)
FUZZ_SECONDS = 600
EXTRA_DIST += tests/fuzz_parse.c tests/fuzz_parse.sh tests/fuzz_run.sh tests/fuzz-corpus
CLEANFILES += tests/fuzz_parse tests/fuzz_parse-crash-*
EXTRA_DIST += tests/fuzz_disabled.sh
if !HAVE_FUZZER
TESTS += tests/fuzz_disabled.sh
endif
if HAVE_FUZZER
check_SCRIPTS += tests/fuzz_parse
TESTS += tests/fuzz_parse.sh
tests/fuzz_parse: $(FUZZ_PARSE_SRCS) $(addprefix $(srcdir)/,$(filter %.h,$(noinst_HEADERS))) $(srcdir)/netstack/wire.h
	@$(MKDIR_P) tests
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_FLAGS) $(CRC_CFLAGS) -o $@ $(FUZZ_PARSE_SRCS) $(CRC_LIBS)

fuzz: tests/fuzz_parse
	top_builddir=$(top_builddir) top_srcdir=$(top_srcdir) FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  FUZZ_SEED=0 $(SHELL) $(srcdir)/tests/fuzz_parse.sh
endif
.PHONY: fuzz
