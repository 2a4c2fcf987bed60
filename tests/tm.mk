# Tag matching (docs/tag-matching.md): the TM-SRQ through the verbs API.
# cq_poll.c and srq.c hand tag-matching CQEs and SRQs to tm.c
tests_provider_cq_poll_SOURCES += provider/tm.c
tests_provider_dv_wc_SOURCES += provider/tm.c
# Tag matching through the verbs API (Check), cases in tests/traffic_tm.c.
check_PROGRAMS += tests/traffic_tm
tests_traffic_tm_SOURCES = tests/traffic_tm.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_tm_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_tm_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_tm_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
TESTS += tests/traffic_tm.sh
EXTRA_DIST += tests/traffic_tm.sh
# rdma-core's own tag-matching tests (pyverbs), outcomes per rdma-core major.
TESTS += tests/traffic_pyverbs_tm.sh
EXTRA_DIST += tests/traffic_pyverbs_tm.sh
EXTRA_DIST += tests/pyverbs/44/traffic_pyverbs_tm.tsv
EXTRA_DIST += tests/pyverbs/56/traffic_pyverbs_tm.tsv
# Tag matching in the engine under loss: two engines back to back (tests/transport_harness.h).
check_PROGRAMS += tests/transport_tm
TESTS += tests/transport_tm
tests_transport_tm_SOURCES = tests/transport_tm.c $(TRANSPORT_TEST_SRCS)
tests_transport_tm_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_tm_LDADD = $(TRANSPORT_TEST_LDADD)
