# tests/inspect.mk: `uroce inspect` and the pcap writer, tested with real
# tshark and with crafted captures; the sample capture and its generator.
check_PROGRAMS += tests/gen_pcap
tests_gen_pcap_SOURCES = tests/gen_pcap.c
tests_gen_pcap_CFLAGS = $(AM_CFLAGS) $(PCAP_CFLAGS)
tests_gen_pcap_LDADD = netstack/libnetstack.la netstack/libpcapw.la $(PCAP_LIBS)

EXTRA_DIST += tests/data/sample.pcap

# Regenerate the shipped sample capture (byte-exact: fixed timestamps).
# tests/inspect_sample.py checks that the committed file equals this output.
regen-sample: tests/gen_pcap$(EXEEXT)
	tests/gen_pcap$(EXEEXT) sample $(top_srcdir)/tests/data/sample.pcap \
	    $(top_srcdir)/tests/data/icrc.tsv >/dev/null

# Python 3 (stdlib only) tests run by the automake harness; they find the
# programs through $top_builddir and real tshark through $TSHARK.
INSPECT_TESTS = tests/inspect_sample.py tests/inspect_tshark.py tests/inspect_errors.py \
	tests/inspect_live.py tests/inspect_truncate.py tests/inspect_check_break.py \
	tests/inspect_flow_stats.py
TESTS += $(INSPECT_TESTS)
EXTRA_DIST += $(INSPECT_TESTS) tests/inspect_lib.py tests/inspect_lossy.py

# `inspect --check` on real captures made over uroce (clean, lossy, corrupting)
# and on those captures broken one rule at a time.
TESTS += tests/inspect_check_live.sh tests/inspect_follow.sh
EXTRA_DIST += tests/inspect_check_live.sh tests/inspect_follow.sh

# Check unit tests of the pcap writer (read back with libpcap).
check_PROGRAMS += tests/inspect_pcap_writer
TESTS += tests/inspect_pcap_writer
tests_inspect_pcap_writer_SOURCES = tests/inspect_pcap_writer.c
tests_inspect_pcap_writer_CFLAGS = $(AM_CFLAGS) $(PCAP_CFLAGS) $(CHECK_CFLAGS)
tests_inspect_pcap_writer_LDADD = netstack/libpcapw.la $(PCAP_LIBS) $(CHECK_MAIN_LIBS)

# libFuzzer harness of inspect's per-frame path (framing + decode + printers),
# compiled with $(FUZZ_CC) like tests/fuzz_parse (see tests/netstack.mk).
INSPECT_FUZZ_SRCS = $(addprefix $(srcdir)/,$(NETSTACK_SRCS) tests/inspect_fuzz.c \
	tools/inspect/link.c tools/inspect/decode.c tools/inspect/print.c tools/inspect/json.c \
	tools/inspect/flows.c tools/inspect/check.c tools/inspect/check_flow.c tools/inspect/check_request.c \
	tools/inspect/check_response.c tools/inspect/check_read.c tools/inspect/check_report.c)
# the points and pixel columns of --psn-graph, and their JSON (the SVG writers need libm)
INSPECT_FUZZ_SRCS += $(addprefix $(srcdir)/,tools/inspect/check_view.c tools/inspect/psn_trace.c \
	tools/inspect/psn_plot.c tools/inspect/psn_json.c)
EXTRA_DIST += tests/inspect_fuzz.c tests/inspect_fuzz.sh
CLEANFILES += tests/inspect_fuzz tests/inspect-fuzz-crash-*
if HAVE_FUZZER
check_SCRIPTS += tests/inspect_fuzz
TESTS += tests/inspect_fuzz.sh
tests/inspect_fuzz: $(INSPECT_FUZZ_SRCS) $(addprefix $(srcdir)/,$(filter %.h,$(noinst_HEADERS) $(tools_inspect_uroce_inspect_SOURCES))) $(srcdir)/netstack/wire.h
	@$(MKDIR_P) tests
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_FLAGS) $(CRC_CFLAGS) $(PCAP_CFLAGS) -o $@ $(INSPECT_FUZZ_SRCS) $(CRC_LIBS)

fuzz-inspect: tests/inspect_fuzz
	top_builddir=$(top_builddir) top_srcdir=$(top_srcdir) FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  FUZZ_SEED=0 $(SHELL) $(srcdir)/tests/inspect_fuzz.sh
endif

# Real traffic: packets sent through the kernel's UDP stack on loopback,
# captured by real tshark (Ethernet on lo, Linux cooked v2 on any).
check_PROGRAMS += tests/inspect_live_send
tests_inspect_live_send_SOURCES = tests/inspect_live_send.c
tests_inspect_live_send_LDADD = netstack/libnetstack.la
