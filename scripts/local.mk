# The `uroce` command: a dispatcher generated at the top of the build tree,
# plus one uroce-CMD program per subcommand (in scripts/).
bin_SCRIPTS = uroce
CLEANFILES += uroce
EXTRA_DIST += scripts/uroce.in
# (UROCE_SUBST: system/local.mk)
uroce: $(top_srcdir)/scripts/uroce.in Makefile
	$(AM_V_GEN)$(UROCE_SUBST) $(top_srcdir)/scripts/uroce.in > $@.tmp && \
	    chmod +x $@.tmp && mv $@.tmp $@
