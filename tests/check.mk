# tests/check.mk: the shared main of the Check programs (tests/check_main.h).
# Every Check program links $(CHECK_MAIN_LIBS) instead of $(CHECK_LIBS).
check_LTLIBRARIES = tests/libcheck_main.la
tests_libcheck_main_la_SOURCES = tests/check_main.c tests/check_main.h
tests_libcheck_main_la_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
CHECK_MAIN_LIBS = tests/libcheck_main.la $(CHECK_LIBS)
