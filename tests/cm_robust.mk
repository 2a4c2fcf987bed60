# tests/cm_robust.mk: the connection manager under churn and failure
# (docs/rdma-cm.md "Robustness"): 1,000 librdmacm connections with 8 in
# flight leave the daemon as it was; a SIGKILLed peer's connections end with
# DISCONNECTED then TIMEWAIT_EXIT at the survivor.
check_PROGRAMS += tests/cm_churn
tests_cm_churn_SOURCES = tests/cm_churn.c
tests_cm_churn_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS) $(RDMACM_CFLAGS)
tests_cm_churn_LDADD = $(RDMACM_LIBS) $(IBVERBS_LIBS)
TESTS += tests/cm_churn.sh
EXTRA_DIST += tests/cm_churn.sh
