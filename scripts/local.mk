# The `uroce` command: a dispatcher generated at the top of the build tree,
# plus one uroce-CMD program per subcommand (in scripts/).
bin_SCRIPTS = uroce
CLEANFILES += uroce
EXTRA_DIST += scripts/uroce.in
uroce: $(top_srcdir)/scripts/uroce.in Makefile
	$(AM_V_GEN)sed -e 's|@pkglibexecdir[@]|$(pkglibexecdir)|g' -e 's|@bindir[@]|$(bindir)|g' \
	    -e 's|@pkglibdir[@]|$(pkglibdir)|g' -e 's|@abs_top_srcdir[@]|$(abs_top_srcdir)|g' $(top_srcdir)/scripts/uroce.in > $@.tmp && \
	    chmod +x $@.tmp && mv $@.tmp $@
