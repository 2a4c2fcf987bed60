# tests/mcast.mk: UD multicast (docs/multicast.md).
check_PROGRAMS += tests/traffic_mcast
tests_traffic_mcast_SOURCES = tests/traffic_mcast.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_mcast_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_mcast_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_mcast_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
TESTS += tests/traffic_mcast.sh
EXTRA_DIST += tests/traffic_mcast.sh
TESTS += tests/cm_mckey.sh
EXTRA_DIST += tests/cm_mckey.sh
