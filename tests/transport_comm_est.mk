# tests/transport_comm_est.mk: IBV_EVENT_COMM_EST from the transport engine
# (Check, two engines back to back, simulated time).
check_PROGRAMS += tests/transport_comm_est
TESTS += tests/transport_comm_est
tests_transport_comm_est_SOURCES = tests/transport_comm_est.c $(TRANSPORT_TEST_SRCS)
tests_transport_comm_est_CFLAGS = $(TRANSPORT_TEST_CFLAGS)
tests_transport_comm_est_LDADD = $(TRANSPORT_TEST_LDADD)
