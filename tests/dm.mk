# tests/dm.mk: device memory (ibv_alloc_dm(3), docs/device-memory.md).
check_PROGRAMS += tests/traffic_dm
tests_traffic_dm_SOURCES = tests/traffic_dm.c tests/traffic_dm_proto.c tests/traffic_dm.h \
	tests/traffic_verbs.c tests/traffic_verbs.h tests/daemon_proto.c tests/daemon_proto.h
tests_traffic_dm_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_dm_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_dm_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)

DM_TESTS = tests/traffic_dm.sh
TESTS += $(DM_TESTS)
EXTRA_DIST += $(DM_TESTS)
