# tests/fuzz_ctl.mk: libFuzzer harness of the daemon's control protocol
# (tests/fuzz_ctl.c): the whole control plane, engine and codec compiled with
# $(FUZZ_CC) and ASan/UBSan, driven over its real control socket. `make check`
# runs it for a few seconds from the committed seed corpus; `make fuzz-ctl
# FUZZ_SECONDS=3600` runs it longer.
FUZZ_CTL_SRCS = $(addprefix $(srcdir)/,$(filter %.c,$(emu_liburoced_la_SOURCES) \
	$(emu_libxport_la_SOURCES) $(NETSTACK_SRCS) $(netstack_libpcapw_la_SOURCES)) tests/fuzz_ctl.c)
EXTRA_DIST += tests/fuzz_ctl.c tests/fuzz_ctl.sh tests/fuzz-ctl-corpus
CLEANFILES += tests/fuzz_ctl tests/fuzz_ctl-crash-*
if HAVE_FUZZER
check_SCRIPTS += tests/fuzz_ctl
TESTS += tests/fuzz_ctl.sh
tests/fuzz_ctl: $(FUZZ_CTL_SRCS) $(addprefix $(srcdir)/,$(filter %.h,$(noinst_HEADERS) \
		$(emu_liburoced_la_SOURCES) $(emu_libxport_la_SOURCES))) config.h
	@$(MKDIR_P) tests
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_FLAGS) $(IBVERBS_CFLAGS) $(CRC_CFLAGS) $(PCAP_CFLAGS) \
	  -o $@ $(FUZZ_CTL_SRCS) $(LIBEV_LIBS) $(PCAP_LIBS) $(CRC_LIBS)

fuzz-ctl: tests/fuzz_ctl
	top_builddir=$(top_builddir) top_srcdir=$(top_srcdir) FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  FUZZ_SEED=0 $(SHELL) $(srcdir)/tests/fuzz_ctl.sh
endif
.PHONY: fuzz-ctl
