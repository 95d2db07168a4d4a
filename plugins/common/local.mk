# plugins/common/local.mk - code shared by provider modules (never installed)
#
# libsbxhttp: the libcurl client of the network providers, and the base64,
# RFC 3339 times and random hex they share.  A provider compiles with
# $(SBXHTTP_CPPFLAGS) and $(SBXHTTP_CFLAGS) and links $(SBXHTTP_LIBS); built
# with hidden visibility, so nothing of it is exported from the module.
SBXHTTP_CPPFLAGS = -I$(top_srcdir)/plugins/common
SBXHTTP_CFLAGS = -pthread $(CURL_CFLAGS) $(JANSSON_CFLAGS)
SBXHTTP_LIBS = plugins/common/libsbxhttp.la $(CURL_LIBS) $(JANSSON_LIBS)

if HAVE_CURL
noinst_LTLIBRARIES += plugins/common/libsbxhttp.la
plugins_common_libsbxhttp_la_SOURCES = plugins/common/http.c plugins/common/http.h \
	plugins/common/base64.c plugins/common/base64.h \
	plugins/common/randhex.c plugins/common/randhex.h \
	plugins/common/rfc3339.c plugins/common/rfc3339.h \
	plugins/common/unenforced.c plugins/common/unenforced.h \
	plugins/common/noimage.c plugins/common/noimage.h \
	plugins/common/shwrap.c plugins/common/shwrap.h \
	plugins/common/setting-checks.c plugins/common/setting-checks.h \
	plugins/common/retry-hints.c plugins/common/retry-hints.h
plugins_common_libsbxhttp_la_CFLAGS = $(SBX_MODULE_COPTS) $(SBXHTTP_CFLAGS)
plugins_common_libsbxhttp_la_LIBADD = $(CURL_LIBS) $(JANSSON_LIBS)

# Unit tests of the library: the client against a server of its own, and
# the RFC 3339 parser and random hex.
PC_TEST_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS)
PC_TEST_CFLAGS = $(AM_CFLAGS) $(SBXHTTP_CFLAGS)
PC_TEST_LDADD = $(SBXHTTP_LIBS)
check_PROGRAMS += tests/unit/test-http tests/unit/test-pcommon
tests_unit_test_http_SOURCES = tests/unit/test-http.c tests/unit/tap.h
tests_unit_test_http_CPPFLAGS = $(PC_TEST_CPPFLAGS)
tests_unit_test_http_CFLAGS = $(PC_TEST_CFLAGS)
tests_unit_test_http_LDADD = $(PC_TEST_LDADD)
tests_unit_test_pcommon_SOURCES = tests/unit/test-pcommon.c tests/unit/tap.h
tests_unit_test_pcommon_CPPFLAGS = $(PC_TEST_CPPFLAGS)
tests_unit_test_pcommon_CFLAGS = $(PC_TEST_CFLAGS)
tests_unit_test_pcommon_LDADD = $(PC_TEST_LDADD)
TESTS += tests/unit/test-http tests/unit/test-pcommon
endif
