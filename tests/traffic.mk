# tests/traffic.mk: data-path tests (docs/traffic-tests.md). Real
# clients (ibv_*_pingpong, perftest, pyverbs) and our own verbs programs move
# data over uroce0, each test with its own daemon and port (tests/lib.sh).
# A test is listed in TRAFFIC_TESTS only once it passes.

# Verbs programs driven by the .sh wrappers (public API only).
check_PROGRAMS += tests/traffic_cqex tests/traffic_lossy tests/traffic_events tests/traffic_srq tests/traffic_post \
	tests/traffic_fairness tests/traffic_badicrc tests/traffic_loss tests/traffic_atomic tests/traffic_fatal \
	tests/traffic_qpex tests/traffic_qpex_mw tests/traffic_mw tests/traffic_cqmr tests/traffic_odp
tests_traffic_mw_SOURCES = tests/traffic_mw.c tests/traffic_mw_lib.c tests/traffic_mw_lib.h \
	tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_mw_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_mw_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_mw_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
tests_traffic_qpex_mw_SOURCES = tests/traffic_qpex_mw.c tests/traffic_mw_lib.c tests/traffic_mw_lib.h \
	tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_qpex_mw_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_qpex_mw_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_qpex_mw_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
tests_traffic_atomic_SOURCES = tests/traffic_atomic.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_atomic_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_atomic_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_atomic_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
tests_traffic_odp_SOURCES = tests/traffic_odp.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_odp_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_odp_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_odp_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
tests_traffic_fairness_SOURCES = tests/traffic_fairness.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_fairness_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_fairness_LDADD = $(IBVERBS_LIBS)
tests_traffic_fatal_SOURCES = tests/traffic_fatal.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_fatal_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_fatal_LDADD = $(IBVERBS_LIBS)
tests_traffic_loss_SOURCES = tests/traffic_loss.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_loss_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_loss_LDADD = $(IBVERBS_LIBS)
tests_traffic_badicrc_SOURCES = tests/traffic_badicrc.c tests/traffic_verbs.c tests/traffic_verbs.h tests/soft_check.h
tests_traffic_badicrc_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_badicrc_LDADD = netstack/libnetstack.la $(IBVERBS_LIBS)
tests_traffic_post_SOURCES = tests/traffic_post.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_post_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_post_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_post_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
tests_traffic_cqmr_SOURCES = tests/traffic_cqmr.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_cqmr_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_cqmr_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
tests_traffic_cqmr_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -lpthread
tests_traffic_srq_SOURCES = tests/traffic_srq.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_srq_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_srq_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_srq_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
tests_traffic_events_SOURCES = tests/traffic_events.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_events_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_events_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
tests_traffic_events_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -lpthread
tests_traffic_cqex_SOURCES = tests/traffic_cqex.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_cqex_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_cqex_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_cqex_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
tests_traffic_qpex_SOURCES = tests/traffic_qpex.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_qpex_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_qpex_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_qpex_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
tests_traffic_lossy_SOURCES = tests/traffic_lossy.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_lossy_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_lossy_LDADD = $(IBVERBS_LIBS)

# urocedv(3) as an application uses it: linked to the provider
# (-no-install: a real executable with the build tree's provider in its run path).
check_PROGRAMS += tests/traffic_dv_wc
tests_traffic_dv_wc_SOURCES = tests/traffic_dv_wc.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_dv_wc_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_dv_wc_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_dv_wc_LDFLAGS = -no-install
tests_traffic_dv_wc_LDADD = $(CHECK_MAIN_LIBS) provider/liburoce.la $(IBVERBS_LIBS)

# A hostile receiver that writes its own RQ ring: reads the provider's QP
# (provider/uroce.h) for the ring's address, no provider code linked.
check_PROGRAMS += tests/traffic_rq_refill
tests_traffic_rq_refill_SOURCES = tests/traffic_rq_refill.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_rq_refill_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(IBVERBS_CFLAGS)
tests_traffic_rq_refill_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_rq_refill_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)

# Bad WQEs written straight into the client's own SQ and RQ rings: reads
# the provider's QP (provider/uroce.h) for the rings, no provider code linked.
check_PROGRAMS += tests/traffic_bad_wqe
tests_traffic_bad_wqe_SOURCES = tests/traffic_bad_wqe.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_bad_wqe_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(IBVERBS_CFLAGS)
tests_traffic_bad_wqe_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_bad_wqe_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)

