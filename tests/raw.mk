# tests/raw.mk: raw packet QPs, flow steering and the VXLAN segment
# (docs/raw-packet.md).
check_PROGRAMS += tests/traffic_raw tests/eth_frame tests/raw_kernel_peer
tests_raw_kernel_peer_SOURCES = tests/raw_kernel_peer.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_raw_kernel_peer_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_raw_kernel_peer_LDADD = $(IBVERBS_LIBS)
tests_eth_frame_SOURCES = tests/eth_frame.c
tests_eth_frame_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_eth_frame_LDADD = $(DAEMON_TEST_LDADD)
tests_traffic_raw_SOURCES = tests/traffic_raw.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_raw_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_raw_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_raw_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)

RAW_TESTS = tests/traffic_raw.sh tests/traffic_pyverbs_raw.sh tests/raw_kernel_vxlan.sh
TESTS += tests/eth_frame
TESTS += $(RAW_TESTS)
EXTRA_DIST += $(RAW_TESTS) tests/raw_vxlan_forge.py
