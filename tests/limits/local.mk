# tests/limits/local.mk - limits a provider cannot enforce: refused, or
# allowed by unenforced_limits and then said (the core, with the fake
# providers of unenf.c), the output caps of a provider that ignores them
# (flood.c), and the local provider as a real non-root user.

LIMITS_MODULE_LDOPTS = -module -avoid-version -shared -no-undefined -rpath /nowhere
check_LTLIBRARIES += tests/limits/unenf.la tests/limits/minor2.la tests/limits/flood.la
tests_limits_unenf_la_SOURCES = tests/limits/unenf.c
tests_limits_unenf_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_limits_unenf_la_LDFLAGS = $(LIMITS_MODULE_LDOPTS)
tests_limits_minor2_la_SOURCES = tests/limits/unenf.c
tests_limits_minor2_la_CFLAGS = $(SBX_MODULE_COPTS) -DUNENF_MINOR2
tests_limits_minor2_la_LDFLAGS = $(LIMITS_MODULE_LDOPTS)
tests_limits_flood_la_SOURCES = tests/limits/flood.c
tests_limits_flood_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_limits_flood_la_LDFLAGS = $(LIMITS_MODULE_LDOPTS)

LIMITS_TESTS = tests/limits/core.sh tests/limits/caps.sh
if BUILD_PROVIDER_LOCAL
LIMITS_TESTS += tests/limits/nonroot.sh
endif
TESTS += $(LIMITS_TESTS)
dist_check_SCRIPTS += tests/limits/core.sh tests/limits/caps.sh tests/limits/nonroot.sh
