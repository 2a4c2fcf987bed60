# tests/transport_comm_est.mk: IBV_EVENT_COMM_EST from the transport engine
# (Check, two engines back to back, simulated time).
check_PROGRAMS += tests/transport_comm_est
TESTS += tests/transport_comm_est
tests_transport_comm_est_SOURCES = tests/transport_comm_est.c $(TRANSPORT_TEST_SRCS)
tests_transport_comm_est_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_comm_est_LDADD = $(TRANSPORT_TEST_LDADD)

# The same event through libibverbs and a daemon (inside `uroce run`).
check_PROGRAMS += tests/traffic_comm_est
tests_traffic_comm_est_SOURCES = tests/traffic_comm_est.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_comm_est_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_comm_est_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_comm_est_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
TESTS += tests/traffic_comm_est.sh
EXTRA_DIST += tests/traffic_comm_est.sh
