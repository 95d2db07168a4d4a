# plugins/e2b/local.mk - the E2B provider (control-plane REST + envd Connect RPC)
#
# A loadable module exporting only sandbox_provider_v1, linked with the
# shared libcurl client (plugins/common/libsbxhttp.la).

if BUILD_PROVIDER_E2B
provider_LTLIBRARIES += plugins/e2b/e2b.la
plugins_e2b_e2b_la_SOURCES = \
	plugins/e2b/e2b-int.h \
	plugins/e2b/e2b.c \
	plugins/e2b/e2b-api.c \
	plugins/e2b/e2b-envd.c \
	plugins/e2b/e2b-exec.c \
	plugins/e2b/e2b-files.c \
	plugins/e2b/e2b-util.c
plugins_e2b_e2b_la_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS)
plugins_e2b_e2b_la_CFLAGS = $(SBX_MODULE_COPTS) $(SBXHTTP_CFLAGS)
plugins_e2b_e2b_la_LDFLAGS = $(SBX_MODULE_LDOPTS)
plugins_e2b_e2b_la_LIBADD = $(SBXHTTP_LIBS)

e2bconfdir = $(pkgsysconfdir)/providers.d
dist_e2bconf_DATA = plugins/e2b/e2b.ini
endif

EXTRA_DIST += plugins/e2b/README.md plugins/e2b/e2b.ini
