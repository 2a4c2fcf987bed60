# Shared contexts (docs/provider.md "Shared contexts"): the control
# socket's SHARE_CONTEXT / IMPORT_CONTEXT / IMPORT_OBJ / UNIMPORT_OBJ.
check_PROGRAMS += tests/daemon_share
tests_daemon_share_SOURCES = tests/daemon_share.c tests/daemon_proto.c tests/daemon_proto.h
tests_daemon_share_CFLAGS = $(AM_CFLAGS) $(IBVERBS_CFLAGS)
TESTS += tests/daemon_share.sh
EXTRA_DIST += tests/daemon_share.sh
