# scripts/commands.mk: filled in by the piece it names.

# Subcommands (issue 3): shell scripts run from the source tree; the two C
# helpers are built into scripts/ of the build tree.  docs/discovery.md.
UROCE_SH_COMMANDS = scripts/uroce-up scripts/uroce-down scripts/uroce-env \
	scripts/uroce-run scripts/uroce-status scripts/uroce-link scripts/uroce-capture
pkglibexec_SCRIPTS += $(UROCE_SH_COMMANDS)
urocelibdir = $(pkglibexecdir)
dist_urocelib_DATA = scripts/uroce-lib.sh
EXTRA_DIST += $(UROCE_SH_COMMANDS)

pkglibexec_PROGRAMS += scripts/uroce-launch scripts/uroce-gid
scripts_uroce_launch_SOURCES = scripts/uroce-launch.c
scripts_uroce_launch_CFLAGS = $(AM_CFLAGS) $(SECCOMP_CFLAGS)
scripts_uroce_launch_LDADD = $(SECCOMP_LIBS)
scripts_uroce_gid_SOURCES = scripts/uroce-gid.c
