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
INSPECT_TESTS = tests/inspect_sample.py tests/inspect_tshark.py tests/inspect_errors.py
TESTS += $(INSPECT_TESTS)
EXTRA_DIST += $(INSPECT_TESTS) tests/inspect_lib.py

# Check unit tests of the pcap writer (read back with libpcap).
check_PROGRAMS += tests/inspect_pcap_writer
TESTS += tests/inspect_pcap_writer
tests_inspect_pcap_writer_SOURCES = tests/inspect_pcap_writer.c
tests_inspect_pcap_writer_CFLAGS = $(AM_CFLAGS) $(PCAP_CFLAGS) $(CHECK_CFLAGS)
tests_inspect_pcap_writer_LDADD = netstack/libpcapw.la $(PCAP_LIBS) $(CHECK_LIBS)
