# plugins/volcengine/local.mk - the Volcengine provider (veFaaS sandboxes:
# the signed OpenAPI gateway, and the sandbox's AIO server through the
# function's API gateway)
#
# A loadable module exporting only sandbox_provider_v1, linked with the
# shared libcurl client (plugins/common/libsbxhttp.la) and libsodium (the
# request signature, guarded memory for the credentials).

VC_SOURCES = \
	plugins/volcengine/volc-int.h \
	plugins/volcengine/volcengine.c \
	plugins/volcengine/volc-api.c \
	plugins/volcengine/volc-exec.c \
	plugins/volcengine/volc-sign.c \
	plugins/volcengine/volc-sign.h

if BUILD_PROVIDER_VOLCENGINE
provider_LTLIBRARIES += plugins/volcengine/volcengine.la
plugins_volcengine_volcengine_la_SOURCES = $(VC_SOURCES)
plugins_volcengine_volcengine_la_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS)
plugins_volcengine_volcengine_la_CFLAGS = $(SBX_MODULE_COPTS) $(SBXHTTP_CFLAGS) $(SODIUM_CFLAGS)
plugins_volcengine_volcengine_la_LDFLAGS = $(SBX_MODULE_LDOPTS)
plugins_volcengine_volcengine_la_LIBADD = $(SBXHTTP_LIBS) $(SODIUM_LIBS)

volcengineconfdir = $(pkgsysconfdir)/providers.d
dist_volcengineconf_DATA = plugins/volcengine/volcengine.ini
endif

# The request signature against published figures and signers nobody
# here wrote.
if HAVE_CURL
check_PROGRAMS += tests/unit/test-volc-sign
tests_unit_test_volc_sign_SOURCES = tests/unit/test-volc-sign.c tests/unit/tap.h \
	plugins/volcengine/volc-sign.c plugins/volcengine/volc-sign.h
tests_unit_test_volc_sign_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS) -I$(top_srcdir)/plugins/volcengine
tests_unit_test_volc_sign_CFLAGS = $(AM_CFLAGS) $(SBXHTTP_CFLAGS) $(SODIUM_CFLAGS)
tests_unit_test_volc_sign_LDADD = $(SBXHTTP_LIBS) $(SODIUM_LIBS)
TESTS += tests/unit/test-volc-sign
endif

EXTRA_DIST += plugins/volcengine/README.md plugins/volcengine/volcengine.ini
