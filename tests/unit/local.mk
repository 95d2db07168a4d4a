# tests/unit/local.mk - unit tests of core internals (TAP)
#
# They link the convenience library, so they can call core_ functions the
# shared library does not export.

UNIT_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
UNIT_TEST_LDADD = core/libpolysandbox-internal.la $(LTDL_LIBS) \
	$(JANSSON_LIBS) $(INIH_LIBS) $(SODIUM_LIBS)

check_PROGRAMS += tests/unit/test-units tests/unit/test-config \
	tests/unit/test-config-oom tests/unit/test-host-settings tests/unit/test-test-host

tests_unit_test_units_SOURCES = tests/unit/test-units.c tests/unit/tap.h
tests_unit_test_units_CPPFLAGS = $(UNIT_TEST_CPPFLAGS)
tests_unit_test_units_CFLAGS = $(AM_CFLAGS) -pthread
tests_unit_test_units_LDADD = $(UNIT_TEST_LDADD)

tests_unit_test_config_SOURCES = tests/unit/test-config.c tests/unit/tap.h
tests_unit_test_config_CPPFLAGS = $(UNIT_TEST_CPPFLAGS)
tests_unit_test_config_CFLAGS = $(AM_CFLAGS) -pthread
tests_unit_test_config_LDADD = $(UNIT_TEST_LDADD)

# The core's allocations are wrapped so the test can make them fail.
tests_unit_test_config_oom_SOURCES = tests/unit/test-config-oom.c tests/unit/tap.h
tests_unit_test_config_oom_CPPFLAGS = $(UNIT_TEST_CPPFLAGS)
tests_unit_test_config_oom_CFLAGS = $(AM_CFLAGS) -pthread
tests_unit_test_config_oom_LDFLAGS = -Wl,--wrap=malloc -Wl,--wrap=calloc \
	-Wl,--wrap=realloc -Wl,--wrap=strdup -Wl,--wrap=strndup -Wl,--wrap=asprintf
tests_unit_test_config_oom_LDADD = $(UNIT_TEST_LDADD)

tests_unit_test_host_settings_SOURCES = tests/unit/test-host-settings.c tests/unit/tap.h
tests_unit_test_host_settings_CPPFLAGS = $(UNIT_TEST_CPPFLAGS)
tests_unit_test_host_settings_CFLAGS = $(AM_CFLAGS) -pthread
tests_unit_test_host_settings_LDADD = $(UNIT_TEST_LDADD)

TESTS += tests/unit/test-units tests/unit/test-config tests/unit/test-config-oom \
	tests/unit/test-host-settings tests/unit/test-test-host

# The configuration as the public API shows it (what core/eval reads).
check_PROGRAMS += tests/unit/test-ctx-config
tests_unit_test_ctx_config_SOURCES = tests/unit/test-ctx-config.c tests/unit/tap.h
tests_unit_test_ctx_config_CPPFLAGS = $(UNIT_TEST_CPPFLAGS)
tests_unit_test_ctx_config_CFLAGS = $(AM_CFLAGS) -pthread
tests_unit_test_ctx_config_LDADD = $(UNIT_TEST_LDADD)
TESTS += tests/unit/test-ctx-config

# The loader's checks (core/loader/validate.c), pure, on descriptors in memory.
check_PROGRAMS += tests/unit/test-validate
tests_unit_test_validate_SOURCES = tests/unit/test-validate.c tests/unit/tap.h
tests_unit_test_validate_CPPFLAGS = $(UNIT_TEST_CPPFLAGS)
tests_unit_test_validate_LDADD = $(UNIT_TEST_LDADD)
TESTS += tests/unit/test-validate

# The include graph of core/, sdk/ and plugins/ has no loop between
# folders (contrib/include-graph.sh; HACKING.md, what may include what).
TESTS += tests/unit/include-graph.sh
dist_check_SCRIPTS += tests/unit/include-graph.sh
EXTRA_DIST += contrib/include-graph.sh

# The test host for providers' unit tests, through the public library.
tests_unit_test_test_host_SOURCES = tests/unit/test-test-host.c tests/unit/tap.h
tests_unit_test_test_host_LDADD = core/libpolysandbox.la

# The image store's parsers (core/image/), built with libcurl and libarchive.
if HAVE_IMAGE
check_PROGRAMS += tests/unit/test-image-parse
tests_unit_test_image_parse_SOURCES = tests/unit/test-image-parse.c tests/unit/tap.h
tests_unit_test_image_parse_CPPFLAGS = $(UNIT_TEST_CPPFLAGS) $(SODIUM_CFLAGS)
tests_unit_test_image_parse_LDADD = $(UNIT_TEST_LDADD) $(CURL_LIBS) $(LIBARCHIVE_LIBS)
TESTS += tests/unit/test-image-parse
endif

# The configuration `make check` runs with (POLYSANDBOX_CONFIG_DIR);
# its templates.d is a link to etc/templates.d.
EXTRA_DIST += tests/config
