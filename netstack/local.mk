# netstack/local.mk: the RoCEv2 codec (opcode table, parse, build, ICRC, PSN,
# UDP source port), a libtool convenience library linked into the daemon and
# the tools.  The pcap writer has its own fragment (netstack/pcap.mk).
noinst_HEADERS += include/uroce/roce.h netstack/packet.h netstack/icrc.h \
	netstack/psn.h netstack/udp_sport.h
