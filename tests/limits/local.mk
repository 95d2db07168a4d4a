# tests/limits/local.mk - limits a provider cannot enforce: refused, or
# allowed by unenforced_limits and then said (the core, with the reference
# test provider's "unenf" flavour, tests/provider/unenf.c, also built as a
# 1.2 provider), the output caps of a provider that ignores them (its
# "flood" flavour), and the local provider as a real non-root user.

check_LTLIBRARIES += tests/limits/unenf.la tests/limits/minor2.la tests/limits/flood.la
tests_limits_unenf_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/unenf.c
tests_limits_unenf_la_CFLAGS = $(SBX_MODULE_COPTS) -DTP_NAME='"unenf"'
tests_limits_unenf_la_LDFLAGS = $(TESTPROV_LDOPTS)
tests_limits_minor2_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/unenf.c
tests_limits_minor2_la_CFLAGS = $(SBX_MODULE_COPTS) -DTP_NAME='"minor2"' -DTP_MINOR2
tests_limits_minor2_la_LDFLAGS = $(TESTPROV_LDOPTS)
tests_limits_flood_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/flood.c
tests_limits_flood_la_CFLAGS = $(SBX_MODULE_COPTS) -DTP_NAME='"flood"'
tests_limits_flood_la_LDFLAGS = $(TESTPROV_LDOPTS)

LIMITS_TESTS = tests/limits/core.sh tests/limits/caps.sh
if BUILD_PROVIDER_LOCAL
LIMITS_TESTS += tests/limits/nonroot.sh
endif
TESTS += $(LIMITS_TESTS)
dist_check_SCRIPTS += tests/limits/core.sh tests/limits/caps.sh tests/limits/nonroot.sh
