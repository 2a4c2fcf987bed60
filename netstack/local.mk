# netstack/local.mk: the RoCEv2 codec (opcode table, parse, build, ICRC, PSN,
# UDP source port), a libtool convenience library linked into the daemon and
# the tools.  The pcap writer has its own fragment (netstack/pcap.mk).
noinst_LTLIBRARIES += netstack/libnetstack.la
# Sources are listed once here; tests/netstack.mk compiles the same list into
# the fuzz harness with $(FUZZ_CC).
NETSTACK_SRCS = netstack/errors.c netstack/opcode.c netstack/icrc.c \
	netstack/icrc_id.c netstack/parse.c netstack/parse_ip.c netstack/build.c \
	netstack/build_ip.c netstack/udp_sport.c netstack/cm_mad.c
netstack_libnetstack_la_SOURCES = $(NETSTACK_SRCS) netstack/wire.h
netstack_libnetstack_la_CFLAGS = $(AM_CFLAGS) $(CRC_CFLAGS)
netstack_libnetstack_la_LIBADD = $(CRC_LIBS)
noinst_HEADERS += include/uroce/roce.h netstack/packet.h netstack/icrc.h \
	netstack/psn.h netstack/udp_sport.h netstack/cm_mad.h
