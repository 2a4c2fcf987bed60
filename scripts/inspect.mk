# scripts/inspect.mk: `uroce inspect`, the capture decoder and ICRC checker
# (scripts/uroce-inspect, found by the `uroce` dispatcher).
pkglibexec_PROGRAMS += scripts/uroce-inspect
scripts_uroce_inspect_SOURCES = scripts/inspect_main.c \
	scripts/inspect_link.c scripts/inspect_link.h \
	scripts/inspect_decode.c scripts/inspect_decode.h \
	scripts/inspect_print.c scripts/inspect_print.h \
	scripts/inspect_stats.c scripts/inspect_stats.h \
	scripts/inspect_flows.c scripts/inspect_flows.h \
	scripts/inspect_json.c scripts/inspect_json.h
scripts_uroce_inspect_CFLAGS = $(AM_CFLAGS) $(PCAP_CFLAGS)
scripts_uroce_inspect_LDADD = netstack/libnetstack.la $(PCAP_LIBS)
