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