# A hostile client flooding the doorbell service with lies about its own
# rings (traffic_flood_rings.sh, scripts/bench-flood --rings).
check_PROGRAMS += tests/flood_rings
tests_flood_rings_SOURCES = tests/flood_rings.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_flood_rings_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(IBVERBS_CFLAGS)
tests_flood_rings_LDADD = $(IBVERBS_LIBS)

# Passing, registered:
TRAFFIC_TESTS = tests/traffic_rc_pingpong.sh tests/traffic_uc_ud_pingpong.sh tests/traffic_perftest.sh \
	tests/traffic_pyverbs.sh tests/traffic_cqex.sh tests/traffic_lossy.sh tests/traffic_pcap.sh \
	tests/traffic_events.sh tests/traffic_rc_pingpong_ts_events.sh tests/traffic_post.sh tests/traffic_hostile.sh \
	tests/traffic_fairness.sh tests/traffic_badicrc.sh tests/traffic_loss.sh tests/traffic_ud_robust.sh \
	tests/traffic_forged_read.sh tests/traffic_atomic.sh tests/traffic_atomic_lossy.sh \
	tests/traffic_pyverbs_atomic.sh tests/traffic_srq.sh tests/traffic_srq_clients.sh \
	tests/traffic_ucx.sh tests/traffic_mpi.sh \
	tests/traffic_fatal.sh tests/traffic_nodrop.sh tests/traffic_qpex.sh tests/traffic_qpex_mw.sh tests/traffic_pyverbs_qpex.sh tests/traffic_mw.sh tests/traffic_cqmr.sh tests/traffic_dv_wc.sh tests/traffic_busy_poll.sh tests/traffic_write_behind.sh tests/traffic_prefetch.sh tests/traffic_odp.sh tests/traffic_pyverbs_odp.sh \
	tests/traffic_rq_refill.sh tests/traffic_loop_turns.sh tests/traffic_loopback.sh \
	tests/traffic_bad_wqe.sh tests/traffic_flood_rings.sh
TESTS += $(TRAFFIC_TESTS)
EXTRA_DIST += $(TRAFFIC_TESTS) tests/pyverbs_rc.py tests/traffic_hostile.py tests/traffic_ud_robust.py tests/traffic_forged_read.py tests/traffic_mpi.c
dist_check_DATA += tests/traffic_lib.sh

# The benchmark beside raw UDP (docs/performance.md; not a test).
EXTRA_DIST += scripts/bench scripts/bench-flood tools/udp_loopback.c
# The CQ polling benchmark (docs/performance.md, "CQ polling"; not a test).
EXTRA_DIST += scripts/bench-cq

# Doorbell suppression under two concurrent posters (abi_ring.h).
check_PROGRAMS += tests/traffic_doorbell
tests_traffic_doorbell_SOURCES = tests/traffic_doorbell.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_doorbell_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_doorbell_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
tests_traffic_doorbell_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -lpthread
TESTS += tests/traffic_doorbell.sh
EXTRA_DIST += tests/traffic_doorbell.sh

# A polling client yields the CPU while its CQ stays empty
# (provider/poll_yield.h): sched_yield counted through the real provider.
check_PROGRAMS += tests/traffic_poll_yield
tests_traffic_poll_yield_SOURCES = tests/traffic_poll_yield.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_poll_yield_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_poll_yield_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_traffic_poll_yield_LDFLAGS = -rdynamic
tests_traffic_poll_yield_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS)
TESTS += tests/traffic_poll_yield.sh
EXTRA_DIST += tests/traffic_poll_yield.sh

# uroced --poll-window: the loop polls after traffic instead of sleeping.
TESTS += tests/traffic_poll_window.sh
EXTRA_DIST += tests/traffic_poll_window.sh tests/poll_window_junk.py
TESTS += tests/traffic_dev_window.sh
EXTRA_DIST += tests/traffic_dev_window.sh

# Receive doorbell suppression: receives posted without a doorbell, then ERR
# (abi_ring.h); doorbells per ib_send_lat iteration.
check_PROGRAMS += tests/traffic_rq_doorbell
tests_traffic_rq_doorbell_SOURCES = tests/traffic_rq_doorbell.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_traffic_rq_doorbell_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_traffic_rq_doorbell_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
tests_traffic_rq_doorbell_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -lpthread
TESTS += tests/traffic_rq_doorbell.sh
EXTRA_DIST += tests/traffic_rq_doorbell.sh
TESTS += tests/traffic_doorbell_budget.sh
EXTRA_DIST += tests/traffic_doorbell_budget.sh
