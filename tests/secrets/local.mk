# tests/secrets/local.mk - sealed credentials: the core's key pair, format
# and opening (unit test), and the secret command end to end (cli.sh) with
# a test provider that borrows its credential (probe.so, the reference test
# provider's "probe" flavour, tests/provider/probe.c).

check_PROGRAMS += tests/secrets/test-secrets
tests_secrets_test_secrets_SOURCES = tests/secrets/test-secrets.c tests/unit/tap.h
tests_secrets_test_secrets_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_secrets_test_secrets_CFLAGS = $(AM_CFLAGS) -pthread $(SODIUM_CFLAGS)
tests_secrets_test_secrets_LDADD = core/libpolysandbox-internal.la $(LTDL_LIBS) \
	$(JANSSON_LIBS) $(INIH_LIBS) $(SODIUM_LIBS)

# A real module in tests/secrets/.libs/ (-rpath: a shared module, not a
# convenience archive); cli.sh puts that directory on the provider path.
check_LTLIBRARIES += tests/secrets/probe.la
tests_secrets_probe_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/probe.c
tests_secrets_probe_la_CFLAGS = $(SBX_MODULE_COPTS) $(SODIUM_CFLAGS) -DTP_NAME='"probe"'
tests_secrets_probe_la_LDFLAGS = $(TESTPROV_LDOPTS) -export-symbols-regex '^sandbox_provider_v1$$'
tests_secrets_probe_la_LIBADD = $(SODIUM_LIBS)

TESTS += tests/secrets/test-secrets tests/secrets/cli.sh tests/secrets/tty.sh
dist_check_SCRIPTS += tests/secrets/cli.sh tests/secrets/tty.sh
# The cloud providers' own (tests/cloudflare/local.mk, volcengine/local.mk)
# share these pieces.
EXTRA_DIST += tests/secrets/cloud.sh
