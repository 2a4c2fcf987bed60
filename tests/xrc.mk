# XRC (docs/xrc.md): domains at the control socket, two processes.
check_PROGRAMS += tests/daemon_xrcd
tests_daemon_xrcd_SOURCES = tests/daemon_xrcd.c tests/daemon_proto.c tests/daemon_proto.h
tests_daemon_xrcd_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
TESTS += tests/daemon_xrcd.sh
EXTRA_DIST += tests/daemon_xrcd.sh
