# netstack/pcap.mk: the pcap writer (libpcap), a convenience library of its own
# so that programs that only write captures need not pull in the codec.
noinst_LTLIBRARIES += netstack/libpcapw.la
netstack_libpcapw_la_SOURCES = netstack/pcap_writer.c
noinst_HEADERS += netstack/pcap_writer.h
netstack_libpcapw_la_CFLAGS = $(AM_CFLAGS) $(PCAP_CFLAGS)
netstack_libpcapw_la_LIBADD = $(PCAP_LIBS)
