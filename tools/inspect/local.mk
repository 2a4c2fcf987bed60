# tools/inspect/local.mk: `uroce inspect`, the capture decoder and ICRC checker
# (tools/inspect/uroce-inspect, found by the `uroce` dispatcher).
pkglibexec_PROGRAMS += tools/inspect/uroce-inspect
tools_inspect_uroce_inspect_SOURCES = tools/inspect/main.c \
	tools/inspect/link.c tools/inspect/link.h \
	tools/inspect/decode.c tools/inspect/decode.h \
	tools/inspect/print.c tools/inspect/print.h \
	tools/inspect/stats.c tools/inspect/stats.h \
	tools/inspect/flows.c tools/inspect/flows.h \
	tools/inspect/check.c tools/inspect/check.h \
	tools/inspect/check_flow.c tools/inspect/check_request.c tools/inspect/check_response.c \
	tools/inspect/check_read.c tools/inspect/check_report.c \
	tools/inspect/json.c tools/inspect/json.h
# the checker's internal header (check*.c only)
noinst_HEADERS += tools/inspect/check_state.h
tools_inspect_uroce_inspect_CFLAGS = $(AM_CFLAGS) $(PCAP_CFLAGS)
tools_inspect_uroce_inspect_LDADD = netstack/libnetstack.la $(PCAP_LIBS)
tools_inspect_uroce_inspect_SOURCES += tools/inspect/follow.c tools/inspect/follow.h
tools_inspect_uroce_inspect_LDADD += -lpthread
# --graph and --timeline: the capture as a conversation between QP endpoints
tools_inspect_uroce_inspect_SOURCES += tools/inspect/graph.c tools/inspect/graph.h \
	tools/inspect/graph_svg.c tools/inspect/graph_timeline.c
# --psn-graph and --latency-svg: PSN over time per request flow, latency histogram
tools_inspect_uroce_inspect_SOURCES += tools/inspect/check_view.c \
	tools/inspect/psn_trace.c tools/inspect/psn_trace.h tools/inspect/psn_plot.c tools/inspect/psn_plot.h \
	tools/inspect/psn_svg.c tools/inspect/psn_svg.h tools/inspect/psn_json.c tools/inspect/psn_json.h \
	tools/inspect/psn_output.c tools/inspect/psn_output.h tools/inspect/svg_util.c tools/inspect/svg_util.h \
	tools/inspect/latency_hist.c tools/inspect/latency_hist.h tools/inspect/latency_svg.c
tools_inspect_uroce_inspect_LDADD += -lm
