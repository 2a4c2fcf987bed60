# Shared contexts (docs/provider.md "Shared contexts"): the control
# socket's SHARE_CONTEXT / IMPORT_CONTEXT / IMPORT_OBJ / UNIMPORT_OBJ.
check_PROGRAMS += tests/daemon_share
tests_daemon_share_SOURCES = tests/daemon_share.c tests/daemon_proto.c tests/daemon_proto.h
tests_daemon_share_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
TESTS += tests/daemon_share.sh
EXTRA_DIST += tests/daemon_share.sh
# Shared contexts through the verbs API, across processes (Check).
check_PROGRAMS += tests/traffic_share
tests_traffic_share_SOURCES = tests/traffic_share.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_share_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_share_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_share_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
TESTS += tests/traffic_share.sh
EXTRA_DIST += tests/traffic_share.sh
# rdma-core's tests.test_shared_pd (tests/lib.sh pyverbs_run).
TESTS += tests/traffic_pyverbs_share.sh
EXTRA_DIST += tests/traffic_pyverbs_share.sh
EXTRA_DIST += tests/pyverbs/44/traffic_pyverbs_share.tsv
EXTRA_DIST += tests/pyverbs/56/traffic_pyverbs_share.tsv
# qp.c hands opened QPs (ibv_open_qp) to open_qp.c
tests_provider_cq_poll_SOURCES += provider/open_qp.c
tests_provider_dv_wc_SOURCES += provider/open_qp.c
