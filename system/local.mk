# system/local.mk: what a system install adds around the programs
# (docs/install.md): libibverbs' driver file, the login-shell snippet, the
# systemd unit, the tmpfiles.d rule, bash completion and the man pages.  The
# directories are configure's (--with-ibverbs-configdir, ...); the files are
# generated from their .in templates with the configured paths.
UROCE_SUBST = sed -e 's|@bindir[@]|$(bindir)|g' -e 's|@sbindir[@]|$(sbindir)|g' \
	-e 's|@sysconfdir[@]|$(sysconfdir)|g' -e 's|@pkglibexecdir[@]|$(pkglibexecdir)|g' \
	-e 's|@pkglibdir[@]|$(pkglibdir)|g' -e 's|@ibverbsproviderdir[@]|$(ibverbsproviderdir)|g' \
	-e 's|@ibverbsconfigdir[@]|$(ibverbsconfigdir)|g' -e 's|@profiledir[@]|$(profiledir)|g' \
	-e 's|@systemdsystemunitdir[@]|$(systemdsystemunitdir)|g' -e 's|@tmpfilesdir[@]|$(tmpfilesdir)|g' \
	-e 's|@systemrundir[@]|$(systemrundir)|g' -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	-e 's|@UROCE_PABI[@]|$(UROCE_PABI)|g' -e 's|@UROCE_RDMA_CORE_VERSION[@]|$(UROCE_RDMA_CORE_VERSION)|g' \
	-e 's|@abs_top_srcdir[@]|$(abs_top_srcdir)|g'

ibverbsconfig_DATA = system/libibverbs.d/uroce.driver
profile_DATA = system/profile.d/uroce.sh
systemdsystemunit_DATA = system/uroce.service
tmpfiles_DATA = system/tmpfiles.d/uroce.conf
bashcompletion_DATA = system/bash-completion/uroce
man_MANS = man/uroce.1 man/uroced.8 man/urocedv.3
UROCE_GENERATED = $(ibverbsconfig_DATA) $(profile_DATA) $(systemdsystemunit_DATA) \
	$(tmpfiles_DATA) $(bashcompletion_DATA) $(man_MANS)
CLEANFILES += $(UROCE_GENERATED)
EXTRA_DIST += system/uroce.driver.in system/uroce.sh.in system/uroce.service.in \
	system/uroce.conf.in system/uroce.bash man/uroce.1.in man/uroced.8.in man/urocedv.3.in

system/libibverbs.d/uroce.driver: $(top_srcdir)/system/uroce.driver.in Makefile
system/profile.d/uroce.sh: $(top_srcdir)/system/uroce.sh.in Makefile
system/uroce.service: $(top_srcdir)/system/uroce.service.in Makefile
system/tmpfiles.d/uroce.conf: $(top_srcdir)/system/uroce.conf.in Makefile
system/bash-completion/uroce: $(top_srcdir)/system/uroce.bash Makefile
man/uroce.1: $(top_srcdir)/man/uroce.1.in Makefile
man/uroced.8: $(top_srcdir)/man/uroced.8.in Makefile
man/urocedv.3: $(top_srcdir)/man/urocedv.3.in Makefile
$(UROCE_GENERATED):
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(UROCE_SUBST) $(filter %.in %.bash,$^) > $@.tmp && mv $@.tmp $@
