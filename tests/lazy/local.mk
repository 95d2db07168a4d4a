# tests/lazy/local.mk - providers are loaded when first needed, not when a
# context is created: a module that logs its loading, the library test and
# the CLI test.

# In its own .libs, not tests/loader's: the loader test counts the modules
# found there.
# The reference test provider's "marker" flavour (tests/provider/marker.c).
check_LTLIBRARIES += tests/lazy/marker.la
tests_lazy_marker_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/marker.c
tests_lazy_marker_la_CFLAGS = $(SBX_MODULE_COPTS) -DTP_NAME='"marker"'
tests_lazy_marker_la_LDFLAGS = $(TESTPROV_LDOPTS)

check_PROGRAMS += tests/lazy/test-lazy
tests_lazy_test_lazy_SOURCES = tests/lazy/test-lazy.c tests/unit/confdir.h
tests_lazy_test_lazy_CFLAGS = $(AM_CFLAGS) -pthread
tests_lazy_test_lazy_LDADD = core/libpolysandbox.la

TESTS += tests/lazy/test-lazy tests/lazy/lazy.sh
dist_check_SCRIPTS += tests/lazy/lazy.sh
