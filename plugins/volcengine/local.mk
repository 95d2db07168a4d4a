# plugins/volcengine/local.mk - Volcengine (veFaaS sandboxes): so far the
# request signature of its OpenAPI gateway and its unit test (README.md
# holds the research the provider is to be built from)

if HAVE_CURL
check_PROGRAMS += tests/unit/test-volc-sign
tests_unit_test_volc_sign_SOURCES = tests/unit/test-volc-sign.c tests/unit/tap.h \
	plugins/volcengine/volc-sign.c plugins/volcengine/volc-sign.h
tests_unit_test_volc_sign_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS) -I$(top_srcdir)/plugins/volcengine
tests_unit_test_volc_sign_CFLAGS = $(AM_CFLAGS) $(SBXHTTP_CFLAGS) $(SODIUM_CFLAGS)
tests_unit_test_volc_sign_LDADD = $(SBXHTTP_LIBS) $(SODIUM_LIBS)
TESTS += tests/unit/test-volc-sign
endif

EXTRA_DIST += plugins/volcengine/README.md
