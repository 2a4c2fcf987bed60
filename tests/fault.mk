# tests/fault.mk: the fault injector and deterministic replay
# (docs/fault-injection.md).

# Unit tests (Check): decisions per seed, spec text, corruption vs ICRC.
check_PROGRAMS += tests/fault_units
TESTS += tests/fault_units
tests_fault_units_SOURCES = tests/fault_units.c
tests_fault_units_CFLAGS = $(DAEMON_TEST_CFLAGS)
tests_fault_units_LDADD = $(DAEMON_TEST_LDADD)

# Verbs programs driven by the scripts.
check_PROGRAMS += tests/traffic_faults tests/fault_replay
tests_traffic_faults_SOURCES = tests/traffic_faults.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_faults_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_faults_LDADD = $(IBVERBS_LIBS)
tests_fault_replay_SOURCES = tests/fault_replay.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_fault_replay_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_fault_replay_LDADD = $(IBVERBS_LIBS)

FAULT_TESTS = tests/traffic_faults.sh tests/fault_cli.sh tests/fault_replay.sh
TESTS += $(FAULT_TESTS)
EXTRA_DIST += $(FAULT_TESTS)
