# XRC (docs/xrc.md): domains at the control socket, two processes.
check_PROGRAMS += tests/daemon_xrcd
tests_daemon_xrcd_SOURCES = tests/daemon_xrcd.c tests/daemon_proto.c tests/daemon_proto.h
tests_daemon_xrcd_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
TESTS += tests/daemon_xrcd.sh
EXTRA_DIST += tests/daemon_xrcd.sh
# XRC traffic through unmodified clients (ibv_xsrq_pingpong).
TESTS += tests/traffic_xrc_clients.sh
EXTRA_DIST += tests/traffic_xrc_clients.sh
# qp.c hands XRC_RECV QPs to xrc.c
tests_provider_cq_poll_SOURCES += provider/xrc.c
tests_provider_dv_wc_SOURCES += provider/xrc.c
# XRC traffic through the verbs API (Check).
check_PROGRAMS += tests/traffic_xrc
tests_traffic_xrc_SOURCES = tests/traffic_xrc.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_xrc_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_xrc_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_xrc_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
TESTS += tests/traffic_xrc.sh
EXTRA_DIST += tests/traffic_xrc.sh
# XRC in the engine: two engines back to back (tests/transport_harness.h).
check_PROGRAMS += tests/transport_xrc
TESTS += tests/transport_xrc
tests_transport_xrc_SOURCES = tests/transport_xrc.c $(TRANSPORT_TEST_SRCS)
tests_transport_xrc_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_xrc_LDADD = $(TRANSPORT_TEST_LDADD)
