# tests/provider.mk: tests of the libibverbs provider (docs/provider.md).

# Compiler settings for the shell tests that compile C (the layout generator test).
tests/provider-env.sh: Makefile
	$(AM_V_GEN)$(MKDIR_P) tests && { \
	  echo "CC='$(CC)'"; \
	  echo "CPPFLAGS='-I$(abs_top_srcdir)/include -I$(abs_top_builddir) $(IBVERBS_CFLAGS) -D_GNU_SOURCE'"; \
	  echo "LAYOUT_TSV='$(abs_top_srcdir)/provider/abi/$(UROCE_LAYOUT_TABLE)'"; \
	} > $@.tmp && mv $@.tmp $@
check_SCRIPTS += tests/provider-env.sh
CLEANFILES += tests/provider-env.sh

TESTS += tests/provider_layout_gen.sh tests/provider_tsv_copy.sh
EXTRA_DIST += tests/provider_layout_gen.sh tests/provider_tsv_copy.sh

check_PROGRAMS += tests/provider_abi_version
TESTS += tests/provider_abi_version
tests_provider_abi_version_SOURCES = tests/provider_abi_version.c provider/abi_version.c
tests_provider_abi_version_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(IBVERBS_CFLAGS)
tests_provider_abi_version_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_provider_abi_version_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -ldl

# The provider through libibverbs' public API, against a private daemon.
check_PROGRAMS += tests/provider_api
tests_provider_api_SOURCES = tests/provider_api.c
tests_provider_api_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_provider_api_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_provider_api_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -lpthread
TESTS += tests/provider_api.sh tests/provider_refuse_version.sh tests/provider_match.sh
EXTRA_DIST += tests/provider_api.sh tests/provider_refuse_version.sh tests/provider_match.sh

# CQ polling over a real ring written as the NIC writes it (no daemon needed).
check_PROGRAMS += tests/provider_cq_poll
TESTS += tests/provider_cq_poll
tests_provider_cq_poll_SOURCES = tests/provider_cq_poll.c tests/provider_cq_ring.c tests/provider_cq_ring.h \
	provider/cq_poll.c provider/cq_clean.c provider/qp.c provider/wq.c provider/post.c provider/post_ex.c provider/srq.c provider/parent_domain.c provider/ctl.c provider/events.c provider/liveness.c provider/flush.c \
	provider/env.c
tests_provider_cq_poll_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(IBVERBS_CFLAGS)
tests_provider_cq_poll_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_provider_cq_poll_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -lpthread

# urocedv_poll_cq_wc against the iterator, every field set (no daemon needed).
check_PROGRAMS += tests/provider_dv_wc
TESTS += tests/provider_dv_wc
tests_provider_dv_wc_SOURCES = tests/provider_dv_wc.c tests/provider_cq_ring.c tests/provider_cq_ring.h \
	provider/dv_wc.c provider/cq_poll.c provider/cq_clean.c provider/qp.c provider/wq.c provider/post.c provider/post_ex.c provider/srq.c provider/parent_domain.c provider/ctl.c provider/events.c \
	provider/liveness.c provider/flush.c provider/env.c
tests_provider_dv_wc_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(IBVERBS_CFLAGS)
tests_provider_dv_wc_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_provider_dv_wc_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -lpthread

# Posting WQEs into a QP's rings (no daemon needed).
check_PROGRAMS += tests/provider_post
TESTS += tests/provider_post
tests_provider_post_SOURCES = tests/provider_post.c provider/post.c provider/liveness.c
tests_provider_post_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(IBVERBS_CFLAGS)
tests_provider_post_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_provider_post_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -lpthread

# The provider and the real clients against other rdma-core releases' own
# libibverbs, built from their source tarballs (scripts/test-rdma-core,
# docs/provider.md). Not part of `make check`: it builds rdma-core.
RDMA_CORE_VERSIONS = 50.0 64.0
check-rdma-core:
	$(SHELL) $(top_srcdir)/scripts/test-rdma-core $(RDMA_CORE_VERSIONS)
.PHONY: check-rdma-core
EXTRA_DIST += scripts/test-rdma-core

# librdmacm over the provider's rdma_cm interception (docs/rdma-cm.md), both
# load orders; the "daemon" case of provider_ucma needs the daemon's
# connection manager and runs from tests/cm_daemon.sh; tests/cm_clients.sh
# runs rping, ucmatose, udaddy, rdma_server/client and perftest -R.
check_PROGRAMS += tests/provider_ucma tests/provider_ucma_dlopen
tests_provider_ucma_SOURCES = tests/provider_ucma.c
tests_provider_ucma_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS) $(RDMACM_CFLAGS)
tests_provider_ucma_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_provider_ucma_LDADD = $(CHECK_MAIN_LIBS) $(RDMACM_LIBS) $(IBVERBS_LIBS) -lpthread
tests_provider_ucma_dlopen_SOURCES = tests/provider_ucma_dlopen.c
tests_provider_ucma_dlopen_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS) $(RDMACM_CFLAGS)
tests_provider_ucma_dlopen_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_provider_ucma_dlopen_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -ldl
TESTS += tests/provider_ucma.sh
# The forwarding against two fake daemons (no uroced, no libibverbs device).
check_PROGRAMS += tests/provider_ucma_fwd
TESTS += tests/provider_ucma_fwd
tests_provider_ucma_fwd_SOURCES = tests/provider_ucma_fwd.c provider/ucma.h provider/ucma_chan.c \
	provider/ucma_cmd.c provider/ucma_event.c provider/ucma_addr.c provider/ctl.c provider/env.c provider/liveness.c provider/ucma_listen.c
tests_provider_ucma_fwd_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/provider -I$(top_builddir)/provider $(IBVERBS_CFLAGS)
tests_provider_ucma_fwd_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_provider_ucma_fwd_LDADD = $(CHECK_MAIN_LIBS) $(IBVERBS_LIBS) -lpthread
EXTRA_DIST += tests/provider_ucma.sh tests/cm_daemon.sh tests/cm_clients.sh tests/cm_pyverbs.sh
TESTS += tests/cm_daemon.sh tests/cm_clients.sh tests/cm_pyverbs.sh
