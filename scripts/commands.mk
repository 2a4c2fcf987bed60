# scripts/commands.mk: the `uroce` subcommands.  Shell subcommands run from
# the source tree's scripts/; the two C helpers (tools/) are built into tools/
# of the build tree.  docs/discovery.md.
UROCE_SH_COMMANDS = scripts/uroce-up scripts/uroce-down scripts/uroce-env \
	scripts/uroce-run scripts/uroce-status scripts/uroce-link scripts/uroce-capture \
	scripts/uroce-doctor \
	scripts/uroce-fault
pkglibexec_SCRIPTS += $(UROCE_SH_COMMANDS)
urocelibdir = $(pkglibexecdir)
dist_urocelib_DATA = scripts/uroce-lib.sh
EXTRA_DIST += $(UROCE_SH_COMMANDS)

# iproute2's `rdma link|dev` for the devices, first on PATH under `uroce run`
uroceshimsdir = $(pkglibexecdir)/shims
dist_uroceshims_SCRIPTS = scripts/shims/rdma
# uroce's own directories go with it (the shared ones, bin/ or man/man1/, stay
# as every automake package leaves them).
uninstall-hook: uroce-libexec-rmdir
uroce-libexec-rmdir:
	-rmdir '$(DESTDIR)$(uroceshimsdir)' '$(DESTDIR)$(pkglibexecdir)' 2>/dev/null
.PHONY: uroce-libexec-rmdir
