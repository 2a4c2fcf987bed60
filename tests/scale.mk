# tests/scale.mk: uroce0 at scale (docs/performance.md "Scale"): many RC QPs
# on one device, many processes opening it in turn. `make check` runs a
# smaller size (tests/scale_qps.sh); `make check-scale` the full one
# (16,384 QPs, 1,000 processes).
check_PROGRAMS += tests/scale_qps
tests_scale_qps_SOURCES = tests/scale_qps.c tests/traffic_verbs.c tests/traffic_verbs.h
tests_scale_qps_CPPFLAGS = $(AM_CPPFLAGS) $(IBVERBS_CFLAGS)
tests_scale_qps_LDADD = $(IBVERBS_LIBS)
TESTS += tests/scale_qps.sh
EXTRA_DIST += tests/scale_qps.sh

# The full size: 16,384 RC QPs and 1,000 processes.
# The last line is the "N passed, N failed" line .ci/run adds up.
check-scale: tests/scale_qps uroce
	@if SCALE_QPS=16384 SCALE_OPENS=1000 top_srcdir=$(abs_top_srcdir) top_builddir=$(abs_top_builddir) \
		$(SHELL) $(top_srcdir)/tests/scale_qps.sh; then echo "1 passed, 0 failed (check-scale)"; \
	else echo "0 passed, 1 failed (check-scale)"; exit 1; fi
.PHONY: check-scale
