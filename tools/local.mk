# tools/local.mk: compiled helpers of the `uroce` command (the launcher that
# hides NETLINK_RDMA, the GID formatter); tools/inspect/ has the decoder.
pkglibexec_PROGRAMS += tools/uroce-launch tools/uroce-gid
tools_uroce_launch_SOURCES = tools/uroce-launch.c
tools_uroce_launch_CFLAGS = $(AM_CFLAGS) $(SECCOMP_CFLAGS)
tools_uroce_launch_LDADD = $(SECCOMP_LIBS)
tools_uroce_gid_SOURCES = tools/uroce-gid.c
# scripts/bench's measurement of the receive-side ICRC check (not installed).
noinst_PROGRAMS += tools/icrc_bench
tools_icrc_bench_SOURCES = tools/icrc_bench.c
tools_icrc_bench_LDADD = netstack/libnetstack.la
# scripts/bench-cq's CQ polling benchmark (not installed): ibv_poll_cq, the
# extended-CQ iterator and urocedv_poll_cq_wc on CQs the daemon fills. It
# links the provider for the direct verbs (-no-install: a real executable
# that valgrind can run, with the build tree's provider in its run path).
noinst_PROGRAMS += tools/cq_bench
tools_cq_bench_SOURCES = tools/cq_bench.c
tools_cq_bench_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tools_cq_bench_CFLAGS = $(UROCE_WARN_CFLAGS) -O2
tools_cq_bench_LDFLAGS = -no-install
tools_cq_bench_LDADD = provider/liburoce.la $(IBVERBS_LIBS)
