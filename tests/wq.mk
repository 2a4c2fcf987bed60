# tests/wq.mk: receive WQ flags and the striding RQ (docs/raw-packet.md §5,
# urocedv(3)).
check_PROGRAMS += tests/traffic_wq
tests_traffic_wq_SOURCES = tests/traffic_wq.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_wq_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_wq_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_wq_LDFLAGS = -no-install
tests_traffic_wq_LDADD = $(CHECK_MAIN_LIBS) provider/liburoce.la $(IBVERBS_LIBS)

WQ_TESTS = tests/traffic_wq.sh
TESTS += $(WQ_TESTS)
EXTRA_DIST += $(WQ_TESTS)
