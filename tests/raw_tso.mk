# tests/raw_tso.mk: TSO and tunnel offloads of raw packet QPs (docs/raw-packet.md).
check_PROGRAMS += tests/traffic_raw_tso
tests_traffic_raw_tso_SOURCES = tests/traffic_raw_tso.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_raw_tso_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_raw_tso_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_raw_tso_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)

RAW_TSO_TESTS = tests/traffic_raw_tso.sh
TESTS += $(RAW_TSO_TESTS)
EXTRA_DIST += $(RAW_TSO_TESTS)

# VXLAN tunnel / inner flow specs and inner RSS (docs/raw-packet.md §4, §5).
check_PROGRAMS += tests/traffic_raw_tunnel
tests_traffic_raw_tunnel_SOURCES = tests/traffic_raw_tunnel.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_raw_tunnel_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_raw_tunnel_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_raw_tunnel_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
RAW_TUNNEL_TESTS = tests/traffic_raw_tunnel.sh
TESTS += $(RAW_TUNNEL_TESTS)
EXTRA_DIST += $(RAW_TUNNEL_TESTS)

# the segmentation and VXLAN recognition without a daemon
check_PROGRAMS += tests/eth_tso
tests_eth_tso_SOURCES = tests/eth_tso.c
tests_eth_tso_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_eth_tso_LDADD = $(DAEMON_TEST_LDADD)
TESTS += tests/eth_tso
