# provider/: liburoce-rdmav<PABI>.so, the libibverbs plugin (docs/provider.md).
# configure picks the rdma-core layout family (provider/abi/releases.tsv): its
# PABI number names the file libibverbs loads, its table checks our declarations.
# It is installed into libibverbs' provider directory (configure
# --with-ibverbs-providerdir, docs/install.md) without its libtool archive:
# libibverbs dlopen()s the .so, nothing links to it.
ibverbsprovider_LTLIBRARIES = provider/liburoce.la
provider_liburoce_la_SOURCES = \
	provider/abi_version.c provider/abi_version.h \
	provider/comp_channel.c provider/comp_channel.h \
	provider/event_hold.c provider/event_hold.h provider/got_hook.c provider/got_hook.h \
	provider/layout_check.c provider/uroce.h \
	provider/device.c provider/context.c provider/ctl.c provider/query.c \
	provider/pd_mr.c provider/odp.c provider/parent_domain.c provider/cq.c provider/cq_clean.c provider/cq_poll.c provider/qp.c provider/flow.c provider/wq.c provider/post.c provider/post_ex.c provider/srq.c provider/ah.c provider/mw.c \
	provider/events.c provider/liveness.h provider/liveness.c provider/flush.c provider/async_fd.c \
	provider/cqe_decode.h provider/poll_yield.h provider/env.c provider/env.h provider/dv_wc.c provider/dv.c \
	provider/ucma.h provider/ucma_hook.c provider/ucma_chan.c provider/ucma_cmd.c \
	provider/ucma_event.c provider/ucma_dev.c provider/ucma_addr.c \
	provider/ucma_listen.c
provider_liburoce_la_SOURCES += provider/dm.c
provider_liburoce_la_SOURCES += provider/mcast.c
nodist_provider_liburoce_la_SOURCES = provider/verbs_provider_layout.h
provider_liburoce_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/provider $(IBVERBS_CFLAGS)
# The GOT hooks are called through libibverbs' indirect calls: keep them CET-clean.
# Without SANITIZE_CFLAGS: an ASan library cannot be loaded by the
# unsanitized programs (ibv_rc_pingpong, perftest, python3) that use it.
provider_liburoce_la_CFLAGS = $(UROCE_WARN_CFLAGS) -fcf-protection -fvisibility=hidden
# -shrext (libtool's link option for the shared-library suffix) gives the
# file name libibverbs dlopen()s: liburoce-rdmav$(UROCE_PABI).so.
# The version script exports the direct verbs of <infiniband/urocedv.h>
# (UROCEDV_1.0), which applications may link to (docs/provider.md).
provider_liburoce_la_LDFLAGS = -module -avoid-version -shared -no-undefined \
	-shrext -rdmav$(UROCE_PABI).so -Wl,-z,now -Wl,-z,relro \
	-Wl,--version-script=$(top_srcdir)/provider/urocedv.map
provider_liburoce_la_LIBADD = $(IBVERBS_LIBS) -ldl -lpthread
noinst_HEADERS += include/uroce/verbs_provider.h
# The direct verbs' public header, beside mlx5dv.h (urocedv(3)).
infinibandincludedir = $(includedir)/infiniband
infinibandinclude_HEADERS = include/infiniband/urocedv.h
EXTRA_DIST += provider/urocedv.map
EXTRA_provider_liburoce_la_DEPENDENCIES = $(top_srcdir)/provider/urocedv.map

# The layout facts of the configured family (docs/provider-abi.md §4.1)
# turned into _Static_asserts;
# a mismatch fails the build.
UROCE_LAYOUT_TSVS = provider/abi/rdma-core-v36-layout.tsv provider/abi/rdma-core-v44-layout.tsv \
	provider/abi/rdma-core-v45-layout.tsv provider/abi/rdma-core-v59-layout.tsv \
	provider/abi/rdma-core-v62-layout.tsv provider/abi/rdma-core-v64-layout.tsv
UROCE_LAYOUT_TSV = $(top_srcdir)/provider/abi/$(UROCE_LAYOUT_TABLE)
# config.h changes when configure picks another family.
provider/verbs_provider_layout.h: $(UROCE_LAYOUT_TSV) $(top_srcdir)/scripts/gen-layout-asserts $(top_builddir)/config.h
	$(AM_V_GEN)$(MKDIR_P) provider && \
	$(SHELL) $(top_srcdir)/scripts/gen-layout-asserts $(UROCE_LAYOUT_TSV) > $@.tmp && mv $@.tmp $@
BUILT_SOURCES += provider/verbs_provider_layout.h
CLEANFILES += provider/verbs_provider_layout.h
EXTRA_DIST += $(UROCE_LAYOUT_TSVS) provider/abi/releases.tsv \
	scripts/gen-layout-asserts scripts/rdma-core-family
$(provider_liburoce_la_OBJECTS): provider/verbs_provider_layout.h

install-data-hook: uroce-provider-drop-la
uroce-provider-drop-la:
	rm -f '$(DESTDIR)$(ibverbsproviderdir)/liburoce.la'
uninstall-hook: uroce-provider-uninstall
uroce-provider-uninstall:
	rm -f '$(DESTDIR)$(ibverbsproviderdir)/liburoce-rdmav$(UROCE_PABI).so'
.PHONY: uroce-provider-drop-la uroce-provider-uninstall
provider_liburoce_la_SOURCES += provider/dv_wq.c
provider_liburoce_la_SOURCES += provider/xrc.c
provider_liburoce_la_SOURCES += provider/import.c
provider_liburoce_la_SOURCES += provider/open_qp.c
provider_liburoce_la_SOURCES += provider/tm.c
